package engine

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/caddy-memory/memory/internal/embed"
	"github.com/caddy-memory/memory/internal/embed/embedtest"
	"github.com/caddy-memory/memory/store"
)

func withEmbeddings(t *testing.T, shards int) (*Engine, *embedtest.Server) {
	t.Helper()
	srv := embedtest.NewServer()
	t.Cleanup(srv.Close)
	e := open(t, t.TempDir(), shards)
	t.Cleanup(func() { closeEngine(t, e) })
	if fixed := e.UseEmbedding(EmbedConfig{Client: &embed.Client{URL: srv.Endpoint(), Model: "test"}, MinSimilarity: 0.5}); fixed != nil {
		t.Fatalf("embedding was already on: %v", fixed)
	}
	// A later configuration cannot change the model the vectors were made
	// with while the engine is open; it is told so, and nothing changes.
	if fixed := e.UseEmbedding(EmbedConfig{Client: &embed.Client{URL: "http://elsewhere", Model: "x"}}); len(fixed) != 2 {
		t.Errorf("a second UseEmbedding with another endpoint and model reported %v, want both fixed", fixed)
	}
	if got := e.embedder.running().config().Client.URL; got != srv.Endpoint() {
		t.Errorf("the endpoint in effect is %q", got)
	}
	return e, srv
}

// waitEmbedded waits until every change is embedded.
func waitEmbedded(t *testing.T, e *Engine) {
	t.Helper()
	settle(t, e)
	deadline := time.Now().Add(10 * time.Second)
	for e.store.LocalCursor(embedCursor) < e.store.LastSeq() {
		if time.Now().After(deadline) {
			t.Fatalf("memories not embedded: cursor %d, last change %d", e.store.LocalCursor(embedCursor), e.store.LastSeq())
		}
		e.embedder.running().wake <- struct{}{}
		time.Sleep(5 * time.Millisecond)
	}
}

func put(t *testing.T, e *Engine, owner string, contents ...string) []uint64 {
	t.Helper()
	var ids []uint64
	if _, err := e.write(func(tx *store.Tx) error {
		for _, c := range contents {
			m, _, err := tx.Upsert(owner, withDigest(store.Put{Kind: "note", Content: c}))
			if err != nil {
				return err
			}
			ids = append(ids, m.ID)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return ids
}

func found(t *testing.T, e *Engine, owner, q string) string {
	t.Helper()
	res, err := e.Search(context.Background(), SearchRequest{Owner: owner, Query: q, Limit: 5, MinScore: DefaultMinScore})
	if err != nil {
		t.Fatalf("search %q: %v", q, err)
	}
	return contents(res)
}

func TestEmbeddingsFindByMeaning(t *testing.T) {
	e, _ := withEmbeddings(t, 2)
	owner := e.OwnerID("meaning")
	put(t, e, owner, "User bikes to their job every morning.", "User's sister lives in Porto.", "User collects vintage stamps.")
	waitEmbedded(t, e)

	// Not one word in common with the memory: only meaning finds it.
	if got := found(t, e, owner, "How long is my commute to the office?"); !strings.Contains(got, "bikes to their job") {
		t.Errorf("recall by meaning failed: %q", got)
	}
	if got := found(t, e, owner, "How long is my commute to the office?"); strings.Contains(got, "stamps") {
		t.Errorf("an unrelated memory came along: %q", got)
	}
	// Words still work, and unrelated questions still get nothing.
	if got := found(t, e, owner, "Where does my sister live?"); !strings.Contains(got, "Porto") {
		t.Errorf("lexical recall broke with embeddings on: %q", got)
	}
	if got := found(t, e, owner, "What is the capital of Peru?"); got != "" {
		t.Errorf("an unrelated question recalled %q", got)
	}
	// Another owner's vectors are never searched.
	if got := found(t, e, e.OwnerID("someone else"), "How long is my commute to the office?"); got != "" {
		t.Errorf("another owner recalled %q", got)
	}
}

func TestEmbeddingFailureFallsBackToWords(t *testing.T) {
	e, srv := withEmbeddings(t, 2)
	owner := e.OwnerID("fallback")
	put(t, e, owner, "User bikes to their job every morning.")
	waitEmbedded(t, e)

	srv.Fail.Store(true)
	if got := found(t, e, owner, "Do I bike to my job?"); !strings.Contains(got, "bikes to their job") {
		t.Errorf("with the endpoint down, lexical recall should still answer: %q", got)
	}
	if got := found(t, e, owner, "How long is my commute to the office?"); got != "" {
		t.Errorf("with the endpoint down, nothing found by meaning should appear: %q", got)
	}

	// Memories written while it is down are embedded once it is back.
	put(t, e, owner, "User's cat is called Miso.")
	settle(t, e)
	if e.store.LocalCursor(embedCursor) >= e.store.LastSeq() {
		t.Fatal("the embedder moved past memories it could not embed")
	}
	srv.Fail.Store(false)
	waitEmbedded(t, e)
	if got := found(t, e, owner, "What is my pet's name?"); !strings.Contains(got, "Miso") {
		t.Errorf("a memory written during the outage is not found by meaning: %q", got)
	}
}

func TestEditedMemoryIsEmbeddedAgain(t *testing.T) {
	e, _ := withEmbeddings(t, 1)
	owner := e.OwnerID("edit")
	ids := put(t, e, owner, "User bikes to their job every morning.")
	waitEmbedded(t, e)
	if _, err := e.Edit(context.Background(), owner, ids[0], func(m *store.Memory) error { m.Content = "User plays guitar in a band."; return nil }); err != nil {
		t.Fatal(err)
	}
	waitEmbedded(t, e)
	if got := found(t, e, owner, "How long is my commute to the office?"); got != "" {
		t.Errorf("the old text's vector still finds the edited memory: %q", got)
	}
	if got := found(t, e, owner, "Which songs do I like?"); !strings.Contains(got, "guitar") {
		t.Errorf("the edited memory is not found by its new meaning: %q", got)
	}
}

func TestForgetRemovesVectors(t *testing.T) {
	e, _ := withEmbeddings(t, 1)
	owner := e.OwnerID("gone")
	put(t, e, owner, "User bikes to their job every morning.")
	waitEmbedded(t, e)
	if _, err := e.Forget(context.Background(), owner); err != nil {
		t.Fatal(err)
	}
	n := 0
	e.store.View(func(tx *store.Tx) error {
		return tx.Vectors(owner, func(uint64, []byte) error { n++; return nil })
	})
	if n != 0 {
		t.Errorf("%d vectors left after forget", n)
	}
	if got := found(t, e, owner, "How long is my commute to the office?"); got != "" {
		t.Errorf("a forgotten owner's memory is found by meaning: %q", got)
	}
}
