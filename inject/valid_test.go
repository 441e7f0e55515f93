package inject

import (
	"bytes"
	"errors"
	"strings"
	"testing"
)

// TestDeepBodiesPassThrough: a body nested deeper than MaxDepth is not
// read by any dialect (it goes on untouched), however deep it is, and a
// legitimately nested body, or brackets inside strings, still parse.
func TestDeepBodiesPassThrough(t *testing.T) {
	nested := func(depth int, inner string) []byte {
		return []byte(`{"messages":[{"role":"user","content":"hi"}],"x":` +
			strings.Repeat("[", depth) + inner + strings.Repeat("]", depth) + `}`)
	}
	// 8 MiB of "[": gjson's own validator overflowed the stack on this.
	huge := bytes.Repeat([]byte("["), 8<<20+1)
	for _, body := range [][]byte{nested(MaxDepth, "1"), huge, append([]byte(`{"messages":`), huge...)} {
		for _, d := range Dialects {
			if _, err := d.Parse(body); !errors.Is(err, ErrNotJSON) {
				t.Errorf("%s.Parse of a body nested past MaxDepth (%d bytes): %v, want ErrNotJSON", d.Name(), len(body), err)
			}
		}
	}
	// Two levels for the object and messages array, so MaxDepth-2 more fit.
	for _, body := range [][]byte{
		nested(MaxDepth-2, "1"),
		[]byte(`{"messages":[{"role":"user","content":"` + strings.Repeat(`[{\"`, 10000) + `"}]}`),
	} {
		if _, err := OpenAIChat.Parse(body); err != nil {
			t.Errorf("Parse of a body within MaxDepth: %v", err)
		}
	}
	if ValidJSON([]byte(`[[1]`)) || ValidJSON([]byte(`"unterminated \"`)) || !ValidJSON([]byte(`"]]]\\"`)) {
		t.Error("ValidJSON disagrees with the JSON grammar")
	}
}
