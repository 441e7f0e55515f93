package inject

import (
	"bytes"
	"encoding/json"
	"strconv"
)

// Reading and rewriting the JSON events of an answer for the Editor.

// editJSON decodes an event's JSON object, lets fn change it, and encodes
// it again (numbers kept as written, no HTML escaping); nil when it is not
// an object, or fn returns false (drop it).
func editJSON(raw []byte, fn func(map[string]any) bool) []byte {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v map[string]any
	if err := dec.Decode(&v); err != nil {
		return raw
	}
	if !fn(v) {
		return nil
	}
	var b bytes.Buffer
	b.Grow(len(raw) + 64) // about its size again: no copies as it grows
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return raw
	}
	return bytes.TrimRight(b.Bytes(), "\n")
}

// num reads a JSON number of a decoded object (0 when absent).
func num(v any) int {
	if n, ok := v.(json.Number); ok {
		i, _ := n.Int64()
		return int(i)
	}
	return 0
}

// obj is v as an object, or nil.
func obj(v any) map[string]any {
	m, _ := v.(map[string]any)
	return m
}

// list is v as an array, or nil.
func list(v any) []any {
	l, _ := v.([]any)
	return l
}

func str(v any) string {
	s, _ := v.(string)
	return s
}

// addUsage adds prior to a usage object's input and output fields (and
// total_tokens, when it has one), touching only the fields it adds to.
func addUsage(u map[string]any, input, output string, prior Usage) {
	if u == nil {
		return
	}
	for _, f := range []struct {
		name string
		n    int
	}{{input, prior.Input}, {output, prior.Output}, {"total_tokens", prior.Input + prior.Output}} {
		if _, ok := u[f.name]; f.n != 0 && (ok || f.name != "total_tokens") {
			u[f.name] = json.Number(strconv.Itoa(num(u[f.name]) + f.n))
		}
	}
}
