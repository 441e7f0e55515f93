package tools

import (
	"bytes"
	"encoding/base64"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/caddy-memory/memory/inject"
	"github.com/caddy-memory/memory/internal/harness"
)

// TestOverflowOllamaUnderItsContextPassesWhole: Ollama keeps a
// conversation whole when its prompt fits num_ctx, counting an image as
// 768 tokens whatever its size in base64, and never the answer's
// num_predict (server/prompt.go, chatPrompt). Such a request reaches it
// byte for byte: neither a long answer asked for nor a photo shown in an
// earlier turn gets the conversation cut.
func TestOverflowOllamaUnderItsContextPassesWhole(t *testing.T) {
	up := newLimitedLLM(t, 1<<30)
	tester := harness.StartCaddy(t, overflowConfig(t.TempDir(), up.addr(), "trim"))
	photo := make([]byte, 24<<10)
	for i := range photo {
		photo[i] = byte(rand.N(256))
	}
	picture := harness.Msg("user", "What is in this picture?")
	picture["images"] = []string{base64.StdEncoding.EncodeToString(photo)}
	for name, body := range map[string][]byte{
		"num_predict over num_ctx": harness.MustBytes(map[string]any{"model": "llama3", "stream": false,
			"options": map[string]any{"num_ctx": 2048, "num_predict": 4096},
			"messages": []map[string]any{harness.Msg("user", "Hello, I need help planning my week."),
				harness.Msg("assistant", "Of course. What is on it so far?"), harness.Msg("user", "Dentist on Monday, gym on Tuesday.")}}),
		"an image in an earlier turn": harness.MustBytes(map[string]any{"model": "llava", "stream": false,
			"options": map[string]any{"num_ctx": 2048},
			"messages": []map[string]any{picture, harness.Msg("assistant", "A black cat asleep on a red sofa."),
				harness.Msg("user", "What colour is the sofa?")}}),
	} {
		from := up.count()
		req, _ := http.NewRequest(http.MethodPost, harness.CaddyAddr+"/api/chat", bytes.NewReader(body))
		req.Header.Set("Authorization", "Bearer sk-fresh-"+name) // an owner with nothing to inject
		resp, err := tester.Client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if h := resp.Header.Get("X-Memory-Overflow"); resp.StatusCode != 200 || h != "" {
			t.Errorf("%s: status %d, X-Memory-Overflow %q", name, resp.StatusCode, h)
		}
		if sent := up.since(from); len(sent) != 1 || !bytes.Equal(sent[0], body) {
			t.Errorf("%s: Ollama was not sent the request as the client sent it (%d requests)", name, len(sent))
		}
	}
}

// TestOverflowKeepsTheInputOfAStoredResponse: a responses request that
// continues a response the provider stores (previous_response_id) is long
// because of what the provider keeps, and its input is only the newest
// part, here the output of the client's own function call. Cutting it
// would part the call (stored) from its output, and lose that input from
// the stored conversation for good: the client gets the provider's refusal
// unchanged, not an error about an output it did send.
func TestOverflowKeepsTheInputOfAStoredResponse(t *testing.T) {
	refusal := `{"error":{"message":"Your input exceeds the context window of this model. Please adjust your input and try again.","type":"invalid_request_error","param":"input","code":"context_length_exceeded"}}`
	var mu sync.Mutex
	var sent [][]byte
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		mu.Lock()
		sent = append(sent, body)
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		if !strings.Contains(string(body), `"function_call_output"`) {
			io.WriteString(w, `{"error":{"message":"No tool output found for function call call_7.","type":"invalid_request_error","param":"input","code":null}}`)
			return
		}
		io.WriteString(w, refusal) // the stored conversation is over the model's context
	}))
	t.Cleanup(up.Close)
	tester := harness.StartCaddy(t, overflowConfig(t.TempDir(), strings.TrimPrefix(up.URL, "http://"), "trim"))
	body := harness.MustBytes(map[string]any{"model": "gpt-4.1", "previous_response_id": "resp_long", "input": []any{
		map[string]any{"type": "function_call_output", "call_id": "call_7", "output": strings.Repeat("row of the report, ", 200)},
		harness.Msg("user", "Summarise the report."),
	}})
	before := harness.Metric("caddy_memory_overflow_total", `result="not_trimmable"`)
	resp, got := harness.Post(t, tester, "/v1/responses", "sk-long", body)
	if resp.StatusCode != http.StatusBadRequest || string(got) != refusal {
		t.Errorf("the client got %d %s, want the provider's refusal", resp.StatusCode, got)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(sent) != 1 {
		t.Errorf("the upstream was asked %d times, want once", len(sent))
	}
	if harness.Metric("caddy_memory_overflow_total", `result="not_trimmable"`) != before+1 {
		t.Error("not counted as not_trimmable")
	}
}

// TestOverflowWithToolRoundsAsksOnce: with the model's memory tools, a
// conversation refused for its length is cut once; the tool round that
// follows goes cut as well, not whole to be refused again: three upstream
// calls (the refusal, the cut request calling save_memory, the round with
// its result), not a refusal before every round.
func TestOverflowWithToolRoundsAsksOnce(t *testing.T) {
	up := newLimitedLLM(t, 3000)
	up.Answer = func(body []byte) string {
		if toolOutputs(body) == "" {
			return harness.ToolPrefix + `save_memory {"content":"The user asks about the harbour."}`
		}
		return "Saved, and here is more on the harbour."
	}
	cfg := strings.Replace(overflowConfig(t.TempDir(), up.addr(), "trim"), "diagnostics", "diagnostics\n\t\ttools", 1)
	tester := harness.StartCaddy(t, cfg)
	conv := longConversation(harness.Msg("assistant", "a"), harness.Msg("user", "b"))
	from := up.count()
	before := harness.Metric("caddy_memory_overflow_total", `result="rescued"`)
	resp, got := harness.Post(t, tester, "/v1/chat/completions", "sk-long", harness.ChatBody(false, conv...))
	if resp.StatusCode != 200 || gjson.GetBytes(got, "choices.0.message.content").String() != "Saved, and here is more on the harbour." {
		t.Fatalf("the client got %d %s", resp.StatusCode, got)
	}
	if h := resp.Header.Get("X-Memory-Overflow"); !strings.HasPrefix(h, "trimmed ") {
		t.Errorf("X-Memory-Overflow %q", h)
	}
	sent := up.since(from)
	for i, b := range sent[1:] {
		if n := inject.EstimateTokens(string(b)); n > up.limit {
			t.Errorf("request %d after the refusal is %d tokens, over the limit", i+2, n)
		}
	}
	if len(sent) != 3 {
		t.Errorf("the upstream was asked %d times, want 3", len(sent))
	}
	if harness.Metric("caddy_memory_overflow_total", `result="rescued"`) != before+1 {
		t.Error("the rescue was not counted once")
	}
}
