package index

import (
	"fmt"
	"testing"
)

// TestDFCacheKeepsReadTerms: a full cache makes room by dropping the terms
// no search has read since it was last full, and keeps the others.
func TestDFCacheKeepsReadTerms(t *testing.T) {
	var c dfCache
	const docs = 1000
	all := [2]uint32{1, 0}
	one := func(term string) (uint64, bool) {
		df := [2][]uint64{{0}, {0}}
		miss := c.get(docs, []string{term}, all, &df)
		return df[0][0], miss[0] == 0
	}
	for i := range dfMax {
		term := fmt.Sprint("t", i)
		if _, hit := one(term); hit {
			t.Fatalf("%s found before it was cached", term)
		}
		c.put([]string{term}, all, &[2][]uint64{{uint64(i)}, {0}})
	}
	for i := 0; i < dfMax; i += 10 { // read again: these stay
		if df, hit := one(fmt.Sprint("t", i)); !hit || df != uint64(i) {
			t.Fatalf("t%d: cached %v, df %d", i, hit, df)
		}
	}
	one("new")
	c.put([]string{"new"}, all, &[2][]uint64{{7}, {0}})
	for i := range dfMax {
		_, hit := one(fmt.Sprint("t", i))
		if want := i%10 == 0; hit != want {
			t.Fatalf("after eviction, t%d cached %v, want %v", i, hit, want)
		}
	}
	if df, hit := one("new"); !hit || df != 7 {
		t.Errorf("the new term: cached %v, df %d", hit, df)
	}
	// A shard that grew past the drift starts over.
	df := [2][]uint64{{0}, {0}}
	if miss := c.get(docs*2, []string{"new"}, all, &df); miss[0] == 0 {
		t.Error("a term cached before the shard doubled was still used")
	}
}
