package openapi

import (
	"encoding/json"
	"strings"
	"testing"
)

const doc = `{"openapi": "3.1.0", "paths": {"/things/{id}": {"parameters": [{"$ref": "#/components/parameters/id"}],
	"get": {"responses": {"200": {"content": {"application/json": {"schema": {"$ref": "#/components/schemas/Thing"}}}},
		"default": {"content": {"application/json": {"schema": {"type": "object"}}}}}}}},
"components": {"parameters": {"id": {"name": "id", "in": "path", "required": true}},
	"schemas": {"Thing": {"type": "object", "required": ["id", "at"], "additionalProperties": false, "properties": {
		"id": {"type": "integer", "minimum": 1}, "at": {"type": "string", "format": "date-time"},
		"tags": {"type": "array", "items": {"type": "string", "enum": ["a", "b"]}},
		"gone": {"type": ["string", "null"]},
		"either": {"oneOf": [{"type": "string"}, {"type": "integer"}]},
		"counts": {"type": "object", "additionalProperties": {"type": "integer"}}}}}}}`

// Each rule of the subset catches what breaks it, and a value that keeps
// them all passes.
func TestValidate(t *testing.T) {
	d, err := Parse([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	ops := d.Operations()
	if len(ops) != 1 || ops[0].Method != "GET" || len(ops[0].Params) != 1 || ops[0].Params[0]["name"] != "id" {
		t.Fatalf("operations %+v", ops)
	}
	schema, ok := d.Response(ops[0], 200, "application/json")
	if !ok || schema == nil {
		t.Fatal("no schema for 200")
	}
	if s, ok := d.Response(ops[0], 404, "application/json"); !ok || s == nil {
		t.Error("404 does not fall back to default")
	}
	good := `{"id": 3, "at": "2026-05-03T10:00:00Z", "tags": ["a"], "gone": null, "either": 4, "counts": {"x": 1}}`
	for _, c := range []struct{ value, want string }{
		{good, ""},
		{`{"id": 3}`, `lacks the required "at"`},
		{`{"id": 3, "at": "2026-05-03T10:00:00Z", "extra": 1}`, `has "extra"`},
		{`{"id": 0.5, "at": "2026-05-03T10:00:00Z"}`, "not of type integer"},
		{`{"id": 0, "at": "2026-05-03T10:00:00Z"}`, "below the minimum"},
		{`{"id": 3, "at": "yesterday"}`, "not an RFC 3339 time"},
		{`{"id": 3, "at": "2026-05-03T10:00:00Z", "tags": ["c"]}`, "$.tags[0]"},
		{`{"id": 3, "at": "2026-05-03T10:00:00Z", "either": true}`, "matches 0 of oneOf"},
		{`{"id": 3, "at": "2026-05-03T10:00:00Z", "counts": {"x": "1"}}`, "$.counts.x"},
		{`[]`, "not of type object"},
	} {
		var v any
		if err := json.Unmarshal([]byte(c.value), &v); err != nil {
			t.Fatal(err)
		}
		err := d.Validate(schema, v)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s: %v", c.value, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%s: got %v, want an error saying %q", c.value, err, c.want)
		}
	}
	// A keyword the checker does not apply fails, rather than passing
	// unchecked; so does a reference to nothing.
	if err := d.Validate(map[string]any{"type": "string", "minLength": 3.0}, "ab"); err == nil || !strings.Contains(err.Error(), "minLength") {
		t.Errorf("an unknown keyword: %v", err)
	}
	if err := d.Validate(map[string]any{"$ref": "#/components/schemas/Nope"}, "ab"); err == nil {
		t.Error("a broken reference passed")
	}
	if _, err := Parse([]byte(`{"openapi": "3.0.3"}`)); err == nil {
		t.Error("an OpenAPI 3.0 document was taken for 3.1")
	}
}
