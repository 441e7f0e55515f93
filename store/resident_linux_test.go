package store_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/caddy-memory/memory/store"
)

// TestOpenLeavesFileNotResident: opening a store reads every page of the file
// (bbolt rebuilds its freelist), but a restarted server must not show the
// whole file as its resident memory, only what it goes on to read.
func TestOpenLeavesFileNotResident(t *testing.T) {
	path := filepath.Join(t.TempDir(), "memory.db")
	s, err := openPath(t, path, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Repeat("a memory long enough to fill pages quickly ", 20)
	for batch := range 8 {
		err := s.Update(func(tx *store.Tx) error {
			for i := range 1000 {
				if _, _, err := tx.Upsert(fmt.Sprintf("owner-%d", i%50), store.Put{Kind: "note", Content: fmt.Sprint(text, batch, i)}); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}

	s = openStore(t, path)
	resident := residentKiB(t, path)
	if size := st.Size() / 1024; resident*10 > size {
		t.Errorf("after open, %d KiB of the %d KiB store file are resident, want under a tenth", resident, size)
	}
	// Reads still work, through the pages dropped.
	var n int
	if err := s.View(func(tx *store.Tx) error {
		return tx.ForEach("owner-7", func(*store.Memory) error { n++; return nil })
	}); err != nil || n != 160 {
		t.Fatalf("owner-7 has %d memories after reopening (%v), want 160", n, err)
	}
}

// TestReleaseMapped: after a pass that read every record, the file's pages
// are given back, and reads go on through the dropped pages.
func TestReleaseMapped(t *testing.T) {
	path := filepath.Join(t.TempDir(), "memory.db")
	s := openStore(t, path)
	text := strings.Repeat("a memory long enough to fill pages quickly ", 20)
	err := s.Update(func(tx *store.Tx) error {
		for i := range 4000 {
			if _, _, err := tx.Upsert(fmt.Sprintf("owner-%d", i%50), store.Put{Kind: "note", Content: fmt.Sprint(text, i)}); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	read := func() (n int) {
		t.Helper()
		err := s.View(func(tx *store.Tx) error {
			for o := range 50 {
				if err := tx.ForEach(fmt.Sprintf("owner-%d", o), func(*store.Memory) error { n++; return nil }); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	read()
	before := residentKiB(t, path)
	s.ReleaseMapped()
	after := residentKiB(t, path)
	if before < 1024 || after*10 > before {
		t.Errorf("%d KiB of the store file resident after reading it all, %d after releasing: want under a tenth", before, after)
	}
	if n := read(); n != 4000 {
		t.Errorf("%d memories read after releasing, want 4000", n)
	}
}

// residentKiB sums the resident pages of the mappings of path.
func residentKiB(t *testing.T, path string) int64 {
	t.Helper()
	b, err := os.ReadFile("/proc/self/smaps")
	if err != nil {
		t.Fatal(err)
	}
	var total int64
	in := false
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		switch {
		case len(f) >= 5 && strings.Contains(f[0], "-"):
			in = len(f) >= 6 && f[5] == path
		case in && len(f) >= 2 && f[0] == "Rss:":
			kb, _ := strconv.ParseInt(f[1], 10, 64)
			total += kb
		}
	}
	return total
}
