package engine

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/caddy-memory/memory/internal/pgtest"
	"github.com/caddy-memory/memory/store"
	"github.com/caddy-memory/memory/store/postgres"
)

// Every engine test runs on the file, then on PostgreSQL (pgtest.Both).
func TestMain(m *testing.M) { os.Exit(pgtest.Both(m)) }

func onPostgres() bool { return pgtest.OnPostgres() }

// openTestStore opens the store of the storage dir alone, as Open would
// on the backend under test.
func openTestStore(t testing.TB, dir string) *store.DB {
	t.Helper()
	var o store.Options
	if url := pgtest.DatabaseFor(t, dir); url != "" {
		sh, err := postgres.Open(context.Background(), url, nil)
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
	cfg.Database = pgtest.DatabaseFor(t, cfg.Dir)
	return Open(cfg)
}
