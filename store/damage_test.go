package store_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/caddy-memory/memory/store"
)

// fillStore writes n memories over owners owners into a new store at
// path, and returns them by owner.
func fillStore(t testing.TB, path string, owners, n int) map[string][]*store.Memory {
	t.Helper()
	s, err := store.Open(path, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	out := map[string][]*store.Memory{}
	for i := 0; i < n; i += 100 {
		err := s.Update(func(tx *store.Tx) error {
			for j := i; j < min(n, i+100); j++ {
				owner := fmt.Sprintf("owner-%03d", j%owners)
				m, _, err := tx.Upsert(owner, store.Put{Kind: "note", Content: fmt.Sprintf("memory %d of %s: the user likes item %d and a walk by the river", j, owner, j)})
				if err != nil {
					return err
				}
				out[owner] = append(out[owner], m)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	return out
}

func TestCheckFindsASoundFileSound(t *testing.T) {
	path := filepath.Join(t.TempDir(), "memory.db")
	fillStore(t, path, 40, 3000)
	r, err := store.Check(context.Background(), path, store.CheckOptions{Records: true})
	if err != nil {
		t.Fatal(err)
	}
	if !r.OK() || r.Records != 3000 || r.Buckets < 40 {
		t.Fatalf("check of a sound file: %+v", r)
	}
}

// damage overwrites n bytes at random places of the file's pages after
// the two meta pages, and returns the pages it touched.
func damage(t testing.TB, path string, rng *rand.Rand, n int) map[int64]bool {
	t.Helper()
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	st, _ := f.Stat()
	const page = 4096
	pages := map[int64]bool{}
	for range n {
		off := 2*page + rng.Int64N(st.Size()-2*page)
		b := []byte{byte(rng.IntN(256))}
		if _, err := f.WriteAt(b, off); err != nil {
			t.Fatal(err)
		}
		pages[off/page] = true
	}
	return pages
}

// exercise reads and writes everything it can of a store, which must
// never panic; errors are expected.
func exercise(s *store.DB, owners int) {
	for i := range owners {
		owner := fmt.Sprintf("owner-%03d", i)
		_ = s.View(func(tx *store.Tx) error {
			return tx.Scan(owner, 0, func(*store.Memory) (bool, error) { return true, nil })
		})
		_ = s.View(func(tx *store.Tx) error {
			return tx.ForEach(owner, func(*store.Memory) error { return nil })
		})
		_ = s.Update(func(tx *store.Tx) error {
			_, _, err := tx.Upsert(owner, store.Put{Kind: "note", Content: "a new memory after the damage"})
			return err
		})
	}
	_, _ = s.Stats()
	_, _, _ = s.Changes(0, 100000)
	_, _, _ = s.Compact()
}

// TestDamagedFileNeverPanics damages a store's pages at random (several
// seeds and amounts, a file closed cleanly and one copied while open, so
// that bbolt would rebuild its freelist from every page): opening it
// either says it is damaged or opens a store whose every use returns, and
// nothing panics.
func TestDamagedFileNeverPanics(t *testing.T) {
	dir := t.TempDir()
	clean := filepath.Join(dir, "clean.db")
	fillStore(t, clean, 30, 4000)
	// A copy of a file in use: bbolt finds no freelist in it.
	live := filepath.Join(dir, "live.db")
	copyFile(t, clean, live)
	s := openStore(t, live)
	upsert(t, s, "owner-000", store.Put{Kind: "note", Content: "written while the copy is taken"})
	inUse := filepath.Join(dir, "inuse.db")
	copyFile(t, live, inUse)
	s.Close()

	damaged, opened := 0, 0
	for _, src := range []string{clean, inUse} {
		for seed := range uint64(6) {
			for _, n := range []int{1, 20, 200, 2000} {
				path := filepath.Join(t.TempDir(), "memory.db")
				copyFile(t, src, path)
				damage(t, path, rand.New(rand.NewPCG(seed, uint64(n))), n)
				if os.Getenv("DBG_KEEP") != "" {
					copyFile(t, path, "/tmp/last-damaged.db")
				}
				s, err := store.Open(path, time.Second)
				if err != nil {
					if !errors.Is(err, store.ErrDamaged) {
						t.Fatalf("%s, seed %d, %d bytes: open failed with %v, not ErrDamaged", filepath.Base(src), seed, n, err)
					}
					damaged++
					continue
				}
				opened++
				exercise(s, 30)
				s.Close()
			}
		}
	}
	t.Logf("%d damaged files refused at open, %d opened (their damage in records or free pages)", damaged, opened)
	if damaged == 0 {
		t.Fatal("no damaged file was found damaged at open")
	}
}

// TestDamageWhileOpenIsContained damages the file under a store in use
// (its mapping sees the new bytes): reads and writes return errors instead
// of panicking, and a panic of bbolt's marks the store damaged, which then
// refuses writes.
func TestDamageWhileOpenIsContained(t *testing.T) {
	marked := 0
	for seed := range uint64(8) {
		path := filepath.Join(t.TempDir(), "memory.db")
		fillStore(t, path, 30, 4000)
		s, err := store.Open(path, time.Second)
		if err != nil {
			t.Fatal(err)
		}
		heard := make(chan error, 1)
		s.OnDamaged(func(err error) { heard <- err })
		damage(t, path, rand.New(rand.NewPCG(seed, 7)), 3000)
		exercise(s, 30)
		if err := s.Damaged(); err != nil {
			marked++
			if !errors.Is(err, store.ErrDamaged) {
				t.Fatalf("Damaged() = %v, not an ErrDamaged", err)
			}
			select {
			case <-heard:
			case <-time.After(5 * time.Second):
				t.Fatal("OnDamaged was not called")
			}
			err := s.Update(func(tx *store.Tx) error { return nil })
			if !errors.Is(err, store.ErrDamaged) {
				t.Fatalf("a write to a damaged store: %v", err)
			}
		}
		s.Close()
	}
	if marked == 0 {
		t.Fatal("no store was marked damaged: the damage did not reach bbolt")
	}
}

func copyFile(t testing.TB, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestCheckRefusesAFileInUse: a file a running Caddy writes cannot be
// judged (its pages change under the walk); the check says so rather
// than report what it would misread as damage.
func TestCheckRefusesAFileInUse(t *testing.T) {
	path := filepath.Join(t.TempDir(), "memory.db")
	fillStore(t, path, 2, 10)
	s := openStore(t, path)
	_, err := store.Check(context.Background(), path, store.CheckOptions{})
	s.Close()
	if !errors.Is(err, store.ErrLocked) || !strings.Contains(err.Error(), "in use") {
		t.Fatalf("checking a file in use: %v, want ErrLocked saying it is in use", err)
	}
	if r, err := store.Check(context.Background(), path, store.CheckOptions{}); err != nil || !r.OK() {
		t.Fatalf("checking it once closed: %v %+v", err, r)
	}
}
