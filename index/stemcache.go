package index

import (
	"sync"

	"github.com/blevesearch/bleve/v2/analysis"
	"github.com/blevesearch/bleve/v2/analysis/lang/en"
	"github.com/blevesearch/bleve/v2/registry"
	"github.com/blevesearch/go-porterstemmer"
	"github.com/cespare/xxhash/v2"
)

// stemCache maps words, lowercased, to the term they analyse to and its
// hash (0 for stop words). Stemming costs ten times a lookup and the same
// words recur in memory after memory.
//
// It is an open-addressed table keyed by a 64-bit hash of the word, with the
// terms in one buffer: a Go map keyed by the words costs a cache miss for
// the slot and another for the key's bytes, for every word of every memory
// twice (digest and index).
// Two words whose 64-bit hashes are equal would share a term; among the
// table's 2^16 words that has a chance of about 10^-10.
type stemCache struct {
	mu    sync.Mutex
	slots []stemSlot // len a power of two, at most half full
	n     int
	terms []byte // the terms of the slots, one after another
}

type stemSlot struct {
	word      uint64 // xxhash of the word; 0 for an empty slot
	hash      uint32 // termHash of its term; 0 for a stop word
	off, size uint32 // the term, in terms
}

// maxCachedWords bounds stemCache, at about 4 MB with words of at most
// maxCachedWord bytes (longer ones, rare and often not words at all, are
// stemmed each time); a full cache starts over.
const (
	maxCachedWords = 1 << 16
	maxCachedWord  = 48
)

var stems stemCache

var stopWords = sync.OnceValue(func() analysis.TokenMap {
	m, err := registry.NewCache().TokenMapNamed(en.StopName)
	if err != nil {
		panic("index: the English stop words are not registered: " + err.Error())
	}
	return m
})

// lookup is the hash of the term a lowercased word analyses to, and the
// term (valid while c.mu is held); 0 and nil for a stop word. c.mu must be
// held.
func (c *stemCache) lookup(w []byte) (uint32, []byte) {
	if len(w) > maxCachedWord {
		return analyseWord(w)
	}
	key := xxhash.Sum64(w) | 1 // never 0, the empty slot
	if c.slots == nil || c.n >= maxCachedWords {
		c.slots = make([]stemSlot, 2*maxCachedWords)
		c.n, c.terms = 0, c.terms[:0]
	}
	mask := uint64(len(c.slots) - 1)
	i := key & mask
	for c.slots[i].word != 0 {
		if s := &c.slots[i]; s.word == key {
			return s.hash, c.terms[s.off : s.off+s.size]
		}
		i = (i + 1) & mask
	}
	h, term := analyseWord(w)
	c.slots[i] = stemSlot{word: key, hash: h, off: uint32(len(c.terms)), size: uint32(len(term))}
	c.terms = append(c.terms, term...)
	c.n++
	return h, term
}

// each calls fn with the term of each of text's words that has one (not a
// stop word), its hash, and the word's position among all of text's words
// (1 for the first). term is valid until fn returns. word is scratch space
// for words.
func (c *stemCache) each(text string, word *[]byte, fn func(pos int32, hash uint32, term []byte)) {
	c.mu.Lock()
	defer c.mu.Unlock()
	pos := int32(0)
	words(text, word, func(w []byte) {
		pos++
		if h, term := c.lookup(w); h != 0 {
			fn(pos, h, term)
		}
	})
}

// analyseWord is what a lowercased word analyses to, uncached.
func analyseWord(w []byte) (uint32, []byte) {
	if stopWords()[string(w)] {
		return 0, nil
	}
	term := analysis.BuildTermFromRunes(porterstemmer.StemWithoutLowerCasing([]rune(string(w))))
	return termHash(string(term)), term
}
