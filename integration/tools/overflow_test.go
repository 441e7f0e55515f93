package tools

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/anthropics/anthropic-sdk-go"
	aoption "github.com/anthropics/anthropic-sdk-go/option"
	"github.com/openai/openai-go/v3"
	ooption "github.com/openai/openai-go/v3/option"
	"github.com/tidwall/gjson"

	"github.com/caddy-memory/memory/inject"
	"github.com/caddy-memory/memory/internal/harness"
)

// Refusals for length, as each provider words them.
const (
	openAIRefusalBody        = `{"error":{"message":"This model's maximum context length is %d tokens. However, your messages resulted in %d tokens. Please reduce the length of the messages.","type":"invalid_request_error","param":"messages","code":"context_length_exceeded"}}`
	anthropicRefusalBody     = `{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: %d tokens > %d maximum"}}`
	anthropicRoomRefusalBody = `{"type":"error","error":{"type":"invalid_request_error","message":"input length and ` + "`max_tokens`" + ` exceed context limit: %d + %d > %d, decrease input length or ` + "`max_tokens`" + ` and try again"}}`
)

// limitedLLM is an upstream that refuses, with its provider's own error,
// a request of more than limit (estimated) tokens, and answers the others
// as the fake model does; Ollama's requests it never refuses. It records
// what it was sent.
type limitedLLM struct {
	*harness.FakeLLM
	limit int
	// room, when set, is the answer's room (max_tokens) Anthropic keeps
	// within the limit, refused with its other error.
	room  int
	front *httptest.Server

	mu   sync.Mutex
	sent [][]byte
}

func newLimitedLLM(t *testing.T, limit int) *limitedLLM {
	l := &limitedLLM{FakeLLM: harness.NewFakeLLM(t), limit: limit}
	l.front = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if r.Header.Get("Content-Encoding") == "gzip" {
			// A provider reads a compressed request decoded.
			zr, err := gzip.NewReader(bytes.NewReader(body))
			if err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			body, _ = io.ReadAll(zr)
			r.Header.Del("Content-Encoding")
		}
		l.mu.Lock()
		l.sent = append(l.sent, body)
		l.mu.Unlock()
		n := inject.EstimateTokens(string(body))
		messages := strings.HasSuffix(r.URL.Path, "/v1/messages")
		if messages && l.room > 0 && n+l.room > l.limit {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusBadRequest)
			fmt.Fprintf(w, anthropicRoomRefusalBody, n, l.room, l.limit)
			return
		}
		if n > l.limit && !strings.HasSuffix(r.URL.Path, "/api/chat") {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusBadRequest)
			if messages {
				fmt.Fprintf(w, anthropicRefusalBody, n, l.limit)
			} else {
				fmt.Fprintf(w, openAIRefusalBody, l.limit, n)
			}
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		l.Serve(w, r)
	}))
	t.Cleanup(l.front.Close)
	return l
}

func (l *limitedLLM) addr() string { return strings.TrimPrefix(l.front.URL, "http://") }

// requests returns what the upstream was sent since the count n.
func (l *limitedLLM) since(n int) [][]byte {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([][]byte(nil), l.sent[n:]...)
}

func (l *limitedLLM) count() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.sent)
}

// longConversation is a conversation of 200 messages: the system prompt,
// then 99 exchanges (the second user turn holds the locker code, a tool
// call and its result sit in the middle), then the question about it.
// call and result are the format's shapes of the tool exchange.
func longConversation(call, result map[string]any) []map[string]any {
	msgs := []map[string]any{harness.Msg("system", "You are a patient assistant.")}
	for i := range 99 {
		user := fmt.Sprintf("Turn %d: tell me more about the history of the harbour, %s", i, strings.Repeat("and its ships ", 12))
		switch i {
		case 0:
			user = "Hello, I need help planning my week."
		case 1:
			user = "Remember that my gym locker code is zq4711."
		}
		msgs = append(msgs, harness.Msg("user", user))
		if i == 50 {
			msgs = append(msgs, call, result)
		}
		msgs = append(msgs, harness.Msg("assistant", fmt.Sprintf("Answer %d: %s", i, strings.Repeat("the harbour grew busy ", 10))))
	}
	return append(msgs, harness.Msg("user", "What is my gym locker code?"))
}

// overflowConfig is a site with memory_api and overflow trim (or off).
func overflowConfig(storage, upstream, overflow string) string {
	return harness.WithStorage(storage, "") + fmt.Sprintf(`http://localhost {
	memory {
		overflow %s
		overflow_ollama_ctx 1500
		diagnostics
	}
	reverse_proxy %s
}
`, overflow, upstream)
}

// learnFirstTurns sends the conversation's first turns through Caddy, one
// request each as a chat client does, so the proxy learns them in the
// conversation; and another owner's look-alike.
func learnFirstTurns(t *testing.T, c *http.Client, storage, path string, conv []map[string]any, body func([]map[string]any) []byte) {
	t.Helper()
	for _, n := range []int{2, 4} {
		req, _ := http.NewRequest(http.MethodPost, harness.CaddyAddr+path, bytes.NewReader(body(conv[:n])))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer sk-long")
		req.Header.Set("X-Api-Key", "sk-long")
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	req, _ := http.NewRequest(http.MethodPost, harness.CaddyAddr+path, bytes.NewReader(body([]map[string]any{harness.Msg("user", "Remember that my gym locker code is zq9999.")})))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer sk-other")
	req.Header.Set("X-Api-Key", "sk-other")
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	harness.Settle(t, storage, 3)
}

// checkRescued checks what the upstream was sent for one long request:
// the whole conversation first (refused), then a cut one (see checkCut).
func checkRescued(t *testing.T, up *limitedLLM, from int, ids []string) {
	t.Helper()
	sent := up.since(from)
	if len(sent) != 2 {
		t.Fatalf("the upstream was asked %d times, want 2 (the refused request, then the cut one)", len(sent))
	}
	checkCut(t, sent[0], sent[1], up.limit, ids)
}

// checkCut checks a conversation over limit tokens and what was sent
// instead: a cut one under the limit, carrying the locker code in its
// memory block, never the other owner's, and no tool call parted from its
// result.
func checkCut(t *testing.T, whole, cut []byte, limit int, ids []string) {
	t.Helper()
	if inject.EstimateTokens(string(whole)) <= limit {
		t.Fatalf("the conversation was under the limit: the test shows nothing")
	}
	second := string(cut)
	if n := inject.EstimateTokens(second); n > limit {
		t.Errorf("the cut request is %d tokens, over the limit of %d", n, limit)
	}
	start, end := strings.Index(second, "<memory-context"), strings.Index(second, inject.BlockEnd)
	if start < 0 || end < start || strings.Count(second, "<memory-context") != 1 {
		t.Fatalf("the cut request does not carry one memory block:\n%s", second)
	}
	if block := second[start:end]; !strings.Contains(block, "zq4711") {
		t.Errorf("the block lacks the cut turns' locker code:\n%s", block)
	}
	if strings.Contains(second, "zq9999") {
		t.Errorf("the cut request carries another owner's memory")
	}
	for _, id := range ids {
		if c := strings.Count(second, `"`+id+`"`); c != 0 && c != 2 {
			t.Errorf("tool call %s appears %d times: a call parted from its result", id, c)
		}
	}
	if !strings.Contains(second, "What is my gym locker code?") {
		t.Errorf("the cut request lost the question")
	}
}

// TestOverflowRescuedWithTheOfficialSDKs: a conversation longer than the
// model takes, sent by the OpenAI and Anthropic Go SDKs (JSON and
// streamed), is refused by the upstream with its provider's error and
// asked again cut: the client gets an ordinary answer.
func TestOverflowRescuedWithTheOfficialSDKs(t *testing.T) {
	up := newLimitedLLM(t, 3000)
	up.Answer = func(body []byte) string { return "Your code is in the block." }
	storage := t.TempDir()
	tester := harness.StartCaddy(t, overflowConfig(storage, up.addr(), "trim"))
	ctx := t.Context()

	chatCall := map[string]any{"role": "assistant", "content": nil, "tool_calls": []any{map[string]any{"id": "call_zq1", "type": "function",
		"function": map[string]any{"name": "weather", "arguments": "{}"}}}}
	chatResult := map[string]any{"role": "tool", "tool_call_id": "call_zq1", "content": "sunny"}
	conv := longConversation(chatCall, chatResult)
	learnFirstTurns(t, tester.Client, storage, "/v1/chat/completions", conv, func(m []map[string]any) []byte { return harness.ChatBody(false, m...) })

	var params []openai.ChatCompletionMessageParamUnion
	if err := json.Unmarshal(harness.MustBytes(conv), &params); err != nil {
		t.Fatal(err)
	}
	client := openai.NewClient(ooption.WithBaseURL(harness.CaddyAddr+"/v1/"), ooption.WithAPIKey("sk-long"),
		ooption.WithHTTPClient(tester.Client), ooption.WithMaxRetries(0))
	from := up.count()
	var raw *http.Response
	res, err := client.Chat.Completions.New(ctx, openai.ChatCompletionNewParams{Model: "gpt-4o-mini", Messages: params},
		ooption.WithResponseInto(&raw))
	if err != nil || res.Choices[0].Message.Content != "Your code is in the block." {
		t.Fatalf("OpenAI SDK, JSON: %v %+v", err, res)
	}
	if h := raw.Header.Get("X-Memory-Overflow"); !strings.HasPrefix(h, "trimmed ") || !strings.HasSuffix(h, " messages") {
		t.Errorf("X-Memory-Overflow: %q", h)
	}
	checkRescued(t, up, from, []string{"call_zq1"})

	from = up.count()
	stream := client.Chat.Completions.NewStreaming(ctx, openai.ChatCompletionNewParams{Model: "gpt-4o-mini", Messages: params})
	var acc openai.ChatCompletionAccumulator
	for stream.Next() {
		acc.AddChunk(stream.Current())
	}
	if err := stream.Err(); err != nil || acc.Choices[0].Message.Content != "Your code is in the block." {
		t.Fatalf("OpenAI SDK, streamed: %v", err)
	}
	checkRescued(t, up, from, []string{"call_zq1"})

	// Anthropic: the tool exchange is tool_use and tool_result blocks.
	aCall := map[string]any{"role": "assistant", "content": []any{map[string]any{"type": "tool_use", "id": "toolu_zq1", "name": "weather", "input": map[string]any{}}}}
	aResult := map[string]any{"role": "user", "content": []any{map[string]any{"type": "tool_result", "tool_use_id": "toolu_zq1", "content": "sunny"}}}
	aconv := longConversation(aCall, aResult)[1:] // the system prompt is a field of its own
	aBody := func(m []map[string]any) []byte {
		return harness.MustBytes(map[string]any{"model": "claude-x", "max_tokens": 100, "system": "You are a patient assistant.", "messages": m})
	}
	learnFirstTurns(t, tester.Client, storage, "/v1/messages", aconv, aBody)
	var aparams []anthropic.MessageParam
	if err := json.Unmarshal(harness.MustBytes(aconv), &aparams); err != nil {
		t.Fatal(err)
	}
	ac := anthropic.NewClient(aoption.WithBaseURL(harness.CaddyAddr), aoption.WithAPIKey("sk-long"), aoption.WithHTTPClient(tester.Client), aoption.WithMaxRetries(0))
	from = up.count()
	msgRes, err := ac.Messages.New(ctx, anthropic.MessageNewParams{Model: "claude-x", MaxTokens: 100,
		System: []anthropic.TextBlockParam{{Text: "You are a patient assistant."}}, Messages: aparams})
	if err != nil || len(msgRes.Content) == 0 || msgRes.Content[0].Text != "Your code is in the block." {
		t.Fatalf("Anthropic SDK, JSON: %v %+v", err, msgRes)
	}
	checkRescued(t, up, from, []string{"toolu_zq1"})
	from = up.count()
	astream := ac.Messages.NewStreaming(ctx, anthropic.MessageNewParams{Model: "claude-x", MaxTokens: 100,
		System: []anthropic.TextBlockParam{{Text: "You are a patient assistant."}}, Messages: aparams})
	var message anthropic.Message
	for astream.Next() {
		if err := message.Accumulate(astream.Current()); err != nil {
			t.Fatal(err)
		}
	}
	if err := astream.Err(); err != nil || len(message.Content) == 0 || message.Content[0].Text != "Your code is in the block." {
		t.Fatalf("Anthropic SDK, streamed: %v %+v", err, message)
	}
	checkRescued(t, up, from, []string{"toolu_zq1"})
}

// TestOverflowAnthropicRoomForTheAnswer: Anthropic's other length refusal
// ("input length and `max_tokens` exceed context limit: A + B > C") is
// rescued, the cut request leaving the answer its room.
func TestOverflowAnthropicRoomForTheAnswer(t *testing.T) {
	up := newLimitedLLM(t, 5000)
	up.room = 2000
	up.Answer = func(body []byte) string { return "Your code is in the block." }
	storage := t.TempDir()
	tester := harness.StartCaddy(t, overflowConfig(storage, up.addr(), "trim"))
	aCall := map[string]any{"role": "assistant", "content": []any{map[string]any{"type": "tool_use", "id": "toolu_zq2", "name": "weather", "input": map[string]any{}}}}
	aResult := map[string]any{"role": "user", "content": []any{map[string]any{"type": "tool_result", "tool_use_id": "toolu_zq2", "content": "sunny"}}}
	aconv := longConversation(aCall, aResult)[1:]
	aBody := func(m []map[string]any) []byte {
		return harness.MustBytes(map[string]any{"model": "claude-x", "max_tokens": up.room, "system": "You are a patient assistant.", "messages": m})
	}
	learnFirstTurns(t, tester.Client, storage, "/v1/messages", aconv, aBody)
	from := up.count()
	resp, body := harness.SendChat(t, tester.Client, "/v1/messages", "", map[string]string{"X-Api-Key": "sk-long"}, aBody(aconv))
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), "Your code is in the block.") {
		t.Fatalf("the client got %d %s, want the rescued answer", resp.StatusCode, body)
	}
	sent := up.since(from)
	if len(sent) != 2 {
		t.Fatalf("the upstream was asked %d times, want 2 (the refused request, then the cut one)", len(sent))
	}
	checkCut(t, sent[0], sent[1], up.limit-up.room, []string{"toolu_zq2"})
}

// TestOverflowRescuesACompressedRequest: a gzip request the handler had
// nothing to add to goes on compressed; refused for its length, it is cut
// decoded and asked again.
func TestOverflowRescuesACompressedRequest(t *testing.T) {
	up := newLimitedLLM(t, 3000)
	up.Answer = func(body []byte) string { return "Fine." }
	tester := harness.StartCaddy(t, overflowConfig(t.TempDir(), up.addr(), "trim"))
	whole := harness.ChatBody(false, longConversation(harness.Msg("assistant", "Noted."), harness.Msg("user", "Thanks."))...)
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write(whole)
	zw.Close()
	resp, body := harness.SendChat(t, tester.Client, "/v1/chat/completions", "sk-gzip-new", map[string]string{"Content-Encoding": "gzip"}, gz.Bytes())
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), "Fine.") {
		t.Fatalf("the client got %d %s, want the rescued answer", resp.StatusCode, body)
	}
	sent := up.since(0)
	if len(sent) != 2 || !bytes.Equal(sent[0], whole) {
		t.Fatalf("the upstream was asked %d times, want the whole request, then the cut one", len(sent))
	}
	if n := inject.EstimateTokens(string(sent[1])); n > up.limit || !strings.Contains(string(sent[1]), "What is my gym locker code?") {
		t.Errorf("the cut request: %d tokens (limit %d): %.300s", n, up.limit, sent[1])
	}
}

// TestOverflowOllamaIsCutBeforeItIsSent: Ollama never refuses; a request
// over its context (options.num_ctx) is cut before it is sent.
func TestOverflowOllamaIsCutBeforeItIsSent(t *testing.T) {
	up := newLimitedLLM(t, 1<<30)
	storage := t.TempDir()
	tester := harness.StartCaddy(t, overflowConfig(storage, up.addr(), "trim"))
	call := map[string]any{"role": "assistant", "content": "", "tool_calls": []any{map[string]any{"function": map[string]any{"name": "weather_zq1", "arguments": map[string]any{}}}}}
	result := map[string]any{"role": "tool", "tool_name": "weather_zq1", "content": "sunny"}
	conv := longConversation(call, result)
	body := func(m []map[string]any) []byte {
		return harness.MustBytes(map[string]any{"model": "llama3", "stream": false, "options": map[string]any{"num_ctx": 2000}, "messages": m})
	}
	learnFirstTurns(t, tester.Client, storage, "/api/chat", conv, body)
	from := up.count()
	req, _ := http.NewRequest(http.MethodPost, harness.CaddyAddr+"/api/chat", bytes.NewReader(body(conv)))
	req.Header.Set("Authorization", "Bearer sk-long")
	resp, err := tester.Client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("X-Memory-Overflow"), "trimmed ") {
		t.Errorf("status %d, X-Memory-Overflow %q", resp.StatusCode, resp.Header.Get("X-Memory-Overflow"))
	}
	sent := up.since(from)
	if len(sent) != 1 {
		t.Fatalf("Ollama was sent %d requests, want one", len(sent))
	}
	checkCut(t, body(conv), sent[0], 2000, []string{"weather_zq1"})
}

// TestOverflowOffGivesTheRefusal: without overflow trim, the client gets
// the provider's refusal byte for byte; with it, a refusal that is not
// for length passes as it came, and a conversation that cannot be cut
// (one long message) gets the refusal too.
func TestOverflowOffGivesTheRefusal(t *testing.T) {
	up := newLimitedLLM(t, 1500)
	storage := t.TempDir()
	tester := harness.StartCaddy(t, overflowConfig(storage, up.addr(), "off"))
	conv := longConversation(harness.Msg("assistant", "a"), harness.Msg("user", "b"))
	resp, got := harness.Post(t, tester, "/v1/chat/completions", "sk-long", harness.ChatBody(false, conv...))
	n := inject.EstimateTokens(string(up.since(up.count() - 1)[0]))
	if want := fmt.Sprintf(openAIRefusalBody, 1500, n); resp.StatusCode != http.StatusBadRequest || string(got) != want {
		t.Errorf("overflow off: %d %s, want 400 %s", resp.StatusCode, got, want)
	}

	harness.Reload(t, tester, overflowConfig(storage, up.addr(), "trim"))
	one := harness.ChatBody(false, harness.Msg("user", strings.Repeat("one very long message ", 500)))
	from := up.count()
	before := harness.Metric("caddy_memory_overflow_total", `result="not_trimmable"`)
	resp, got = harness.Post(t, tester, "/v1/chat/completions", "sk-long", one)
	if resp.StatusCode != http.StatusBadRequest || gjson.GetBytes(got, "error.code").String() != "context_length_exceeded" || len(up.since(from)) != 1 {
		t.Errorf("one long message: %d %s, %d requests upstream", resp.StatusCode, got, len(up.since(from)))
	}
	if harness.Metric("caddy_memory_overflow_total", `result="not_trimmable"`) != before+1 {
		t.Error("not counted as not_trimmable")
	}
}

// balconyConversation is a conversation of 200 messages seen whole for the
// first time: the system prompt, 99 exchanges (the second says where the
// balcony faces; the others are about something else), then the question
// that needs it.
func balconyConversation() []map[string]any {
	msgs := []map[string]any{harness.Msg("system", "You are a patient gardening assistant.")}
	for i := range 99 {
		user := fmt.Sprintf("Turn %d: tell me more about the history of the harbour, %s", i, strings.Repeat("and its ships ", 12))
		if i == 1 {
			user = "My balcony faces north, so it gets hardly any direct sun."
		}
		msgs = append(msgs, harness.Msg("user", user), harness.Msg("assistant", fmt.Sprintf("Answer %d: %s", i, strings.Repeat("the harbour grew busy ", 10))))
	}
	return append(msgs, harness.Msg("user", "Which plants would grow well on my balcony?"))
}

// TestOverflowRescuesAFirstSeenConversation: a long conversation sent whole
// for the first time (a client that keeps its own history: nothing of it
// is stored) is cut to fit, and the cut turn that the last question needs
// comes back under "Earlier in this conversation", found among the cut
// messages themselves, within the block's budget; another owner's memory
// of the same kind never appears. Refused by an OpenAI-style upstream, and
// cut before sending for Ollama.
func TestOverflowRescuesAFirstSeenConversation(t *testing.T) {
	up := newLimitedLLM(t, 3000)
	storage := t.TempDir()
	tester := harness.StartCaddy(t, overflowConfig(storage, up.addr(), "trim"))
	// Another owner said the opposite, and it is stored.
	harness.SendChat(t, tester.Client, "/v1/chat/completions", "sk-south", nil, harness.ChatBody(false, harness.Msg("user", "My balcony faces south and gets full sun all day.")))
	harness.Settle(t, storage, 1)

	conv := balconyConversation()
	check := func(name string, cut []byte, limit int) {
		t.Helper()
		block := harness.InjectedBlock(cut)
		earlier := strings.Index(block, "Earlier in this conversation")
		if earlier < 0 || !strings.Contains(block[earlier:], "User: My balcony faces north") {
			t.Errorf("%s: the cut request's block lacks the cut turn under \"Earlier in this conversation\":\n%s", name, block)
		}
		if strings.Contains(string(cut), "south") || strings.Contains(string(cut), "Turn 1:") {
			t.Errorf("%s: the cut request carries another owner's memory or a turn the question does not need:\n%s", name, block)
		}
		if n := inject.EstimateTokens(block); n > 800 {
			t.Errorf("%s: the block is %d tokens, over max_tokens", name, n)
		}
		if n := inject.EstimateTokens(string(cut)); n > limit || !strings.Contains(string(cut), "Which plants would grow well on my balcony?") {
			t.Errorf("%s: the cut request is %d tokens (limit %d), or lost the question", name, n, limit)
		}
	}

	from := up.count()
	resp, _ := harness.SendChat(t, tester.Client, "/v1/chat/completions", "sk-balcony", nil, harness.ChatBody(false, conv...))
	sent := up.since(from)
	if resp.StatusCode != http.StatusOK || len(sent) != 2 {
		t.Fatalf("status %d, %d upstream requests; want the refused request, then the cut one, answered", resp.StatusCode, len(sent))
	}
	if harness.HasBlock(sent[0]) {
		t.Errorf("the first-seen conversation had a block before it was cut: nothing was stored for it")
	}
	check("chat completions", sent[1], up.limit)

	ollama := harness.MustBytes(map[string]any{"model": "llama3", "stream": false, "options": map[string]any{"num_ctx": 2000}, "messages": conv})
	from = up.count()
	resp, _ = harness.SendChat(t, tester.Client, "/api/chat", "sk-balcony-ollama", nil, ollama)
	if sent = up.since(from); resp.StatusCode != http.StatusOK || len(sent) != 1 {
		t.Fatalf("Ollama: status %d, %d upstream requests; want one, cut before it was sent", resp.StatusCode, len(sent))
	}
	check("Ollama", sent[0], 2000)
}
