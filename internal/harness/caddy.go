package harness

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddytest"

	"github.com/caddy-memory/memory/app"
	"github.com/caddy-memory/memory/internal/engine"
	"github.com/caddy-memory/memory/internal/freeport"
)

// Each test binary (a package of integration/, or the root's tests) runs
// one in-process Caddy (caddytest); each InitServer is a config reload,
// which is exactly the path the engine pool has to survive. Its ports
// (admin, HTTP, HTTPS) are picked by the OS when the binary starts, so
// packages run in parallel, and beside a Caddy on Caddyfile.example.

var adminPort, httpPort, httpsPort = freePorts()

// Port is the port of every site a test's Caddy serves over HTTP (its
// http_port: a site address without a port listens there).
var Port = strconv.Itoa(httpPort)

// CaddyAddr is Caddy's HTTP address for the sites on localhost.
var CaddyAddr = "http://localhost:" + Port

// AdminListen is the address of Caddy's admin endpoint; AdminAddr is its URL.
var (
	AdminListen = "localhost:" + strconv.Itoa(adminPort)
	AdminAddr   = "http://" + AdminListen
)

// freePorts are the ports of this process's Caddy: admin, HTTP, HTTPS.
func freePorts() (int, int, int) {
	p, err := freeport.Loopback(3)
	if err != nil {
		panic(fmt.Sprintf("no free port for a test Caddy: %v", err))
	}
	return p[0], p[1], p[2]
}

func init() {
	// caddytest starts its Caddy, and waits for the configs it loads, on
	// this admin port.
	caddytest.Default.AdminPort = adminPort
	// Caddy's own data (its local CA, the autosaved config) in a directory
	// of this process, not shared with the test binaries running beside it.
	var err error
	if caddyHome, err = os.MkdirTemp("", "caddy-memory-test-"); err != nil {
		panic(err)
	}
	os.Setenv("XDG_DATA_HOME", filepath.Join(caddyHome, "data"))
	os.Setenv("XDG_CONFIG_HOME", filepath.Join(caddyHome, "config"))
}

// caddyHome holds Caddy's data and config directories; Main removes it.
var caddyHome string

// Skipped counts tests that caddytest skipped. It skips (rather than fails)
// when Caddy cannot start, e.g. when its admin port is taken; a skipped
// integration test must not pass CI, so Main turns skips into a failure.
var Skipped atomic.Int32

// Main runs a package's integration tests and returns their exit code;
// each package's TestMain is os.Exit(harness.Main(m)).
func Main(m *testing.M) int {
	code := m.Run()
	os.RemoveAll(caddyHome)
	if n := Skipped.Load(); n > 0 {
		fmt.Fprintf(os.Stderr, "FAIL: %d integration tests were skipped (caddytest could not start Caddy)\n", n)
		code = 1
	}
	return code
}

// GlobalOptions is the global options block every test config shares.
var GlobalOptions = fmt.Sprintf(`{
	admin %s
	http_port %d
	https_port %d
	grace_period 1ns
	skip_install_trust
}
`, AdminListen, httpPort, httpsPort)

// WithStorage is globalOptions with the memory app's default storage in
// the directory storage, its index in 4 shards, and more settings of the
// storage (e.g. an llm block).
func WithStorage(storage, settings string) string {
	return strings.TrimSuffix(GlobalOptions, "}\n") + fmt.Sprintf(`	memory {
		storage default {
			path %s
			index_shards 4
			%s
		}
	}
}
`, storage, settings)
}

func SiteConfig(storage, upstream, directives string) string {
	return StorageConfig(storage, "", upstream, directives)
}

// StorageConfig is siteConfig with settings of the storage.
func StorageConfig(storage, settings, upstream, directives string) string {
	return WithStorage(storage, settings) + fmt.Sprintf(`http://localhost {
	memory {
		%s
	}
	reverse_proxy %s
}
`, directives, upstream)
}

// StartCaddy loads cfg and, when the test ends, loads an empty config so the
// test's engines close before its temporary directories are removed.
func StartCaddy(t *testing.T, cfg string) *caddytest.Tester {
	t.Helper()
	t.Cleanup(func() {
		if t.Skipped() {
			Skipped.Add(1)
		}
	})
	TurnsAtStart = HandedOver()
	tester := caddytest.NewTester(t).WithDefaultOverrides(caddytest.Config{TestRequestTimeout: 20 * time.Second})
	tester.InitServer(cfg, "caddyfile")
	if t.Failed() {
		t.FailNow()
	}
	t.Cleanup(func() { UnloadCaddy(t) })
	return tester
}

func UnloadCaddy(t *testing.T) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, AdminAddr+"/load",
		strings.NewReader(`{"admin":{"listen":"`+AdminListen+`"}}`))
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Errorf("unloading the test config: %v", err)
		return
	}
	resp.Body.Close()
}

// Post sends a chat request through Caddy and returns the response and its body.
func Post(t *testing.T, tester *caddytest.Tester, path, key string, body []byte) (*http.Response, []byte) {
	t.Helper()
	return SendChat(t, tester.Client, path, key, nil, body)
}

// SendChat posts body to path through Caddy with the key as a bearer token (if
// any) and more headers, and returns the response and its body.
func SendChat(t *testing.T, c *http.Client, path, key string, headers map[string]string, body []byte) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, CaddyAddr+path, bytes.NewReader(body))
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

// TurnsAtStart is handedOver when the running test started Caddy: tests
// run one at a time, and the metrics count for the whole process.
var TurnsAtStart float64

// HandedOver counts the turns learning has finished with, as the metrics
// tell an operator: learned, failed or dropped.
func HandedOver() float64 { return Metric("caddy_memory_extraction_jobs_total", "") }

// Metric sums the series of a metric whose labels contain labels, as
// Caddy's admin endpoint serves them (0 when it serves none).
func Metric(name, labels string) float64 {
	resp, err := http.Get(AdminAddr + "/metrics")
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

// EngineAt returns the open engine of the storage in directory dir, in the
// running configuration.
func EngineAt(dir string) *engine.Engine {
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

// Settle waits until learning has finished with turns turns since the
// test started Caddy (a streamed response can end at the client before the
// handler hands its turn over) and everything stored is searchable.
func Settle(t *testing.T, storage string, turns int) {
	t.Helper()
	e := EngineAt(storage)
	if e == nil {
		t.Fatalf("no engine open for %s", storage)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	for HandedOver()-TurnsAtStart < float64(turns) {
		select {
		case <-ctx.Done():
			t.Fatalf("learning finished with %v turns, want %d", HandedOver()-TurnsAtStart, turns)
		case <-time.After(time.Millisecond):
		}
	}
	if err := e.Sync(ctx); err != nil {
		t.Fatal(err)
	}
}

// SearchFor returns the contents of what the engine finds for a raw owner.
func SearchFor(t *testing.T, e *engine.Engine, rawOwner, query string) string {
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

// RepoFile is the path of a file of the repository (e.g.
// "Caddyfile.example"), wherever the test binary runs.
func RepoFile(name string) string {
	_, here, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(here), "..", "..", name)
}
