package harness

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
)

// LoadConfig loads a Caddyfile through the admin endpoint as `caddy
// Reload` does, and returns the status and the answer.
func LoadConfig(t *testing.T, cfg string) (int, string) {
	t.Helper()
	return LoadAs(t, "text/caddyfile", cfg)
}

// LoadAs loads a configuration of a content type (text/caddyfile,
// application/json) through the admin endpoint.
func LoadAs(t *testing.T, contentType, cfg string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, AdminAddr+"/load", strings.NewReader(cfg))
	req.Header.Set("Content-Type", contentType)
	// A connection of its own: a load may replace the admin server, and a
	// kept-alive connection to the one before is reset when reused
	// ('connection reset by peer', seen in CI).
	req.Close = true
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// AdminCall calls Caddy's admin endpoint and decodes the JSON answer.
func AdminCall(t *testing.T, method, path string) (int, map[string]any) {
	t.Helper()
	req, _ := http.NewRequest(method, AdminAddr+path, nil)
	req.Close = true // see LoadAs
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out map[string]any
	b, _ := io.ReadAll(resp.Body)
	json.Unmarshal(b, &out)
	return resp.StatusCode, out
}
