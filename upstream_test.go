package memory

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tidwall/gjson"

	"github.com/caddy-memory/memory/inject"
)

// fakeOpenAI is an upstream that speaks OpenAI chat completions, JSON and
// SSE, and records every request it receives and every byte it sends.
type fakeOpenAI struct {
	*httptest.Server
	t *testing.T

	mu       sync.Mutex
	requests []recorded

	// answer decides the assistant's reply; default "Noted."
	answer func(body []byte) string
	// gate, when set, makes the SSE stream wait for a value after each chunk,
	// so a test can prove the client saw a chunk before the next is sent.
	gate chan struct{}
}

type recorded struct {
	Method, Path string
	Header       http.Header
	Body         []byte
	Response     []byte // exactly what was written back
}

func newFakeOpenAI(t *testing.T) *fakeOpenAI {
	f := &fakeOpenAI{t: t}
	f.Server = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.Close)
	return f
}

// addr is host:port for a Caddyfile reverse_proxy line.
func (f *fakeOpenAI) addr() string { return strings.TrimPrefix(f.URL, "http://") }

func (f *fakeOpenAI) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	rec := recorded{Method: r.Method, Path: r.URL.Path, Header: r.Header.Clone(), Body: body}
	var out bytes.Buffer
	defer func() {
		rec.Response = out.Bytes()
		f.mu.Lock()
		f.requests = append(f.requests, rec)
		f.mu.Unlock()
	}()
	if r.Method != http.MethodPost || !strings.HasSuffix(r.URL.Path, "/chat/completions") || !gjson.ValidBytes(body) {
		w.Header().Set("Content-Type", "text/plain")
		out.WriteString("upstream ok")
		w.Write(out.Bytes())
		return
	}
	text := "Noted."
	if f.answer != nil {
		text = f.answer(body)
	}
	if !gjson.GetBytes(body, "stream").Bool() {
		b, _ := json.Marshal(map[string]any{
			"id": "chatcmpl-json", "object": "chat.completion", "created": 1, "model": "fake",
			"choices": []any{map[string]any{"index": 0, "finish_reason": "stop",
				"message": map[string]any{"role": "assistant", "content": text}}},
			"usage": map[string]any{"prompt_tokens": 10, "completion_tokens": 3, "total_tokens": 13},
		})
		w.Header().Set("Content-Type", "application/json")
		out.Write(b)
		w.Write(b)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(w)
	send := func(chunk string) {
		out.WriteString(chunk)
		io.WriteString(w, chunk)
		rc.Flush()
		if f.gate != nil {
			select {
			case <-f.gate:
			case <-time.After(5 * time.Second):
				f.t.Errorf("the client did not receive a streamed chunk within 5s: the proxy is holding it back")
			}
		}
	}
	chunk := func(delta map[string]any, finish any) string {
		b, _ := json.Marshal(map[string]any{
			"id": "chatcmpl-sse", "object": "chat.completion.chunk", "created": 1, "model": "fake",
			"choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish}},
		})
		return "data: " + string(b) + "\n\n"
	}
	send(chunk(map[string]any{"role": "assistant", "content": ""}, nil))
	for _, word := range strings.SplitAfter(text, " ") {
		send(chunk(map[string]any{"content": word}, nil))
	}
	send(chunk(map[string]any{}, "stop"))
	send("data: [DONE]\n\n")
}

// last returns the latest request to a path suffix.
func (f *fakeOpenAI) last(suffix string) recorded {
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

func (f *fakeOpenAI) all() []recorded {
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

func contentString(t *testing.T, m map[string]any) string {
	t.Helper()
	switch c := m["content"].(type) {
	case string:
		return c
	case []any:
		var parts []string
		for _, p := range c {
			if pm, ok := p.(map[string]any); ok && pm["type"] == "text" {
				parts = append(parts, fmt.Sprint(pm["text"]))
			}
		}
		return strings.Join(parts, "\n")
	}
	return ""
}

// hasBlock reports whether a raw request body carries a memory block. It
// looks for the end marker: the start marker's quotes are escaped in JSON.
func hasBlock(body []byte) bool { return bytes.Contains(body, []byte(inject.BlockEnd)) }
