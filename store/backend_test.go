package store_test

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/caddy-memory/memory/internal/pgtest"
	"github.com/caddy-memory/memory/store"
	"github.com/caddy-memory/memory/store/postgres"
)

// Every store test runs on the file alone, then with the file as the
// replica of a PostgreSQL database (pgtest.Both).
func TestMain(m *testing.M) { os.Exit(pgtest.Both(m)) }

// options are the Options to open the store file at path with on the
// backend under test.
func options(t testing.TB, path string, o store.Options) store.Options {
	t.Helper()
	if url := pgtest.DatabaseFor(t, path); url != "" {
		sh, err := postgres.Open(context.Background(), url, nil)
		if err != nil {
			t.Fatal(err)
		}
		o.Shared = sh
	}
	return o
}

func openPath(t testing.TB, path string, timeout time.Duration) (*store.DB, error) {
	return store.OpenWith(path, options(t, path, store.Options{LockTimeout: timeout}))
}
