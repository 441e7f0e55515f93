package proxy

import (
	"bytes"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/caddy-memory/memory/internal/harness"
)

// TestOwnerTemplatesFallBackInOrder: a client with no API key (Ollama's own
// clients send none) can still be remembered under a fallback template, and
// the two kinds of owner never share memories.
func TestOwnerTemplatesFallBackInOrder(t *testing.T) {
	storage := t.TempDir()
	up := harness.NewFakeLLM(t)
	tester := harness.StartCaddy(t, harness.SiteConfig(storage, up.Addr(), "owner {memory.api_key} {http.request.header.X-Device}"))
	do := func(key, device, text string) []byte {
		req, _ := http.NewRequest(http.MethodPost, harness.CaddyAddr+"/api/chat",
			bytes.NewReader(harness.MustBytes(map[string]any{"model": "llama3.2", "stream": false,
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
		return up.Last("/api/chat").Body
	}
	do("", "laptop", "I live in Porto.")
	do("sk-key", "laptop", "I live in Faro.") // a key wins over the fallback
	do("", "", "I live in Braga.")            // nobody: not remembered
	harness.Settle(t, storage, 2)

	if got := string(do("", "laptop", "Where do I live?")); !strings.Contains(got, "User lives in Porto.") || strings.Contains(got, "Faro") {
		t.Errorf("the key-less device got %s", got)
	}
	if got := string(do("sk-key", "", "Where do I live?")); !strings.Contains(got, "User lives in Faro.") || strings.Contains(got, "Porto") {
		t.Errorf("the key owner got %s", got)
	}
	if got := do("", "", "Where do I live?"); harness.HasBlock(got) {
		t.Errorf("a request with no owner got memories: %s", got)
	}
}

// TestBlankCredentialsAreNoOwner: a key that is blank, white space, or a
// scheme alone ("Bearer " from an unset $OPENAI_API_KEY) is nobody: such
// requests are neither remembered nor given memories, so one empty-key
// client never sees what another told the model.
func TestBlankCredentialsAreNoOwner(t *testing.T) {
	storage := t.TempDir()
	up := harness.NewFakeLLM(t)
	tester := harness.StartCaddy(t, harness.SiteConfig(storage, up.Addr(), "diagnostics"))
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
		status := harness.ChatAs(t, tester, h, fmt.Sprintf("My name is Zqblank%d and I live in Zqtown%d.", i, i))
		if status != "passed_through" {
			t.Errorf("credentials %v: X-Memory-Status %q, want %q", h, status, "passed_through")
		}
	}
	for _, h := range blank {
		harness.ChatAs(t, tester, h, "What is my name and where do I live, Zqtown?")
		if body := up.Last("/chat/completions").Body; harness.HasBlock(body) || strings.Contains(string(body), "Zqblank") {
			t.Fatalf("a client with credentials %v was given another blank client's memories: %s", h, body)
		}
	}
	if stats := harness.EngineAt(storage); stats != nil {
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
	up := harness.NewFakeLLM(t)
	tester := harness.StartCaddy(t, harness.SiteConfig(storage, up.Addr(), "diagnostics"))
	tell := http.Header{"X-Api-Key": {"sk-ant-zq"}}
	if s := harness.ChatAs(t, tester, tell, "I live in Zqlisbon."); s != "nothing_relevant" {
		t.Fatalf("x-api-key alone: status %q, want %q", s, "nothing_relevant")
	}
	harness.Settle(t, storage, 1)

	for _, c := range []struct {
		name   string
		h      http.Header
		status string
	}{
		{"the same key in both headers", http.Header{"X-Api-Key": {"sk-ant-zq"}, "Authorization": {"Bearer sk-ant-zq"}}, "injected"},
		{"the key as a bearer token", http.Header{"Authorization": {"Bearer sk-ant-zq"}}, "injected"},
		{"two different keys", http.Header{"X-Api-Key": {"sk-ant-zq"}, "Authorization": {"Bearer sk-other"}}, "passed_through"},
		{"two different Authorization headers", http.Header{"Authorization": {"Bearer sk-ant-zq", "Bearer sk-other"}}, "passed_through"},
		{"another key", http.Header{"X-Api-Key": {"sk-other"}}, "nothing_relevant"},
	} {
		if s := harness.ChatAs(t, tester, c.h, "Where do I live, Zqlisbon?"); s != c.status {
			t.Errorf("%s: status %q, want %q", c.name, s, c.status)
		}
	}
}

// TestFallbackOwnersAreTheirOwn: a value from a fallback owner template is
// not the owner the same value names as a key, so nobody claims a key-less
// client's memories by sending its header's value as an API key.
func TestFallbackOwnersAreTheirOwn(t *testing.T) {
	storage := t.TempDir()
	up := harness.NewFakeLLM(t)
	tester := harness.StartCaddy(t, harness.SiteConfig(storage, up.Addr(), "diagnostics\nowner {memory.api_key} {http.request.header.X-Device}"))
	harness.ChatAs(t, tester, http.Header{"X-Device": {"laptop"}}, "I live in Zqporto.")
	harness.Settle(t, storage, 1)
	if s := harness.ChatAs(t, tester, http.Header{"X-Device": {"laptop"}}, "Where do I live, Zqporto?"); s != "injected" {
		t.Fatalf("the key-less device: status %q, want %q", s, "injected")
	}
	harness.ChatAs(t, tester, http.Header{"Authorization": {"Bearer laptop"}}, "Where do I live, Zqporto?")
	if body := up.Last("/chat/completions").Body; harness.HasBlock(body) {
		t.Errorf("a key equal to the device's header value got the device's memories: %s", body)
	}
}
