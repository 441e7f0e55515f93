package engine

import (
	"context"
	"fmt"
	"math"
	"math/rand"
	"strings"
	"testing"
	"time"

	"github.com/caddy-memory/memory/index"
	"github.com/caddy-memory/memory/store"
)

// localVocabulary makes memories that share words in varying numbers, so
// rankings have something to decide.
var localVocabulary = strings.Fields(`lisbon porto peanuts shellfish allergy marathon training
	spring river window seats flights sister brother dog cat painting sunsets cello guitar
	coffee tea breakfast vegetarian sushi budget holiday japan camping hiking boots garden`)

// seedVaried writes, for each owner, n memories of a few random words
// each (facts and transcript turns with context, in two sessions, one
// expired and one deleted), and returns the owner ids. Owners are named
// prefix-0, prefix-1, ...
func seedVaried(t *testing.T, e *Engine, prefix string, owners, n int) []string {
	t.Helper()
	rng := rand.New(rand.NewSource(7))
	words := func(k int) string {
		ws := make([]string, k)
		for i := range ws {
			ws[i] = localVocabulary[rng.Intn(len(localVocabulary))]
		}
		return strings.Join(ws, " ")
	}
	var ids []string
	past := time.Now().Add(-time.Hour)
	_, err := e.Write(func(tx *store.Tx) error {
		for o := range owners {
			owner := e.OwnerID(fmt.Sprintf("%s-%d", prefix, o))
			ids = append(ids, owner)
			for i := range n {
				p := store.Put{Kind: "note", Session: fmt.Sprintf("s%d", i%2), Content: "User mentioned " + words(2+rng.Intn(6)),
					Time: time.Now().Add(-time.Duration(rng.Intn(90*24)) * time.Hour)}
				if i%3 == 0 {
					p.Kind, p.Content, p.Context = "turn", "User: "+words(4+rng.Intn(10)), words(6)
					p.Meta = map[string]string{"turn": fmt.Sprintf("t%d", i/6)}
				}
				if i == 1 {
					p.ExpiresAt = &past
				}
				m, _, err := tx.Upsert(owner, p)
				if err != nil {
					return err
				}
				if i == 2 {
					if _, err := tx.Delete(owner, m.ID); err != nil {
						return err
					}
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return ids
}

// TestLocalSearchAgreesWithIndex: a small owner's memories are scored
// directly instead of through the index; what a request gets injected must
// not change: the same memories, in the same order, with scores that
// differ from the index's by one factor per query.
func TestLocalSearchAgreesWithIndex(t *testing.T) {
	e := open(t, t.TempDir(), 2)
	defer closeEngine(t, e)
	owners := seedVaried(t, e, "local", 6, 40)
	settle(t, e)
	compareLocalWithIndex(t, e, owners)
}

// TestLocalSearchReadsRecordsWithoutDigest: memories written by a version
// that kept no term digest in their records are matched by their text,
// with the same results.
func TestLocalSearchReadsRecordsWithoutDigest(t *testing.T) {
	e := open(t, t.TempDir(), 2)
	defer closeEngine(t, e)
	e.store.SetDigest(nil)
	owners := seedVaried(t, e, "earlier", 3, 40)
	e.store.SetDigest(index.Digest)
	owners = append(owners, seedVaried(t, e, "later", 3, 40)...)
	// And an owner with both kinds of record.
	_, err := e.Write(func(tx *store.Tx) error {
		for i, w := range localVocabulary {
			p := store.Put{Kind: "note", Content: fmt.Sprintf("User later mentioned %s and %s", w, localVocabulary[(i*7)%len(localVocabulary)])}
			if _, _, err := tx.Upsert(owners[0], p); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	mixed := map[bool]int{}
	var digested, not int
	err = e.store.View(func(tx *store.Tx) error {
		for i, owner := range owners {
			err := tx.PeekAll(owner, func(p *store.Peek) error {
				if p.Terms() == nil {
					not++
				} else {
					digested++
				}
				if i == 0 {
					mixed[p.Terms() == nil]++
				}
				return nil
			})
			if err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil || digested < 100 || not < 60 || mixed[true] == 0 || mixed[false] == 0 {
		t.Fatalf("%d records with a digest, %d without, the first owner's %v (%v): the test needs both", digested, not, mixed, err)
	}
	settle(t, e)
	compareLocalWithIndex(t, e, owners)
}

func compareLocalWithIndex(t *testing.T, e *Engine, owners []string) {
	t.Helper()
	queries := []string{
		"what do I remember about lisbon and porto?",
		"peanuts allergy",
		"which flights seats do I like",
		"tell me about my sister's dog",
		"What did Kowalski say about the marathon?", // a name no owner used
		"coffee breakfast vegetarian sushi budget holiday",
		"guitar",
	}
	compared := 0
	for _, owner := range owners {
		for i, q := range queries {
			// Limits large enough that no candidate is cut: among memories
			// of equal score, which make the cut is arbitrary in Bleve.
			for _, req := range []SearchRequest{
				{Owner: owner, Query: q, Limit: 40},
				{Owner: owner, Query: q, Limit: 40, MinScore: DefaultMinScore},
				{Owner: owner, Query: q, Limit: 40, Session: "s1", OnlySession: true},
				{Owner: owner, Query: q, Limit: 40, ExcludeTurn: fmt.Sprintf("t%d", i%4)},
			} {
				e.cfg.LocalSearchMax = -1
				want, err := e.Search(context.Background(), req)
				if err != nil {
					t.Fatal(err)
				}
				e.cfg.LocalSearchMax = 0
				got, err := e.Search(context.Background(), req)
				if err != nil {
					t.Fatal(err)
				}
				if ids(got) != ids(want) {
					t.Errorf("%+v:\n local %s\n index %s", req, ids(got), ids(want))
					continue
				}
				for j := range got {
					if r, r0 := got[j].Score/want[j].Score, got[0].Score/want[0].Score; math.Abs(r-r0) > 1e-6*r0 {
						t.Errorf("%+v: result %d scores %g locally, %g by the index: not one factor (%g)", req, j, got[j].Score, want[j].Score, r0)
					}
				}
				if len(got) > 0 {
					compared++
				}
			}
		}
	}
	if compared < 60 {
		t.Fatalf("only %d searches found anything; the comparison says little", compared)
	}
}

func ids(rs []Result) string {
	var b strings.Builder
	for _, r := range rs {
		fmt.Fprintf(&b, "%d ", r.Memory.ID)
	}
	return b.String()
}

// TestLocalSearchOnlyForSmallOwners: an owner past LocalSearchMax is
// searched through the index. The index is made to forget both owners'
// memories, so only a search of the records can find them.
func TestLocalSearchOnlyForSmallOwners(t *testing.T) {
	e := open(t, t.TempDir(), 1)
	defer closeEngine(t, e)
	e.cfg.LocalSearchMax = 3
	small, large := e.OwnerID("small"), e.OwnerID("large")
	var docs []index.Doc
	seq, err := e.Write(func(tx *store.Tx) error {
		for owner, n := range map[string]int{small: 3, large: 4} {
			for i := range n {
				m, _, err := tx.Upsert(owner, store.Put{Kind: "note", Content: fmt.Sprintf("User keeps bees, hive %d", i)})
				if err != nil {
					return err
				}
				docs = append(docs, index.Doc{ID: m.ID, Owner: owner, Delete: true})
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	settle(t, e)
	if err := e.index.Apply(docs, seq+1); err != nil {
		t.Fatal(err)
	}
	if got := search(t, e, small, "bees"); len(got) != 3 {
		t.Errorf("small owner: %d memories found, want its 3 from its records", len(got))
	}
	if got := search(t, e, large, "bees"); len(got) != 0 {
		t.Errorf("large owner: %d memories found, want none: the index has none", len(got))
	}
}

// A memory restated in other case and punctuation (under another key, so
// the store keeps both) is injected once, whether the owner is searched
// through its records or through the index.
func TestSearchDropsRestatements(t *testing.T) {
	for _, max := range []int{0, -1} { // records, index
		e := open(t, t.TempDir(), 1)
		e.cfg.LocalSearchMax = max
		owner := e.OwnerID("sk-tea")
		_, err := e.Write(func(tx *store.Tx) error {
			for i, c := range []string{"I like green tea with honey.", "i like GREEN tea, with honey", "My cat is called Miso."} {
				if _, _, err := tx.Upsert(owner, store.Put{Kind: "note", Key: fmt.Sprint("k", i), Content: c}); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		settle(t, e)
		got := search(t, e, owner, "what tea do I like with honey?")
		if n := strings.Count(strings.ToLower(contents(got)), "green tea"); n != 1 {
			t.Errorf("local search max %d: the restated memory came %d times, want once: %q", max, n, contents(got))
		}
		closeEngine(t, e)
	}
}
