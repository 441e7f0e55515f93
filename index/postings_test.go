package index

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"
)

// postingsModel is what an owner's memories are, written plainly: what the
// postings are compared with, through Records.
type postingsModel struct {
	content, context, session, kind string
	expires                         *time.Time
	// What ranks a hit (Brief).
	updated              time.Time
	mentions, importance int
	turn                 string
	framed               bool
}

// attrs are the model's Attrs.
func (m *postingsModel) attrs() Attrs {
	return Attrs{Kind: m.kind, Session: m.session, Expires: m.expires, Updated: m.updated, Mentions: m.mentions,
		Importance: m.importance, Turn: m.turn, Content: []byte(m.content), Framed: m.framed}
}

// newTestPostings opens an index of one shard for the test's life, and
// makes empty postings of its digests.
func newTestPostings(t testing.TB) (*Index, *Postings) {
	x, err := Open(t.TempDir(), 1, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { x.Close() })
	return x, x.NewPostings()
}

// postingsWords draws words the way conversation does: a few often, most
// seldom; some hashes of the rare ones may share a term number with the
// common ones of another owner, which must not matter.
func postingsWords(rng *rand.Rand, vocab []string, n int) string {
	w := make([]string, n)
	for i := range w {
		w[i] = vocab[min(len(vocab)-1, int(rng.ExpFloat64()*float64(len(vocab))/8))]
	}
	return strings.Join(w, " ")
}

// TestPostingsRankAsRecords: owners of every size (forward only, with a
// segment and memories kept forward beside it, merged and made anew)
// ranked from the postings come out as Records ranks them from their
// records, scores included, through puts, rewrites of the same and of
// other terms, deletions with and without their terms known, expiries,
// sessions and kinds; and the floor learns the same from both.
func TestPostingsRankAsRecords(t *testing.T) {
	x, p := newTestPostings(t)
	g := x.Digester()
	vocab := strings.Fields(`dog cat garden coffee hike river lisbon porto guitar pottery bike train window seat
		sister doctor dinner recipe birthday morning peanut allergy marathon camping tea sushi budget holiday japan
		violin cello painting sunset boots tent kayak museum bakery cheese wine olive bread lemon basil tomato`)
	for i := range 400 {
		vocab = append(vocab, fmt.Sprintf("w%03d", i))
	}
	questions := []string{"the dog and the garden", "pottery birthday", "morning coffee with my sister in porto",
		"zebra", "What did Kowalski say about the marathon?", "w001 w017 w230 tea", "cheese wine olive bread lemon basil"}
	kinds := []string{"turn", "preference", "identity", "note"}
	now := time.Now()
	past, future := now.Add(-time.Hour), now.Add(time.Hour)
	rng := rand.New(rand.NewPCG(7, 11))
	compared, found := 0, 0
	for owner, size := range []int{1, 12, 250, 257, 300, 900, 3000, blindCompact + 500} {
		name := fmt.Sprint("owner-", owner)
		o := p.Hold(name)
		mems := map[uint64]postingsModel{}
		nextID := uint64(owner) * 100_000
		put := func(id uint64, m postingsModel) {
			mems[id] = m
			if !o.Put(id, g.Digest(m.content, m.context), m.attrs()) {
				t.Fatal("a current digest was refused")
			}
		}
		fresh := func() postingsModel {
			m := postingsModel{content: postingsWords(rng, vocab, 4+rng.IntN(20)), context: postingsWords(rng, vocab, rng.IntN(12)),
				session: fmt.Sprint("s", rng.IntN(3)), kind: kinds[rng.IntN(len(kinds))],
				updated: now.Add(-time.Duration(rng.IntN(1e6)) * time.Second).Round(0), mentions: rng.IntN(5), importance: rng.IntN(11),
				turn: fmt.Sprint("turn:c:", rng.IntN(50))}
			switch rng.IntN(40) {
			case 0:
				m.expires = &future
			case 1:
				if owner%2 == 0 {
					m.expires = &past
				}
			}
			return m
		}
		check := func(when string) {
			t.Helper()
			for _, question := range questions {
				terms := x.Terms(question)
				for _, f := range []Filter{{}, {Session: "s1", OnlySession: true}, {Kinds: []string{"preference", "identity"}}, {Except: []string{"turn"}}} {
					r := x.NewRecords(name, terms)
					ids := make([]uint64, 0, len(mems))
					for id := range mems {
						ids = append(ids, id)
					}
					slices.Sort(ids)
					for _, id := range ids {
						m := mems[id]
						if m.expires != nil && !now.Before(*m.expires) {
							continue
						}
						inScope := (!f.OnlySession || m.session == f.Session) && (f.Kinds == nil || slices.Contains(f.Kinds, m.kind)) &&
							!slices.Contains(f.Except, m.kind)
						if _, err := r.Add(id, g.Digest(m.content, m.context), nil, inScope); err != nil {
							t.Fatal(err)
						}
					}
					want, _ := r.Top(20)
					wantKnown := r.Known()
					got, known, briefs, shown := o.Search(x.NewScorer(name, terms), f, now, 20)
					compared++
					found += len(got)
					if len(got) != len(want) {
						t.Fatalf("%s, %d memories, %s: %q %+v: %d hits from the postings, %d from the records", name, len(mems), when, question, f, len(got), len(want))
					}
					for i := range want {
						if got[i].ID != want[i].ID || math.Abs(got[i].Score-want[i].Score) > 1e-9*want[i].Score {
							t.Fatalf("%s, %s: %q %+v: hit %d is %+v from the postings, %+v from the records", name, when, question, f, i, got[i], want[i])
						}
						m := mems[got[i].ID]
						want := Brief{Kind: m.kind, Updated: m.updated.UTC(), Mentions: m.mentions, Importance: m.importance, Turn: TurnHash(m.turn)}
						if briefs[i] != want {
							t.Fatalf("%s, %s: hit %d's brief is %+v from the postings, %+v in the memory", name, when, i, briefs[i], want)
						}
						// What the block shows is the memory's as last put:
						// never an earlier text, nor another memory's.
						if text, framed, ok := shown[i].Text(); !ok || text != m.content || framed != m.framed {
							t.Fatalf("%s, %s: hit %d shows %q (framed %v, kept %v), the memory says %q (framed %v)", name, when, i, text, framed, ok, m.content, m.framed)
						}
						if known.found[got[i].ID] != wantKnown.found[got[i].ID] {
							t.Fatalf("%s, %s: %q: hit %d holds %+v by the postings, %+v by the records", name, when, question, i, known.found[got[i].ID], wantKnown.found[got[i].ID])
						}
					}
					all := known.scorer.All()
					w, _ := known.scorer.Weights(all)
					ww, _ := wantKnown.scorer.Weights(all)
					if known.has != wantKnown.has || !slices.Equal(w, ww) {
						t.Fatalf("%s, %s: %q: the floor learns has %b, weights %v from the postings; %b, %v from the records", name, when, question, known.has, w, wantKnown.has, ww)
					}
					r.Release()
				}
			}
		}
		for range size {
			nextID++
			put(nextID, fresh())
		}
		o.Settle(now)
		check("put")
		// Rewrites of the same terms (a restatement) and deletions whose
		// terms are known (the record still holds them) keep the segment's
		// counts exact; rewrites of other terms and purges blind them.
		ids := make([]uint64, 0, len(mems))
		for id := range mems {
			ids = append(ids, id)
		}
		slices.Sort(ids)
		rewrite := func(blind bool) {
			for i, id := range ids {
				if size > blindCompact && i >= 140 {
					break // a few: a large segment then waits to be made anew
				}
				m, ok := mems[id]
				if !ok {
					continue
				}
				switch {
				case !blind && i%7 == 0:
					m.session = "s1"
					m.mentions++
					m.updated = m.updated.Add(time.Hour)
					put(id, m)
				case !blind && i%7 == 4:
					// Said again in other letters and framed: the same
					// terms, another text.
					m.content, m.framed = strings.ToUpper(m.content), true
					put(id, m)
				case !blind && i%7 == 2:
					delete(mems, id)
					o.Delete(id, g.Digest(m.content, m.context))
				case blind && i%7 == 1:
					put(id, fresh())
				case blind && i%7 == 3 && i%2 == 0:
					delete(mems, id)
					o.Delete(id, nil)
				}
			}
		}
		rewrite(false)
		if size > forwardMax && (o.seg == nil || o.blind > 0 || o.deadDF == nil) {
			t.Fatalf("%s: segment %v, blind %d, dead known %d: the rewrites test too little", name, o.seg != nil, o.blind, len(o.deadDF))
		}
		check("restated and deleted")
		rewrite(true)
		check("rewritten, before settling")
		for range max(1, size/3) {
			nextID++
			put(nextID, fresh())
		}
		o.Settle(now)
		if size > blindCompact && o.blind == 0 {
			t.Fatalf("%s: a large segment was made anew at once", name)
		}
		check("rewritten and grown, settled")
		o.Settle(now.Add(blindFor))
		if o.blind > 0 {
			t.Fatalf("%s: still %d dead of unknown terms %s after a rewrite", name, o.blind, blindFor)
		}
		check("settled again")
		active := 0
		for _, m := range mems {
			if m.expires == nil || now.Before(*m.expires) {
				active++
			}
		}
		if o.Live() != active {
			t.Errorf("%s: %d live in the postings, want %d", name, o.Live(), active)
		}
	}
	if found < compared {
		t.Errorf("%d hits in %d searches: the questions test too little", found, compared)
	}
}

// TestPostingsKeepOwnersApart: owners share the term numbers, never their
// memories.
func TestPostingsKeepOwnersApart(t *testing.T) {
	x, p := newTestPostings(t)
	a, b := p.Hold("a"), p.Hold("b")
	for i := range 300 {
		a.Put(uint64(2*i+1), x.Digester().Digest(fmt.Sprintf("User keeps bees, hive %d", i), ""), Attrs{Kind: "note"})
		b.Put(uint64(2*i+2), x.Digester().Digest(fmt.Sprintf("User keeps goats, pen %d", i), ""), Attrs{Kind: "note"})
	}
	a.Settle(time.Now())
	for _, o := range []*Owner{a, b} {
		hits, _, _, _ := o.Search(x.NewScorer("", x.Terms("bees goats")), Filter{}, time.Now(), 1000)
		if len(hits) != 300 {
			t.Fatalf("%d hits, want the owner's 300", len(hits))
		}
		for _, h := range hits {
			if (o == a) != (h.ID%2 == 1) {
				t.Fatalf("memory %d found for the other owner", h.ID)
			}
		}
	}
	p.Drop("a")
	if p.Owner("a") != nil || a.Held() || a.Live() != 0 {
		t.Error("a dropped owner is still held")
	}
}
