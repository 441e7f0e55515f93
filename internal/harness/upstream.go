package harness

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

// FakeLLM is an upstream that speaks each wire format the handler knows,
// JSON and streamed, the way the real providers do, and records every
// request it receives and every byte it sends.
type FakeLLM struct {
	*httptest.Server
	T *testing.T

	Mu       sync.Mutex
	Requests []Recorded
	// Inflight counts requests being served: one is recorded only once
	// its answer is written, and a client can have read the whole answer
	// before that.
	Inflight atomic.Int32

	// Answer decides the assistant's reply from the request body; default
	// "Noted.". A reply starting with toolPrefix is sent as tool calls
	// (see fakeCalls); text before the prefix is said before the calls.
	Answer func(body []byte) string
	// Gate, when set, makes a stream wait for a value after each chunk, so a
	// test can prove the client saw a chunk before the next was sent.
	Gate chan struct{}
	// Gzip compresses answers whatever the request asked for.
	Gzip bool
	// Responses counts answers of the responses API, which get ids
	// resp_1, resp_2, ...
	Responses int
}

// ToolPrefix marks an answer that calls tools: "TOOL:get_weather" or, with
// arguments and several calls, `TOOL:recall_memory {"query":"dog"}|get_weather`.
const ToolPrefix = "TOOL:"

// FakeCall is a tool call the fake model makes.
type FakeCall struct {
	ID, Name, Args string
}

// FakeCalls parses what follows toolPrefix; a call without arguments gets
// {"city":"Oslo"}. Ids are call_1, call_2, ... (toolu_01, ... for Anthropic).
func FakeCalls(spec string) []FakeCall {
	var calls []FakeCall
	for i, c := range strings.Split(spec, "|") {
		name, args, _ := strings.Cut(strings.TrimSpace(c), " ")
		if args == "" {
			args = `{"city":"Oslo"}`
		}
		calls = append(calls, FakeCall{fmt.Sprintf("call_%d", i+1), name, args})
	}
	return calls
}

// Input is the call's arguments as a JSON object.
func (c FakeCall) Input() json.RawMessage { return json.RawMessage(c.Args) }

type Recorded struct {
	Method, Path string
	Header       http.Header
	Body         []byte
	Response     []byte // exactly what was written back
}

func NewFakeLLM(t *testing.T) *FakeLLM {
	f := &FakeLLM{T: t}
	f.Server = httptest.NewServer(http.HandlerFunc(f.Serve))
	t.Cleanup(f.Close)
	return f
}

// NewFakeOpenAI is newFakeLLM under the name the first tests knew it by.
func NewFakeOpenAI(t *testing.T) *FakeLLM { return NewFakeLLM(t) }

// Addr is host:port for a Caddyfile reverse_proxy line.
func (f *FakeLLM) Addr() string { return strings.TrimPrefix(f.URL, "http://") }

// Streamer writes one response, chunk by chunk.
type Streamer struct {
	F     *FakeLLM
	W     http.ResponseWriter
	Rc    *http.ResponseController
	Out   bytes.Buffer // what the client is sent, before any compression
	Gz    *gzip.Writer
	Wire  bytes.Buffer // what went on the wire
	Begun bool
}

func (s *Streamer) Start(contentType string, stream bool) {
	s.W.Header().Set("Content-Type", contentType)
	if stream {
		s.W.Header().Set("Cache-Control", "no-cache")
	}
	if s.F.Gzip {
		s.W.Header().Set("Content-Encoding", "gzip")
		s.Gz = gzip.NewWriter(io.MultiWriter(s.W, &s.Wire))
	}
	s.W.WriteHeader(http.StatusOK)
	s.Begun = true
}

// Chunk writes one piece and, when streaming, flushes it and waits at the gate.
func (s *Streamer) Chunk(p string, stream bool) {
	s.Out.WriteString(p)
	if s.Gz != nil {
		io.WriteString(s.Gz, p)
		if stream {
			s.Gz.Flush()
		}
	} else {
		s.Wire.WriteString(p)
		io.WriteString(s.W, p)
	}
	if !stream {
		return
	}
	s.Rc.Flush()
	if s.F.Gate != nil {
		select {
		case <-s.F.Gate:
		case <-time.After(5 * time.Second):
			s.F.T.Errorf("the client did not receive a streamed chunk within 5s: the proxy is holding it back")
		}
	}
}

func (s *Streamer) End() {
	if s.Gz != nil {
		s.Gz.Close()
	}
}

func (f *FakeLLM) Serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	rec := Recorded{Method: r.Method, Path: r.URL.Path, Header: r.Header.Clone(), Body: body}
	s := &Streamer{F: f, W: w, Rc: http.NewResponseController(w)}
	f.Inflight.Add(1)
	defer f.Inflight.Add(-1) // after the recording below
	defer func() {
		rec.Response = s.Wire.Bytes()
		f.Mu.Lock()
		f.Requests = append(f.Requests, rec)
		f.Mu.Unlock()
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
		s.Start("text/plain", false)
		s.Chunk("upstream ok", false)
		s.End()
		return
	}
	text := "Noted."
	if f.Answer != nil {
		text = f.Answer(body)
	}
	var tool []FakeCall
	if before, spec, ok := strings.Cut(text, ToolPrefix); ok {
		text, tool = before, FakeCalls(spec)
	}
	stream := gjson.GetBytes(body, "stream").Bool()
	switch dialect.Name() {
	case inject.NameOpenAIChat:
		OpenAIChatAnswer(s, stream, gjson.GetBytes(body, "stream_options.include_usage").Bool(), text, tool)
	case inject.NameAnthropic:
		AnthropicAnswer(s, stream, text, tool)
	case inject.NameOllama:
		if v := gjson.GetBytes(body, "stream"); !v.Exists() {
			stream = true // Ollama streams unless told not to
		}
		OllamaAnswer(s, stream, text, tool)
	case inject.NameOpenAIResponses:
		f.Mu.Lock()
		f.Responses++
		id := fmt.Sprintf("resp_%d", f.Responses)
		f.Mu.Unlock()
		ResponsesAnswer(s, stream, id, text, tool)
	}
	s.End()
}

func MustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}

// Words splits an answer into streamed pieces, keeping the spaces.
func Words(text string) []string {
	if text == "" {
		return nil
	}
	return strings.SplitAfter(text, " ")
}

func OpenAIChatAnswer(s *Streamer, stream, usage bool, text string, tool []FakeCall) {
	var toolCalls []any
	for _, c := range tool {
		toolCalls = append(toolCalls, map[string]any{"id": c.ID, "type": "function",
			"function": map[string]any{"name": c.Name, "arguments": c.Args}})
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
		s.Start("application/json", false)
		s.Chunk(MustJSON(map[string]any{
			"id": "chatcmpl-json", "object": "chat.completion", "created": 1, "model": "fake",
			"choices": []any{map[string]any{"index": 0, "finish_reason": finish, "logprobs": nil, "message": msg}},
			"usage":   map[string]any{"prompt_tokens": 10, "completion_tokens": 3, "total_tokens": 13},
		}), false)
		return
	}
	chunk := func(delta map[string]any, finish any) string {
		return "data: " + MustJSON(map[string]any{
			"id": "chatcmpl-sse", "object": "chat.completion.chunk", "created": 1, "model": "fake",
			"choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish}},
		}) + "\n\n"
	}
	s.Start("text/event-stream", true)
	s.Chunk(chunk(map[string]any{"role": "assistant", "content": ""}, nil), true)
	for _, w := range Words(text) {
		s.Chunk(chunk(map[string]any{"content": w}, nil), true)
	}
	finish := "stop"
	for i, c := range tool {
		finish = "tool_calls"
		// As OpenAI streams a call: id and name first, then the arguments.
		s.Chunk(chunk(map[string]any{"tool_calls": []any{map[string]any{"index": i, "id": c.ID, "type": "function",
			"function": map[string]any{"name": c.Name, "arguments": ""}}}}, nil), true)
		s.Chunk(chunk(map[string]any{"tool_calls": []any{map[string]any{"index": i,
			"function": map[string]any{"arguments": c.Args}}}}, nil), true)
	}
	s.Chunk(chunk(map[string]any{}, finish), true)
	if usage { // stream_options.include_usage: a last chunk without choices
		s.Chunk("data: "+MustJSON(map[string]any{"id": "chatcmpl-sse", "object": "chat.completion.chunk", "created": 1, "model": "fake",
			"choices": []any{}, "usage": map[string]any{"prompt_tokens": 10, "completion_tokens": 3, "total_tokens": 13}})+"\n\n", true)
	}
	s.Chunk("data: [DONE]\n\n", true)
}

func AnthropicAnswer(s *Streamer, stream bool, text string, tool []FakeCall) {
	stop := "end_turn"
	var content []any
	if text != "" {
		content = append(content, map[string]any{"type": "text", "text": text})
	}
	for i, c := range tool {
		stop = "tool_use"
		content = append(content, map[string]any{"type": "tool_use", "id": fmt.Sprintf("toolu_%02d", i+1), "name": c.Name, "input": c.Input()})
	}
	usage := map[string]any{"input_tokens": 10, "output_tokens": 3}
	if !stream {
		s.Start("application/json", false)
		s.Chunk(MustJSON(map[string]any{
			"id": "msg_json", "type": "message", "role": "assistant", "model": "claude-fake",
			"content": content, "stop_reason": stop, "stop_sequence": nil, "usage": usage,
		}), false)
		return
	}
	event := func(name string, data map[string]any) string {
		data["type"] = name
		return "event: " + name + "\ndata: " + MustJSON(data) + "\n\n"
	}
	s.Start("text/event-stream", true)
	s.Chunk(event("message_start", map[string]any{"message": map[string]any{
		"id": "msg_sse", "type": "message", "role": "assistant", "model": "claude-fake", "content": []any{},
		"stop_reason": nil, "stop_sequence": nil, "usage": map[string]any{"input_tokens": 10, "output_tokens": 1}}}), true)
	s.Chunk(event("ping", map[string]any{}), true)
	index := 0
	if text != "" {
		s.Chunk(event("content_block_start", map[string]any{"index": index, "content_block": map[string]any{"type": "text", "text": ""}}), true)
		for _, w := range Words(text) {
			s.Chunk(event("content_block_delta", map[string]any{"index": index, "delta": map[string]any{"type": "text_delta", "text": w}}), true)
		}
		s.Chunk(event("content_block_stop", map[string]any{"index": index}), true)
		index++
	}
	for i, c := range tool {
		s.Chunk(event("content_block_start", map[string]any{"index": index, "content_block": map[string]any{"type": "tool_use",
			"id": fmt.Sprintf("toolu_%02d", i+1), "name": c.Name, "input": map[string]any{}}}), true)
		s.Chunk(event("content_block_delta", map[string]any{"index": index, "delta": map[string]any{"type": "input_json_delta", "partial_json": c.Args}}), true)
		s.Chunk(event("content_block_stop", map[string]any{"index": index}), true)
		index++
	}
	s.Chunk(event("message_delta", map[string]any{"delta": map[string]any{"stop_reason": stop, "stop_sequence": nil}, "usage": map[string]any{"output_tokens": 3}}), true)
	s.Chunk(event("message_stop", map[string]any{}), true)
}

func OllamaAnswer(s *Streamer, stream bool, text string, tool []FakeCall) {
	msg := func(content string) map[string]any {
		return map[string]any{"role": "assistant", "content": content}
	}
	final := map[string]any{"model": "llama-fake", "created_at": "2026-11-21T10:00:00Z", "message": msg(text),
		"done": true, "done_reason": "stop", "total_duration": 1000, "prompt_eval_count": 10, "eval_count": 3}
	var calls []any
	for _, c := range tool {
		calls = append(calls, map[string]any{"function": map[string]any{"name": c.Name, "arguments": c.Input()}})
	}
	if !stream {
		if calls != nil {
			final["message"].(map[string]any)["tool_calls"] = calls
		}
		s.Start("application/json; charset=utf-8", false)
		s.Chunk(MustJSON(final), false)
		return
	}
	s.Start("application/x-ndjson", true)
	for _, w := range Words(text) {
		s.Chunk(MustJSON(map[string]any{"model": "llama-fake", "created_at": "2026-11-21T10:00:00Z", "message": msg(w), "done": false})+"\n", true)
	}
	if calls != nil {
		// Ollama streams calls whole, in a message of their own.
		s.Chunk(MustJSON(map[string]any{"model": "llama-fake", "created_at": "2026-11-21T10:00:00Z",
			"message": map[string]any{"role": "assistant", "content": "", "tool_calls": calls}, "done": false})+"\n", true)
	}
	final["message"] = msg("")
	s.Chunk(MustJSON(final)+"\n", true)
}

func ResponsesAnswer(s *Streamer, stream bool, id, text string, tool []FakeCall) {
	var output []any
	if text != "" {
		output = append(output, map[string]any{"type": "message", "id": "msg_1", "status": "completed", "role": "assistant",
			"content": []any{map[string]any{"type": "output_text", "text": text, "annotations": []any{}}}})
	}
	for i, c := range tool {
		output = append(output, map[string]any{"type": "function_call", "id": fmt.Sprintf("fc_%d", i+1), "call_id": c.ID, "name": c.Name,
			"arguments": c.Args, "status": "completed"})
	}
	response := func(status string, out []any) map[string]any {
		return map[string]any{"id": id, "object": "response", "created_at": 1, "status": status,
			"model": "gpt-fake", "output": out, "parallel_tool_calls": true, "tool_choice": "auto", "tools": []any{},
			"usage": map[string]any{"input_tokens": 10, "output_tokens": 3, "total_tokens": 13,
				"input_tokens_details": map[string]any{"cached_tokens": 0}, "output_tokens_details": map[string]any{"reasoning_tokens": 0}}}
	}
	if !stream {
		s.Start("application/json", false)
		s.Chunk(MustJSON(response("completed", output)), false)
		return
	}
	seq := 0
	event := func(name string, data map[string]any) string {
		data["type"], data["sequence_number"] = name, seq
		seq++
		return "event: " + name + "\ndata: " + MustJSON(data) + "\n\n"
	}
	s.Start("text/event-stream", true)
	s.Chunk(event("response.created", map[string]any{"response": response("in_progress", []any{})}), true)
	index := 0
	if text != "" {
		s.Chunk(event("response.output_item.added", map[string]any{"output_index": index, "item": map[string]any{
			"type": "message", "id": "msg_1", "status": "in_progress", "role": "assistant", "content": []any{}}}), true)
		s.Chunk(event("response.content_part.added", map[string]any{"item_id": "msg_1", "output_index": index, "content_index": 0,
			"part": map[string]any{"type": "output_text", "text": "", "annotations": []any{}}}), true)
		for _, w := range Words(text) {
			s.Chunk(event("response.output_text.delta", map[string]any{"item_id": "msg_1", "output_index": index, "content_index": 0, "delta": w}), true)
		}
		s.Chunk(event("response.output_text.done", map[string]any{"item_id": "msg_1", "output_index": index, "content_index": 0, "text": text}), true)
		s.Chunk(event("response.output_item.done", map[string]any{"output_index": index, "item": output[0]}), true)
		index++
	}
	for range tool {
		item := output[index]
		s.Chunk(event("response.output_item.added", map[string]any{"output_index": index, "item": item}), true)
		s.Chunk(event("response.function_call_arguments.done", map[string]any{"output_index": index,
			"item_id": item.(map[string]any)["id"], "arguments": item.(map[string]any)["arguments"]}), true)
		s.Chunk(event("response.output_item.done", map[string]any{"output_index": index, "item": item}), true)
		index++
	}
	s.Chunk(event("response.completed", map[string]any{"response": response("completed", output)}), true)
}

// WaitRecorded waits (a little) for the requests being served to be recorded.
func (f *FakeLLM) WaitRecorded() {
	for deadline := time.Now().Add(2 * time.Second); f.Inflight.Load() > 0 && time.Now().Before(deadline); {
		time.Sleep(time.Millisecond)
	}
}

// Last returns the latest request to a path suffix.
func (f *FakeLLM) Last(suffix string) Recorded {
	f.WaitRecorded()
	f.Mu.Lock()
	defer f.Mu.Unlock()
	for i := len(f.Requests) - 1; i >= 0; i-- {
		if strings.HasSuffix(f.Requests[i].Path, suffix) {
			return f.Requests[i]
		}
	}
	f.T.Fatalf("upstream got no request to %s", suffix)
	return Recorded{}
}

func (f *FakeLLM) All() []Recorded {
	f.WaitRecorded()
	f.Mu.Lock()
	defer f.Mu.Unlock()
	return append([]Recorded(nil), f.Requests...)
}

// ChatBody builds a chat completions request body.
func ChatBody(stream bool, msgs ...map[string]any) []byte {
	b, _ := json.Marshal(map[string]any{"model": "gpt-test", "stream": stream, "messages": msgs})
	return b
}

func Msg(role, content string) map[string]any {
	return map[string]any{"role": role, "content": content}
}

// Messages decodes the upstream's view of a request's messages.
func Messages(t *testing.T, body []byte) []map[string]any {
	t.Helper()
	var v struct {
		Messages []map[string]any `json:"messages"`
	}
	if err := json.Unmarshal(body, &v); err != nil {
		t.Fatalf("upstream received invalid JSON: %v\n%s", err, body)
	}
	return v.Messages
}

// ContentString joins the text of a message's content, whatever its shape.
func ContentString(t *testing.T, m map[string]any) string {
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

// HasBlock reports whether a raw request body carries a memory block. It
// looks for the end marker: the start marker's quotes are escaped in JSON.
func HasBlock(body []byte) bool { return bytes.Contains(body, []byte(inject.BlockEnd)) }
