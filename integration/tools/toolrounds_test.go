package tools

import (
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/caddy-memory/memory/internal/harness"
	"github.com/caddy-memory/memory/internal/memtools"
	"github.com/caddy-memory/memory/store"
)

// The bounds of the proxy's tool rounds, through real Caddy: the rounds
// running out, the calls one answer may make, and the one limit on what a
// memory may hold.

// spent is the reason each format gives for an answer of tool calls, passed
// on as it came.
var spent = map[string]string{"openai_chat": "tool_calls", "anthropic": "tool_use", "openai_responses": "completed", "ollama": "stop"}

// TestMemoryToolRoundsRunOut: a model that keeps calling recall_memory gets
// max_tool_rounds more tries; then its last answer reaches the client as it
// is, with the usage of every round added up, and a tool that fails answers
// the model with an error, not the client with one. A stream that talked
// before its first call ends with the end it held back, the usage again
// the sum of every round.
func TestMemoryToolRoundsRunOut(t *testing.T) {
	storage := t.TempDir()
	up := harness.NewFakeLLM(t)
	var talk atomic.Bool
	up.Answer = func(body []byte) string {
		if talk.Load() && toolOutputs(body) == "" {
			return "Let me check. " + harness.ToolPrefix + `recall_memory {"query":""}`
		}
		return harness.ToolPrefix + `recall_memory {"query":""}`
	}
	tester := harness.StartCaddy(t, toolsConfig(storage, up.Addr()))
	for _, talks := range []bool{false, true} {
		for _, w := range harness.Wires {
			for _, stream := range []bool{false, true} {
				if talks && !stream {
					continue // a JSON answer that talks and calls is one tool round like another
				}
				t.Run(fmt.Sprintf("%s/stream=%v/talks=%v", w.Name, stream, talks), func(t *testing.T) {
					talk.Store(talks)
					before := len(up.All())
					c := toolClient{t: t, tester: tester, up: up, key: "key-loop", stream: stream}
					r := c.ask(w, "What is my dog called?")
					switch {
					case talks:
						if r.text != "Let me check. " || len(r.calls) != 0 || r.done != finished[w.Name] {
							t.Errorf("client got %+v, want the first round's words and its end", r)
						}
					case len(r.calls) != 1 || r.calls[0] != "recall_memory" || r.done != spent[w.Name]:
						t.Errorf("client got %+v, want the last answer as it came", r)
					}
					sent := rounds(t, up, before, r, 3)
					if out := toolOutputs(sent[2].Body); !strings.Contains(out, `"error"`) {
						t.Errorf("an empty query should answer the model with an error; it read %s", out)
					}
				})
			}
		}
	}
}

// rounds checks that the upstream, since it had before requests, was asked
// n times for the client's request, and that the client's usage is the
// sum of the n rounds' (the scripted upstream says 10 in, 3 out); it
// returns the requests.
func rounds(t *testing.T, up *harness.FakeLLM, before int, r toolReply, n int) []harness.Recorded {
	t.Helper()
	if r.input != int64(10*n) || r.output != int64(3*n) {
		t.Errorf("usage %d in / %d out, want the %d rounds' sum %d / %d", r.input, r.output, n, 10*n, 3*n)
	}
	sent := up.All()[before:]
	if len(sent) != n {
		t.Fatalf("the upstream was asked %d times, want %d", len(sent), n)
	}
	return sent
}

// TestMemoryToolCallsPerAnswer: one answer of 1,000 save_memory calls
// stores the first memtools.MaxCallsPerAnswer; every other call is answered with an
// error, so the conversation stays valid in every format, and the client
// gets the model's next answer as usual.
func TestMemoryToolCallsPerAnswer(t *testing.T) {
	storage := t.TempDir()
	up := harness.NewFakeLLM(t)
	up.Answer = func(body []byte) string {
		if toolOutputs(body) != "" {
			return "I saved what I could."
		}
		calls := make([]string, 1000)
		for i := range calls {
			calls[i] = fmt.Sprintf(`save_memory {"content":"The user's lucky number %d is odd or even."}`, i)
		}
		return harness.ToolPrefix + strings.Join(calls, "|")
	}
	tester := harness.StartCaddy(t, toolsConfig(storage, up.Addr()))
	api := harness.APICall{T: t, Client: tester.Client}
	for _, w := range harness.Wires {
		for _, stream := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/stream=%v", w.Name, stream), func(t *testing.T) {
				key := fmt.Sprintf("key-many-%s-%v", w.Name, stream)
				before := len(up.All())
				c := toolClient{t: t, tester: tester, up: up, key: key, stream: stream}
				r := c.ask(w, "Remember my thousand lucky numbers.")
				if r.text != "I saved what I could." || len(r.calls) != 0 || r.done != finished[w.Name] {
					t.Errorf("client got %+v, want the model's next answer", r)
				}
				sent := rounds(t, up, before, r, 2)
				results := strings.Split(toolOutputs(sent[1].Body), "\n")
				saved := 0
				for _, res := range results {
					if strings.Contains(res, `"saved":true`) {
						saved++
					}
				}
				if len(results) != 1000 || saved != memtools.MaxCallsPerAnswer {
					t.Errorf("the model read %d results, %d of them saved; want 1000 results, %d saved", len(results), saved, memtools.MaxCallsPerAnswer)
				}
				if last := results[len(results)-1]; !strings.Contains(last, `"error"`) || !strings.Contains(last, fmt.Sprint(memtools.MaxCallsPerAnswer)) {
					t.Errorf("a call past the cap was answered %s", last)
				}
				_, out := api.Do("GET", "/memory/memories?source=tool&limit=500", key, nil)
				if got := harness.ListContents(out); len(got) != memtools.MaxCallsPerAnswer {
					t.Errorf("%d memories stored, want %d", len(got), memtools.MaxCallsPerAnswer)
				}
			})
		}
	}
}

// TestMemoryContentLimit: a memory may hold store.MaxContent bytes however
// it is made (REST, an import, MCP, the model's save_memory); one byte more
// is refused by each with the same message.
func TestMemoryContentLimit(t *testing.T) {
	storage := t.TempDir()
	up := harness.NewFakeLLM(t)
	var content atomic.Value
	up.Answer = func(body []byte) string {
		if toolOutputs(body) != "" {
			return "Done."
		}
		return harness.ToolPrefix + `save_memory {"content":"` + content.Load().(string) + `"}`
	}
	tester := harness.StartCaddy(t, toolsConfig(storage, up.Addr()))
	api := harness.APICall{T: t, Client: tester.Client}
	want := store.CheckContent(strings.Repeat("x", store.MaxContent+1)).Error()
	for _, n := range []int{store.MaxContent, store.MaxContent + 1} {
		text := func(via string) string {
			s := "The user wrote this through " + via + ": "
			return s + strings.Repeat("x", n-len(s))
		}

		status, out := api.Do("POST", "/memory/memories", "key-long", map[string]any{"kind": "note", "content": text("REST")})
		line := harness.MustBytes(map[string]any{"kind": "note", "key": fmt.Sprint("imported-", n), "content": text("an import")})
		importStatus, imported := api.Do("POST", "/memory/import", "key-long", line)
		importErr := fmt.Sprint(imported["errors"])
		mcpOut, mcpErr := dialMCP(t, "/memory/mcp", "key-long").call("add_memory", map[string]any{"content": text("MCP")})
		content.Store(text("the tool"))
		before := len(up.All())
		if r := (toolClient{t: t, tester: tester, up: up, key: "key-long"}).ask(harness.Wires[0], "Keep this."); r.text != "Done." {
			t.Errorf("client got %+v", r)
		}
		sent := up.All()[before:]
		toolResult := toolOutputs(sent[len(sent)-1].Body)

		if n == store.MaxContent {
			if status != http.StatusCreated || imported["imported"] != 1.0 || mcpOut == nil || !strings.Contains(toolResult, `"saved":true`) {
				t.Errorf("%d bytes: REST %d %s, import %d %v, MCP %q, the tool %s; want each to store it",
					n, status, harness.ErrCode(out), importStatus, importErr, mcpErr, toolResult)
			}
			continue
		}
		if status != http.StatusBadRequest || !strings.Contains(harness.ErrCode(out), want) {
			t.Errorf("%d bytes through REST: %d %s, want 400 %q", n, status, harness.ErrCode(out), want)
		}
		if !strings.Contains(importErr, want) {
			t.Errorf("%d bytes through an import: %d %s, want %q", n, importStatus, importErr, want)
		}
		if !strings.Contains(mcpErr, want) {
			t.Errorf("%d bytes through MCP: %q, want %q", n, mcpErr, want)
		}
		if !strings.Contains(toolResult, want) {
			t.Errorf("%d bytes through save_memory: the model read %s, want %q", n, toolResult, want)
		}
	}
}
