package inject

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
)

// TestEditorPastItsLimit: an answer the editor would hold back whole (a
// JSON answer, a stream that starts with a call) goes out as it came once
// it is longer than the limit, what was held first; the proxy gets no
// calls of it to run, and it is no tool round.
func TestEditorPastItsLimit(t *testing.T) {
	var sse strings.Builder
	for i := range 100 {
		fmt.Fprintf(&sse, "data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":%d,\"id\":\"call_%d\",\"function\":{\"name\":\"save_memory\",\"arguments\":\"{}\"}}]}}]}\n\n", i, i)
	}
	sse.WriteString("data: [DONE]\n\n")
	json := `{"choices":[{"index":0,"message":{"role":"assistant","tool_calls":[{"id":"call_1","function":{"name":"save_memory","arguments":"{\"content\":\"` +
		strings.Repeat("x", 10<<10) + `\"}"}}]},"finish_reason":"tool_calls"}]}`
	for _, c := range []struct{ ctype, body string }{{"text/event-stream", sse.String()}, {"application/json", json}} {
		t.Run(c.ctype, func(t *testing.T) {
			e := NewEditor(OpenAIChat, c.ctype, 1<<10, func(n string) bool { return n == "save_memory" }, Usage{})
			var out []byte
			for p := []byte(c.body); len(p) > 0; {
				n := min(len(p), 100)
				out = append(out, e.Write(p[:n])...)
				p = p[n:]
			}
			out = append(out, e.End()...)
			if !bytes.Equal(out, []byte(c.body)) {
				t.Errorf("the client got %d bytes, not the %d of the answer as it came", len(out), len(c.body))
			}
			if e.State() != Untouched || e.ToolRound() || len(e.Calls()) != 0 {
				t.Errorf("state %v, tool round %v, %d calls to run; want Untouched, none", e.State(), e.ToolRound(), len(e.Calls()))
			}
		})
	}
}

// TestEditorKeepsBounded: a stream passed on from its first text keeps
// what it said (a next round would carry it); past the limit it keeps no
// more: the rest goes as it came, and its call is not the proxy's to run.
func TestEditorKeepsBounded(t *testing.T) {
	const limit = 64 << 10
	e := NewEditor(OpenAIChat, "text/event-stream", limit, func(n string) bool { return n == "save_memory" }, Usage{})
	word := []byte("data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"story \"}}]}\n\n")
	for range (4 << 20) / len(word) {
		e.Write(word)
	}
	e.Write([]byte("data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"c\",\"function\":{\"name\":\"save_memory\",\"arguments\":\"{}\"}}]}}]}\n\n" +
		"data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"tool_calls\"}]}\n\ndata: [DONE]\n\n"))
	e.End()
	if n := len(e.Text()); n > limit+len(word) { // the event that passed it too
		t.Errorf("the editor kept %d bytes of text for a limit of %d", n, limit)
	}
	if e.State() != Untouched || e.Continues() || len(e.Calls()) != 0 {
		t.Errorf("state %v, continues %v, %d calls to run; want Untouched, none", e.State(), e.Continues(), len(e.Calls()))
	}
}

// TestEditorManyCalls: editing an answer of many calls does work in
// proportion to them, not to their square (each client call's new index
// counted over every call: 40,000 calls took 6 s). The work is counted as
// the times the editor asks whether a name is the proxy's.
func TestEditorManyCalls(t *testing.T) {
	const n = 2000
	var sse, whole strings.Builder
	sse.WriteString("data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Checking.\"}}]}\n\n")
	whole.WriteString(`{"choices":[{"index":0,"finish_reason":"tool_calls","message":{"role":"assistant","tool_calls":[`)
	for i := range n {
		name := "get_weather"
		if i%2 == 0 {
			name = "save_memory"
		}
		call := fmt.Sprintf(`{"index":%d,"id":"c%d","function":{"name":%q,"arguments":"{}"}}`, i, i, name)
		fmt.Fprintf(&sse, "data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[%s]}}]}\n\n", call)
		if i > 0 {
			whole.WriteString(",")
		}
		whole.WriteString(call)
	}
	sse.WriteString("data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"tool_calls\"}]}\n\ndata: [DONE]\n\n")
	whole.WriteString(`]}}]}`)
	for _, c := range []struct{ ctype, body string }{{"text/event-stream", sse.String()}, {"application/json", whole.String()}} {
		t.Run(c.ctype, func(t *testing.T) {
			asked := 0
			e := NewEditor(OpenAIChat, c.ctype, 2<<20, func(name string) bool { asked++; return name == "save_memory" }, Usage{})
			out := string(e.Write([]byte(c.body))) + string(e.End())
			if got := strings.Count(out, `"get_weather"`); got != n/2 || strings.Contains(out, "save_memory") {
				t.Fatalf("the client got %d of its %d calls (and the proxy's: %v)", got, n/2, strings.Contains(out, "save_memory"))
			}
			if asked > 20*n {
				t.Errorf("editing %d calls asked %d times whether a name is the proxy's", n, asked)
			}
		})
	}
}
