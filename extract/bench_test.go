package extract

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
		if _, err := Decode("openai_chat", "text/event-stream", body); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkFacts(b *testing.B) {
	text := "Hi! My name is Ana and I live in Lisbon. I'm allergic to peanuts and I usually cycle to work. " +
		"My favorite color is green. We decided to use Postgres for the new service. Can you help me plan a trip?"
	b.ReportAllocs()
	for b.Loop() {
		if len(Facts(text)) == 0 {
			b.Fatal("no facts")
		}
	}
}
