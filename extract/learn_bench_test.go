package extract

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/caddy-memory/memory/inject"
)

// prefevalTurns are the turns the proxy hands to Learn when PrefEval's
// conversations go through it (cmd/memeval): every stated preference (a
// conversation of one turn), every persona chat and every distractor chat,
// each turn's request carrying the conversation so far, its answer an
// OpenAI chat completion echoing the user's message, as memeval's fake
// upstream answers.
func prefevalTurns(tb testing.TB) []Turn {
	dir := filepath.Dir(prefevalItems)
	f, err := os.Open(prefevalItems)
	if err != nil {
		tb.Skipf("PrefEval split not found beside the repository: %v", err)
	}
	defer f.Close()
	var convs [][]string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		var it struct {
			Preference   string   `json:"preference"`
			PersonaTurns []string `json:"persona_turns"`
		}
		if json.Unmarshal(sc.Bytes(), &it) != nil {
			continue
		}
		convs = append(convs, []string{it.Preference})
		if len(it.PersonaTurns) > 0 {
			convs = append(convs, it.PersonaTurns)
		}
	}
	raw, err := os.ReadFile(filepath.Join(dir, "distractors.json"))
	if err != nil {
		tb.Skipf("PrefEval distractors not found: %v", err)
	}
	var distractors [][]string
	if err := json.Unmarshal(raw, &distractors); err != nil {
		tb.Fatal(err)
	}
	convs = append(convs, distractors...)

	type message struct {
		Role    string `json:"role"`
		Content string `json:"content"`
	}
	at := time.Date(2026, 5, 8, 10, 0, 0, 0, time.UTC)
	var turns []Turn
	for c, conv := range convs {
		var msgs []message
		for _, user := range conv {
			msgs = append(msgs, message{"user", user})
			body, _ := json.Marshal(map[string]any{"model": "gpt-eval", "messages": msgs})
			req, err := inject.OpenAIChat.Parse(body)
			if err != nil {
				tb.Fatal(err)
			}
			answer, _ := json.Marshal(map[string]any{
				"id": "chatcmpl-eval", "object": "chat.completion", "model": "echo",
				"choices": []map[string]any{{"index": 0, "finish_reason": "stop",
					"message": map[string]string{"role": "assistant", "content": user}}},
			})
			turns = append(turns, Turn{
				Conversation: "c" + strconv.Itoa(c),
				Dialect:      req.Dialect,
				User:         req.Query(),
				NewTurn:      req.NewTurn(),
				Turn:         req.UserTurns(),
				Before:       req.Before(2),
				Earlier:      req.EarlierUser(600),
				Response:     answer,
				ContentType:  "application/json",
				Time:         at,
			})
			msgs = append(msgs, message{"assistant", user})
		}
	}
	return turns
}

// BenchmarkLearnPrefEval learns every turn PrefEval's conversations send
// through the proxy, once per iteration, and reports the slowest turn. The
// engine learns turns on one goroutine: while it is behind, turns wait in
// its queue, and once the queue is full they are dropped, so what a turn
// costs to learn bounds the turns a second the proxy can take.
func BenchmarkLearnPrefEval(b *testing.B) {
	turns := prefevalTurns(b)
	b.ReportAllocs()
	var slowest time.Duration
	for b.Loop() {
		for i := range turns {
			start := time.Now()
			if _, _, err := Learn(&turns[i]); err != nil {
				b.Fatal(err)
			}
			slowest = max(slowest, time.Since(start))
		}
	}
	b.ReportMetric(float64(len(turns)), "turns/op")
	b.ReportMetric(float64(slowest.Microseconds()), "slowest-µs")
}
