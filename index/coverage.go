package index

import (
	"math/bits"
	"unicode"
	"unicode/utf8"

	"github.com/blevesearch/go-porterstemmer"
)

// Matcher finds which of a query's terms (as the content analyzer writes
// them: lowercased, Porter-stemmed) occur in a text, as a bitmask over the
// terms. It is a fast path of the analyzer for this one question: words are
// scanned without allocating, and only those sharing a term's first letters
// are stemmed.
type Matcher struct {
	Terms    []string // at most 32
	index    map[string]int
	prefixes map[string]bool
	// leads has bit lead(p) set for every prefix p: most words of a text
	// share no term's first two letters and are passed over on this
	// test, without hashing for a map lookup.
	leads uint64
}

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
func (m *Matcher) Count(text string, counts *[32]uint16) uint32 {
	var found uint32
	var buf [64]byte
	n := 0
	long := false // the word overflowed buf: not a term
	flush := func() {
		if n > 0 && !long {
			if bit := m.word(buf[:n]); bit != 0 {
				found |= bit
				if counts != nil {
					counts[bits.TrailingZeros32(bit)]++
				}
			}
		}
		n, long = 0, false
	}
	for i := 0; i < len(text); {
		c := text[i]
		if c < utf8.RuneSelf {
			i++
			switch {
			case c >= 'A' && c <= 'Z':
				c += 'a' - 'A'
			case (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'):
			default:
				flush()
				continue
			}
			if n < len(buf) {
				buf[n] = c
				n++
			} else {
				long = true
			}
			continue
		}
		r, size := utf8.DecodeRuneInString(text[i:])
		i += size
		if !unicode.IsLetter(r) && !unicode.IsDigit(r) {
			flush()
			continue
		}
		r = unicode.ToLower(r)
		if n+utf8.RuneLen(r) <= len(buf) {
			n += utf8.EncodeRune(buf[n:], r)
		} else {
			long = true
		}
	}
	flush()
	return found
}

// word is the bit of the term a lowercased word is, or analyses to.
func (m *Matcher) word(w []byte) uint32 {
	if m.leads&lead(w) == 0 || !m.prefixes[string(prefixBytes(w))] { // no allocation: a map lookup by converted bytes
		return 0
	}
	if i, ok := m.index[string(w)]; ok {
		return 1 << i
	}
	if stem := porterstemmer.StemString(string(w)); stem != string(w) {
		if i, ok := m.index[stem]; ok {
			return 1 << i
		}
	}
	return 0
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
