package engine

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"

	"github.com/caddy-memory/memory/internal/pgtest"
	"github.com/caddy-memory/memory/store"
	"github.com/caddy-memory/memory/store/postgres"
)

// backendEnv selects the store the engine tests run on: unset, the
// embedded file; "postgres", a PostgreSQL database each test's storage
// directory replicates. Every test runs on both: TestMain runs them on the
// file, then runs this test binary again on PostgreSQL.
const backendEnv = "MEMORY_TEST_BACKEND"

func onPostgres() bool { return os.Getenv(backendEnv) == "postgres" }

func TestMain(m *testing.M) {
	if onPostgres() {
		os.Exit(pgtest.Main(m))
	}
	code := m.Run()
	cmd := exec.Command(os.Args[0], os.Args[1:]...)
	cmd.Env = append(os.Environ(), backendEnv+"=postgres")
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	os.Stdout.WriteString("engine tests on PostgreSQL:\n")
	if err := cmd.Run(); err != nil {
		code = 1
	}
	os.Exit(code)
}

// databases maps a storage directory to its database, so a test that
// reopens a directory finds the memories it left.
var databases sync.Map

// openTestStore opens the store of the storage dir alone, as Open would
// on the backend under test.
func openTestStore(t testing.TB, dir string) *store.DB {
	t.Helper()
	var o store.Options
	if onPostgres() {
		url, _ := databases.LoadOrStore(dir, pgtest.Database(t))
		sh, err := postgres.Open(context.Background(), url.(string), nil)
		if err != nil {
			t.Fatal(err)
		}
		o.Shared = sh
	}
	st, err := store.OpenWith(filepath.Join(dir, "memory.db"), o)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// openConfig opens an engine with cfg on the backend under test.
func openConfig(t testing.TB, cfg Config) (*Engine, error) {
	if onPostgres() {
		url, ok := databases.Load(cfg.Dir)
		if !ok {
			url, _ = databases.LoadOrStore(cfg.Dir, pgtest.Database(t))
		}
		cfg.Database = url.(string)
	}
	return Open(cfg)
}
