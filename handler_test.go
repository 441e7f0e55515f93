package memory

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"go.uber.org/zap"

	"github.com/caddy-memory/memory/app"
	"github.com/caddy-memory/memory/internal/engine"
	"github.com/caddy-memory/memory/internal/harness"
	"github.com/caddy-memory/memory/store"
)

// provisioned returns a handler provisioned outside a server, on a storage
// of its own that a memory app opened, and that app: cleaning it up closes
// the storage (done when the test ends).
func provisioned(t *testing.T, h *Handler) (*Handler, *app.App) {
	t.Helper()
	ctx, cancel := caddy.NewContext(caddy.Context{Context: context.Background()})
	t.Cleanup(cancel)
	a := &app.App{Storages: map[string]*app.StorageConfig{"default": {Path: t.TempDir(), IndexShards: 2}}}
	if err := a.Provision(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Cleanup() })
	h.logger = zap.NewNop()
	if err := h.setDefaults(); err != nil {
		t.Fatal(err)
	}
	st, err := a.Storage("")
	if err != nil {
		t.Fatal(err)
	}
	h.use(st)
	if err := h.Validate(); err != nil {
		t.Fatal(err)
	}
	return h, a
}

func chatRequest(t *testing.T, body []byte) *http.Request {
	t.Helper()
	r := httptest.NewRequest(http.MethodPost, "/v1/chat/completions", strings.NewReader(string(body)))
	r.Header.Set("Authorization", "Bearer sk-unit")
	r.Header.Set("Content-Type", "application/json")
	repl := caddy.NewReplacer()
	return r.WithContext(context.WithValue(r.Context(), caddy.ReplacerCtxKey, repl))
}

// TestFailOpenAndFailClosed: when retrieval fails the request goes on
// unchanged (and is counted), or, with fail closed, is answered 503.
func TestFailOpenAndFailClosed(t *testing.T) {
	for _, closed := range []bool{false, true} {
		t.Run(fmt.Sprintf("fail_closed=%v", closed), func(t *testing.T) {
			h, _ := provisioned(t, &Handler{FailClosed: closed})
			// The owner has a memory the question matches, so retrieval
			// reads the store, and the store is closed: it fails.
			remember(t, h, "User lives in Lisbon.")
			h.engine.Close(context.Background())

			body := harness.ChatBody(false, harness.Msg("user", "Where do I live?"))
			var upstreamGot []byte
			next := recordingUpstream(t, &upstreamGot)
			before := testutil.ToFloat64(app.RequestsTotal.WithLabelValues(outcomeFailedOpen))
			err := h.ServeHTTP(httptest.NewRecorder(), chatRequest(t, body), next)
			if closed {
				var he caddyhttp.HandlerError
				if !errors.As(err, &he) || he.StatusCode != http.StatusServiceUnavailable {
					t.Fatalf("fail closed returned %v, want a 503 handler error", err)
				}
				if upstreamGot != nil {
					t.Errorf("fail closed still called the upstream")
				}
				return
			}
			if err != nil {
				t.Fatalf("fail open returned %v", err)
			}
			if string(upstreamGot) != string(body) {
				t.Errorf("upstream got %q, want the original body", upstreamGot)
			}
			if after := testutil.ToFloat64(app.RequestsTotal.WithLabelValues(outcomeFailedOpen)); after != before+1 {
				t.Errorf("failed_open counter went from %v to %v", before, after)
			}
		})
	}
}

// remember stores a memory for the owner of chatRequest's requests.
func remember(t *testing.T, h *Handler, content string) {
	t.Helper()
	owner := h.engine.OwnerID("sk-unit")
	if _, err := h.engine.Remember(context.Background(), engine.OwnedPut{Owner: owner, Put: store.Put{Kind: "identity", Content: content}}); err != nil {
		t.Fatal(err)
	}
}

// recordingUpstream answers a chat completion and keeps the body it got.
func recordingUpstream(t *testing.T, got *[]byte) caddyhttp.Handler {
	return caddyhttp.HandlerFunc(func(w http.ResponseWriter, r *http.Request) error {
		*got = readAll(t, r)
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{"choices": []any{}})
		return nil
	})
}

func readAll(t *testing.T, r *http.Request) []byte {
	t.Helper()
	b, err := io.ReadAll(r.Body)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestRequestAfterCleanupFailsOpen: after a reload's grace period, requests
// of the old configuration can still be running when its handler is
// cleaned up and the engine closed. They pass on unchanged and their turns
// are dropped, instead of panicking on a handler without an engine.
func TestRequestAfterCleanupFailsOpen(t *testing.T) {
	h, memApp := provisioned(t, &Handler{})
	remember(t, h, "User lives in Lisbon.")
	if err := memApp.Cleanup(); err != nil { // the last user: the engine closes
		t.Fatal(err)
	}
	body := harness.ChatBody(false, harness.Msg("user", "Where do I live?"))
	var upstreamGot []byte
	next := recordingUpstream(t, &upstreamGot)
	if err := h.ServeHTTP(httptest.NewRecorder(), chatRequest(t, body), next); err != nil {
		t.Fatalf("request after cleanup: %v", err)
	}
	if string(upstreamGot) != string(body) {
		t.Errorf("upstream got %q, want the original body", upstreamGot)
	}
}
