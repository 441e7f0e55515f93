package memory

import (
	"bytes"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/caddyserver/caddy/v2/caddytest"
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

// TestBlankCredentialsAreNoOwner: a key that is blank, white space, or a
// scheme alone ("Bearer " from an unset $OPENAI_API_KEY) is nobody: such
// requests are neither remembered nor given memories, so one empty-key
// client never sees what another told the model.
func TestBlankCredentialsAreNoOwner(t *testing.T) {
	storage := t.TempDir()
	up := newFakeLLM(t)
	tester := startCaddy(t, siteConfig(storage, up.addr(), "diagnostics"))
	blank := []http.Header{
		{"Authorization": {"Bearer "}},
		{"Authorization": {"Bearer"}},
		{"Authorization": {"bearer \t "}},
		{"Authorization": {"   "}},
		{"Authorization": {"Basic"}},
		{"Authorization": {""}},
		{"X-Api-Key": {""}},
		{"X-Api-Key": {"  "}},
		{"Authorization": {"Bearer "}, "X-Api-Key": {" "}},
	}
	for i, h := range blank {
		status := chatAs(t, tester, h, fmt.Sprintf("My name is Zqblank%d and I live in Zqtown%d.", i, i))
		if status != outcomePassed {
			t.Errorf("credentials %v: X-Memory-Status %q, want %q", h, status, outcomePassed)
		}
	}
	for _, h := range blank {
		chatAs(t, tester, h, "What is my name and where do I live, Zqtown?")
		if body := up.last("/chat/completions").Body; hasBlock(body) || strings.Contains(string(body), "Zqblank") {
			t.Fatalf("a client with credentials %v was given another blank client's memories: %s", h, body)
		}
	}
	if stats := engineAt(storage); stats != nil {
		if st, err := stats.Stats(); err != nil || st.Owners != 0 {
			t.Errorf("blank credentials created %d owners (err %v), want none", st.Owners, err)
		}
	}
}

// TestWhichCredentialNamesTheOwner: the owner is the credential the
// upstream authenticates, whichever header carries it (Anthropic's
// x-api-key, everyone else's Authorization); the same key in both is that
// owner; two different keys in one request are ambiguous and make no owner.
func TestWhichCredentialNamesTheOwner(t *testing.T) {
	storage := t.TempDir()
	up := newFakeLLM(t)
	tester := startCaddy(t, siteConfig(storage, up.addr(), "diagnostics"))
	tell := http.Header{"X-Api-Key": {"sk-ant-zq"}}
	if s := chatAs(t, tester, tell, "I live in Zqlisbon."); s != outcomeNothing {
		t.Fatalf("x-api-key alone: status %q, want %q", s, outcomeNothing)
	}
	settle(t, storage, 1)

	for _, c := range []struct {
		name   string
		h      http.Header
		status string
	}{
		{"the same key in both headers", http.Header{"X-Api-Key": {"sk-ant-zq"}, "Authorization": {"Bearer sk-ant-zq"}}, outcomeInjected},
		{"the key as a bearer token", http.Header{"Authorization": {"Bearer sk-ant-zq"}}, outcomeInjected},
		{"two different keys", http.Header{"X-Api-Key": {"sk-ant-zq"}, "Authorization": {"Bearer sk-other"}}, outcomePassed},
		{"two different Authorization headers", http.Header{"Authorization": {"Bearer sk-ant-zq", "Bearer sk-other"}}, outcomePassed},
		{"another key", http.Header{"X-Api-Key": {"sk-other"}}, outcomeNothing},
	} {
		if s := chatAs(t, tester, c.h, "Where do I live, Zqlisbon?"); s != c.status {
			t.Errorf("%s: status %q, want %q", c.name, s, c.status)
		}
	}
}

// TestFallbackOwnersAreTheirOwn: a value from a fallback owner template is
// not the owner the same value names as a key, so nobody claims a key-less
// client's memories by sending its header's value as an API key.
func TestFallbackOwnersAreTheirOwn(t *testing.T) {
	storage := t.TempDir()
	up := newFakeLLM(t)
	tester := startCaddy(t, siteConfig(storage, up.addr(), "diagnostics\nowner {memory.api_key} {http.request.header.X-Device}"))
	chatAs(t, tester, http.Header{"X-Device": {"laptop"}}, "I live in Zqporto.")
	settle(t, storage, 1)
	if s := chatAs(t, tester, http.Header{"X-Device": {"laptop"}}, "Where do I live, Zqporto?"); s != outcomeInjected {
		t.Fatalf("the key-less device: status %q, want %q", s, outcomeInjected)
	}
	chatAs(t, tester, http.Header{"Authorization": {"Bearer laptop"}}, "Where do I live, Zqporto?")
	if body := up.last("/chat/completions").Body; hasBlock(body) {
		t.Errorf("a key equal to the device's header value got the device's memories: %s", body)
	}
}

// chatAs sends a chat request with the given headers and returns the
// X-Memory-Status the handler answered with.
func chatAs(t *testing.T, tester *caddytest.Tester, h http.Header, text string) string {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, caddyAddr+"/v1/chat/completions", bytes.NewReader(chatBody(false, msg("user", text))))
	req.Header.Set("Content-Type", "application/json")
	for k, vs := range h {
		for _, v := range vs {
			req.Header.Add(k, v)
		}
	}
	resp, err := tester.Client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.Header.Get("X-Memory-Status")
}
