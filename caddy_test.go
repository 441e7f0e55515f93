package memory

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddytest"

	"github.com/caddy-memory/memory/app"
	"github.com/caddy-memory/memory/internal/engine"
)

// Every test in this package shares one in-process Caddy (caddytest); each
// InitServer is a config reload, which is exactly the path the engine pool
// has to survive.

const caddyAddr = "http://localhost:9080"

// skipped counts tests that caddytest skipped. It skips (rather than fails)
// when Caddy cannot start, e.g. when its admin port is taken; a skipped
// integration test must not pass CI, so TestMain turns skips into a failure.
var skipped atomic.Int32

func TestMain(m *testing.M) {
	// The tests bind fixed ports (Caddy's admin at 2999, sites at 9080): a
	// second run on this machine, from another checkout, waits for this one
	// rather than failing in both.
	unlock := lockPorts()
	code := m.Run()
	unlock()
	if n := skipped.Load(); n > 0 {
		fmt.Fprintf(os.Stderr, "FAIL: %d integration tests were skipped (caddytest could not start Caddy: is port 2999 or 9080 in use?)\n", n)
		code = 1
	}
	os.Exit(code)
}

// globalOptions is the caddytest server every test config shares.
const globalOptions = `{
	admin localhost:2999
	http_port 9080
	https_port 9443
	grace_period 1ns
	skip_install_trust
}
`

// withStorage is globalOptions with the memory app's default storage in
// the directory storage, its index in 4 shards, and more settings of the
// storage (e.g. an llm block).
func withStorage(storage, settings string) string {
	return strings.TrimSuffix(globalOptions, "}\n") + fmt.Sprintf(`	memory {
		storage default {
			path %s
			index_shards 4
			%s
		}
	}
}
`, storage, settings)
}

func siteConfig(storage, upstream, directives string) string {
	return storageConfig(storage, "", upstream, directives)
}

// storageConfig is siteConfig with settings of the storage.
func storageConfig(storage, settings, upstream, directives string) string {
	return withStorage(storage, settings) + fmt.Sprintf(`http://localhost:9080 {
	memory {
		%s
	}
	reverse_proxy %s
}
`, directives, upstream)
}

// startCaddy loads cfg and, when the test ends, loads an empty config so the
// test's engines close before its temporary directories are removed.
func startCaddy(t *testing.T, cfg string) *caddytest.Tester {
	t.Helper()
	t.Cleanup(func() {
		if t.Skipped() {
			skipped.Add(1)
		}
	})
	turnsAtStart = handedOver()
	tester := caddytest.NewTester(t).WithDefaultOverrides(caddytest.Config{TestRequestTimeout: 20 * time.Second})
	tester.InitServer(cfg, "caddyfile")
	if t.Failed() {
		t.FailNow()
	}
	t.Cleanup(func() { unloadCaddy(t) })
	return tester
}

func unloadCaddy(t *testing.T) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, "http://localhost:2999/load",
		strings.NewReader(`{"admin":{"listen":"localhost:2999"}}`))
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Errorf("unloading the test config: %v", err)
		return
	}
	resp.Body.Close()
}

// post sends a chat request through Caddy and returns the response and its body.
func post(t *testing.T, tester *caddytest.Tester, path, key string, body []byte) (*http.Response, []byte) {
	t.Helper()
	return sendChat(t, tester.Client, path, key, nil, body)
}

// sendChat posts body to path through Caddy with the key as a bearer token (if
// any) and more headers, and returns the response and its body.
func sendChat(t *testing.T, c *http.Client, path, key string, headers map[string]string, body []byte) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, caddyAddr+path, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatalf("request through Caddy: %v", err)
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("reading response: %v", err)
	}
	return resp, out
}

// turnsAtStart is handedOver when the running test started Caddy: tests
// run one at a time, and the metrics count for the whole process.
var turnsAtStart float64

// handedOver counts the turns learning has finished with, as the metrics
// tell an operator: learned, failed or dropped.
func handedOver() float64 { return metric("caddy_memory_extraction_jobs_total", "") }

// metric sums the series of a metric whose labels contain labels, as
// Caddy's admin endpoint serves them (0 when it serves none).
func metric(name, labels string) float64 {
	resp, err := http.Get("http://localhost:2999/metrics")
	if err != nil {
		return 0
	}
	defer resp.Body.Close()
	sum := 0.0
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := sc.Text()
		rest, ok := strings.CutPrefix(line, name)
		if !ok || (rest != "" && rest[0] != '{' && rest[0] != ' ') {
			continue
		}
		i := strings.LastIndexByte(rest, ' ')
		if i < 0 || !strings.Contains(rest[:i], labels) {
			continue
		}
		if v, err := strconv.ParseFloat(rest[i+1:], 64); err == nil {
			sum += v
		}
	}
	return sum
}

// engineAt returns the open engine of the storage in directory dir, in the
// running configuration.
func engineAt(dir string) *engine.Engine {
	v, err := caddy.ActiveContext().AppIfConfigured("memory")
	if err != nil {
		return nil
	}
	for _, s := range v.(*app.App).Open() {
		if s.Dir() == dir {
			return s.Engine()
		}
	}
	return nil
}

// settle waits until learning has finished with turns turns since the
// test started Caddy (a streamed response can end at the client before the
// handler hands its turn over) and everything stored is searchable.
func settle(t *testing.T, storage string, turns int) {
	t.Helper()
	e := engineAt(storage)
	if e == nil {
		t.Fatalf("no engine open for %s", storage)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	for handedOver()-turnsAtStart < float64(turns) {
		select {
		case <-ctx.Done():
			t.Fatalf("learning finished with %v turns, want %d", handedOver()-turnsAtStart, turns)
		case <-time.After(time.Millisecond):
		}
	}
	if err := e.Sync(ctx); err != nil {
		t.Fatal(err)
	}
}

// searchFor returns the contents of what the engine finds for a raw owner.
func searchFor(t *testing.T, e *engine.Engine, rawOwner, query string) string {
	t.Helper()
	res, err := e.Search(context.Background(), engine.SearchRequest{Owner: e.OwnerID(rawOwner), Query: query, Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, r := range res {
		out = append(out, r.Memory.Content)
	}
	return strings.Join(out, " | ")
}
