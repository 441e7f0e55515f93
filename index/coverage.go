package index

import (
	"math"
	"math/bits"
	"unicode"
	"unicode/utf8"

	"github.com/blevesearch/go-porterstemmer"

	"github.com/caddy-memory/memory/internal/norm"
)

// Matcher finds which of a query's terms (as the content analyzer writes
// them: lowercased, Porter-stemmed) occur in a text, as a bitmask over the
// terms. It is a fast path of the analyzer for this one question: words are
// scanned without allocating, and only those sharing a term's first letters
// are stemmed. It remembers stemmed words, so it is not safe for concurrent
// use.
type Matcher struct {
	Terms    []string // at most 32
	index    map[string]int
	prefixes map[string]bool
	// leads has bit lead(p) set for every prefix p: most words of a text
	// share no term's first two letters and are passed over on this
	// test, without hashing for a map lookup.
	leads uint64
	// stemmed remembers what words that needed stemming turned out to be:
	// a search matches the same words in memory after memory, and stemming
	// costs ten times a lookup.
	stemmed map[string]uint32
}

// maxStemmed bounds Matcher.stemmed.
const maxStemmed = 4096

// NewMatcher prepares a matcher for terms (MaxQueryTerms at most).
func NewMatcher(terms []string) *Matcher {
	m := &Matcher{index: make(map[string]int, len(terms)), prefixes: make(map[string]bool, len(terms))}
	for _, t := range terms {
		if len(m.Terms) == 32 {
			break
		}
		if _, dup := m.index[t]; dup {
			continue
		}
		m.index[t] = len(m.Terms)
		m.Terms = append(m.Terms, t)
		m.prefixes[prefix(t)] = true
		m.leads |= lead([]byte(t))
	}
	return m
}

// Match returns the set of terms found in text, bit i for Terms[i].
func (m *Matcher) Match(text string) uint32 { return m.Count(text, nil) }

// Count is Match that also counts, in counts (when not nil), how often
// each term occurs: BM25 needs term frequencies.
//
// A search reads every memory of a small owner, so this is the inner loop
// of retrieval: ASCII words (nearly all) are sliced out of text without
// copying, and most are passed over on their first two letters; only words
// with other letters are decoded rune by rune.
func (m *Matcher) Count(text string, counts *[32]uint16) uint32 {
	var found uint32
	var buf [maxWord]byte
	for i := 0; i < len(text); {
		if c := text[i]; c < utf8.RuneSelf {
			if norm.Lower[c] == 0 {
				i++
				continue
			}
			j := i + 1
			for j < len(text) && text[j] < utf8.RuneSelf && norm.Lower[text[j]] != 0 {
				j++
			}
			if j == len(text) || text[j] < utf8.RuneSelf {
				found |= m.ascii(text[i:j], &buf, counts)
				i = j
				continue
			}
		} else if r, size := utf8.DecodeRuneInString(text[i:]); !unicode.IsLetter(r) && !unicode.IsDigit(r) {
			i += size
			continue
		}
		// A word with letters beyond ASCII, lowercased rune by rune.
		n, long := 0, false // long: it overflowed buf, so it is no term
		for i < len(text) {
			c := text[i]
			if c < utf8.RuneSelf {
				if norm.Lower[c] == 0 {
					break
				}
				if n < len(buf) {
					buf[n] = norm.Lower[c]
					n++
				} else {
					long = true
				}
				i++
				continue
			}
			r, size := utf8.DecodeRuneInString(text[i:])
			if !unicode.IsLetter(r) && !unicode.IsDigit(r) {
				break
			}
			i += size
			r = unicode.ToLower(r)
			if n+utf8.RuneLen(r) <= len(buf) {
				n += utf8.EncodeRune(buf[n:], r)
			} else {
				long = true
			}
		}
		if !long {
			found |= count(m.word(buf[:n]), counts)
		}
	}
	return found
}

// maxWord is the longest word, in bytes, that can be a term.
const maxWord = 64

// ascii is the bit of the term an ASCII word (as written) is or analyses
// to, counted.
func (m *Matcher) ascii(w string, buf *[maxWord]byte, counts *[32]uint16) uint32 {
	if len(w) > len(buf) {
		return 0
	}
	var two [2]byte // lowercased, before copying the whole word
	two[0] = norm.Lower[w[0]]
	if len(w) > 1 {
		two[1] = norm.Lower[w[1]]
	}
	if m.leads&lead(two[:]) == 0 {
		return 0
	}
	for k := 0; k < len(w); k++ {
		buf[k] = norm.Lower[w[k]]
	}
	return count(m.word(buf[:len(w)]), counts)
}

func count(bit uint32, counts *[32]uint16) uint32 {
	if bit != 0 && counts != nil {
		if c := &counts[bits.TrailingZeros32(bit)]; *c < math.MaxUint16 {
			*c++
		}
	}
	return bit
}

// word is the bit of the term a lowercased word is, or analyses to.
func (m *Matcher) word(w []byte) uint32 {
	if m.leads&lead(w) == 0 || !m.prefixes[string(prefixBytes(w))] { // no allocation: a map lookup by converted bytes
		return 0
	}
	if i, ok := m.index[string(w)]; ok {
		return 1 << i
	}
	if bit, ok := m.stemmed[string(w)]; ok {
		return bit
	}
	var bit uint32
	if stem := porterstemmer.StemString(string(w)); stem != string(w) {
		if i, ok := m.index[stem]; ok {
			bit = 1 << i
		}
	}
	if m.stemmed == nil {
		m.stemmed = make(map[string]uint32)
	}
	if len(m.stemmed) < maxStemmed {
		m.stemmed[string(w)] = bit
	}
	return bit
}

// Coverage is the share of the query's weight held by a memory whose text
// matched content and whose context matched context: the weights of the
// terms found in its text, plus those found only in its context at the
// context weight, over the weight of all terms. It is 1 when a memory says
// everything asked, and comparable across queries, unlike BM25 scores, so it
// makes a relevance floor that means the same for every query.
func Coverage(weights []float64, content, context uint32) float64 {
	var got, all float64
	for i, w := range weights {
		all += w
		switch bit := uint32(1) << i; {
		case content&bit != 0:
			got += w
		case context&bit != 0:
			got += w * contextWeight
		}
	}
	if all == 0 {
		return 0
	}
	return got / all
}

// lead is a bit standing for a word's first two bytes, which it shares with
// its prefix and its stem.
func lead(w []byte) uint64 {
	if len(w) == 0 {
		return 0
	}
	h := uint(w[0]) * 31
	if len(w) > 1 {
		h += uint(w[1])
	}
	return 1 << (h % 64)
}

// prefix is the part of a word stemming never changes: its first three
// letters (Porter rewrites only endings, and keeps words of up to two
// letters whole).
func prefix(w string) string {
	n := 0
	for i := range w {
		if n == 3 {
			return w[:i]
		}
		n++
	}
	return w
}

// prefixBytes is prefix for a word in bytes.
func prefixBytes(w []byte) []byte {
	n := 0
	for i := 0; i < len(w); {
		if n == 3 {
			return w[:i]
		}
		_, size := utf8.DecodeRune(w[i:])
		i += size
		n++
	}
	return w
}
