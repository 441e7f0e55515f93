package index

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// forwardDoc makes a memory's terms as conversation has them: numbers drawn
// with a long tail, some more than once.
func forwardDoc(rng *rand.Rand, n int) [2][]term {
	var out [2][]term
	for f := range out {
		seen := map[uint64]bool{}
		for len(out[f]) < n {
			id := uint64(rng.ExpFloat64() * 3000)
			if seen[id] {
				continue
			}
			seen[id] = true
			c := uint64(1)
			if rng.IntN(10) == 0 {
				c = 2 + uint64(rng.IntN(300))
			}
			out[f] = append(out[f], id<<8|min(c, 255))
		}
		slices.Sort(out[f])
	}
	return out
}

// TestForwardRoundTrip: a memory's terms come back from its encoding as they
// went in, and a query finds in it what it holds.
func TestForwardRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for range 200 {
		doc := forwardDoc(rng, 1+rng.IntN(80))
		enc := appendForward(nil, &doc)
		c, x := forwardFields(enc)
		for f, b := range [2][]byte{c, x} {
			var got []term
			eachTerm(b, func(id uint32, count uint16) { got = append(got, term(id)<<8|term(count)) })
			if !slices.Equal(got, doc[f]) {
				t.Fatalf("field %d: %v back, %v in", f, got, doc[f])
			}
		}
		var q [2][]qterm
		want := [2]uint32{}
		for i := range 6 {
			id := uint32(rng.ExpFloat64() * 3000)
			for f := range 2 {
				q[f] = append(q[f], qterm{id, uint8(i)})
				for _, tm := range doc[f] {
					if uint32(tm>>8) == id {
						want[f] |= 1 << i
					}
				}
			}
		}
		for f := range 2 {
			slices.SortFunc(q[f], func(a, b qterm) int { return int(a.id) - int(b.id) })
		}
		var m Match
		matchForward(enc, &q, &m)
		if m.Content != want[0] || m.Context != want[1] {
			t.Fatalf("found %b %b, want %b %b", m.Content, m.Context, want[0], want[1])
		}
	}
}

func BenchmarkMatchForward(b *testing.B) {
	rng := rand.New(rand.NewPCG(3, 4))
	var docs [][]byte
	for range 256 {
		doc := forwardDoc(rng, 28)
		docs = append(docs, appendForward(nil, &doc))
	}
	var q [2][]qterm
	for i, id := range []uint32{3, 40, 700, 2500, 9000} {
		q[0] = append(q[0], qterm{id, uint8(i)})
		q[1] = append(q[1], qterm{id, uint8(i)})
	}
	b.ResetTimer()
	var m Match
	for i := 0; b.Loop(); i++ {
		matchForward(docs[i%len(docs)], &q, &m)
	}
}
