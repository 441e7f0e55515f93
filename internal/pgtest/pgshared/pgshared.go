// Package pgshared opens, for a test, the PostgreSQL database of a storage
// in the PostgreSQL pass of pgtest.Both; it is apart from pgtest because
// store/postgres's own tests use pgtest.
package pgshared

import (
	"context"
	"testing"

	"github.com/caddy-memory/memory/internal/pgtest"
	"github.com/caddy-memory/memory/store"
	"github.com/caddy-memory/memory/store/postgres"
)

// For opens the database of a storage (see pgtest.DatabaseFor) as the
// store's shared source of truth, or returns nil on the file backend. The
// store (or the engine) that is given it closes it.
func For(t testing.TB, storage string) store.Shared {
	t.Helper()
	url := pgtest.DatabaseFor(t, storage)
	if url == "" {
		return nil
	}
	sh, err := postgres.Open(context.Background(), url, nil)
	if err != nil {
		t.Fatal(err)
	}
	return sh
}
