package recall

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/caddy-memory/memory/index"
	"github.com/caddy-memory/memory/store"
)

// newTest is a Searcher over a store and an index of its own in a test's
// directory, with no postings and no embeddings: small owners are searched
// from their records. It returns the store to write to.
func newTest(t *testing.T, localSearchMax int) (*Searcher, *store.DB) {
	t.Helper()
	dir := t.TempDir()
	st, err := store.Open(filepath.Join(dir, "memory.db"), time.Second)
	if err != nil {
		t.Fatal(err)
	}
	idx, err := index.Open(filepath.Join(dir, "index"), 1, time.Second)
	if err != nil {
		st.Close()
		t.Fatal(err)
	}
	t.Cleanup(func() {
		idx.Close()
		st.Close()
	})
	return New(Config{Store: st, Index: idx, LocalSearchMax: func() int { return localSearchMax }, Clock: time.Now}), st
}

// put writes memories of owner, each with the digest of a plaintext
// storage, as the engine writes them.
func put(t *testing.T, st *store.DB, owner string, puts ...store.Put) []*store.Memory {
	t.Helper()
	var out []*store.Memory
	err := st.Update(func(tx *store.Tx) error {
		for _, p := range puts {
			p.Digest = index.Digest(p.Content, p.Context)
			m, _, err := tx.Upsert(owner, p)
			if err != nil {
				return err
			}
			out = append(out, m)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// recallFor is the proxy's recall, profile on, for a question of owner.
func recallFor(t *testing.T, s *Searcher, owner, q string) Recalled {
	t.Helper()
	rec, err := s.Recall(context.Background(), Request{
		SearchRequest: SearchRequest{Owner: owner, Query: q, Limit: 10, MinScore: DefaultMinScore, Gate: true},
		Profile:       true, MaxTokens: 800, MaxItems: 10,
	})
	if err != nil {
		t.Fatal(err)
	}
	return rec
}
