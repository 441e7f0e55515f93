package inject

import (
	"encoding/json"
	"strings"
	"testing"
)

// benchSSE is a streamed answer of about 300 tokens, one token per event.
func benchSSE() []byte {
	var b strings.Builder
	for i := range 300 {
		c, _ := json.Marshal(map[string]any{"id": "chatcmpl-1", "object": "chat.completion.chunk",
			"choices": []any{map[string]any{"index": 0, "delta": map[string]any{"content": "word" + string(rune('a'+i%26)) + " "}}}})
		b.WriteString("data: " + string(c) + "\n\n")
	}
	b.WriteString("data: [DONE]\n\n")
	return []byte(b.String())
}

func BenchmarkDecodeSSE(b *testing.B) {
	body := benchSSE()
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Decode(OpenAIChat, "text/event-stream", body); err != nil {
			b.Fatal(err)
		}
	}
}

// benchAnswer is a JSON chat completion of about 1 MiB of text.
func benchAnswer() []byte {
	b, _ := json.Marshal(map[string]any{"id": "chatcmpl-1", "object": "chat.completion",
		"choices": []any{map[string]any{"index": 0, "finish_reason": "stop",
			"message": map[string]any{"role": "assistant", "content": strings.Repeat("A long answer. ", 1<<16)}}},
		"usage": map[string]any{"prompt_tokens": 10, "completion_tokens": 3, "total_tokens": 13}})
	return b
}

// BenchmarkEditorJSON holds a JSON answer and gives it to the client, as
// reverse_proxy writes it (32 KiB at a time): what the held part of an
// answer costs, per byte of it (B/op over its size).
func BenchmarkEditorJSON(b *testing.B) {
	body := benchAnswer()
	for _, bc := range []struct {
		name  string
		prior Usage
	}{{"first-round", Usage{}}, {"after-a-round", Usage{10, 3}}} {
		b.Run(bc.name, func(b *testing.B) {
			b.SetBytes(int64(len(body)))
			b.ReportAllocs()
			for b.Loop() {
				e := NewEditor(OpenAIChat, "application/json", 2<<20, func(string) bool { return false }, bc.prior)
				for p := body; len(p) > 0; {
					n := min(len(p), 32<<10)
					e.Write(p[:n])
					p = p[n:]
				}
				if out := e.End(); len(out) < len(body)/2 {
					b.Fatalf("%d bytes out", len(out))
				}
			}
		})
	}
}
