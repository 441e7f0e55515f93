package store

import (
	"context"
	"encoding/base64"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/caddy-memory/memory/internal/seal"
)

// leafMap is, for each page of a sound file, the memory ids a leaf of an
// owner's records holds, and which pages are branches of such buckets.
type leafMap struct {
	leaves   map[uint64][]uint64
	branches []uint64
}

// recordLeaves lists, for every leaf page of the file, the 8-byte keys of
// the memory records it holds, by reading each page in the range and
// keeping the leaves whose values read as records (every page of a sound
// file is reachable or free; free ones are left out by the walk's marks).
func recordLeaves(t *testing.T, path string, keys *seal.Ring) leafMap {
	t.Helper()
	pf, err := openPageFile(path)
	if err != nil {
		t.Fatal(err)
	}
	defer pf.Close()
	mr := &metaOnly{metaReader: &metaReader{path: path, keys: keys}, owners: map[uint64]string{}}
	w := newWalker(pf, mr)
	w.run()
	lm := leafMap{leaves: map[uint64][]uint64{}}
	var branches []branchElem
	for id := uint64(2); id < pf.meta.highWater; id++ {
		if !w.isSeen(id) {
			continue
		}
		pg, err := pf.page(id)
		if err != nil {
			t.Fatal(err)
		}
		switch pg.flags {
		case flagLeaf:
			elems, _ := leafElems(id, pg.data, pg.count)
			for _, e := range elems {
				if e.bucket || len(e.key) != 8 {
					continue
				}
				if owner := mr.owners[decodeU64(e.key)]; owner != "" {
					if _, err := mr.record([]byte(owner), e.key, e.value); err == nil {
						lm.leaves[id] = append(lm.leaves[id], decodeU64(e.key))
					}
				}
			}
		case flagBranch:
			elems, _ := branchElems(id, pg.data, pg.count)
			branches = append(branches, branchElem{child: elems[0].child, key: []byte{byte(id >> 8), byte(id)}})
			_ = elems
			branches[len(branches)-1].key = encodeU64(id)
		}
	}
	// A branch of an owner's records: its first child is a leaf of them.
	for _, b := range branches {
		if len(lm.leaves[b.child]) > 0 {
			lm.branches = append(lm.branches, decodeU64(b.key))
		}
	}
	return lm
}

// metaOnly reads the meta bucket and the index of ids during a walk.
type metaOnly struct {
	*metaReader
	owners map[uint64]string
}

func (m *metaOnly) bucket([][]byte, uint64) {}
func (m *metaOnly) pair(path [][]byte, k, v []byte) {
	m.metaReader.pair(path, k, v)
	if len(path) == 1 && string(path[0]) == string(bucketIDs) {
		m.owners[decodeU64(k)] = string(v)
	}
}
func (m *metaOnly) damaged([][]byte, error) {}

// snapshot reads every memory of every owner.
func snapshot(t *testing.T, path string, keys *seal.Ring) map[uint64]*Memory {
	t.Helper()
	s, err := OpenWith(path, Options{LockTimeout: time.Second, Keys: keys})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	out := map[uint64]*Memory{}
	err = s.View(func(tx *Tx) error {
		return tx.Owners(func(owner string) error {
			return tx.ForEach(owner, func(m *Memory) error { out[m.ID] = m; return nil })
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func fill(t *testing.T, path string, keys *seal.Ring, owners, n int) {
	t.Helper()
	s, err := OpenWith(path, Options{LockTimeout: time.Second, Keys: keys})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for i := 0; i < n; i += 200 {
		err := s.Update(func(tx *Tx) error {
			for j := i; j < min(n, i+200); j++ {
				owner := fmt.Sprintf("owner-%03d", j%owners)
				if _, _, err := tx.Upsert(owner, Put{Kind: "note", Key: fmt.Sprintf("note:%d", j),
					Content: fmt.Sprintf("memory %d of %s: the user keeps item %d by the window", j, owner, j)}); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	// What must never come back: a forgotten owner, a purged memory, and
	// the old text of one superseded.
	err = s.Update(func(tx *Tx) error {
		if _, err := tx.ForgetOwner(fmt.Sprintf("owner-%03d", owners-1)); err != nil {
			return err
		}
		m, _, err := tx.Upsert("owner-000", Put{Kind: "note", Key: "note:0", Content: "memory 0, superseded: the item moved to the shelf"})
		if err != nil {
			return err
		}
		_ = m
		return tx.Purge("owner-001", 2)
	})
	if err != nil {
		t.Fatal(err)
	}
}

func writeJunk(t *testing.T, path string, page uint64, rng *rand.Rand) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	junk := make([]byte, 4096)
	for i := range junk {
		junk[i] = byte(rng.IntN(256))
	}
	if _, err := f.WriteAt(junk, int64(page)*4096); err != nil {
		t.Fatal(err)
	}
}

// TestSalvageBringsBackEveryRecordOutsideTheDamagedPages damages whole
// leaf pages of records and a branch page above others, in a plaintext
// and an encrypted store: salvage copies every record but those of the
// damaged leaves, byte for byte as they were (those under the damaged
// branch found in the pages it cut off; one of a damaged leaf only when a
// free page still holds it as it was), never a forgotten owner's, a
// purged or a superseded one; the file then opens and checks clean.
func TestSalvageBringsBackEveryRecordOutsideTheDamagedPages(t *testing.T) {
	key := base64.StdEncoding.EncodeToString(make([]byte, 32))
	ring, err := seal.NewRing(key, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, keys := range []*seal.Ring{nil, ring} {
		for seed := range uint64(3) {
			t.Run(fmt.Sprintf("encrypted=%v/seed=%d", keys != nil, seed), func(t *testing.T) {
				path := filepath.Join(t.TempDir(), "memory.db")
				fill(t, path, keys, 20, 6000)
				before := snapshot(t, path, keys)
				lm := recordLeaves(t, path, keys)
				if len(lm.branches) == 0 || len(lm.leaves) < 10 {
					t.Fatalf("the file has %d record leaves and %d branches: too small to damage", len(lm.leaves), len(lm.branches))
				}
				rng := rand.New(rand.NewPCG(seed, 11))
				lost := map[uint64]bool{}
				var leafIDs []uint64
				for id := range lm.leaves {
					leafIDs = append(leafIDs, id)
				}
				for range 3 {
					page := leafIDs[rng.IntN(len(leafIDs))]
					writeJunk(t, path, page, rng)
					for _, id := range lm.leaves[page] {
						lost[id] = true
					}
				}
				writeJunk(t, path, lm.branches[rng.IntN(len(lm.branches))], rng)

				if _, err := OpenWith(path, Options{LockTimeout: time.Second, Keys: keys}); err == nil {
					t.Fatal("the damaged file opened")
				}
				rep, err := Salvage(context.Background(), path, keys)
				if err != nil {
					t.Fatal(err)
				}
				after := snapshot(t, path, keys)
				for id, m := range before {
					got, ok := after[id]
					switch {
					case !lost[id] && !ok:
						t.Errorf("memory %d (%q) was outside the damaged pages and is missing", id, m.Content)
					case ok && !reflect.DeepEqual(m, got):
						t.Errorf("memory %d came back changed:\n%+v\n%+v", id, m, got)
					}
				}
				for id, m := range after {
					if before[id] == nil {
						t.Errorf("memory %d came back though it was not there: %q (owner %s)", id, m.Content, m.Owner)
					}
				}
				if rep.Records != int64(len(after)) || rep.Records+rep.Lost != int64(len(before)) || rep.Lost > int64(len(lost)) || rep.DamagedPages == 0 {
					t.Errorf("report: %+v; want %d records and lost, at most %d lost", rep, len(before), len(lost))
				}
				if _, err := os.Stat(rep.DamagedAt); err != nil {
					t.Errorf("the damaged file was not kept: %v", err)
				}
				// The keys of the memories were made anew: an upsert by key
				// finds its memory.
				s, err := OpenWith(path, Options{LockTimeout: time.Second, Keys: keys})
				if err != nil {
					t.Fatal(err)
				}
				defer s.Close()
				for id, m := range after {
					err := s.Update(func(tx *Tx) error {
						got, _, err := tx.Upsert(m.Owner, Put{Kind: m.Kind, Key: m.Key, Content: m.Content + " again"})
						if err == nil && got.ID != id {
							err = fmt.Errorf("upsert by key %q made memory %d, not %d", m.Key, got.ID, id)
						}
						return err
					})
					if err != nil {
						t.Fatal(err)
					}
					break
				}
				t.Logf("%+v", rep)
			})
		}
	}
}

// TestSalvageThatFailsMidwayReturns: a salvage that stops partway (here an
// encrypted store opened with another key, found out after records were
// copied) says so and returns, leaving the file as it was; it had hung in
// closing the new file, whose open batch held bbolt's writer lock.
func TestSalvageThatFailsMidwayReturns(t *testing.T) {
	right, err := seal.NewRing(base64.StdEncoding.EncodeToString(make([]byte, 32)), nil)
	if err != nil {
		t.Fatal(err)
	}
	other := make([]byte, 32)
	other[0] = 1
	wrong, err := seal.NewRing(base64.StdEncoding.EncodeToString(other), nil)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "memory.db")
	fill(t, path, right, 5, 600)
	before := len(snapshot(t, path, right))
	done := make(chan error, 1)
	go func() {
		_, err := Salvage(context.Background(), path, wrong)
		done <- err
	}()
	select {
	case err := <-done:
		if err == nil {
			t.Fatal("a salvage with another key succeeded")
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the salvage hung")
	}
	if _, err := os.Stat(path + ".salvage"); !os.IsNotExist(err) {
		t.Errorf("the unfinished new file is left behind: %v", err)
	}
	if got := snapshot(t, path, right); len(got) != before {
		t.Errorf("the store holds %d memories after a failed salvage, want the %d it held", len(got), before)
	}
}
