package inject

import (
	"encoding/json"
	"testing"
)

func TestPrependInput(t *testing.T) {
	item := `{"type":"function_call_output","call_id":"c1","output":"{}"}`
	for in, want := range map[string]string{
		`{"previous_response_id":"r","input":[{"type":"function_call_output","call_id":"c2","output":"x"}]}`: `[` + item + `,{"type":"function_call_output","call_id":"c2","output":"x"}]`,
		`{"previous_response_id":"r","input":"and then?"}`:                                                   `[` + item + `,{"role":"user","content":"and then?"}]`,
		`{"previous_response_id":"r","input":[]}`:                                                            `[` + item + `]`,
		`{"previous_response_id":"r"}`:                                                                       `[` + item + `]`,
	} {
		out, err := responses{}.PrependInput([]byte(in), []string{item})
		if err != nil {
			t.Fatalf("%s: %v", in, err)
		}
		var v struct{ Input json.RawMessage }
		if err := json.Unmarshal(out, &v); err != nil || string(v.Input) != want {
			t.Errorf("%s:\n got %s (%v)\nwant input %s", in, out, err, want)
		}
	}
	if _, err := (responses{}).PrependInput([]byte(`{"input":42}`), []string{item}); err == nil {
		t.Error("a number as input was accepted")
	}
}

// TestStoring: the responses API is the one format whose server keeps
// answers, so the outputs owed to them are kept for it alone.
func TestStoring(t *testing.T) {
	for _, d := range Dialects {
		if _, ok := d.(Storing); ok != (d == OpenAIResponses) {
			t.Errorf("%s is Storing: %v", d.Name(), ok)
		}
	}
}
