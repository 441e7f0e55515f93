package postgres

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/caddy-memory/memory/internal/pgtest"
	"github.com/caddy-memory/memory/store"
)

// fill stores n memories of owner in one transaction.
func fill(t *testing.T, s *store.DB, owner string, n int) {
	t.Helper()
	err := s.Update(func(tx *store.Tx) error {
		for i := range n {
			if _, _, err := tx.Upsert(owner, store.Put{Kind: "fact", Content: fmt.Sprint("Memory number ", i)}); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// snapshots are the database's transactions that hold a snapshot (which
// keeps VACUUM from the rows changed since), other than conn's own, by
// backend and the time each began.
func snapshots(t *testing.T, conn *pgx.Conn) map[int32]time.Time {
	t.Helper()
	rows, err := conn.Query(context.Background(), `SELECT pid, xact_start FROM pg_stat_activity
		WHERE datname = current_database() AND pid <> pg_backend_pid()
		AND backend_type = 'client backend' AND backend_xmin IS NOT NULL AND xact_start IS NOT NULL`)
	if err != nil {
		t.Fatal(err)
	}
	out := map[int32]time.Time{}
	for rows.Next() {
		var pid int32
		var start time.Time
		if err := rows.Scan(&pid, &start); err != nil {
			t.Fatal(err)
		}
		out[pid] = start
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestSnapshotHoldsNoTransactionThroughout: a snapshot of the database
// (what a new or fallen-behind replica is made from) reads it a page at a
// time: no transaction open when it began is still open while it passes
// on later pages. It was one repeatable-read transaction for the whole
// database, for as long as the replica took to write it.
func TestSnapshotHoldsNoTransactionThroughout(t *testing.T) {
	url := pgtest.Database(t)
	a := replica(t, url)
	fill(t, a, a.OwnerID("many"), 2*snapshotPage)
	conn, err := pgx.Connect(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	var first map[int32]time.Time
	n, held := 0, 0
	_, err = sh2(t, url).Snapshot(context.Background(), func(store.Mutation) error {
		switch n++; n {
		case 1:
			first = snapshots(t, conn)
		case 3 * snapshotPage: // past the buckets and two pages of rows
			for pid, began := range snapshots(t, conn) {
				if start, ok := first[pid]; ok && start.Equal(began) {
					held++
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n < 3*snapshotPage {
		t.Fatalf("the snapshot passed %d buckets and rows; the test wants more than %d", n, 3*snapshotPage)
	}
	if held > 0 {
		t.Errorf("%d transactions open when the snapshot began were still open %d rows on", held, 3*snapshotPage)
	}
}

// duringSnapshot is a shared database whose snapshots run do after
// passing on their first mutation (writes made while a snapshot is read),
// and say in at the position they returned.
type duringSnapshot struct {
	*DB
	do func()
	at *uint64
}

func (d duringSnapshot) Snapshot(ctx context.Context, fn func(store.Mutation) error) (uint64, error) {
	first := true
	seq, err := d.DB.Snapshot(ctx, func(m store.Mutation) error {
		if first {
			first = false
			d.do()
		}
		return fn(m)
	})
	*d.at = seq
	return seq, err
}

// TestReplicaMadeDuringWritesIsTheDatabase: a replica made from a
// snapshot while another instance writes (new memories, edits, deletions,
// an owner forgotten) holds what the database holds: the rows read after
// a write, and those read before it, are brought to the position the
// snapshot names by the batches committed meanwhile, and that position is
// past the writes.
func TestReplicaMadeDuringWritesIsTheDatabase(t *testing.T) {
	url := pgtest.Database(t)
	a := replica(t, url)
	keep, gone := a.OwnerID("keep"), a.OwnerID("gone")
	fill(t, a, keep, snapshotPage)
	fill(t, a, gone, 10)
	first := upsert(t, a, keep, "The first memory, deleted while the replica is made.")
	writes := func() {
		upsert(t, a, keep, "Written while the replica is made.")
		fill(t, a, a.OwnerID("new"), 5)
		err := a.Update(func(tx *store.Tx) error {
			if _, err := tx.Delete(keep, first.ID); err != nil {
				return err
			}
			_, err := tx.ForgetOwner(gone)
			return err
		})
		if err != nil {
			t.Error(err)
		}
	}
	sh, err := Open(context.Background(), url, nil)
	if err != nil {
		t.Fatal(err)
	}
	var at uint64
	b, err := store.OpenWith(filepath.Join(t.TempDir(), "memory.db"), store.Options{Shared: duringSnapshot{sh, writes, &at}})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	var last uint64
	if err := sh.pool.QueryRow(context.Background(), `SELECT value::bigint FROM memory_state WHERE name = 'last_seq'`).Scan(&last); err != nil {
		t.Fatal(err)
	}
	if at != last {
		t.Errorf("the snapshot says its state is at %d; the writes made while it was read end at %d", at, last)
	}
	for _, owner := range []string{keep, gone, a.OwnerID("new")} {
		want, got := contents(t, a, owner), contents(t, b, owner)
		slices.Sort(want)
		slices.Sort(got)
		if !slices.Equal(got, want) {
			t.Errorf("owner %s: the replica made during the writes holds %d memories, the database %d", owner, len(got), len(want))
		}
	}
	if got := contents(t, b, keep); slices.Contains(got, first.Content) || !slices.Contains(got, "Written while the replica is made.") {
		t.Errorf("the replica missed a write made while it was made")
	}
}
