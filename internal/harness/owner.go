package harness

import (
	"bytes"
	"net/http"
	"testing"

	"github.com/caddyserver/caddy/v2/caddytest"
)

// ChatAs sends a chat request with the given headers and returns the
// X-Memory-Status the handler answered with.
func ChatAs(t *testing.T, tester *caddytest.Tester, h http.Header, text string) string {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, CaddyAddr+"/v1/chat/completions", bytes.NewReader(ChatBody(false, Msg("user", text))))
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
