package memory

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddytest"

	"github.com/caddy-memory/memory/app"
)

// exampleUnderTest is Caddyfile.example as the tests run it: the shipped
// file, its global options given the test server's admin endpoint, a
// storage in storage, Caddy's log as JSON in logFile, and extra global
// options. Its environment (MEMORY_PORT, MEMORY_UPSTREAM, MEMORY_BIND) is
// the test's.
func exampleUnderTest(t *testing.T, storage, logFile, extra string) string {
	t.Helper()
	src, err := os.ReadFile("Caddyfile.example")
	if err != nil {
		t.Fatal(err)
	}
	s := string(src)
	at := strings.Index(s, "{\n\tdefault_bind")
	if at < 0 {
		t.Fatal("Caddyfile.example's global options do not start with default_bind")
	}
	globals := fmt.Sprintf(`{
	admin localhost:2999
	grace_period 1ns
	log {
		output file %s
		format json
	}
	memory {
		storage default {
			path %s
			index_shards 4
		}
	}
%s`, logFile, storage, extra)
	return s[:at] + globals + s[at+2:]
}

// ollamaChat sends a keyless Ollama chat request (as Ollama's own clients
// do) through c, with more headers, and returns what the upstream got.
func ollamaChat(t *testing.T, c *http.Client, up *fakeLLM, headers map[string]string, text string) []byte {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, caddyAddr+"/api/chat", bytes.NewReader(mustBytes(map[string]any{
		"model": "llama3.2", "stream": false, "messages": []any{msg("user", text)}})))
	for k, v := range headers {
		if k == "Host" {
			req.Host = v
			continue
		}
		req.Header.Set(k, v)
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d", resp.StatusCode)
	}
	return up.last("/api/chat").Body
}

// from is a client whose connections to Caddy say, in a PROXY protocol
// header, that they come from ip: a client elsewhere on the network, as
// Caddy's proxy_protocol listener wrapper hands it to the handlers.
func from(ip string) *http.Client {
	return &http.Client{Timeout: 20 * time.Second, Transport: &http.Transport{DisableKeepAlives: true,
		DialContext: func(ctx context.Context, _, addr string) (net.Conn, error) {
			c, err := (&net.Dialer{}).DialContext(ctx, "tcp", "127.0.0.1:9080")
			if err != nil {
				return nil, err
			}
			_, err = fmt.Fprintf(c, "PROXY TCP4 %s 127.0.0.1 40000 9080\r\n", ip)
			return c, err
		}}}
}

// logLines are the entries of a JSON log file whose message starts with
// msg.
func logLines(t *testing.T, file, msg string) []map[string]any {
	t.Helper()
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []map[string]any
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var e map[string]any
		if json.Unmarshal(sc.Bytes(), &e) == nil && strings.HasPrefix(fmt.Sprint(e["msg"]), msg) {
			out = append(out, e)
		}
	}
	return out
}

const noOwnerMsg = "chat request passed on without memory"

// TestExampleRemembersItsLocalUser: Caddyfile.example as shipped (on
// 127.0.0.1, proxying to a local Ollama) remembers the person at the
// machine whose client sends no key, as Ollama's own do: the second
// conversation carries what the first said, and their dashboard's API
// lists it. A key holder, even one whose key is "local", is someone else.
func TestExampleRemembersItsLocalUser(t *testing.T) {
	up := newFakeLLM(t)
	storage, logFile := t.TempDir(), filepath.Join(t.TempDir(), "caddy.log")
	t.Setenv("MEMORY_PORT", "9080")
	t.Setenv("MEMORY_UPSTREAM", up.URL)
	os.Unsetenv("MEMORY_BIND")
	tester := startCaddy(t, exampleUnderTest(t, storage, logFile, ""))

	first := ollamaChat(t, tester.Client, up, nil, "Hi, I am Ana. I live in Lisbon and I am allergic to peanuts.")
	if hasBlock(first) {
		t.Fatalf("the first request had nothing to recall, yet carries a block: %s", first)
	}
	settle(t, storage, 1)
	second := string(ollamaChat(t, tester.Client, up, nil, "Suggest a snack I could buy near where I live."))
	if !hasBlock([]byte(second)) || !strings.Contains(second, "User is allergic to peanuts.") || !strings.Contains(second, "Lisbon") {
		t.Errorf("the local user's second conversation did not carry what the first said:\n%s", second)
	}
	if got := string(ollamaChat(t, tester.Client, up, map[string]string{"Authorization": "Bearer local"},
		"Suggest a snack I could buy near where I live.")); strings.Contains(got, "peanuts") || strings.Contains(got, "Lisbon") {
		t.Errorf("a key holder whose key is \"local\" got the local user's memories:\n%s", got)
	}

	// The dashboard's API, mounted with the same owners, is theirs.
	req, _ := http.NewRequest(http.MethodGet, caddyAddr+"/memory/memories", nil)
	resp, err := tester.Client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), "peanuts") {
		t.Errorf("the local user's GET /memory/memories: %d %s", resp.StatusCode, body)
	}
	if lines := logLines(t, logFile, noOwnerMsg); len(lines) != 0 {
		t.Errorf("requests that had an owner were logged as without one: %v", lines)
	}
}

// TestExampleKeepsStrangersApart: Caddyfile.example exposed with
// MEMORY_BIND=0.0.0.0 remembers no keyless client but the person at the
// machine: two clients elsewhere on the network (their addresses given by
// the PROXY protocol, as a load balancer's would be) share nothing and are
// not remembered, and neither is a request a proxy on this machine relays
// (X-Forwarded-For), one naming another host (a name rebound to
// 127.0.0.1) or one a page from another site sends (its Origin, or a
// browser's Sec-Fetch-Site); the log says why, once for each cause.
func TestExampleKeepsStrangersApart(t *testing.T) {
	up, storage, logFile, tester := exposedExample(t)
	bea, carl := from("203.0.113.7"), from("198.51.100.9")

	ollamaChat(t, bea, up, nil, "My name is Bea and I live in Zqbraga.")
	ollamaChat(t, carl, up, nil, "My name is Carl and I live in Zqcoimbra.")
	for name, c := range map[string]*http.Client{"Bea": bea, "Carl": carl} {
		if got := ollamaChat(t, c, up, nil, "Where do I live, Zqbraga or Zqcoimbra?"); hasBlock(got) {
			t.Errorf("%s, a keyless client elsewhere, was given memories: %s", name, got)
		}
	}
	for name, h := range map[string]map[string]string{
		"relayed by a proxy on this machine": {"X-Forwarded-For": "203.0.113.7"},
		"naming another host":                {"Host": "rebound.example:9080"},
		"sent by another site's page":        {"Origin": "https://evil.example"},
		"a cross-site browser request":       {"Sec-Fetch-Site": "cross-site"},
	} {
		ollamaChat(t, tester.Client, up, h, "My name is Dora and I live in Zqdouro.")
		if got := ollamaChat(t, tester.Client, up, h, "Where do I live, Zqdouro?"); hasBlock(got) {
			t.Errorf("a keyless request %s was given memories: %s", name, got)
		}
	}
	// The person at the machine still is someone.
	ollamaChat(t, tester.Client, up, nil, "My name is Eva and I live in Zqevora.")
	settle(t, storage, 1)
	if got := string(ollamaChat(t, tester.Client, up, nil, "Where do I live, Zqevora?")); !strings.Contains(got, "Zqevora") ||
		strings.Contains(got, "Zqbraga") || strings.Contains(got, "Zqdouro") {
		t.Errorf("the local user's block: %s", got)
	}
	if st, err := engineAt(storage).Stats(); err != nil || st.Owners != 1 {
		t.Errorf("%d owners (%v), want the local user alone", st.Owners, err)
	}

	lines := logLines(t, logFile, noOwnerMsg)
	causes := map[string]int{}
	for _, l := range lines {
		why := fmt.Sprint(l["why"])
		if !strings.Contains(why, "{memory.api_key}: the request sends no API key") {
			t.Errorf("a line does not say the key is missing: %v", why)
		}
		for _, c := range []string{"comes from 203.0.113.7", "comes from 198.51.100.9", "X-Forwarded-For", "rebound.example", "evil.example", "Sec-Fetch-Site"} {
			if strings.Contains(why, c) {
				causes[c]++
			}
		}
	}
	// Bea and Carl share one cause (a keyless request from elsewhere):
	// logged once, for the first of them. So do a cross-site Origin and
	// Sec-Fetch-Site: whichever came first.
	if len(lines) != 4 || causes["comes from 203.0.113.7"] != 1 || causes["comes from 198.51.100.9"] != 0 ||
		causes["X-Forwarded-For"] != 1 || causes["rebound.example"] != 1 || causes["evil.example"]+causes["Sec-Fetch-Site"] != 1 {
		t.Errorf("want one line for each cause; the log has %d: %v", len(lines), lines)
	}
}

// exposedExample runs Caddyfile.example with MEMORY_BIND=0.0.0.0 on 9080
// in front of a fake upstream, its listener taking a PROXY protocol header
// from 127.0.0.1 (as from a load balancer), so that from() can be a client
// elsewhere on the network. It returns the upstream, the storage, Caddy's
// log file and the tester.
func exposedExample(t *testing.T) (*fakeLLM, string, string, *caddytest.Tester) {
	t.Helper()
	up := newFakeLLM(t)
	storage, logFile := t.TempDir(), filepath.Join(t.TempDir(), "caddy.log")
	t.Setenv("MEMORY_PORT", "9080")
	t.Setenv("MEMORY_UPSTREAM", up.URL)
	t.Setenv("MEMORY_BIND", "0.0.0.0")
	wrapper := `	servers {
		listener_wrappers {
			proxy_protocol {
				allow 127.0.0.1/32
			}
		}
	}
`
	return up, storage, logFile, startCaddy(t, exampleUnderTest(t, storage, logFile, wrapper))
}

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
	up := newFakeLLM(t)
	storage, logFile := t.TempDir(), filepath.Join(t.TempDir(), "caddy.log")
	cfg := func(owner string) string {
		return strings.Replace(siteConfig(storage, up.addr(), owner), "\tmemory {\n", fmt.Sprintf("\tlog {\n\t\toutput file %s\n\t\tformat json\n\t}\n\tmemory {\n", logFile), 1)
	}
	tester := startCaddy(t, cfg(""))
	clock := newTestClock(time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC))
	setClock := func() {
		l := proxyAt(t, storage).noOwner
		l.mu.Lock()
		l.now = clock.Now
		l.mu.Unlock()
	}
	setClock()
	ask := func(h http.Header) { chatAs(t, tester, h, "Hello there, what is new?") }

	for range 3 {
		ask(nil)
	}
	ask(http.Header{"Authorization": {"Bearer "}})
	ask(http.Header{"Authorization": {"Bearer sk-someone"}})
	clock.move(59 * time.Second)
	ask(nil)
	clock.move(2 * time.Second)
	ask(nil)

	lines := logLines(t, logFile, noOwnerMsg)
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
	reload(t, tester, cfg("owner {http.request.header.X-User}"))
	setClock()
	ask(http.Header{"X-User": {" "}})
	ask(nil)
	lines = logLines(t, logFile, noOwnerMsg)
	if len(lines) != 4 || !strings.Contains(fmt.Sprint(lines[3]["why"]), "{http.request.header.X-User} is empty") {
		t.Errorf("after the reload, want one line saying the template is empty: %v", lines[3:])
	}
}
