package engine

import (
	"fmt"
	"math/rand"
	"strings"
	"testing"
	"time"

	"github.com/caddy-memory/memory/extract"
	"github.com/caddy-memory/memory/store"
)

// TestPostingsAgreeWithRecords: every kind of search returns from the
// postings what reading the owners' records returns (the same memories,
// in the same order, with the same scores, the floor included), on owners
// of random sizes (small ones kept forward, larger ones with a segment and
// memories forward beside it), after learning, edits that change a
// memory's words or only its session, deletions, expiries and forgetting.
func TestPostingsAgreeWithRecords(t *testing.T) {
	e := open(t, t.TempDir(), 2)
	defer closeEngine(t, e)
	e.cfg.LocalSearchMax = 1 << 20 // with the postings off, every owner's records are read
	rng := rand.New(rand.NewSource(5))
	words := func(k int) string {
		ws := make([]string, k)
		for i := range ws {
			ws[i] = localVocabulary[min(len(localVocabulary)-1, int(rng.ExpFloat64()*6))]
			if rng.Intn(5) == 0 {
				ws[i] = localVocabulary[rng.Intn(len(localVocabulary))]
			}
		}
		return strings.Join(ws, " ")
	}
	kinds := []string{"note", "preference", "identity", "turn"}
	var owners []string
	var all []uint64 // every memory, by owner position
	mem := map[uint64]string{}
	_, err := e.write(func(tx *store.Tx) error {
		for o, n := range []int{3, 40, 200, 300, 700} {
			owner := e.OwnerID(fmt.Sprint("agree-", o))
			owners = append(owners, owner)
			for i := range n {
				p := store.Put{Kind: kinds[rng.Intn(len(kinds))], Session: fmt.Sprint("s", rng.Intn(3)),
					Content: "User mentioned " + words(2+rng.Intn(8)), Context: words(rng.Intn(6)),
					Time: time.Now().Add(-time.Duration(rng.Intn(90*24)) * time.Hour)}
				if p.Kind == "turn" {
					p.Content = "User: " + words(4+rng.Intn(10))
					p.Meta = map[string]string{"turn": fmt.Sprint("t", i%5)}
				}
				if i%37 == 5 {
					past := time.Now().Add(-time.Minute)
					p.ExpiresAt = &past
				}
				m, _, err := tx.Upsert(owner, withDigest(p))
				if err != nil {
					return err
				}
				all = append(all, m.ID)
				mem[m.ID] = owner
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	questions := []string{"what do I remember about lisbon and porto?", "peanuts allergy", "which flights seats do I like",
		"coffee breakfast vegetarian sushi budget holiday", "What did Kowalski say about the marathon?", "guitar", "where do I live?",
		"What did Porto say about the Marathon?"}
	compared := 0
	forgotten := map[string]bool{} // held no more: searched otherwise, finding nothing
	compare := func(when string) {
		t.Helper()
		e.UseSearchCache(0)
		settle(t, e)
		var reqs []SearchRequest
		for _, owner := range owners {
			for i, q := range questions {
				reqs = append(reqs,
					SearchRequest{Owner: owner, Query: q, Limit: 40},
					SearchRequest{Owner: owner, Query: q, Limit: 5, MinScore: DefaultMinScore, Gate: true},
					SearchRequest{Owner: owner, Query: q, Limit: 40, Session: "s1", OnlySession: true},
					SearchRequest{Owner: owner, Query: q, Limit: 10, ExcludeTurn: fmt.Sprint("t", i%5), Prefer: []string{"note"}},
					SearchRequest{Owner: owner, Query: q, Limit: 40, Kinds: []string{"preference", "identity"}},
					SearchRequest{Owner: owner, Query: q, Limit: 40, ExcludeKinds: []string{"turn"}, MinScore: DefaultMinScore})
			}
		}
		got := make([][]Result, len(reqs))
		for i, req := range reqs {
			if !forgotten[req.Owner] && !postingsAnswer(t, e, req) {
				t.Fatalf("%s: the postings did not answer %+v", when, req)
			}
			var err error
			if got[i], err = e.Search(t.Context(), req); err != nil {
				t.Fatal(err)
			}
		}
		e.UseSearchCache(-1)
		for i, req := range reqs {
			want, err := e.Search(t.Context(), req)
			if err != nil {
				t.Fatal(err)
			}
			if ids(got[i]) != ids(want) || scores(got[i]) != scores(want) {
				t.Errorf("%s: %+v:\n postings %s %s\n records  %s %s", when, req, ids(got[i]), scores(got[i]), ids(want), scores(want))
			}
			if len(want) > 0 {
				compared++
			}
		}
		e.UseSearchCache(0)
		settle(t, e)
	}
	compare("seeded")

	// Learning, edits of words and of session alone, deletions, expiries.
	for i := range 300 {
		owner := owners[1+rng.Intn(len(owners)-1)]
		if _, err := e.Remember(t.Context(), OwnedPut{Owner: owner, Put: store.Put{Kind: "note", Content: fmt.Sprint("User later mentioned ", words(3), " ", i)}}); err != nil {
			t.Fatal(err)
		}
	}
	for i, id := range all {
		owner := mem[id]
		var err error
		switch i % 11 {
		case 0:
			_, err = e.Edit(t.Context(), owner, id, func(m *store.Memory) error { m.Content = "User now says " + words(4); return nil })
		case 1:
			_, err = e.Edit(t.Context(), owner, id, func(m *store.Memory) error { m.Session = "s1"; return nil })
		case 2:
			err = e.Delete(t.Context(), owner, id, false)
		case 3:
			_, err = e.Edit(t.Context(), owner, id, func(m *store.Memory) error {
				past := time.Now().Add(-time.Second)
				m.ExpiresAt = &past
				return nil
			})
		}
		if err != nil && !strings.Contains(err.Error(), "not found") {
			t.Fatal(err)
		}
	}
	compare("changed")
	if _, err := e.Forget(t.Context(), owners[2]); err != nil {
		t.Fatal(err)
	}
	forgotten[owners[2]] = true
	compare("one forgotten")
	if compared < 200 {
		t.Errorf("only %d searches found anything; the comparison says little", compared)
	}
}

// postingsAnswer reports whether the postings, not the records or the
// index, answer req now.
func postingsAnswer(t *testing.T, e *Engine, req SearchRequest) bool {
	t.Helper()
	ok := false
	err := e.store.View(func(tx *store.Tx) error {
		ok = e.postings.Current(tx, req.Owner) != nil
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return ok
}

// TestPostingsFollowTheStore: a change is in the postings as soon as it is
// written (the search that follows reads it from them), whoever writes it:
// the API, the learner, the consolidator.
func TestPostingsFollowTheStore(t *testing.T) {
	e := open(t, t.TempDir(), 1)
	defer closeEngine(t, e)
	owner := e.OwnerID("follow")
	settle(t, e)
	res, err := e.Remember(t.Context(), OwnedPut{Owner: owner, Put: store.Put{Kind: "note", Content: "User keeps bees on the roof"}})
	if err != nil {
		t.Fatal(err)
	}
	req := SearchRequest{Owner: owner, Query: "bees", Limit: 5}
	if !postingsAnswer(t, e, req) {
		t.Fatal("the postings do not answer right after a write the API waited for")
	}
	if got := search(t, e, owner, "bees"); len(got) != 1 {
		t.Fatalf("%d found, want 1", len(got))
	}
	e.Enqueue(&Job{Owner: owner, Turn: extract.Turn{Dialect: "openai_chat", Conversation: "c-1", Turn: 1, NewTurn: true,
		User: "I keep goats in the garden too.", Response: chatJSON("Nice!"), ContentType: "application/json", Time: time.Now()}})
	settle(t, e)
	if !postingsAnswer(t, e, req) {
		t.Fatal("the postings do not answer once what was learned is synced")
	}
	if got := search(t, e, owner, "goats garden"); len(got) == 0 {
		t.Fatal("a learned turn is not found")
	}
	if err := e.Delete(t.Context(), owner, res[0].Memory.ID, false); err != nil {
		t.Fatal(err)
	}
	if !postingsAnswer(t, e, req) || len(search(t, e, owner, "bees")) != 0 {
		t.Fatal("a deleted memory is still found")
	}
}
