package engine

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/caddy-memory/memory/internal/pgtest"
	"github.com/caddy-memory/memory/internal/pgtest/pgshared"
	"github.com/caddy-memory/memory/store"
)

// Every engine test runs on the file, then on PostgreSQL (pgtest.Both).
func TestMain(m *testing.M) { os.Exit(pgtest.Both(m)) }

func onPostgres() bool { return pgtest.OnPostgres() }

// openTestStore opens the store of the storage dir alone, as Open would
// on the backend under test.
func openTestStore(t testing.TB, dir string) *store.DB {
	t.Helper()
	st, err := store.OpenWith(filepath.Join(dir, "memory.db"), store.Options{Shared: pgshared.For(t, dir)})
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// openConfig opens an engine with cfg on the backend under test.
func openConfig(t testing.TB, cfg Config) (*Engine, error) {
	cfg.Shared = pgshared.For(t, cfg.Dir)
	return Open(cfg)
}
