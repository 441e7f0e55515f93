package tools

import (
	"bytes"
	"strings"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/caddy-memory/memory/internal/harness"
	"github.com/caddy-memory/memory/store"
)

// toolTurn is, per format, a user turn that leads to a tool call, and the
// request that carries the call and its result back.
var toolTurn = map[string]struct {
	array string
	first string // the request whose answer is the tool call
	next  string // the same conversation, with the call and its result
}{
	"openai_chat": {"messages",
		`{"model":"gpt-4o","messages":[{"role":"user","content":"I live in Oslo. Is the weather good for hiking today?"}],"tools":[{"type":"function","function":{"name":"get_weather","parameters":{"type":"object"}}}]}`,
		`{"model":"gpt-4o","messages":[{"role":"user","content":"I live in Oslo. Is the weather good for hiking today?"},{"role":"assistant","content":null,"tool_calls":[{"id":"call_1","type":"function","function":{"name":"get_weather","arguments":"{\"city\":\"Oslo\"}"}}]},{"role":"tool","tool_call_id":"call_1","content":"3°C, sunny"}],"tools":[{"type":"function","function":{"name":"get_weather","parameters":{"type":"object"}}}]}`},
	"ollama": {"messages",
		`{"model":"llama3.2","stream":false,"messages":[{"role":"user","content":"I live in Oslo. Is the weather good for hiking today?"}],"tools":[{"type":"function","function":{"name":"get_weather"}}]}`,
		`{"model":"llama3.2","stream":false,"messages":[{"role":"user","content":"I live in Oslo. Is the weather good for hiking today?"},{"role":"assistant","content":"","tool_calls":[{"function":{"name":"get_weather","arguments":{"city":"Oslo"}}}]},{"role":"tool","content":"3°C, sunny"}],"tools":[{"type":"function","function":{"name":"get_weather"}}]}`},
	"anthropic": {"messages",
		`{"model":"claude-sonnet-4-5","max_tokens":512,"messages":[{"role":"user","content":"I live in Oslo. Is the weather good for hiking today?"}],"tools":[{"name":"get_weather","input_schema":{"type":"object"}}]}`,
		`{"model":"claude-sonnet-4-5","max_tokens":512,"messages":[{"role":"user","content":"I live in Oslo. Is the weather good for hiking today?"},{"role":"assistant","content":[{"type":"tool_use","id":"toolu_01","name":"get_weather","input":{"city":"Oslo"}}]},{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_01","content":"3°C, sunny"}]}],"tools":[{"name":"get_weather","input_schema":{"type":"object"}}]}`},
	"openai_responses": {"input",
		`{"model":"gpt-4.1","input":[{"role":"user","content":"I live in Oslo. Is the weather good for hiking today?"}],"tools":[{"type":"function","name":"get_weather","parameters":{"type":"object"}}]}`,
		`{"model":"gpt-4.1","input":[{"role":"user","content":"I live in Oslo. Is the weather good for hiking today?"},{"type":"function_call","call_id":"call_1","name":"get_weather","arguments":"{\"city\":\"Oslo\"}"},{"type":"function_call_output","call_id":"call_1","output":"3°C, sunny"}],"tools":[{"type":"function","name":"get_weather","parameters":{"type":"object"}}]}`},
}

const toolAnswer = "It is 3°C and sunny in Oslo: good hiking weather."

func TestToolCallTurns(t *testing.T) {
	for _, w := range harness.Wires {
		t.Run(w.Name, func(t *testing.T) { testToolCalls(t, w) })
	}
}

func testToolCalls(t *testing.T, w harness.Wire) {
	tt := toolTurn[w.Name]
	storage := t.TempDir()
	up := harness.NewFakeLLM(t)
	up.Answer = func(body []byte) string {
		if strings.Contains(string(body), "sunny") {
			return toolAnswer
		}
		if strings.Contains(string(body), "weather") {
			return harness.ToolPrefix + "get_weather"
		}
		return "Noted."
	}
	tester := harness.StartCaddy(t, harness.SiteConfig(storage, up.Addr(), ""))
	c := harness.Doer{C: tester.Client}
	key := "key-tools-" + w.Name

	// Something to recall, so both requests of the turn carry a block.
	harness.Send(t, c, up, w, key, w.Body(false, "sys", "I love hiking in the mountains when the weather is good."))
	harness.Settle(t, storage, 1)

	harness.Send(t, c, up, w, key, []byte(tt.first))
	first := up.Last(w.Path)
	harness.Settle(t, storage, 2)
	e := harness.EngineAt(storage)
	owner := e.OwnerID(key)
	turns := func() (n int, empty bool) {
		e.Export(owner, func(m *store.Memory) error {
			if strings.TrimSpace(m.Content) == "" || m.Content == "User:" {
				empty = true
			}
			if m.Kind == "turn" && strings.Contains(m.Content, "Oslo") {
				n++
			}
			return nil
		})
		return
	}
	if n, empty := turns(); n != 0 || empty {
		t.Fatalf("a turn whose answer is only a tool call stored %d transcripts (empty memory: %v)", n, empty)
	}
	if res := harness.SearchFor(t, e, key, "where do I live"); !strings.Contains(res, "User lives in Oslo.") {
		t.Errorf("the user's words in a tool-calling turn were not learned: %q", res)
	}

	clientNext := []byte(tt.next)
	harness.Send(t, c, up, w, key, clientNext)
	next := up.Last(w.Path)
	// The call and its result reach the upstream byte for byte.
	items := gjson.GetBytes(clientNext, tt.array).Array()
	for _, it := range items[1:] {
		if !bytes.Contains(next.Body, []byte(it.Raw)) {
			t.Errorf("tool message changed on the way: %s", it.Raw)
		}
	}
	if gjson.GetBytes(next.Body, "tools").Raw != gjson.GetBytes(clientNext, "tools").Raw {
		t.Errorf("tools changed on the way")
	}
	// The same turn gets the same block: the provider's cache prefix holds
	// across the tool loop, and the turn's own new fact is not fed back.
	b1, b2 := harness.InjectedBlock(first.Body), harness.InjectedBlock(next.Body)
	if b1 == "" || b1 != b2 {
		t.Errorf("the tool continuation got another block\nfirst: %q\nnext:  %q", b1, b2)
	}
	if strings.Contains(b2, "User lives in Oslo.") {
		t.Errorf("the turn's own fact was injected back into it")
	}

	harness.Settle(t, storage, 3)
	if n, empty := turns(); n != 1 || empty {
		t.Errorf("after the tool loop want one transcript of the turn, got %d (empty memory: %v)", n, empty)
	}
	if res := harness.SearchFor(t, e, key, "hiking weather Oslo"); !strings.Contains(res, "Assistant: "+toolAnswer) {
		t.Errorf("the final answer was not stored with the turn: %q", res)
	}
}
