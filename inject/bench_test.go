package inject

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/caddy-memory/memory/internal/block"
)

// benchBody is a realistic request: a system prompt and a few turns of
// history, about 6 KB.
func benchBody() []byte {
	msgs := []map[string]any{{"role": "system", "content": strings.Repeat("You are a careful, helpful assistant. ", 20)}}
	for i := range 4 {
		msgs = append(msgs,
			map[string]any{"role": "user", "content": strings.Repeat("Tell me more about the history of Lisbon and its bridges. ", 6) + string(rune('a'+i))},
			map[string]any{"role": "assistant", "content": strings.Repeat("Lisbon has a long history of earthquakes, trams and bridges. ", 10)})
	}
	msgs = append(msgs, map[string]any{"role": "user", "content": "Which bridge should I walk across this weekend?"})
	b, _ := json.Marshal(map[string]any{"model": "gpt-4o-mini", "stream": true, "temperature": 0.2, "messages": msgs})
	return b
}

func BenchmarkParseAndInject(b *testing.B) {
	body := benchBody()
	items := []block.Item{
		{Text: "User lives in Lisbon.", Time: time.Now()},
		{Text: "User prefers walking over driving.", Time: time.Now()},
		{Text: "User: which bridge is longest? Assistant: The Vasco da Gama bridge.", Time: time.Now()},
	}
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		r, err := OpenAIChat.Parse(body)
		if err != nil {
			b.Fatal(err)
		}
		_ = r.Query()
		blk, _, _ := block.Render(items, 800, 10)
		if _, err := r.Inject(blk, CacheSafe); err != nil {
			b.Fatal(err)
		}
	}
}
