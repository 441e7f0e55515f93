// Package pgtest gives tests a real, throwaway PostgreSQL database.
//
// Store code that talks to PostgreSQL is only worth testing against the real
// server: its locking, transaction and SQL semantics are what we rely on, and
// no fake reproduces them. So each test binary starts its own private cluster
// (initdb into a temp dir, pg_ctl start on a free port), lazily on first use,
// and every test gets a fresh, empty database in it. Databases are cheap to
// create and drop; clusters are not, so there is one per process.
//
// Use it from a package's TestMain so the cluster is stopped and removed when
// the tests finish:
//
//	func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }
//
//	func TestSomething(t *testing.T) {
//		url := pgtest.Database(t) // postgres://postgres@127.0.0.1:PORT/NAME?sslmode=disable
//		...
//	}
//
// Set MEMORY_TEST_DATABASE_URL to a postgres:// URL to use an existing server
// instead (CI service containers, or a machine without the binaries); each
// test still gets its own database on it, created and dropped through that
// URL, so its user needs CREATEDB.
//
// The server binaries are taken from `pg_config --bindir`, else the newest
// /usr/lib/postgresql/*/bin (Debian/Ubuntu), else PATH. When the tests run as
// root the server runs as the "postgres" user, because initdb and postgres
// refuse to run as root.
package pgtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	mrand "math/rand/v2"
	"net"
	"net/url"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// EnvURL names the environment variable that points the tests at an existing
// server instead of a private cluster.
const EnvURL = "MEMORY_TEST_DATABASE_URL"

var (
	mainCalled atomic.Bool
	setupOnce  sync.Once
	setupErr   error
	// current is set inside setupOnce; an atomic so Main can read it after
	// m.Run without relying on how the tests synchronised.
	current atomic.Pointer[server]
)

// server is where this process's test databases live.
type server struct {
	adminURL string   // a database we may connect to to run CREATE/DROP DATABASE
	base     url.URL  // per-test URLs are this with the path replaced
	c        *cluster // nil when EnvURL is used: not ours to stop
}

// Main runs the package's tests and then stops and removes the cluster, if
// one was started. Call it from TestMain; Database refuses to work without
// it, because a cluster nobody stops outlives the test binary.
func Main(m *testing.M) int {
	mainCalled.Store(true)
	code := m.Run()
	if s := current.Load(); s != nil && s.c != nil {
		if err := s.c.teardown(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			if code == 0 {
				code = 1
			}
		}
	}
	return code
}

// Database returns the URL of a new, empty database for this test, dropped
// (WITH (FORCE), so open connections do not block it) when the test ends.
// Every call gets its own database, so tests may run in parallel and need no
// cleanup of their own. The first call in a process starts the cluster.
func Database(t testing.TB) string {
	t.Helper()
	s := setup(t)
	name := dbName(t.Name())
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	// template0 rather than template1: guaranteed empty even on a shared
	// server, and never "being accessed by other users".
	if err := s.exec(ctx, "CREATE DATABASE "+pgx.Identifier{name}.Sanitize()+" TEMPLATE template0"); err != nil {
		t.Fatalf("pgtest: create database %s: %v", name, err)
	}
	t.Cleanup(func() {
		if s.c != nil && !s.c.isRunning() {
			return // our own cluster is down; Main removes it whole
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := s.exec(ctx, "DROP DATABASE IF EXISTS "+pgx.Identifier{name}.Sanitize()+" WITH (FORCE)"); err != nil {
			t.Errorf("pgtest: drop database %s: %v", name, err)
		}
	})
	u := s.base
	u.Path, u.RawPath = "/"+name, ""
	return u.String()
}

// Stop stops the process-wide cluster the way a crash would (pg_ctl stop -m
// immediate), for tests of what clients do while the database is gone.
// Bring it back with Start; if the test does not, it is started again when
// the test ends so later tests still have a server. The cluster is shared by
// every test in the binary, so tests that stop it must not run in parallel
// with others that use it.
func Stop(t testing.TB) {
	t.Helper()
	c := ownCluster(t, "Stop")
	if err := c.stop(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if !c.isRunning() {
			if err := c.start(); err != nil {
				t.Errorf("pgtest: restarting the cluster after the test left it stopped: %v", err)
			}
		}
	})
}

// Start starts the cluster again after Stop, on the same port and data
// directory, so URLs from Database stay valid, and returns once it accepts
// connections.
func Start(t testing.TB) {
	t.Helper()
	c := ownCluster(t, "Start")
	if err := c.start(); err != nil {
		t.Fatal(err)
	}
}

// Restart is Stop, a pause of down, and Start: a database crash and
// recovery, as seen by clients. Committed data survives it.
func Restart(t testing.TB, down time.Duration) {
	t.Helper()
	Stop(t)
	time.Sleep(down)
	Start(t)
}

func setup(t testing.TB) *server {
	t.Helper()
	if !mainCalled.Load() {
		t.Fatal("pgtest: the package's TestMain must call pgtest.Main " +
			"(func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }), " +
			"otherwise the PostgreSQL cluster would outlive the test binary")
	}
	setupOnce.Do(func() {
		var s *server
		s, setupErr = newServer(t.Logf)
		current.Store(s)
	})
	if setupErr != nil {
		t.Fatal(setupErr)
	}
	return current.Load()
}

func ownCluster(t testing.TB, op string) *cluster {
	t.Helper()
	s := setup(t)
	if s.c == nil {
		t.Fatalf("pgtest.%s: %s is set, so the tests use a server this process "+
			"does not own and cannot stop or restart; unset it to run this test "+
			"against a private cluster", op, EnvURL)
	}
	return s.c
}

func newServer(logf func(string, ...any)) (*server, error) {
	if raw := os.Getenv(EnvURL); raw != "" {
		u, err := url.Parse(raw)
		if err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") || u.Host == "" {
			return nil, fmt.Errorf("pgtest: %s must be a postgres://user@host:port/db URL, got %q", EnvURL, raw)
		}
		return &server{adminURL: raw, base: *u}, nil
	}
	c, err := newCluster(logf)
	if err != nil {
		return nil, err
	}
	s := &server{adminURL: c.url("postgres"), c: c}
	u, _ := url.Parse(c.url("postgres"))
	s.base = *u
	return s, nil
}

func (s *server) exec(ctx context.Context, sql string) error {
	conn, err := pgx.Connect(ctx, s.adminURL)
	if err != nil {
		return err
	}
	defer conn.Close(context.Background())
	_, err = conn.Exec(ctx, sql)
	return err
}

// dbName makes a database name that is unique across processes (several test
// binaries may share one MEMORY_TEST_DATABASE_URL server) and still says
// which test it belongs to, for anyone looking at a leftover one.
func dbName(testName string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(testName) {
		if b.Len() >= 32 {
			break
		}
		if (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9') {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
	}
	var rnd [5]byte
	rand.Read(rnd[:])
	return "pgtest_" + b.String() + "_" + hex.EncodeToString(rnd[:])
}

// cluster is a private PostgreSQL server in a temp dir.
type cluster struct {
	initdb, pgctl string
	dir           string // the temp dir; everything below lives in it
	data, sock    string
	logFile       string
	port          int
	cred          *syscall.Credential // nil: run as ourselves

	mu      sync.Mutex
	running bool
}

const ownerFile = "owner.pid"

func newCluster(logf func(string, ...any)) (*cluster, error) {
	initdb, pgctl, err := findBinaries()
	if err != nil {
		return nil, err
	}
	cred, err := serverCredential()
	if err != nil {
		return nil, err
	}
	c := &cluster{initdb: initdb, pgctl: pgctl, cred: cred}
	c.reapOrphans(logf)

	c.dir, err = os.MkdirTemp("", "pgtest-")
	if err != nil {
		return nil, fmt.Errorf("pgtest: %w", err)
	}
	ok := false
	defer func() {
		if !ok {
			c.teardown()
		}
	}()
	c.data = filepath.Join(c.dir, "data")
	c.sock = filepath.Join(c.dir, "sock")
	c.logFile = filepath.Join(c.dir, "log")
	if err := os.WriteFile(filepath.Join(c.dir, ownerFile), []byte(strconv.Itoa(os.Getpid())), 0o644); err != nil {
		return nil, fmt.Errorf("pgtest: %w", err)
	}
	if err := os.Mkdir(c.sock, 0o700); err != nil {
		return nil, fmt.Errorf("pgtest: %w", err)
	}
	if cred != nil {
		for _, p := range []string{c.dir, c.sock} {
			if err := os.Chown(p, int(cred.Uid), int(cred.Gid)); err != nil {
				return nil, fmt.Errorf("pgtest: %w", err)
			}
		}
	}

	// A fixed locale keeps collation and case mapping the same on every
	// machine; C.UTF-8 still knows Unicode case, plain C is the fallback.
	for _, locale := range []string{"C.UTF-8", "C"} {
		var out []byte
		out, err = c.run(2*time.Minute, c.initdb, "-D", c.data, "-U", "postgres", "-A", "trust",
			"--no-sync", "-E", "UTF8", "--locale="+locale)
		if err == nil {
			break
		}
		err = fmt.Errorf("pgtest: initdb: %v\n%s", err, out)
		os.RemoveAll(c.data)
	}
	if err != nil {
		return nil, err
	}

	// Another process may take the port between our probe and the server's
	// bind; only then is it worth trying another one.
	for attempt := 0; ; attempt++ {
		if c.port, err = FreePort(); err != nil {
			return nil, err
		}
		err = c.start()
		if err == nil || attempt == 4 || !strings.Contains(err.Error(), "already in use") {
			break
		}
	}
	if err != nil {
		return nil, err
	}
	ok = true
	return c, nil
}

func (c *cluster) url(db string) string {
	return fmt.Sprintf("postgres://postgres@127.0.0.1:%d/%s?sslmode=disable", c.port, db)
}

func (c *cluster) isRunning() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.running
}

// start runs the server on c.port and waits until it accepts connections.
//
// fsync and full_page_writes are off because they only protect against an
// OS crash, which a test never survives anyway. synchronous_commit stays on:
// with fsync off it costs only a write(2) per commit, and without it an
// immediate stop (Stop, Restart) may lose transactions that were reported
// committed, which would make restart tests flaky.
func (c *cluster) start() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.running {
		return errors.New("pgtest: Start: the cluster is already running")
	}
	opts := fmt.Sprintf("-p %d -k %s -c listen_addresses=127.0.0.1 -c fsync=off "+
		"-c full_page_writes=off -c max_connections=300", c.port, shellQuote(c.sock))
	out, err := c.run(90*time.Second, c.pgctl, "-D", c.data, "-l", c.logFile, "-w", "-t", "60", "-o", opts, "start")
	if err != nil {
		return fmt.Errorf("pgtest: pg_ctl start (port %d): %v\n%s\n--- server log (tail) ---\n%s",
			c.port, err, out, c.logTail())
	}
	c.running = true
	if err := c.waitReady(30 * time.Second); err != nil {
		return fmt.Errorf("pgtest: server started but does not accept connections on port %d: %v\n--- server log (tail) ---\n%s",
			c.port, err, c.logTail())
	}
	return nil
}

// waitReady makes sure a client can really connect; pg_ctl -w already waits
// for that, this is cheap insurance against a differently behaving pg_ctl.
func (c *cluster) waitReady(limit time.Duration) error {
	deadline := time.Now().Add(limit)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		conn, err := pgx.Connect(ctx, c.url("postgres"))
		if err == nil {
			err = conn.Ping(ctx)
			conn.Close(context.Background())
		}
		cancel()
		if err == nil || time.Now().After(deadline) {
			return err
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func (c *cluster) stop() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.running {
		return errors.New("pgtest: Stop: the cluster is not running")
	}
	out, err := c.run(90*time.Second, c.pgctl, "-D", c.data, "-m", "immediate", "-w", "-t", "60", "stop")
	if err != nil {
		return fmt.Errorf("pgtest: pg_ctl stop: %v\n%s\n--- server log (tail) ---\n%s", err, out, c.logTail())
	}
	c.running = false
	return nil
}

func (c *cluster) teardown() error {
	var err error
	if c.isRunning() {
		err = c.stop()
	}
	// Even if stop failed: a postmaster whose data directory is gone notices
	// and shuts itself down.
	if rerr := os.RemoveAll(c.dir); rerr != nil && err == nil {
		err = fmt.Errorf("pgtest: %w", rerr)
	}
	return err
}

// run runs a PostgreSQL program as the server user, in the cluster's dir
// (the postgres user may not be able to enter the test's working directory),
// without PG* variables from our environment steering it elsewhere.
func (c *cluster) run(limit time.Duration, name string, args ...string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = c.dir
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "PG") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	if c.cred != nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: c.cred}
	}
	// pg_ctl's postmaster writes to the log file, not our pipe, but do not
	// hang forever if some version keeps the pipe open.
	cmd.WaitDelay = 5 * time.Second
	return cmd.CombinedOutput()
}

func (c *cluster) logTail() string {
	b, err := os.ReadFile(c.logFile)
	if err != nil {
		return fmt.Sprintf("(cannot read %s: %v)", c.logFile, err)
	}
	const max = 4000
	if len(b) > max {
		b = b[len(b)-max:]
		if i := strings.IndexByte(string(b), '\n'); i >= 0 {
			b = b[i+1:]
		}
	}
	return string(b)
}

// reapOrphans removes clusters left behind by test binaries that died
// without running Main's cleanup (a test timeout, a panic, ^C): otherwise
// each such run leaves a postmaster running for good.
func (c *cluster) reapOrphans(logf func(string, ...any)) {
	dirs, _ := filepath.Glob(filepath.Join(os.TempDir(), "pgtest-*"))
	for _, dir := range dirs {
		if b, err := os.ReadFile(filepath.Join(dir, ownerFile)); err == nil {
			if pid, err := strconv.Atoi(strings.TrimSpace(string(b))); err != nil || alive(pid) {
				continue
			}
		} else if fi, err := os.Stat(dir); err != nil || !fi.IsDir() || time.Since(fi.ModTime()) < 10*time.Minute {
			continue // perhaps being set up right now
		}
		data := filepath.Join(dir, "data")
		pidFile := filepath.Join(data, "postmaster.pid")
		if _, err := os.Stat(pidFile); err == nil {
			o := &cluster{cred: c.cred, dir: dir}
			o.run(30*time.Second, c.pgctl, "-D", data, "-m", "immediate", "-w", "-t", "20", "stop")
			if b, err := os.ReadFile(pidFile); err == nil {
				line, _, _ := strings.Cut(string(b), "\n")
				if pid, err := strconv.Atoi(strings.TrimSpace(line)); err == nil && alive(pid) {
					continue // could not stop it; leave its files alone
				}
			}
		}
		if os.RemoveAll(dir) == nil {
			logf("pgtest: removed cluster %s left behind by a test process that is gone", dir)
		}
	}
}

func alive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

// serverCredential returns who the server runs as: nil (ourselves) unless
// we are root, which initdb and postgres refuse to be.
func serverCredential() (*syscall.Credential, error) {
	if os.Geteuid() != 0 {
		return nil, nil
	}
	u, err := user.Lookup("postgres")
	if err != nil {
		return nil, fmt.Errorf("pgtest: running as root, which PostgreSQL refuses, and there is no "+
			"\"postgres\" user to run the server as (%v); apt-get install -y postgresql creates it", err)
	}
	uid, err1 := strconv.ParseUint(u.Uid, 10, 32)
	gid, err2 := strconv.ParseUint(u.Gid, 10, 32)
	if err1 != nil || err2 != nil {
		return nil, fmt.Errorf("pgtest: user postgres has non-numeric uid/gid %q/%q", u.Uid, u.Gid)
	}
	return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}, nil
}

// findBinaries locates initdb and pg_ctl (pg_ctl finds postgres next to
// itself, resolving symlinks).
func findBinaries() (initdb, pgctl string, err error) {
	var dirs []string
	if out, err := exec.Command("pg_config", "--bindir").Output(); err == nil {
		dirs = append(dirs, strings.TrimSpace(string(out)))
	}
	versioned, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	sort.Slice(versioned, func(i, j int) bool {
		return versionLess(versioned[j], versioned[i]) // newest first
	})
	dirs = append(dirs, versioned...)
	for _, d := range dirs {
		if isExec(filepath.Join(d, "initdb")) && isExec(filepath.Join(d, "pg_ctl")) && isExec(filepath.Join(d, "postgres")) {
			return filepath.Join(d, "initdb"), filepath.Join(d, "pg_ctl"), nil
		}
	}
	initdb, err1 := exec.LookPath("initdb")
	pgctl, err2 := exec.LookPath("pg_ctl")
	_, err3 := exec.LookPath("postgres")
	if err1 == nil && err2 == nil && err3 == nil {
		return initdb, pgctl, nil
	}
	return "", "", fmt.Errorf("pgtest: PostgreSQL server binaries (initdb, pg_ctl, postgres) not found "+
		"via pg_config --bindir, /usr/lib/postgresql/*/bin or PATH. Install them "+
		"(apt-get install -y postgresql) or set %s=postgres://user@host:port/db to use an existing server", EnvURL)
}

func isExec(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0
}

// versionLess compares /usr/lib/postgresql/<version>/bin paths numerically,
// so 9.6 < 10 < 15.
func versionLess(a, b string) bool {
	va := strings.Split(filepath.Base(filepath.Dir(a)), ".")
	vb := strings.Split(filepath.Base(filepath.Dir(b)), ".")
	for i := 0; i < len(va) && i < len(vb); i++ {
		x, _ := strconv.Atoi(va[i])
		y, _ := strconv.Atoi(vb[i])
		if x != y {
			return x < y
		}
	}
	return len(va) < len(vb)
}

// FreePort picks a port nothing listens on and that this process has not
// handed out before, for servers that tests start. It prefers ports below
// the kernel's ephemeral range: a server restarted on the same port (as
// Restart does) would otherwise find it taken by some outgoing connection.
// (The Caddy of a test binary takes ports in that range, internal/freeport.)
func FreePort() (int, error) {
	portsMu.Lock()
	defer portsMu.Unlock()
	lo := 32768
	if b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range"); err == nil {
		if f := strings.Fields(string(b)); len(f) == 2 {
			if n, err := strconv.Atoi(f[0]); err == nil {
				lo = n
			}
		}
	}
	const floor = 10000
	for range 1000 {
		p := floor + mrand.IntN(max(lo-floor, 1000))
		if portsGiven[p] {
			continue
		}
		if l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(p))); err == nil {
			l.Close()
			portsGiven[p] = true
			return p, nil
		}
	}
	return 0, errors.New("pgtest: no free port below the ephemeral range")
}

var (
	portsMu    sync.Mutex
	portsGiven = map[int]bool{}
)

// shellQuote quotes s for pg_ctl -o, which goes through /bin/sh.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
