package index

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"
)

// TestPostingsRankAsRecords: an owner's memories ranked from its postings
// come out as Records ranks them from the records, scores included, for
// questions of rare and common words, with deletions, replacements, an
// expired memory and a session filter.
func TestPostingsRankAsRecords(t *testing.T) {
	x, err := Open(t.TempDir(), 1, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer x.Close()
	rng := rand.New(rand.NewPCG(1, 2))
	words := strings.Fields("dog cat garden coffee hike river lisbon porto guitar pottery bike train window seat sister doctor dinner recipe birthday morning")
	text := func(n int) string {
		w := make([]string, n)
		for i := range w {
			w[i] = words[min(len(words)-1, int(rng.ExpFloat64()*4))]
		}
		return strings.Join(w, " ")
	}
	type mem struct {
		content, context, session string
		expires                   *time.Time
	}
	now := time.Now()
	past := now.Add(-time.Hour)
	mems := map[uint64]mem{}
	p := x.NewPostings()
	g := x.Digester()
	put := func(id uint64, m mem) {
		mems[id] = m
		if !p.Put(id, g.Digest(m.content, m.context), "note", m.session, m.expires) {
			t.Fatalf("a current digest was refused")
		}
	}
	for id := uint64(1); id <= 400; id++ {
		m := mem{content: text(6 + rng.IntN(10)), context: text(5), session: fmt.Sprint("s", id%3)}
		if id == 7 {
			m.expires = &past
		}
		put(id, m)
	}
	for id := uint64(1); id <= 400; id += 9 { // replaced
		put(id, mem{content: text(8), context: text(4), session: "s0"})
	}
	for id := uint64(5); id <= 400; id += 11 { // deleted
		delete(mems, id)
		p.Delete(id)
	}
	found := 0
	for _, q := range []string{"the dog and the garden", "pottery birthday", "morning coffee with my sister in porto", "zebra"} {
		for _, f := range []Filter{{}, {Session: "s1", OnlySession: true}} {
			terms := x.Terms(q)
			r := x.NewRecords("owner", terms)
			for id := uint64(1); id <= 400; id++ {
				m, ok := mems[id]
				if !ok || (m.expires != nil && !now.Before(*m.expires)) {
					continue
				}
				d := g.Digest(m.content, m.context)
				if _, err := r.Add(id, d, nil, !f.OnlySession || m.session == f.Session); err != nil {
					t.Fatal(err)
				}
			}
			want, _ := r.Top(15)
			r.Release()
			got := p.Search(x.NewScorer("owner", terms), f, now, 15)
			found += len(got)
			if len(got) != len(want) {
				t.Fatalf("%q %+v: %d hits from the postings, %d from the records", q, f, len(got), len(want))
			}
			for i := range want {
				if got[i].ID != want[i].ID || math.Abs(got[i].Score-want[i].Score) > 1e-9 {
					t.Errorf("%q %+v: hit %d is %+v from the postings, %+v from the records", q, f, i, got[i], want[i])
				}
			}
		}
	}
	if found < 60 {
		t.Errorf("only %d hits in all: the questions test too little", found)
	}
	if p.Live() != len(mems) || p.Dead() == 0 {
		t.Errorf("live %d (want %d), dead %d", p.Live(), len(mems), p.Dead())
	}
}
