package store_test

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	bolt "go.etcd.io/bbolt"

	"github.com/caddy-memory/memory/store"
)

// writeTurns writes rounds of one turn-sized memory (~800 bytes stored,
// digest included) for each owner per transaction: how proxied turns and
// bulk imports spread over owners arrive.
func writeTurns(t *testing.T, s *store.DB, owners []string, rounds int) {
	t.Helper()
	s.SetDigest(func(content, context string) []byte { return []byte(strings.Repeat("d", 300)) })
	for r := range rounds {
		update(t, s, func(tx *store.Tx) error {
			for i, o := range owners {
				text := fmt.Sprintf("turn %d of owner %d: %s", r, i, strings.Repeat("words of a turn ", 25))
				if _, _, err := tx.Upsert(o, store.Put{Kind: "turn", Content: text}); err != nil {
					return err
				}
			}
			return nil
		})
	}
}

// recordFill is the share of the record pages of the file at path that
// holds records, and its page size.
func recordFill(t *testing.T, path string) (fill float64, pageSize int) {
	t.Helper()
	db, err := bolt.Open(path, 0o600, &bolt.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var inuse, alloc int
	err = db.View(func(tx *bolt.Tx) error {
		owners := tx.Bucket([]byte("owners"))
		return owners.ForEach(func(k, v []byte) error {
			if v != nil {
				return nil
			}
			st := owners.Bucket(k).Bucket([]byte("m")).Stats()
			inuse, alloc = inuse+st.LeafInuse, alloc+st.LeafAlloc
			return nil
		})
	})
	if err != nil || alloc == 0 {
		t.Fatalf("reading the record pages: %v (%d bytes)", err, alloc)
	}
	return float64(inuse) / float64(alloc), db.Info().PageSize
}

// TestRecordPagesStayFull: memories appended a few at a time to each owner
// fill the pages that hold them. bbolt leaves at least two records on the
// right of a split, so with 4 KB pages (four such records a page) every
// page but the last kept two: the file was twice the size of its data, and
// a search read twice the pages.
func TestRecordPagesStayFull(t *testing.T) {
	path := filepath.Join(t.TempDir(), "memory.db")
	s, err := store.Open(path, 0)
	if err != nil {
		t.Fatal(err)
	}
	owners := []string{s.OwnerID("a"), s.OwnerID("b"), s.OwnerID("c")}
	writeTurns(t, s, owners, 120)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	fill, size := recordFill(t, path)
	if fill < 0.7 {
		t.Errorf("record pages (%d bytes each) are %.0f%% full, want at least 70%%", size, 100*fill)
	}
}

// TestFileWithSmallPagesStillServes: a file made before the page size
// changed opens with its own page size, reads and writes as before, and
// compaction rewrites it with the current one.
func TestFileWithSmallPagesStillServes(t *testing.T) {
	path := filepath.Join(t.TempDir(), "memory.db")
	old, err := bolt.Open(path, 0o600, &bolt.Options{PageSize: 4096})
	if err != nil {
		t.Fatal(err)
	}
	if err := old.Close(); err != nil {
		t.Fatal(err)
	}
	s, err := store.Open(path, 0)
	if err != nil {
		t.Fatal(err)
	}
	owner := s.OwnerID("legacy")
	writeTurns(t, s, []string{owner}, 40)
	m, _ := upsert(t, s, owner, store.Put{Kind: "fact", Key: "city", Content: "Lives in Porto."})
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if _, size := recordFill(t, path); size != 4096 {
		t.Fatalf("the old file now has %d-byte pages", size)
	}

	s = openStore(t, path)
	if _, _, err := s.Compact(); err != nil {
		t.Fatal(err)
	}
	if got := mustGet(t, s, owner, m.ID); got.Content != "Lives in Porto." {
		t.Fatalf("after compaction got %q", got.Content)
	}
	n := 0
	err = s.View(func(tx *store.Tx) error { return tx.PeekAll(owner, func(*store.Peek) error { n++; return nil }) })
	if err != nil || n != 41 {
		t.Fatalf("after compaction the owner has %d memories (%v), want 41", n, err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if _, size := recordFill(t, path); size == 4096 {
		t.Errorf("compaction kept the 4 KB pages")
	}
}
