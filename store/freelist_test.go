package store_test

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	bolt "go.etcd.io/bbolt"

	"github.com/caddy-memory/memory/store"
)

// A clean close leaves the freelist in the file, so that the next start
// reads it instead of every page of the file (at a million memories, 34 s
// from a cold disk); the commits in between still leave it out, which kept
// 10% of the proxy's throughput.
func TestCloseWritesTheFreelist(t *testing.T) {
	path := filepath.Join(t.TempDir(), "memory.db")
	s := openStore(t, path)
	var ids []uint64
	for i := range 300 {
		m, _ := upsert(t, s, "owner-a", store.Put{Kind: "note", Content: fmt.Sprintf("note %d %0500d", i, i)})
		ids = append(ids, m.ID)
	}
	for _, id := range ids[:100] { // freed pages, for the list to hold
		if err := s.Update(func(tx *store.Tx) error { return tx.Purge("owner-a", id) }); err != nil {
			t.Fatal(err)
		}
	}
	if store.FreelistWritten(path) {
		t.Fatal("a commit wrote the freelist: every write would pay for it")
	}
	if err := s.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if !store.FreelistWritten(path) {
		t.Fatal("Close left no freelist in the file: the next open reads every page to rebuild it")
	}

	// The list read back is right: bbolt finds no page both free and in use,
	// and writing after the reopen neither loses nor corrupts anything.
	s = openStore(t, path)
	upsert(t, s, "owner-a", store.Put{Kind: "note", Content: "written after the reopen"})
	if store.FreelistWritten(path) {
		t.Fatal("after the reopen a commit wrote the freelist")
	}
	if n := len(all(t, s, "owner-a")); n != 201 {
		t.Fatalf("%d memories after the reopen, want 201", n)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Errorf("a second Close: %v", err)
	}
	b, err := bolt.Open(path, 0o600, &bolt.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if err := b.View(func(tx *bolt.Tx) error {
		for err := range tx.Check() {
			t.Errorf("bbolt consistency check: %v", err)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}

// Files the check cannot read are taken as having a freelist: the answer
// only decides whether to read the file ahead of bbolt's open.
func TestFreelistWrittenWhenUnknown(t *testing.T) {
	dir := t.TempDir()
	short := filepath.Join(dir, "short.db")
	if err := os.WriteFile(short, []byte("not a bbolt file"), 0o600); err != nil {
		t.Fatal(err)
	}
	foreign := filepath.Join(dir, "foreign.db")
	if err := os.WriteFile(foreign, make([]byte, 64<<10), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{filepath.Join(dir, "missing.db"), short, foreign} {
		if !store.FreelistWritten(path) {
			t.Errorf("FreelistWritten(%s) = false, want true for a file it cannot read", filepath.Base(path))
		}
	}
}
