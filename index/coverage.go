package index

import (
	"strings"
	"unicode"

	"github.com/blevesearch/go-porterstemmer"
)

// Coverage is the share of the query's weight a memory holds: the IDF of
// the query terms found in its content, plus those found only in its context
// at the context weight, over the IDF of all query terms. It is 1 when a
// memory says everything asked, and comparable across queries, unlike BM25
// scores, so it makes a relevance floor that means the same for every query.
func (x *Index) Coverage(weights map[string]float64, content, context string) float64 {
	var all float64
	for _, w := range weights {
		all += w
	}
	if all == 0 {
		return 0
	}
	inContent := matchTerms(content, weights)
	inContext := matchTerms(context, weights)
	var got float64
	for t, w := range weights {
		switch {
		case inContent[t]:
			got += w
		case inContext[t]:
			got += w * contextWeight
		}
	}
	return got / all
}

// matchTerms finds which of the terms (as the content analyzer writes
// them: lowercased, Porter-stemmed) occur in text. It is a fast path of the
// analyzer for this one question: only words that could stem to a wanted
// term (they share its first letters) are stemmed.
func matchTerms(text string, terms map[string]float64) map[string]bool {
	found := make(map[string]bool, len(terms))
	if text == "" {
		return found
	}
	prefixes := make(map[string]bool, len(terms))
	for t := range terms {
		prefixes[prefix(t)] = true
	}
	for _, word := range strings.FieldsFunc(strings.ToLower(text), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	}) {
		if !prefixes[prefix(word)] {
			continue
		}
		if _, ok := terms[word]; ok {
			found[word] = true
			continue
		}
		if stem := porterstemmer.StemString(word); stem != word {
			if _, ok := terms[stem]; ok {
				found[stem] = true
			}
		}
	}
	return found
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
