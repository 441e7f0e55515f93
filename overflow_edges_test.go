package memory

import (
	"bytes"
	"encoding/base64"
	"math/rand/v2"
	"net/http"
	"testing"
)

// TestOverflowOllamaUnderItsContextPassesWhole: Ollama keeps a
// conversation whole when its prompt fits num_ctx, counting an image as
// 768 tokens whatever its size in base64, and never the answer's
// num_predict (server/prompt.go, chatPrompt). Such a request reaches it
// byte for byte: neither a long answer asked for nor a photo shown in an
// earlier turn gets the conversation cut.
func TestOverflowOllamaUnderItsContextPassesWhole(t *testing.T) {
	up := newLimitedLLM(t, 1<<30)
	tester := startCaddy(t, overflowConfig(t.TempDir(), up.addr(), "trim"))
	photo := make([]byte, 24<<10)
	for i := range photo {
		photo[i] = byte(rand.N(256))
	}
	picture := msg("user", "What is in this picture?")
	picture["images"] = []string{base64.StdEncoding.EncodeToString(photo)}
	for name, body := range map[string][]byte{
		"num_predict over num_ctx": mustBytes(map[string]any{"model": "llama3", "stream": false,
			"options": map[string]any{"num_ctx": 2048, "num_predict": 4096},
			"messages": []map[string]any{msg("user", "Hello, I need help planning my week."),
				msg("assistant", "Of course. What is on it so far?"), msg("user", "Dentist on Monday, gym on Tuesday.")}}),
		"an image in an earlier turn": mustBytes(map[string]any{"model": "llava", "stream": false,
			"options": map[string]any{"num_ctx": 2048},
			"messages": []map[string]any{picture, msg("assistant", "A black cat asleep on a red sofa."),
				msg("user", "What colour is the sofa?")}}),
	} {
		from := up.count()
		req, _ := http.NewRequest(http.MethodPost, caddyAddr+"/api/chat", bytes.NewReader(body))
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
