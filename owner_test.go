package memory

import (
	"bytes"
	"net/http"
	"strings"
	"testing"
)

// TestOwnerTemplatesFallBackInOrder: a client with no API key (Ollama's own
// clients send none) can still be remembered under a fallback template, and
// the two kinds of owner never share memories.
func TestOwnerTemplatesFallBackInOrder(t *testing.T) {
	storage := t.TempDir()
	up := newFakeLLM(t)
	tester := startCaddy(t, siteConfig(storage, up.addr(), "owner {memory.api_key} {http.request.header.X-Device}"))
	do := func(key, device, text string) []byte {
		req, _ := http.NewRequest(http.MethodPost, caddyAddr+"/api/chat",
			bytes.NewReader(mustBytes(map[string]any{"model": "llama3.2", "stream": false,
				"messages": []any{map[string]any{"role": "user", "content": text}}})))
		if key != "" {
			req.Header.Set("Authorization", "Bearer "+key)
		}
		if device != "" {
			req.Header.Set("X-Device", device)
		}
		resp, err := tester.Client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return up.last("/api/chat").Body
	}
	do("", "laptop", "I live in Porto.")
	do("sk-key", "laptop", "I live in Faro.") // a key wins over the fallback
	do("", "", "I live in Braga.")            // nobody: not remembered
	settle(t, storage, 2)

	if got := string(do("", "laptop", "Where do I live?")); !strings.Contains(got, "User lives in Porto.") || strings.Contains(got, "Faro") {
		t.Errorf("the key-less device got %s", got)
	}
	if got := string(do("sk-key", "", "Where do I live?")); !strings.Contains(got, "User lives in Faro.") || strings.Contains(got, "Porto") {
		t.Errorf("the key owner got %s", got)
	}
	if got := do("", "", "Where do I live?"); hasBlock(got) {
		t.Errorf("a request with no owner got memories: %s", got)
	}
}
