package index_test

import (
	"context"
	"fmt"
	"math"
	"math/rand"
	"strings"
	"testing"

	"github.com/caddy-memory/memory/index"
)

func TestScorerRanksAsSearch(t *testing.T) {
	x := openIndex(t, t.TempDir(), 1)
	texts := []string{
		"User is allergic to peanuts and shellfish.",
		"User lives in Lisbon near the river.",
		"User: I cooked peanut noodles for dinner, peanuts everywhere",
		"User prefers window seats on long flights.",
		"User: my sister lives in Porto and visits Lisbon often",
		"User's dog is called Peanut.",
		"User is training for the Lisbon marathon in spring.",
	}
	var docs []index.Doc
	for i, txt := range texts {
		docs = append(docs, index.Doc{ID: uint64(i + 1), Owner: "ana", Kind: "note", Content: txt, Context: texts[(i+1)%len(texts)]})
	}
	for i := range 200 { // other owners make the shard's statistics
		docs = append(docs, index.Doc{ID: uint64(1000 + i), Owner: fmt.Sprint("o", i%20), Kind: "note", Content: fmt.Sprintf("note %d about lisbon trams and peanut butter %d", i, i%7)})
	}
	apply(t, x, 1, docs...)

	for _, q := range []string{"where does my sister live in Lisbon?", "peanuts allergy", "flights seats", "marathon training lisbon river"} {
		hits, err := x.Search(context.Background(), index.Query{Owner: "ana", Text: q, Size: 20})
		if err != nil {
			t.Fatal(err)
		}
		sc := x.NewScorer("ana", x.Terms(q))
		if err := sc.Load(sc.All(), sc.All()); err != nil {
			t.Fatal(err)
		}
		score := func(d index.Doc) float64 {
			var m index.Match
			sc.Match(d.Content, d.Context, &m)
			return sc.Score(&m)
		}
		if len(hits) == 0 {
			t.Fatalf("%q: no hits", q)
		}
		ratio := 0.0
		for _, h := range hits {
			d := docs[h.ID-1]
			got := score(d)
			if got == 0 {
				t.Fatalf("%q: memory %d found by search scores 0", q, h.ID)
			}
			if ratio == 0 {
				ratio = h.Score / got
			}
			if math.Abs(h.Score/got-ratio) > 1e-9*ratio {
				t.Errorf("%q: memory %d: search score %g, scorer %g: not the same ranking (ratio %g, first %g)", q, h.ID, h.Score, got, h.Score/got, ratio)
			}
		}
		for i, d := range docs[:len(texts)] {
			if got := score(d); got > 0 && !contains64(ids(hits), uint64(i+1)) {
				t.Errorf("%q: scorer matches memory %d (%q), search does not", q, i+1, d.Content)
			}
		}
	}
}

func contains64(xs []uint64, x uint64) bool {
	for _, v := range xs {
		if v == x {
			return true
		}
	}
	return false
}

// TestScorerFollowsShardGrowth: frequencies are cached, but a word that
// became common weighs less as soon as the shard has grown.
func TestScorerFollowsShardGrowth(t *testing.T) {
	x := openIndex(t, t.TempDir(), 1)
	var docs []index.Doc
	for i := range 20 {
		docs = append(docs, index.Doc{ID: uint64(i + 1), Owner: "o", Content: fmt.Sprintf("note %d about gardens", i)})
	}
	docs[0].Content = "User keeps bees"
	apply(t, x, 1, docs...)
	weight := func() float64 {
		sc := x.NewScorer("o", []string{"bee"})
		w, err := sc.Weights(sc.All())
		if err != nil {
			t.Fatal(err)
		}
		return w[0]
	}
	rare := weight()
	docs = docs[:0]
	for i := range 40 {
		docs = append(docs, index.Doc{ID: uint64(100 + i), Owner: "p", Content: "bees everywhere"})
	}
	apply(t, x, 2, docs...)
	if common := weight(); common >= rare {
		t.Errorf("weight of a word in 41 of 60 documents %v, not below its weight in 1 of 20 (%v)", common, rare)
	}
}

// BenchmarkScoreOwner is the inner loop of searching a small owner: 100
// memories the size of a proxied turn (a transcript and its context), of
// everyday words, matched and scored against a question.
func BenchmarkScoreOwner(b *testing.B) {
	x := openIndex(b, b.TempDir(), 1)
	words := strings.Fields(`time year people way day thing life child world school family student group
		country problem hand part place week company system program question work number night point home
		water room mother area money story month book job word business issue side head house service friend
		father power hour game line end member car city name team minute idea body back parent face running
		shoes morning garden coffee trip beach bike dog cat dinner recipe guitar pottery hike camping painting`)
	rng := rand.New(rand.NewSource(1))
	text := func(n int) string {
		ws := make([]string, n)
		for i := range ws {
			ws[i] = words[rng.Intn(len(words))]
		}
		return strings.Join(ws, " ")
	}
	type mem struct{ content, context string }
	mems := make([]mem, 100)
	var docs []index.Doc
	for i := range mems {
		mems[i] = mem{"User: " + text(20) + "\nAssistant: " + text(30), text(40)}
		docs = append(docs, index.Doc{ID: uint64(i + 1), Owner: "o", Content: mems[i].content, Context: mems[i].context})
	}
	apply(b, x, 1, docs...)
	terms := x.Terms("Can you remind me about the guitar and the camping trip with my father?")
	b.ReportAllocs()
	for b.Loop() {
		sc := x.NewScorer("o", terms)
		var m index.Match
		var inContent, inContext uint32
		matched := make([]index.Match, 0, len(mems))
		for _, d := range mems {
			if sc.Match(d.content, d.context, &m) {
				matched = append(matched, m)
				inContent |= m.Content
				inContext |= m.Context
			}
		}
		if err := sc.Load(inContent, inContext); err != nil {
			b.Fatal(err)
		}
		for i := range matched {
			sc.Score(&matched[i])
		}
	}
}
