package store_test

import (
	"context"
	"os"
	"os/exec"
	"sync"
	"testing"
	"time"

	"github.com/caddy-memory/memory/internal/pgtest"
	"github.com/caddy-memory/memory/store"
	"github.com/caddy-memory/memory/store/postgres"
)

// backendEnv selects the backend the store tests run on: unset, the file
// alone; "postgres", the file as the replica of a PostgreSQL database.
// TestMain runs every test on the file, then this binary again on
// PostgreSQL.
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
	os.Stdout.WriteString("store tests on PostgreSQL:\n")
	if err := cmd.Run(); err != nil {
		code = 1
	}
	os.Exit(code)
}

// databases maps a store file to its database, so a test that reopens a
// file finds what it left.
var databases sync.Map

// options are the Options to open the store file at path with on the
// backend under test.
func options(t testing.TB, path string, o store.Options) store.Options {
	t.Helper()
	if !onPostgres() {
		return o
	}
	url, ok := databases.Load(path)
	if !ok {
		url, _ = databases.LoadOrStore(path, pgtest.Database(t))
	}
	sh, err := postgres.Open(context.Background(), url.(string), nil)
	if err != nil {
		t.Fatal(err)
	}
	o.Shared = sh
	return o
}

func openPath(t testing.TB, path string, timeout time.Duration) (*store.DB, error) {
	return store.OpenWith(path, options(t, path, store.Options{LockTimeout: timeout}))
}
