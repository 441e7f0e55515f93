package index

import (
	"math"
	"slices"
	"strings"
	"sync"
)

// BM25's parameters for RankTexts: the usual ones.
const (
	bm25K1 = 1.2
	bm25B  = 0.75
)

// RankTexts ranks texts that are no memories (the turns of a request, cut
// to fit the model) by how well each answers query: BM25 over the terms
// the index analyses them to (English stems, no stop words; the query
// without its filler words), the collection being texts themselves. It
// returns the indexes of the texts that share a term with the query, best
// first (the earlier of two that score alike first). It reads no index
// and is safe for concurrent use.
func RankTexts(query string, texts []string) []int {
	var word []byte
	fill := fillerHashes()
	var terms []uint32
	stems.each(query, &word, func(_ int32, h uint32, _ []byte) {
		if !fill[h] && !slices.Contains(terms, h) {
			terms = append(terms, h)
		}
	})
	if len(terms) == 0 || len(texts) == 0 {
		return nil
	}
	tf := make([][]int, len(texts)) // tf[i][k]: how often text i holds terms[k]
	lengths := make([]int, len(texts))
	df := make([]int, len(terms))
	total := 0
	for i, text := range texts {
		tf[i] = make([]int, len(terms))
		stems.each(text, &word, func(_ int32, h uint32, _ []byte) {
			lengths[i]++
			if k := slices.Index(terms, h); k >= 0 {
				if tf[i][k] == 0 {
					df[k]++
				}
				tf[i][k]++
			}
		})
		total += lengths[i]
	}
	avg := max(float64(total)/float64(len(texts)), 1)
	n := float64(len(texts))
	scores := make([]float64, len(texts))
	var ranked []int
	for i := range texts {
		for k := range terms {
			if f := float64(tf[i][k]); f > 0 {
				idf := math.Log(1 + (n-float64(df[k])+0.5)/(float64(df[k])+0.5))
				scores[i] += idf * f * (bm25K1 + 1) / (f + bm25K1*(1-bm25B+bm25B*float64(lengths[i])/avg))
			}
		}
		if scores[i] > 0 {
			ranked = append(ranked, i)
		}
	}
	slices.SortStableFunc(ranked, func(a, b int) int {
		switch {
		case scores[a] > scores[b]:
			return -1
		case scores[a] < scores[b]:
			return 1
		}
		return 0
	})
	return ranked
}

// fillerHashes are the term hashes of the query filler words (see fillers).
var fillerHashes = sync.OnceValue(func() map[uint32]bool {
	m := map[uint32]bool{}
	var word []byte
	stems.each(strings.Join(fillers, " "), &word, func(_ int32, h uint32, _ []byte) { m[h] = true })
	return m
})
