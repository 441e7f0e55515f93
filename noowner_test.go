package memory

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/caddyserver/caddy/v2"

	"github.com/caddy-memory/memory/app"
	"github.com/caddy-memory/memory/internal/harness"
)

func TestMain(m *testing.M) { os.Exit(harness.Main(m)) }

// proxyAt is the first memory handler of the running configuration on
// the storage in dir.
func proxyAt(t *testing.T, dir string) *Handler {
	t.Helper()
	v, err := caddy.ActiveContext().AppIfConfigured("memory")
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range v.(*app.App).Open() {
		if h, ok := s.Proxy().(*Handler); ok && s.Dir() == dir {
			return h
		}
	}
	t.Fatalf("no memory handler on %s", dir)
	return nil
}

// testClock is a clock a test moves while Caddy reads it.
type testClock struct{ ns atomic.Int64 }

func (c *testClock) Now() time.Time        { return time.Unix(0, c.ns.Load()).UTC() }
func (c *testClock) move(d time.Duration)  { c.ns.Add(int64(d)) }
func newTestClock(at time.Time) *testClock { c := new(testClock); c.ns.Store(at.UnixNano()); return c }

// TestNoOwnerIsLoggedOncePerCausePerMinute: a chat request passed on for
// want of an owner is logged with why, once a minute for each cause (no
// key, a blank one, an owner template that is empty), saying how many
// went unlogged since; requests with an owner are not.
func TestNoOwnerIsLoggedOncePerCausePerMinute(t *testing.T) {
	up := harness.NewFakeLLM(t)
	storage, logFile := t.TempDir(), filepath.Join(t.TempDir(), "caddy.log")
	cfg := func(owner string) string {
		return strings.Replace(harness.SiteConfig(storage, up.Addr(), owner), "\tmemory {\n", fmt.Sprintf("\tlog {\n\t\toutput file %s\n\t\tformat json\n\t}\n\tmemory {\n", logFile), 1)
	}
	tester := harness.StartCaddy(t, cfg(""))
	clock := newTestClock(time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC))
	setClock := func() {
		l := proxyAt(t, storage).noOwner
		l.mu.Lock()
		l.now = clock.Now
		l.mu.Unlock()
	}
	setClock()
	ask := func(h http.Header) { harness.ChatAs(t, tester, h, "Hello there, what is new?") }

	for range 3 {
		ask(nil)
	}
	ask(http.Header{"Authorization": {"Bearer "}})
	ask(http.Header{"Authorization": {"Bearer sk-someone"}})
	clock.move(59 * time.Second)
	ask(nil)
	clock.move(2 * time.Second)
	ask(nil)

	lines := harness.LogLines(t, logFile, harness.NoOwnerMsg)
	if len(lines) != 3 {
		t.Fatalf("%d lines logged, want 3 (no key, a blank key, no key a minute later): %v", len(lines), lines)
	}
	for i, want := range []struct {
		why    string
		missed float64
	}{{"sends no API key", 0}, {"holds no key (blank, or a scheme alone", 0}, {"sends no API key", 3}} {
		if why := fmt.Sprint(lines[i]["why"]); !strings.Contains(why, want.why) || lines[i]["same_since_last_logged"] != want.missed {
			t.Errorf("line %d: why %q, %v unlogged since; want %q and %v", i, why, lines[i]["same_since_last_logged"], want.why, want.missed)
		}
	}
	if l := lines[0]; fmt.Sprint(l["owner"]) != "[{memory.api_key}]" || l["path"] != "/v1/chat/completions" || l["logger"] != "http.handlers.memory" {
		t.Errorf("the line does not say which templates, request and handler: %v", l)
	}

	// An owner template that is empty (a header the front end did not set)
	// is a cause of its own, after a reload too.
	harness.Reload(t, tester, cfg("owner {http.request.header.X-User}"))
	setClock()
	ask(http.Header{"X-User": {" "}})
	ask(nil)
	lines = harness.LogLines(t, logFile, harness.NoOwnerMsg)
	if len(lines) != 4 || !strings.Contains(fmt.Sprint(lines[3]["why"]), "{http.request.header.X-User} is empty") {
		t.Errorf("after the reload, want one line saying the template is empty: %v", lines[3:])
	}
}
