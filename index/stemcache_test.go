package index

import (
	"fmt"
	"strings"
	"testing"
)

// TestStemCacheAgreesUncached: through collisions of slots, a full cache
// starting over, stop words and words too long to cache, a cached word
// analyses as it does uncached.
func TestStemCacheAgreesUncached(t *testing.T) {
	var c stemCache
	c.mu.Lock()
	defer c.mu.Unlock()
	word := func(i int) []byte {
		switch i % 7 {
		case 0:
			return []byte("the")
		case 1:
			return []byte(strings.Repeat("running", 10) + fmt.Sprint(i)) // longer than maxCachedWord
		}
		return []byte(fmt.Sprintf("walking%dness", i))
	}
	for round := range 2 { // the second round reads what the first cached
		for i := range maxCachedWords + maxCachedWords/2 {
			w := word(i)
			h, term := c.lookup(w)
			wantH, wantTerm := analyseWord(w)
			if h != wantH || string(term) != string(wantTerm) {
				t.Fatalf("round %d, %q: cached %d %q, uncached %d %q", round, w, h, term, wantH, wantTerm)
			}
		}
	}
	if c.n > maxCachedWords {
		t.Errorf("the cache holds %d words, more than %d", c.n, maxCachedWords)
	}
}
