package harness

import (
	"net/http"
	"testing"
	"time"

	"github.com/caddyserver/caddy/v2/caddytest"
)

// Reload loads cfg into the running test server and gives the tests'
// Client fresh connections. The previous server closes its connections at
// once (grace_period 1ns), including one whose handler is still handing its
// turn off after the answer went out; a client reusing it gets EOF, as any
// HTTP/1.1 client can when a server closes a kept-alive connection.
func Reload(t *testing.T, tester *caddytest.Tester, cfg string) {
	t.Helper()
	tester.InitServer(cfg, "caddyfile")
	if t.Failed() {
		t.FailNow()
	}
	tester.Client = &http.Client{Transport: &http.Transport{DisableKeepAlives: true}, Timeout: 20 * time.Second}
}
