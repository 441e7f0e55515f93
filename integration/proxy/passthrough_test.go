package proxy

import (
	"bytes"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/caddy-memory/memory/internal/harness"
)

// TestPassThroughIsUntouched: whatever the handler does not rewrite reaches
// the upstream exactly as the client sent it, even when the sender has
// memories a rewrite would have injected.
func TestPassThroughIsUntouched(t *testing.T) {
	storage := t.TempDir()
	up := harness.NewFakeOpenAI(t)
	tester := harness.StartCaddy(t, harness.SiteConfig(storage, up.Addr(), "max_body 2KiB"))
	const key = "sk-pass"

	// Give the owner something the questions below would retrieve.
	harness.Post(t, tester, "/v1/chat/completions", key, harness.ChatBody(false, harness.Msg("user", "I live in Lisbon and I love sardines.")))
	harness.Settle(t, storage, 1)
	question := "Where do I live and what do I love to eat, sardines?"
	if _, _ = harness.Post(t, tester, "/v1/chat/completions", key, harness.ChatBody(false, harness.Msg("user", question))); !harness.HasBlock(up.Last("/chat/completions").Body) {
		t.Fatal("control request was not injected; the cases below would prove nothing")
	}

	big := harness.ChatBody(false, harness.Msg("user", question+" "+strings.Repeat("padding words here ", 200)))
	if len(big) <= 2048 {
		t.Fatalf("oversized body is only %d bytes", len(big))
	}
	cases := []struct {
		name, method, path, key string
		body                    []byte
		chunked                 bool
	}{
		{"malformed JSON", "POST", "/v1/chat/completions", key, []byte(`{"model":"x","messages":[{"role":"user","content":"Where do I live`), false},
		{"not a chat body", "POST", "/v1/chat/completions", key, []byte(`{"model":"x","prompt":"Where do I live?"}`), false},
		{"oversized body", "POST", "/v1/chat/completions", key, big, false},
		{"oversized chunked body", "POST", "/v1/chat/completions", key, big, true},
		{"non-chat path", "POST", "/v1/embeddings", key, harness.ChatBody(false, harness.Msg("user", question)), false},
		{"GET", "GET", "/v1/chat/completions", key, nil, false},
		{"no owner", "POST", "/v1/chat/completions", "", harness.ChatBody(false, harness.Msg("user", question)), false},
		{"empty body", "POST", "/v1/chat/completions", key, []byte{}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var body = bytes.NewReader(c.body)
			req, err := http.NewRequest(c.method, harness.CaddyAddr+c.path, body)
			if err != nil {
				t.Fatal(err)
			}
			if c.chunked {
				req.ContentLength = -1 // sent with Transfer-Encoding: chunked
				req.Body = io.NopCloser(struct{ io.Reader }{bytes.NewReader(c.body)})
			}
			req.Header.Set("Content-Type", "application/json")
			if c.key != "" {
				req.Header.Set("Authorization", "Bearer "+c.key)
			}
			resp, err := tester.Client.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("status %d", resp.StatusCode)
			}
			rec := up.Last(c.path)
			if rec.Method != c.method {
				t.Fatalf("upstream saw %s, want %s", rec.Method, c.method)
			}
			if !bytes.Equal(rec.Body, c.body) {
				t.Fatalf("upstream body differs from what the client sent\nsent: %.200q\ngot:  %.200q", c.body, rec.Body)
			}
			if cl := rec.Header.Get("Content-Length"); !c.chunked && len(c.body) > 0 && cl != strconv.Itoa(len(c.body)) {
				t.Errorf("Content-Length %q, want %d", cl, len(c.body))
			}
			if ae := rec.Header.Get("Accept-Encoding"); ae == "identity" {
				t.Errorf("a pass-through request had its Accept-Encoding changed")
			}
		})
	}
}
