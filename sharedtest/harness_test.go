// Package sharedtest_test runs several real Caddy processes, with the memory
// module, on one PostgreSQL database (storage postgres://...) and checks what
// a user of the deployment would notice: a memory saved through one instance
// is recalled through another, edits and deletions follow, a crash or a
// database outage loses nothing that was acknowledged.
//
// The test binary is its own Caddy: with MEMORY_SHAREDTEST_CADDY set to a
// Caddyfile, TestMain runs `caddy run` on it instead of the tests. Each
// instance gets its own ports and its own XDG data and config directories,
// so its replica of the database is its own, as on separate machines.
package sharedtest_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	caddycmd "github.com/caddyserver/caddy/v2/cmd"
	_ "github.com/caddyserver/caddy/v2/modules/standard"

	_ "github.com/caddy-memory/memory"
	"github.com/caddy-memory/memory/internal/pgtest"
)

// caddyEnv names the variable that makes the test binary a Caddy process
// running the Caddyfile it names.
const caddyEnv = "MEMORY_SHAREDTEST_CADDY"

func TestMain(m *testing.M) {
	if cfg := os.Getenv(caddyEnv); cfg != "" {
		os.Args = []string{"caddy", "run", "--config", cfg, "--adapter", "caddyfile"}
		caddycmd.Main()
		return
	}
	os.Exit(pgtest.Main(m))
}

// The memory block's markers (inject.BlockStart, inject.BlockEnd).
const (
	blockStart = `<memory-context source="caddy-memory">`
	blockEnd   = `</memory-context>`
)

// ---------------------------------------------------------------------------
// The fake model: OpenAI chat completions, recording what it receives.

type received struct {
	ID   string // the X-Test-Id header the test sent
	Key  string // the bearer token
	Body []byte
}

type upstream struct {
	*httptest.Server
	mu   sync.Mutex
	reqs []received
}

func newUpstream(t *testing.T) *upstream {
	u := &upstream{}
	u.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		u.mu.Lock()
		u.reqs = append(u.reqs, received{
			ID:   r.Header.Get("X-Test-Id"),
			Key:  strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer "),
			Body: body,
		})
		u.mu.Unlock()
		if r.Method != http.MethodPost || !strings.HasSuffix(r.URL.Path, "/chat/completions") {
			w.Header().Set("Content-Type", "text/plain")
			io.WriteString(w, "upstream ok")
			return
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{
			"id": "chatcmpl-fake", "object": "chat.completion", "created": 1, "model": "fake",
			"choices": []any{map[string]any{"index": 0, "finish_reason": "stop",
				"message": map[string]any{"role": "assistant", "content": "Noted."}}},
			"usage": map[string]any{"prompt_tokens": 10, "completion_tokens": 2, "total_tokens": 12},
		})
	}))
	t.Cleanup(u.Close)
	return u
}

// byID returns the request the upstream received with X-Test-Id id.
func (u *upstream) byID(id string) (received, bool) {
	u.mu.Lock()
	defer u.mu.Unlock()
	for i := len(u.reqs) - 1; i >= 0; i-- {
		if u.reqs[i].ID == id {
			return u.reqs[i], true
		}
	}
	return received{}, false
}

func (u *upstream) count() int {
	u.mu.Lock()
	defer u.mu.Unlock()
	return len(u.reqs)
}

// block returns the memory block a chat body carried ("" for none), from
// the decoded messages, so JSON escaping does not matter.
func block(body []byte) string {
	var v struct {
		Messages []struct {
			Content any `json:"content"`
		} `json:"messages"`
	}
	if json.Unmarshal(body, &v) != nil {
		return ""
	}
	var out []string
	for _, m := range v.Messages {
		s, _ := m.Content.(string)
		if i := strings.Index(s, blockStart); i >= 0 {
			if j := strings.Index(s[i:], blockEnd); j >= 0 {
				out = append(out, s[i:i+j+len(blockEnd)])
			}
		}
	}
	return strings.Join(out, "\n")
}

// ---------------------------------------------------------------------------
// Caddy processes.

type instance struct {
	t        *testing.T
	name     string
	db       string
	up       *upstream
	dataHome string
	cfgHome  string
	dir      string // config and logs
	replica  string // the storage's replica setting; "" for the default
	extra    string // more settings of its storage

	mu        sync.Mutex
	cmd       *exec.Cmd
	exited    chan struct{}
	waitErr   error
	admin     int
	http      int
	runs      int
	logsShown bool
	chats     atomic.Int64 // chat requests sent through it, each a turn to learn
}

var reqSeq atomic.Int64

var client = &http.Client{Timeout: 15 * time.Second}

// newInstance prepares (without starting) a Caddy process on db that
// proxies to up; its data and config directories are its own.
func newInstance(t *testing.T, name, db string, up *upstream) *instance {
	t.Helper()
	dir := t.TempDir()
	c := &instance{t: t, name: name, db: db, up: up, dir: dir,
		dataHome: filepath.Join(dir, "data"), cfgHome: filepath.Join(dir, "config")}
	for _, d := range []string{c.dataHome, c.cfgHome} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(c.cleanup)
	return c
}

// startInstance starts a Caddy process and waits until it answers.
func startInstance(t *testing.T, name, db string, up *upstream) *instance {
	t.Helper()
	c := newInstance(t, name, db, up)
	c.start()
	return c
}

func (c *instance) caddyfile() string {
	replica := ""
	if c.replica != "" {
		replica = "replica " + c.replica
	}
	return fmt.Sprintf(`{
	admin 127.0.0.1:%[1]d
	http_port %[2]d
	https_port %[3]d
	auto_https off
	skip_install_trust
	persist_config off
	grace_period 2s
	memory {
		storage default {
			url %[4]s
			%[6]s
			index_shards 4
			%[7]s
		}
	}
}
http://:%[2]d {
	memory {
		owner {memory.api_key}
		diagnostics
	}
	handle /memory/* {
		memory_api
	}
	reverse_proxy %[5]s
}
`, c.admin, c.http, freePort(c.t), c.db, strings.TrimPrefix(c.up.URL, "http://"), replica, c.extra)
}

// start launches the process (again, after kill or stop: same data
// directory, so the same replica) on fresh ports, and waits until it
// answers HTTP. It retries when a port it picked was taken meanwhile.
func (c *instance) start() {
	c.t.Helper()
	for attempt := 1; ; attempt++ {
		if err := c.launch(); err != nil {
			c.t.Fatal(err)
		}
		err := c.waitReady(60 * time.Second)
		if err == nil {
			return
		}
		if attempt < 3 && len(c.logLines("address already in use")) > 0 {
			c.stop()
			continue
		}
		c.showLog()
		c.t.Fatalf("%s: %v", c.name, err)
	}
}

func (c *instance) launch() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.runs++
	c.admin, c.http = freePort(c.t), freePort(c.t)
	cfg := filepath.Join(c.dir, fmt.Sprintf("Caddyfile.%d", c.runs))
	if err := os.WriteFile(cfg, []byte(c.caddyfile()), 0o600); err != nil {
		return err
	}
	logf, err := os.Create(filepath.Join(c.dir, fmt.Sprintf("caddy.%d.log", c.runs)))
	if err != nil {
		return err
	}
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(),
		// The race detector sleeps a second at exit by default: a stop's
		// duration is then Caddy's own.
		"GORACE="+strings.TrimSpace(os.Getenv("GORACE")+" atexit_sleep_ms=0"),
		caddyEnv+"="+cfg,
		"XDG_DATA_HOME="+c.dataHome,
		"XDG_CONFIG_HOME="+c.cfgHome,
		"HOME="+c.dir,
	)
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = sysProcAttr()
	if err := cmd.Start(); err != nil {
		logf.Close()
		return fmt.Errorf("%s: starting caddy: %w", c.name, err)
	}
	exited := make(chan struct{})
	c.cmd, c.exited = cmd, exited
	go func() {
		err := cmd.Wait()
		logf.Close()
		c.mu.Lock()
		c.waitErr = err
		c.mu.Unlock()
		close(exited)
	}()
	return nil
}

func (c *instance) url(path string) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return fmt.Sprintf("http://127.0.0.1:%d%s", c.http, path)
}

func (c *instance) adminURL(path string) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return fmt.Sprintf("http://127.0.0.1:%d%s", c.admin, path)
}

func (c *instance) waitReady(limit time.Duration) error {
	deadline := time.Now().Add(limit)
	for {
		c.mu.Lock()
		exited := c.exited
		c.mu.Unlock()
		select {
		case <-exited:
			return fmt.Errorf("caddy exited before answering: %v", c.waitErr)
		default:
		}
		resp, err := client.Get(c.url("/ready-probe"))
		if err == nil {
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("caddy does not answer on %s after %v (last: %v)", c.url("/"), limit, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// kill9 kills the process the way a crash would, and waits for it to go.
func (c *instance) kill9() {
	c.mu.Lock()
	cmd, exited := c.cmd, c.exited
	c.mu.Unlock()
	if cmd == nil {
		return
	}
	_ = cmd.Process.Signal(syscall.SIGKILL)
	<-exited
}

// stop asks Caddy to shut down (SIGTERM: the engine drains) and kills it
// if it does not within 20 s.
func (c *instance) stop() {
	c.mu.Lock()
	cmd, exited := c.cmd, c.exited
	c.mu.Unlock()
	if cmd == nil {
		return
	}
	select {
	case <-exited:
		return
	default:
	}
	_ = cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-exited:
	case <-time.After(20 * time.Second):
		c.t.Errorf("%s: caddy did not stop within 20s of SIGTERM; killed", c.name)
		_ = cmd.Process.Signal(syscall.SIGKILL)
		<-exited
	}
}

func (c *instance) cleanup() {
	c.stop()
	for run := 1; run <= c.runs; run++ {
		path := filepath.Join(c.dir, fmt.Sprintf("caddy.%d.log", run))
		b, _ := os.ReadFile(path)
		if bytes.Contains(b, []byte("WARNING: DATA RACE")) {
			c.t.Errorf("%s (run %d): the race detector reported a data race", c.name, run)
		}
		if bytes.Contains(b, []byte("\npanic: ")) || bytes.HasPrefix(b, []byte("panic: ")) {
			c.t.Errorf("%s (run %d): caddy panicked", c.name, run)
		}
	}
	if c.t.Failed() {
		c.showLog()
	}
}

// showLog prints every run's output, once.
func (c *instance) showLog() {
	if c.logsShown {
		return
	}
	c.logsShown = true
	for run := 1; run <= c.runs; run++ {
		path := filepath.Join(c.dir, fmt.Sprintf("caddy.%d.log", run))
		b, err := os.ReadFile(path)
		if err != nil {
			continue
		}
		const max = 40000
		if len(b) > max {
			b = append([]byte("...\n"), b[len(b)-max:]...)
		}
		c.t.Logf("--- %s, run %d: %s ---\n%s", c.name, run, path, b)
	}
}

// logLines returns the lines of every run's output containing s.
func (c *instance) logLines(s string) []string {
	var out []string
	for run := 1; run <= c.runs; run++ {
		f, err := os.Open(filepath.Join(c.dir, fmt.Sprintf("caddy.%d.log", run)))
		if err != nil {
			continue
		}
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			if strings.Contains(sc.Text(), s) {
				out = append(out, sc.Text())
			}
		}
		f.Close()
	}
	return out
}

// ---------------------------------------------------------------------------
// Requests.

// chatResult is what the client of one chat request saw, and what the
// upstream received for it.
type chatResult struct {
	Status int
	Memory string // X-Memory-Status
	Err    error
	Sent   received // what the upstream received; zero if nothing
	OK     bool     // the upstream received it
}

// chat sends one OpenAI chat completion with a single user message through
// c, as key.
func (c *instance) chat(key, text string) chatResult {
	id := strconv.FormatInt(reqSeq.Add(1), 10)
	body, _ := json.Marshal(map[string]any{"model": "gpt-test", "stream": false,
		"messages": []any{map[string]any{"role": "user", "content": text}}})
	req, _ := http.NewRequest(http.MethodPost, c.url("/v1/chat/completions"), bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("X-Test-Id", id)
	c.chats.Add(1)
	resp, err := client.Do(req)
	if err != nil {
		return chatResult{Err: err}
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	r := chatResult{Status: resp.StatusCode, Memory: resp.Header.Get("X-Memory-Status")}
	r.Sent, r.OK = c.up.byID(id)
	return r
}

// api calls c's memory_api (self mode) as key; body is JSON-encoded.
func (c *instance) api(method, path, key string, body any) (int, map[string]any, error) {
	var r io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		r = bytes.NewReader(b)
	}
	req, _ := http.NewRequest(method, c.url("/memory"+path), r)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Authorization", "Bearer "+key)
	resp, err := client.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var out map[string]any
	if err := json.Unmarshal(raw, &out); err != nil {
		return resp.StatusCode, nil, fmt.Errorf("%s %s: status %d, not JSON: %q", method, path, resp.StatusCode, raw)
	}
	return resp.StatusCode, out, nil
}

// mustAPI is api that fails the test unless the status is want.
func (c *instance) mustAPI(method, path, key string, body any, want int) map[string]any {
	c.t.Helper()
	status, out, err := c.api(method, path, key, body)
	if err != nil {
		c.t.Fatalf("%s: %s %s: %v", c.name, method, path, err)
	}
	if status != want {
		c.t.Fatalf("%s: %s %s: status %d, want %d: %v", c.name, method, path, status, want, out)
	}
	return out
}

// remember creates a memory through c's memory_api and returns its id.
func (c *instance) remember(key, kind, mkey, content string) int64 {
	c.t.Helper()
	out := c.mustAPI(http.MethodPost, "/memories", key,
		map[string]any{"kind": kind, "key": mkey, "content": content}, http.StatusCreated)
	m, _ := out["memory"].(map[string]any)
	id, _ := m["id"].(float64)
	if id == 0 {
		c.t.Fatalf("%s: created memory has no id: %v", c.name, out)
	}
	return int64(id)
}

type listed struct {
	ID      int64
	Owner   string
	Content string
}

// contents joins the contents of what list returns, with " | ".
func (c *instance) contents(key string) (string, error) {
	ms, err := c.list(key)
	var all []string
	for _, m := range ms {
		all = append(all, m.Content)
	}
	return strings.Join(all, " | "), err
}

// list returns every memory c's memory_api lists for key (not deleted).
func (c *instance) list(key string) ([]listed, error) {
	var all []listed
	cursor := ""
	for {
		path := "/memories?limit=500"
		if cursor != "" {
			path += "&cursor=" + cursor
		}
		status, out, err := c.api(http.MethodGet, path, key, nil)
		if err != nil {
			return nil, err
		}
		if status != http.StatusOK {
			return nil, fmt.Errorf("%s: list: status %d: %v", c.name, status, out)
		}
		ms, _ := out["memories"].([]any)
		for _, m := range ms {
			mm := m.(map[string]any)
			id, _ := mm["id"].(float64)
			owner, _ := mm["owner"].(string)
			content, _ := mm["content"].(string)
			all = append(all, listed{int64(id), owner, content})
		}
		next, _ := out["next_cursor"].(string)
		if next == "" {
			return all, nil
		}
		cursor = next
	}
}

// metric returns the sum of the values of the admin /metrics series whose
// line starts with prefix (a name with a label selector, e.g.
// `caddy_memory_requests_total{outcome="failed_open"}`).
func (c *instance) metric(prefix string) float64 {
	resp, err := client.Get(c.adminURL("/metrics"))
	if err != nil {
		return -1
	}
	defer resp.Body.Close()
	sum := 0.0
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, prefix) {
			continue
		}
		f := strings.Fields(line)
		if v, err := strconv.ParseFloat(f[len(f)-1], 64); err == nil {
			sum += v
		}
	}
	return sum
}

// ---------------------------------------------------------------------------
// Waiting.

// settle waits until c has finished learning every turn sent through it
// (its extraction_jobs_total, done, failed or dropped, reaches the number
// of chats), so no turn of it lands after what the test does next.
func (c *instance) settle() {
	c.t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		n := c.metric("caddy_memory_extraction_jobs_total")
		if n >= float64(c.chats.Load()) {
			return
		}
		if time.Now().After(deadline) {
			c.t.Fatalf("%s: learning finished with %v turns of %d within 20s", c.name, n, c.chats.Load())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// poll asks question through c as key every 100 ms until check accepts the
// block the upstream received, or within passes. It returns the last block
// and how long it took; on timeout it fails the test with what it saw.
func poll(t *testing.T, c *instance, key, question string, within time.Duration, what string, check func(block string) bool) (string, time.Duration) {
	t.Helper()
	last, took, err := try(c, key, question, within, check)
	if err != nil {
		t.Fatalf("%s: %s %v", c.name, what, err)
	}
	return last, took
}

// try is poll that returns an error instead of failing the test.
func try(c *instance, key, question string, within time.Duration, check func(block string) bool) (string, time.Duration, error) {
	start := time.Now()
	var last string
	var lastRes chatResult
	for {
		res := c.chat(key, question)
		lastRes = res
		// Only a request memory searched counts: one that failed open
		// carries no block either.
		searched := res.Memory == "injected" || res.Memory == "nothing_relevant"
		if res.Err == nil && res.Status == http.StatusOK && res.OK && searched {
			last = block(res.Sent.Body)
			if check(last) {
				return last, time.Since(start), nil
			}
		}
		if time.Since(start) > within {
			return last, time.Since(start), fmt.Errorf("not seen within %v (question %q as %s); last: status %d, X-Memory-Status %q, err %v, block:\n%s",
				within, question, key, lastRes.Status, lastRes.Memory, lastRes.Err, last)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// ---------------------------------------------------------------------------
// Ports.

// freePort picks a port for a server the test starts (pgtest.FreePort).
func freePort(t *testing.T) int {
	p, err := pgtest.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// filesHolding lists the files under c's data directory that contain s.
func (c *instance) filesHolding(s string) []string {
	var out []string
	filepath.WalkDir(c.dataHome, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return nil
		}
		if b, err := os.ReadFile(path); err == nil && bytes.Contains(b, []byte(s)) {
			rel, _ := filepath.Rel(c.dataHome, path)
			out = append(out, rel)
		}
		return nil
	})
	return out
}
