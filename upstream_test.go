package memory

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tidwall/gjson"

	"github.com/caddy-memory/memory/inject"
	"github.com/caddy-memory/memory/internal/contentenc"
)

// fakeLLM is an upstream that speaks each wire format the handler knows,
// JSON and streamed, the way the real providers do, and records every
// request it receives and every byte it sends.
type fakeLLM struct {
	*httptest.Server
	t *testing.T

	mu       sync.Mutex
	requests []recorded
	// inflight counts requests being served: one is recorded only once
	// its answer is written, and a client can have read the whole answer
	// before that.
	inflight atomic.Int32

	// answer decides the assistant's reply from the request body; default
	// "Noted.". A reply starting with toolPrefix is sent as tool calls
	// (see fakeCalls); text before the prefix is said before the calls.
	answer func(body []byte) string
	// gate, when set, makes a stream wait for a value after each chunk, so a
	// test can prove the client saw a chunk before the next was sent.
	gate chan struct{}
	// gzip compresses answers whatever the request asked for.
	gzip bool
	// responses counts answers of the responses API, which get ids
	// resp_1, resp_2, ...
	responses int
}

// toolPrefix marks an answer that calls tools: "TOOL:get_weather" or, with
// arguments and several calls, `TOOL:recall_memory {"query":"dog"}|get_weather`.
const toolPrefix = "TOOL:"

// fakeCall is a tool call the fake model makes.
type fakeCall struct {
	id, name, args string
}

// fakeCalls parses what follows toolPrefix; a call without arguments gets
// {"city":"Oslo"}. Ids are call_1, call_2, ... (toolu_01, ... for Anthropic).
func fakeCalls(spec string) []fakeCall {
	var calls []fakeCall
	for i, c := range strings.Split(spec, "|") {
		name, args, _ := strings.Cut(strings.TrimSpace(c), " ")
		if args == "" {
			args = `{"city":"Oslo"}`
		}
		calls = append(calls, fakeCall{fmt.Sprintf("call_%d", i+1), name, args})
	}
	return calls
}

// input is the call's arguments as a JSON object.
func (c fakeCall) input() json.RawMessage { return json.RawMessage(c.args) }

type recorded struct {
	Method, Path string
	Header       http.Header
	Body         []byte
	Response     []byte // exactly what was written back
}

func newFakeLLM(t *testing.T) *fakeLLM {
	f := &fakeLLM{t: t}
	f.Server = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.Close)
	return f
}

// newFakeOpenAI is newFakeLLM under the name the first tests knew it by.
func newFakeOpenAI(t *testing.T) *fakeLLM { return newFakeLLM(t) }

// addr is host:port for a Caddyfile reverse_proxy line.
func (f *fakeLLM) addr() string { return strings.TrimPrefix(f.URL, "http://") }

// streamer writes one response, chunk by chunk.
type streamer struct {
	f     *fakeLLM
	w     http.ResponseWriter
	rc    *http.ResponseController
	out   bytes.Buffer // what the client is sent, before any compression
	gz    *gzip.Writer
	wire  bytes.Buffer // what went on the wire
	begun bool
}

func (s *streamer) start(contentType string, stream bool) {
	s.w.Header().Set("Content-Type", contentType)
	if stream {
		s.w.Header().Set("Cache-Control", "no-cache")
	}
	if s.f.gzip {
		s.w.Header().Set("Content-Encoding", "gzip")
		s.gz = gzip.NewWriter(io.MultiWriter(s.w, &s.wire))
	}
	s.w.WriteHeader(http.StatusOK)
	s.begun = true
}

// chunk writes one piece and, when streaming, flushes it and waits at the gate.
func (s *streamer) chunk(p string, stream bool) {
	s.out.WriteString(p)
	if s.gz != nil {
		io.WriteString(s.gz, p)
		if stream {
			s.gz.Flush()
		}
	} else {
		s.wire.WriteString(p)
		io.WriteString(s.w, p)
	}
	if !stream {
		return
	}
	s.rc.Flush()
	if s.f.gate != nil {
		select {
		case <-s.f.gate:
		case <-time.After(5 * time.Second):
			s.f.t.Errorf("the client did not receive a streamed chunk within 5s: the proxy is holding it back")
		}
	}
}

func (s *streamer) end() {
	if s.gz != nil {
		s.gz.Close()
	}
}

func (f *fakeLLM) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	rec := recorded{Method: r.Method, Path: r.URL.Path, Header: r.Header.Clone(), Body: body}
	s := &streamer{f: f, w: w, rc: http.NewResponseController(w)}
	f.inflight.Add(1)
	defer f.inflight.Add(-1) // after the recording below
	defer func() {
		rec.Response = s.wire.Bytes()
		f.mu.Lock()
		f.requests = append(f.requests, rec)
		f.mu.Unlock()
	}()
	dialect := inject.ForPath(r.URL.Path)
	if enc := r.Header.Get("Content-Encoding"); !contentenc.Identity(enc) {
		// Like the providers, read compressed request bodies; the recording
		// keeps the bytes as received.
		decoded, err := contentenc.Decode(enc, body, 2<<20, false)
		if errors.Is(err, contentenc.ErrTooLarge) {
			http.Error(w, "request body too large", http.StatusRequestEntityTooLarge)
			return
		}
		if err != nil {
			http.Error(w, "cannot decode body: "+err.Error(), http.StatusBadRequest)
			return
		}
		body = decoded
	}
	if r.Method != http.MethodPost || dialect == nil || !json.Valid(body) {
		s.start("text/plain", false)
		s.chunk("upstream ok", false)
		s.end()
		return
	}
	text := "Noted."
	if f.answer != nil {
		text = f.answer(body)
	}
	var tool []fakeCall
	if before, spec, ok := strings.Cut(text, toolPrefix); ok {
		text, tool = before, fakeCalls(spec)
	}
	stream := gjson.GetBytes(body, "stream").Bool()
	switch dialect.Name() {
	case inject.NameOpenAIChat:
		openAIChatAnswer(s, stream, gjson.GetBytes(body, "stream_options.include_usage").Bool(), text, tool)
	case inject.NameAnthropic:
		anthropicAnswer(s, stream, text, tool)
	case inject.NameOllama:
		if v := gjson.GetBytes(body, "stream"); !v.Exists() {
			stream = true // Ollama streams unless told not to
		}
		ollamaAnswer(s, stream, text, tool)
	case inject.NameOpenAIResponses:
		f.mu.Lock()
		f.responses++
		id := fmt.Sprintf("resp_%d", f.responses)
		f.mu.Unlock()
		responsesAnswer(s, stream, id, text, tool)
	}
	s.end()
}

func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}

// words splits an answer into streamed pieces, keeping the spaces.
func words(text string) []string {
	if text == "" {
		return nil
	}
	return strings.SplitAfter(text, " ")
}

func openAIChatAnswer(s *streamer, stream, usage bool, text string, tool []fakeCall) {
	var toolCalls []any
	for _, c := range tool {
		toolCalls = append(toolCalls, map[string]any{"id": c.id, "type": "function",
			"function": map[string]any{"name": c.name, "arguments": c.args}})
	}
	if !stream {
		msg := map[string]any{"role": "assistant", "content": text, "refusal": nil}
		finish := "stop"
		if tool != nil {
			msg["tool_calls"], finish = toolCalls, "tool_calls"
			if text == "" {
				msg["content"] = nil
			}
		}
		s.start("application/json", false)
		s.chunk(mustJSON(map[string]any{
			"id": "chatcmpl-json", "object": "chat.completion", "created": 1, "model": "fake",
			"choices": []any{map[string]any{"index": 0, "finish_reason": finish, "logprobs": nil, "message": msg}},
			"usage":   map[string]any{"prompt_tokens": 10, "completion_tokens": 3, "total_tokens": 13},
		}), false)
		return
	}
	chunk := func(delta map[string]any, finish any) string {
		return "data: " + mustJSON(map[string]any{
			"id": "chatcmpl-sse", "object": "chat.completion.chunk", "created": 1, "model": "fake",
			"choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish}},
		}) + "\n\n"
	}
	s.start("text/event-stream", true)
	s.chunk(chunk(map[string]any{"role": "assistant", "content": ""}, nil), true)
	for _, w := range words(text) {
		s.chunk(chunk(map[string]any{"content": w}, nil), true)
	}
	finish := "stop"
	for i, c := range tool {
		finish = "tool_calls"
		// As OpenAI streams a call: id and name first, then the arguments.
		s.chunk(chunk(map[string]any{"tool_calls": []any{map[string]any{"index": i, "id": c.id, "type": "function",
			"function": map[string]any{"name": c.name, "arguments": ""}}}}, nil), true)
		s.chunk(chunk(map[string]any{"tool_calls": []any{map[string]any{"index": i,
			"function": map[string]any{"arguments": c.args}}}}, nil), true)
	}
	s.chunk(chunk(map[string]any{}, finish), true)
	if usage { // stream_options.include_usage: a last chunk without choices
		s.chunk("data: "+mustJSON(map[string]any{"id": "chatcmpl-sse", "object": "chat.completion.chunk", "created": 1, "model": "fake",
			"choices": []any{}, "usage": map[string]any{"prompt_tokens": 10, "completion_tokens": 3, "total_tokens": 13}})+"\n\n", true)
	}
	s.chunk("data: [DONE]\n\n", true)
}

func anthropicAnswer(s *streamer, stream bool, text string, tool []fakeCall) {
	stop := "end_turn"
	var content []any
	if text != "" {
		content = append(content, map[string]any{"type": "text", "text": text})
	}
	for i, c := range tool {
		stop = "tool_use"
		content = append(content, map[string]any{"type": "tool_use", "id": fmt.Sprintf("toolu_%02d", i+1), "name": c.name, "input": c.input()})
	}
	usage := map[string]any{"input_tokens": 10, "output_tokens": 3}
	if !stream {
		s.start("application/json", false)
		s.chunk(mustJSON(map[string]any{
			"id": "msg_json", "type": "message", "role": "assistant", "model": "claude-fake",
			"content": content, "stop_reason": stop, "stop_sequence": nil, "usage": usage,
		}), false)
		return
	}
	event := func(name string, data map[string]any) string {
		data["type"] = name
		return "event: " + name + "\ndata: " + mustJSON(data) + "\n\n"
	}
	s.start("text/event-stream", true)
	s.chunk(event("message_start", map[string]any{"message": map[string]any{
		"id": "msg_sse", "type": "message", "role": "assistant", "model": "claude-fake", "content": []any{},
		"stop_reason": nil, "stop_sequence": nil, "usage": map[string]any{"input_tokens": 10, "output_tokens": 1}}}), true)
	s.chunk(event("ping", map[string]any{}), true)
	index := 0
	if text != "" {
		s.chunk(event("content_block_start", map[string]any{"index": index, "content_block": map[string]any{"type": "text", "text": ""}}), true)
		for _, w := range words(text) {
			s.chunk(event("content_block_delta", map[string]any{"index": index, "delta": map[string]any{"type": "text_delta", "text": w}}), true)
		}
		s.chunk(event("content_block_stop", map[string]any{"index": index}), true)
		index++
	}
	for i, c := range tool {
		s.chunk(event("content_block_start", map[string]any{"index": index, "content_block": map[string]any{"type": "tool_use",
			"id": fmt.Sprintf("toolu_%02d", i+1), "name": c.name, "input": map[string]any{}}}), true)
		s.chunk(event("content_block_delta", map[string]any{"index": index, "delta": map[string]any{"type": "input_json_delta", "partial_json": c.args}}), true)
		s.chunk(event("content_block_stop", map[string]any{"index": index}), true)
		index++
	}
	s.chunk(event("message_delta", map[string]any{"delta": map[string]any{"stop_reason": stop, "stop_sequence": nil}, "usage": map[string]any{"output_tokens": 3}}), true)
	s.chunk(event("message_stop", map[string]any{}), true)
}

func ollamaAnswer(s *streamer, stream bool, text string, tool []fakeCall) {
	msg := func(content string) map[string]any {
		return map[string]any{"role": "assistant", "content": content}
	}
	final := map[string]any{"model": "llama-fake", "created_at": "2026-11-21T10:00:00Z", "message": msg(text),
		"done": true, "done_reason": "stop", "total_duration": 1000, "prompt_eval_count": 10, "eval_count": 3}
	var calls []any
	for _, c := range tool {
		calls = append(calls, map[string]any{"function": map[string]any{"name": c.name, "arguments": c.input()}})
	}
	if !stream {
		if calls != nil {
			final["message"].(map[string]any)["tool_calls"] = calls
		}
		s.start("application/json; charset=utf-8", false)
		s.chunk(mustJSON(final), false)
		return
	}
	s.start("application/x-ndjson", true)
	for _, w := range words(text) {
		s.chunk(mustJSON(map[string]any{"model": "llama-fake", "created_at": "2026-11-21T10:00:00Z", "message": msg(w), "done": false})+"\n", true)
	}
	if calls != nil {
		// Ollama streams calls whole, in a message of their own.
		s.chunk(mustJSON(map[string]any{"model": "llama-fake", "created_at": "2026-11-21T10:00:00Z",
			"message": map[string]any{"role": "assistant", "content": "", "tool_calls": calls}, "done": false})+"\n", true)
	}
	final["message"] = msg("")
	s.chunk(mustJSON(final)+"\n", true)
}

func responsesAnswer(s *streamer, stream bool, id, text string, tool []fakeCall) {
	var output []any
	if text != "" {
		output = append(output, map[string]any{"type": "message", "id": "msg_1", "status": "completed", "role": "assistant",
			"content": []any{map[string]any{"type": "output_text", "text": text, "annotations": []any{}}}})
	}
	for i, c := range tool {
		output = append(output, map[string]any{"type": "function_call", "id": fmt.Sprintf("fc_%d", i+1), "call_id": c.id, "name": c.name,
			"arguments": c.args, "status": "completed"})
	}
	response := func(status string, out []any) map[string]any {
		return map[string]any{"id": id, "object": "response", "created_at": 1, "status": status,
			"model": "gpt-fake", "output": out, "parallel_tool_calls": true, "tool_choice": "auto", "tools": []any{},
			"usage": map[string]any{"input_tokens": 10, "output_tokens": 3, "total_tokens": 13,
				"input_tokens_details": map[string]any{"cached_tokens": 0}, "output_tokens_details": map[string]any{"reasoning_tokens": 0}}}
	}
	if !stream {
		s.start("application/json", false)
		s.chunk(mustJSON(response("completed", output)), false)
		return
	}
	seq := 0
	event := func(name string, data map[string]any) string {
		data["type"], data["sequence_number"] = name, seq
		seq++
		return "event: " + name + "\ndata: " + mustJSON(data) + "\n\n"
	}
	s.start("text/event-stream", true)
	s.chunk(event("response.created", map[string]any{"response": response("in_progress", []any{})}), true)
	index := 0
	if text != "" {
		s.chunk(event("response.output_item.added", map[string]any{"output_index": index, "item": map[string]any{
			"type": "message", "id": "msg_1", "status": "in_progress", "role": "assistant", "content": []any{}}}), true)
		s.chunk(event("response.content_part.added", map[string]any{"item_id": "msg_1", "output_index": index, "content_index": 0,
			"part": map[string]any{"type": "output_text", "text": "", "annotations": []any{}}}), true)
		for _, w := range words(text) {
			s.chunk(event("response.output_text.delta", map[string]any{"item_id": "msg_1", "output_index": index, "content_index": 0, "delta": w}), true)
		}
		s.chunk(event("response.output_text.done", map[string]any{"item_id": "msg_1", "output_index": index, "content_index": 0, "text": text}), true)
		s.chunk(event("response.output_item.done", map[string]any{"output_index": index, "item": output[0]}), true)
		index++
	}
	for range tool {
		item := output[index]
		s.chunk(event("response.output_item.added", map[string]any{"output_index": index, "item": item}), true)
		s.chunk(event("response.function_call_arguments.done", map[string]any{"output_index": index,
			"item_id": item.(map[string]any)["id"], "arguments": item.(map[string]any)["arguments"]}), true)
		s.chunk(event("response.output_item.done", map[string]any{"output_index": index, "item": item}), true)
		index++
	}
	s.chunk(event("response.completed", map[string]any{"response": response("completed", output)}), true)
}

// waitRecorded waits (a little) for the requests being served to be recorded.
func (f *fakeLLM) waitRecorded() {
	for deadline := time.Now().Add(2 * time.Second); f.inflight.Load() > 0 && time.Now().Before(deadline); {
		time.Sleep(time.Millisecond)
	}
}

// last returns the latest request to a path suffix.
func (f *fakeLLM) last(suffix string) recorded {
	f.waitRecorded()
	f.mu.Lock()
	defer f.mu.Unlock()
	for i := len(f.requests) - 1; i >= 0; i-- {
		if strings.HasSuffix(f.requests[i].Path, suffix) {
			return f.requests[i]
		}
	}
	f.t.Fatalf("upstream got no request to %s", suffix)
	return recorded{}
}

func (f *fakeLLM) all() []recorded {
	f.waitRecorded()
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]recorded(nil), f.requests...)
}

// chatBody builds a chat completions request body.
func chatBody(stream bool, msgs ...map[string]any) []byte {
	b, _ := json.Marshal(map[string]any{"model": "gpt-test", "stream": stream, "messages": msgs})
	return b
}

func msg(role, content string) map[string]any {
	return map[string]any{"role": role, "content": content}
}

// messages decodes the upstream's view of a request's messages.
func messages(t *testing.T, body []byte) []map[string]any {
	t.Helper()
	var v struct {
		Messages []map[string]any `json:"messages"`
	}
	if err := json.Unmarshal(body, &v); err != nil {
		t.Fatalf("upstream received invalid JSON: %v\n%s", err, body)
	}
	return v.Messages
}

// contentString joins the text of a message's content, whatever its shape.
func contentString(t *testing.T, m map[string]any) string {
	t.Helper()
	switch c := m["content"].(type) {
	case string:
		return c
	case []any:
		var parts []string
		for _, p := range c {
			if pm, ok := p.(map[string]any); ok {
				switch pm["type"] {
				case "text", "input_text", "output_text":
					parts = append(parts, fmt.Sprint(pm["text"]))
				}
			}
		}
		return strings.Join(parts, "\n")
	}
	return ""
}

// hasBlock reports whether a raw request body carries a memory block. It
// looks for the end marker: the start marker's quotes are escaped in JSON.
func hasBlock(body []byte) bool { return bytes.Contains(body, []byte(inject.BlockEnd)) }
