// Package openapi reads an OpenAPI 3.1 document far enough to test an API
// against it: its operations, and whether a JSON value matches one of its
// schemas (the subset of JSON Schema 2020-12 the management API's document
// uses: $ref, type, properties, required, additionalProperties, items,
// enum, const, oneOf, minimum, maximum, maxLength, pattern, and the
// date-time and date formats). A keyword it does not know fails the check
// rather than passing unchecked.
package openapi

import (
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"slices"
	"sort"
	"strings"
	"time"
	"unicode/utf8"
)

// Doc is an OpenAPI document, as decoded JSON.
type Doc struct {
	root map[string]any
}

// Parse reads a document.
func Parse(b []byte) (*Doc, error) {
	var root map[string]any
	if err := json.Unmarshal(b, &root); err != nil {
		return nil, err
	}
	if v, _ := root["openapi"].(string); !strings.HasPrefix(v, "3.1.") {
		return nil, fmt.Errorf("openapi is %q, want 3.1.x", root["openapi"])
	}
	return &Doc{root: root}, nil
}

// Root is the decoded document.
func (d *Doc) Root() map[string]any { return d.root }

// methods are the HTTP methods a path item may hold, in the order
// Operations lists them.
var methods = []string{"get", "put", "post", "delete", "options", "head", "patch", "trace"}

// Operation is one documented operation.
type Operation struct {
	Method string // GET, POST, ...
	Path   string // as documented: /memories/{id}
	Op     map[string]any
	// Params are the operation's parameters and its path item's, with
	// references resolved.
	Params []map[string]any
}

// Operations lists the document's operations, by path, then method.
func (d *Doc) Operations() []Operation {
	paths, _ := d.root["paths"].(map[string]any)
	keys := make([]string, 0, len(paths))
	for p := range paths {
		keys = append(keys, p)
	}
	sort.Strings(keys)
	var out []Operation
	for _, p := range keys {
		item, _ := paths[p].(map[string]any)
		shared := d.params(item["parameters"])
		for _, m := range methods {
			op, ok := item[m].(map[string]any)
			if !ok {
				continue
			}
			out = append(out, Operation{Method: strings.ToUpper(m), Path: p, Op: op, Params: append(slices.Clone(shared), d.params(op["parameters"])...)})
		}
	}
	return out
}

func (d *Doc) params(v any) []map[string]any {
	list, _ := v.([]any)
	var out []map[string]any
	for _, p := range list {
		if m, ok := d.resolve(p).(map[string]any); ok {
			out = append(out, m)
		}
	}
	return out
}

// Resolve follows a {"$ref": "#/..."} to what it names (v itself if it
// is no reference); nil if the reference names nothing.
func (d *Doc) resolve(v any) any {
	for range 16 {
		m, ok := v.(map[string]any)
		if !ok {
			return v
		}
		ref, ok := m["$ref"].(string)
		if !ok {
			return v
		}
		v = d.Pointer(ref)
	}
	return nil
}

// Pointer is what a local reference (#/components/schemas/Memory) names,
// or nil.
func (d *Doc) Pointer(ref string) any {
	if !strings.HasPrefix(ref, "#/") {
		return nil
	}
	var v any = d.root
	for _, part := range strings.Split(ref[2:], "/") {
		part = strings.ReplaceAll(strings.ReplaceAll(part, "~1", "/"), "~0", "~")
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		if v, ok = m[part]; !ok {
			return nil
		}
	}
	return v
}

// Refs lists every $ref in the document that names nothing.
func (d *Doc) Refs() (broken []string) {
	var walk func(v any)
	walk = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			if ref, ok := v["$ref"].(string); ok && d.Pointer(ref) == nil {
				broken = append(broken, ref)
			}
			for _, x := range v {
				walk(x)
			}
		case []any:
			for _, x := range v {
				walk(x)
			}
		}
	}
	walk(d.root)
	return broken
}

// Response is the schema of op's answer with status and content type
// ctype: the response for status, else "default"; nil schema when the
// document gives that response no content of that type. ok is false when
// the document has no response for the status at all.
func (d *Doc) Response(op Operation, status int, ctype string) (schema any, ok bool) {
	responses, _ := op.Op["responses"].(map[string]any)
	r, found := responses[fmt.Sprint(status)]
	if !found {
		if r, found = responses["default"]; !found {
			return nil, false
		}
	}
	content, _ := d.resolve(r).(map[string]any)["content"].(map[string]any)
	media, _ := content[ctype].(map[string]any)
	return media["schema"], true
}

// Validate reports where v (decoded JSON) does not match schema.
func (d *Doc) Validate(schema, v any) error {
	var errs []string
	d.check(schema, v, "$", &errs)
	if len(errs) > 0 {
		return fmt.Errorf("%s", strings.Join(errs, "; "))
	}
	return nil
}

// known are the keywords check applies, and those that only describe.
var known = map[string]bool{"$ref": true, "type": true, "properties": true, "required": true, "additionalProperties": true,
	"items": true, "enum": true, "const": true, "oneOf": true, "minimum": true, "maximum": true, "maxLength": true,
	"pattern": true, "format": true, "description": true, "example": true, "title": true}

func (d *Doc) check(schema, v any, at string, errs *[]string) {
	fail := func(format string, args ...any) { *errs = append(*errs, at+": "+fmt.Sprintf(format, args...)) }
	s, ok := d.resolve(schema).(map[string]any)
	if !ok {
		fail("the schema %v is not an object (or a reference names nothing)", schema)
		return
	}
	for k := range s {
		if !known[k] {
			fail("the schema uses %q, which this checker does not know", k)
		}
	}
	if t, ok := s["type"]; ok && !typeIs(t, v) {
		fail("%s is not of type %v", short(v), t)
		return
	}
	if e, ok := s["enum"].([]any); ok && !slices.ContainsFunc(e, func(x any) bool { return equal(x, v) }) {
		fail("%s is not one of %v", short(v), e)
	}
	if c, ok := s["const"]; ok && !equal(c, v) {
		fail("%s is not %v", short(v), c)
	}
	if alts, ok := s["oneOf"].([]any); ok {
		n, why := 0, []string{}
		for _, alt := range alts {
			var sub []string
			d.check(alt, v, at, &sub)
			if len(sub) == 0 {
				n++
			} else {
				why = append(why, strings.Join(sub, ", "))
			}
		}
		if n != 1 {
			fail("matches %d of oneOf's schemas, want 1 (%s)", n, strings.Join(why, " | "))
		}
	}
	switch v := v.(type) {
	case map[string]any:
		props, _ := s["properties"].(map[string]any)
		for _, r := range asStrings(s["required"]) {
			if _, ok := v[r]; !ok {
				fail("lacks the required %q", r)
			}
		}
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			if p, ok := props[k]; ok {
				d.check(p, v[k], at+"."+k, errs)
				continue
			}
			switch extra := s["additionalProperties"].(type) {
			case bool:
				if !extra {
					fail("has %q, which the schema does not describe", k)
				}
			case map[string]any:
				d.check(extra, v[k], at+"."+k, errs)
			}
		}
	case []any:
		if items, ok := s["items"]; ok {
			for i, x := range v {
				d.check(items, x, fmt.Sprintf("%s[%d]", at, i), errs)
			}
		}
	case string:
		if n, ok := s["maxLength"].(float64); ok && float64(utf8.RuneCountInString(v)) > n {
			fail("is longer than %v characters", n)
		}
		if p, ok := s["pattern"].(string); ok && !regexp.MustCompile(p).MatchString(v) {
			fail("%q does not match %s", v, p)
		}
		switch s["format"] {
		case "date-time":
			if _, err := time.Parse(time.RFC3339Nano, v); err != nil {
				fail("%q is not an RFC 3339 time", v)
			}
		case "date":
			if _, err := time.Parse(time.DateOnly, v); err != nil {
				fail("%q is not a date", v)
			}
		}
	case float64:
		if m, ok := s["minimum"].(float64); ok && v < m {
			fail("%v is below the minimum %v", v, m)
		}
		if m, ok := s["maximum"].(float64); ok && v > m {
			fail("%v is above the maximum %v", v, m)
		}
	}
}

// typeIs reports whether v is of the JSON Schema type t (a name, or a
// list of names).
func typeIs(t, v any) bool {
	for _, name := range asStrings(t) {
		switch x := v.(type) {
		case nil:
			if name == "null" {
				return true
			}
		case bool:
			if name == "boolean" {
				return true
			}
		case string:
			if name == "string" {
				return true
			}
		case float64:
			if name == "number" || name == "integer" && x == math.Trunc(x) {
				return true
			}
		case map[string]any:
			if name == "object" {
				return true
			}
		case []any:
			if name == "array" {
				return true
			}
		}
	}
	return false
}

func asStrings(v any) []string {
	switch v := v.(type) {
	case string:
		return []string{v}
	case []any:
		var out []string
		for _, x := range v {
			if s, ok := x.(string); ok {
				out = append(out, s)
			}
		}
		return out
	}
	return nil
}

func equal(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return string(x) == string(y)
}

func short(v any) string {
	b, _ := json.Marshal(v)
	if len(b) > 80 {
		return string(b[:77]) + "..."
	}
	return string(b)
}
