package store_test

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/caddy-memory/memory/internal/pgtest"
	"github.com/caddy-memory/memory/internal/pgtest/pgshared"
	"github.com/caddy-memory/memory/store"
)

// Every store test runs on the file alone, then with the file as the
// replica of a PostgreSQL database (pgtest.Both).
func TestMain(m *testing.M) { os.Exit(pgtest.Both(m)) }

// options are the Options to open the store file at path with on the
// backend under test.
func options(t testing.TB, path string, o store.Options) store.Options {
	t.Helper()
	if sh := pgshared.For(t, path); sh != nil {
		o.Shared = sh
	}
	return o
}

func openPath(t testing.TB, path string, timeout time.Duration) (*store.DB, error) {
	return store.OpenWith(path, options(t, path, store.Options{LockTimeout: timeout}))
}

// TestReplicaMadeInChunksAtOpen: a replica made at open in many
// transactions holds everything, and its change log names every memory.
func TestReplicaMadeInChunksAtOpen(t *testing.T) {
	if !pgtest.OnPostgres() {
		t.Skip("a replica exists only on PostgreSQL; this runs in the PostgreSQL pass")
	}
	defer store.SetResyncChunk(7)()
	a := newStore(t)
	owners := []string{"owner-a", "owner-b", "owner-c"}
	for i := range 40 {
		upsert(t, a, owners[i%3], store.Put{Kind: "note", Content: "note number " + strconv.Itoa(i)})
	}
	// Only a snapshot can make the replica: the log is trimmed, as an hour
	// later.
	conn, err := pgx.Connect(context.Background(), pgtest.DatabaseFor(t, a.Path()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	if _, err := conn.Exec(context.Background(), `DELETE FROM memory_log;
		UPDATE memory_state SET value = (SELECT value FROM memory_state WHERE name = 'last_seq') WHERE name = 'trimmed_through'`); err != nil {
		t.Fatal(err)
	}
	b, err := store.OpenWith(filepath.Join(t.TempDir(), "memory.db"), options(t, a.Path(), store.Options{}))
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	for _, o := range owners {
		if got, want := len(all(t, b, o)), len(all(t, a, o)); got != want || want == 0 {
			t.Errorf("%s: the replica made in chunks has %d memories, the database %d", o, got, want)
		}
	}
	ids := map[uint64]bool{}
	cs, _, _ := b.Changes(0, 1000)
	for _, c := range cs {
		ids[c.ID] = true
	}
	if len(ids) != 40 {
		t.Errorf("the replica's change log names %d of 40 memories", len(ids))
	}
}
