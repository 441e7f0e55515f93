package memory

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddytest"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"go.uber.org/zap"

	"github.com/caddy-memory/memory/app"
	"github.com/caddy-memory/memory/internal/engine"
	"github.com/caddy-memory/memory/internal/llm/llmtest"
	"github.com/caddy-memory/memory/store"
)

// reload loads cfg into the running test server and gives the tests'
// client fresh connections. The previous server closes its connections at
// once (grace_period 1ns), including one whose handler is still handing its
// turn off after the answer went out; a client reusing it gets EOF, as any
// HTTP/1.1 client can when a server closes a kept-alive connection.
func reload(t *testing.T, tester *caddytest.Tester, cfg string) {
	t.Helper()
	tester.InitServer(cfg, "caddyfile")
	if t.Failed() {
		t.FailNow()
	}
	tester.Client = &http.Client{Transport: &http.Transport{DisableKeepAlives: true}, Timeout: 20 * time.Second}
}

// TestReloadKeepsMemories: a config reload provisions the new handler while
// the old one still holds the database; both must share it, and nothing
// stored before the reload may be lost.
func TestReloadKeepsMemories(t *testing.T) {
	storage := t.TempDir()
	up := newFakeOpenAI(t)
	tester := startCaddy(t, siteConfig(storage, up.addr(), "placement cache_safe"))
	post(t, tester, "/v1/chat/completions", "sk-reload", chatBody(false, msg("user", "I live in Reykjavik.")))
	settle(t, storage, 1)
	before := engineAt(storage)

	// Second load on the same storage: other settings, and two sites whose
	// handlers both use it.
	reload(t, tester, withStorage(storage, "")+fmt.Sprintf(`http://localhost:9080 {
	memory {
		placement user
	}
	reverse_proxy %[1]s
}
http://127.0.0.1:9080 {
	memory
	reverse_proxy %[1]s
}
`, up.addr()))
	if engineAt(storage) != before {
		t.Errorf("the reload opened a second engine instead of sharing the first")
	}
	post(t, tester, "/v1/chat/completions", "sk-reload", chatBody(false, msg("user", "Where do I live?")))
	msgs := messages(t, up.last("/chat/completions").Body)
	if len(msgs) != 1 || !strings.Contains(contentString(t, msgs[0]), "User lives in Reykjavik.") {
		t.Fatalf("after reload, want the memory prepended to the user turn (placement user), got %v", msgs)
	}

	// And back: a third load still has everything.
	reload(t, tester, siteConfig(storage, up.addr(), ""))
	post(t, tester, "/v1/chat/completions", "sk-reload", chatBody(true, msg("user", "Remind me where I live.")))
	if !hasBlock(up.last("/chat/completions").Body) {
		t.Errorf("after the second reload the memory is gone")
	}
}

// TestLostIndexRecoversThroughCaddy: stop using a storage, delete its index,
// load it again; the memories come back from the store.
func TestLostIndexRecoversThroughCaddy(t *testing.T) {
	storage := t.TempDir()
	up := newFakeOpenAI(t)
	tester := startCaddy(t, siteConfig(storage, up.addr(), ""))
	post(t, tester, "/v1/chat/completions", "sk-lost", chatBody(false, msg("user", "My favorite band is Zqmelodics.")))
	settle(t, storage, 1)

	unloadCaddy(t) // the last user of the engine is gone: it closes
	if engineAt(storage) != nil {
		t.Fatal("engine still open after its config was unloaded")
	}
	if err := os.RemoveAll(filepath.Join(storage, "index")); err != nil {
		t.Fatal(err)
	}
	reload(t, tester, siteConfig(storage, up.addr(), ""))
	settle(t, storage, 0)
	post(t, tester, "/v1/chat/completions", "sk-lost", chatBody(false, msg("user", "Which band is my favorite?")))
	if body := up.last("/chat/completions").Body; !strings.Contains(string(body), "Zqmelodics") {
		t.Errorf("memory not recovered after the index was deleted: %s", body)
	}
}

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

			body := chatBody(false, msg("user", "Where do I live?"))
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
	body := chatBody(false, msg("user", "Where do I live?"))
	var upstreamGot []byte
	next := recordingUpstream(t, &upstreamGot)
	if err := h.ServeHTTP(httptest.NewRecorder(), chatRequest(t, body), next); err != nil {
		t.Fatalf("request after cleanup: %v", err)
	}
	if string(upstreamGot) != string(body) {
		t.Errorf("upstream got %q, want the original body", upstreamGot)
	}
}

// TestReloadWithoutLLMMakesNoCalls: a reload that removes the storage's
// llm block turns learning with a model off: turns after it make no calls.
// Before the memory app, the distiller kept running until a restart.
func TestReloadWithoutLLMMakesNoCalls(t *testing.T) {
	model := llmtest.NewServer()
	defer model.Close()
	storage := t.TempDir()
	up := newFakeLLM(t)
	const debounce = 200 * time.Millisecond
	llm := fmt.Sprintf(`llm {
				url %s
				model distiller-1
				debounce %s
			}`, model.Endpoint(), debounce)
	tester := startCaddy(t, storageConfig(storage, llm, up.addr(), ""))
	post(t, tester, "/v1/chat/completions", "sk-llm-off", chatBody(false, msg("user", "My sister is called Zofia.")))
	settle(t, storage, 1)
	waitForCall(t, model, "the model was never called: the test would not show that a reload stops it")

	reload(t, tester, storageConfig(storage, "", up.addr(), ""))
	turnsAtStart = handedOver()
	post(t, tester, "/v1/chat/completions", "sk-llm-off", chatBody(false, msg("user", "My brother is called Tomas.")))
	post(t, tester, "/v1/chat/completions", "sk-llm-off", chatBody(false, msg("system", "Another conversation."), msg("user", "I keep bees.")))
	settle(t, storage, 2)
	time.Sleep(5 * debounce)
	if n := len(model.Calls()); n != 1 {
		t.Errorf("%d calls to the model after a reload without llm, want the 1 before", n)
	}
}

// waitForCall waits until the model has been called, or fails with why.
func waitForCall(t *testing.T, model *llmtest.Server, why string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for len(model.Calls()) == 0 {
		if time.Now().After(deadline) {
			t.Fatal(why)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestTwoSitesTwoStorages: two sites, each naming a storage of its own for
// its proxy and its API, keep their memories apart; a handler that names
// no storage where there are two and neither is named default is a
// configuration error that says so. Before the memory app, a bare
// memory_api there served Caddy's default storage with only a warning.
func TestTwoSitesTwoStorages(t *testing.T) {
	a, b := t.TempDir(), t.TempDir()
	up := newFakeLLM(t)
	storages := fmt.Sprintf(`	memory {
		storage a {
			path %s
			index_shards 2
		}
		storage b {
			path %s
			index_shards 2
		}
	}
}
`, a, b)
	cfg := strings.TrimSuffix(globalOptions, "}\n") + storages + fmt.Sprintf(`http://localhost:9080 {
	memory {
		storage a
	}
	handle /memory/* {
		memory_api {
			storage a
		}
	}
	reverse_proxy %[1]s
}
http://127.0.0.1:9080 {
	memory {
		storage b
	}
	handle /memory/* {
		memory_api {
			storage b
		}
	}
	reverse_proxy %[1]s
}
`, up.addr())
	tester := startCaddy(t, cfg)
	post(t, tester, "/v1/chat/completions", "sk-two", chatBody(false, msg("user", "I live in Zqvilnius.")))
	settle(t, a, 1)
	if got := searchFor(t, engineAt(a), "sk-two", "Where do I live?"); !strings.Contains(got, "Zqvilnius") {
		t.Errorf("storage a: %q", got)
	}
	if got := searchFor(t, engineAt(b), "sk-two", "Where do I live?"); got != "" {
		t.Errorf("storage b holds site a's memory: %q", got)
	}
	api := apiCall{t, tester.Client}
	if _, out := api.do("GET", "/memory/memories", "sk-two", nil); len(listContents(out)) == 0 {
		t.Errorf("site a's API does not serve storage a: %v", out)
	}

	bare := strings.Replace(cfg, "\t\tmemory_api {\n\t\t\tstorage b\n\t\t}", "\t\tmemory_api", 1)
	if status, body := loadConfig(t, bare); status == 200 || !strings.Contains(body, "names no memory storage and the memory app has several (a, b)") {
		t.Errorf("a bare memory_api among two storages: %d %s", status, body)
	}
}
