package index

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestPrunedWalkAgreesWithExhaustive: a large owner's search that steps
// over the postings of its common words finds the same best memories,
// with the same scores to the last bit, the same terms and briefs, as one
// that walks every posting: over random owners and questions (common and
// rare words, words said several times, sessions and kinds filtered,
// memories rewritten, deleted and expired, sizes asked from 1 to 60).
func TestPrunedWalkAgreesWithExhaustive(t *testing.T) {
	x, p := newTestPostings(t)
	g := x.Digester()
	rng := rand.New(rand.NewPCG(3, 5))
	zipf := rand.NewZipf(rng, 1.1, 2, 4000)
	word := func() string {
		if rng.IntN(50) == 0 {
			return "common" // in nearly every memory, often twice
		}
		return fmt.Sprintf("w%d", zipf.Uint64())
	}
	words := func(n int) string {
		w := make([]string, n)
		for i := range w {
			w[i] = word()
		}
		return strings.Join(w, " ")
	}
	now := time.Now()
	past, future := now.Add(-time.Minute), now.Add(time.Hour)
	kinds := []string{"turn", "preference", "note"}
	compared, pruned := 0, 0
	for owner, size := range []int{2000, 6000, 15000} {
		name := fmt.Sprint("owner-", owner)
		o := p.Hold(name)
		ids := []uint64{}
		put := func(id uint64) {
			a := Attrs{Kind: kinds[rng.IntN(len(kinds))], Session: fmt.Sprint("s", rng.IntN(4)), Updated: now.Add(-time.Duration(rng.IntN(1e6)) * time.Second),
				Mentions: rng.IntN(4), Importance: rng.IntN(10)}
			switch rng.IntN(60) {
			case 0:
				a.Expires = &past
			case 1:
				a.Expires = &future
			}
			if !o.Put(id, g.Digest("common "+words(6+rng.IntN(20)), words(rng.IntN(10))), a) {
				t.Fatal("a current digest was refused")
			}
		}
		for i := range size {
			id := uint64(owner*1_000_000 + i + 1)
			ids = append(ids, id)
			put(id)
		}
		o.Settle(now)
		check := func(when string) {
			t.Helper()
			for q := range 60 {
				question := "common " + words(1+rng.IntN(5))
				if q%3 == 0 {
					question = words(2 + rng.IntN(4))
				}
				terms := x.Terms(question)
				filters := []Filter{{}, {Session: "s1", OnlySession: true}, {Kinds: []string{"preference"}}, {Except: []string{"turn"}}}
				f := filters[rng.IntN(len(filters))]
				k := 1 + rng.IntN(60)
				want, wantKnown, wantBriefs, _, _ := o.searchWith(x.NewScorer(name, terms), f, now, k, false)
				got, gotKnown, gotBriefs, _, did := o.searchWith(x.NewScorer(name, terms), f, now, k, true)
				compared++
				if did {
					pruned++
				}
				if !slices.Equal(got, want) || !slices.Equal(gotBriefs, wantBriefs) {
					t.Fatalf("%s, %s: %q %+v, %d asked: pruned %v\n%v\nwalking every posting\n%v", name, when, question, f, k, did, got, want)
				}
				for _, h := range got {
					if gotKnown.found[h.ID] != wantKnown.found[h.ID] {
						t.Fatalf("%s, %s: %q: hit %d holds %+v pruned, %+v walking every posting", name, when, question, h.ID, gotKnown.found[h.ID], wantKnown.found[h.ID])
					}
				}
			}
		}
		check("put")
		// Rewritten with other words (blind until settled), deleted with
		// terms known and unknown, and grown.
		for i, id := range ids {
			switch i % 11 {
			case 0:
				put(id)
			case 1:
				o.Delete(id, nil)
			}
		}
		check("rewritten")
		o.Settle(now.Add(blindFor))
		check("rewritten, settled")
	}
	if pruned*3 < compared {
		t.Errorf("%d of %d searches pruned: the test tests too little", pruned, compared)
	}
	t.Logf("%d of %d searches pruned", pruned, compared)
}

// BenchmarkOwnerSearchLarge is one search of an owner holding 50,000
// memories of Zipf-drawn words in its postings, with questions of a few
// common and rarer words, walking every posting of the question's words
// and pruning (the time is the search's alone: no store, no floor).
func BenchmarkOwnerSearchLarge(b *testing.B) {
	x, p := newTestPostings(b)
	g := x.Digester()
	rng := rand.New(rand.NewPCG(1, 2))
	zipf := rand.NewZipf(rng, 1.07, 2, 20_000)
	text := func(k int) string {
		ws := make([]string, k)
		for i := range ws {
			ws[i] = fmt.Sprintf("w%x", zipf.Uint64())
		}
		return strings.Join(ws, " ")
	}
	o := p.Hold("bench")
	now := time.Now()
	for i := range 50_000 {
		o.Put(uint64(i+1), g.Digest("User: "+text(15)+"\nAssistant: "+text(25), text(30)), Attrs{Kind: "turn", Updated: now})
	}
	o.Settle(now)
	questions := make([]*Scorer, 200)
	for i := range questions {
		questions[i] = x.NewScorer("bench", x.Terms("Can you remind me about the "+text(2)+" and "+text(3)+"?"))
	}
	for _, prune := range []bool{false, true} {
		b.Run(fmt.Sprint("prune=", prune), func(b *testing.B) {
			i := 0
			for b.Loop() {
				o.searchWith(questions[i%len(questions)], Filter{}, now, 15, prune)
				i++
			}
		})
	}
}
