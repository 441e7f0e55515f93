package index

import (
	"github.com/blevesearch/bleve/v2/analysis"
	"github.com/blevesearch/bleve/v2/registry"
)

// analyzerName is the analyzer of memory and query text in the index: the
// words and terms of a digest (words, stemCache), as Bleve tokens. It makes
// the same terms as Bleve's "en" analyzer (unicode tokenizer, possessive
// filter, lowercase, English stop words, Porter; see
// TestAnalyzerAgreesWithBleve) at a fraction of the cost, because stems are
// cached and words are cut without building a token per stop word; Bleve's
// own analysis was a large share of a bulk load's CPU.
// Being the digest's own analysis, the index, the digests and the queries
// cannot disagree on a term.
const analyzerName = "memory_en"

func init() {
	registry.RegisterAnalyzer(analyzerName, func(map[string]interface{}, *registry.Cache) (analysis.Analyzer, error) {
		return memoryAnalyzer{}, nil
	})
}

type memoryAnalyzer struct{}

// Analyze returns text's terms with their positions among its words (stop
// words keep their places, as Bleve's stop filter leaves them). Start and
// End stay zero: they serve highlighting and term vectors, which the
// mapping does not keep.
func (memoryAnalyzer) Analyze(text []byte) analysis.TokenStream {
	// Sized for English (a word every 5 to 6 bytes) so they rarely grow.
	terms := make([]byte, 0, len(text))   // the terms, one after another
	ends := make([]int32, 0, len(text)/5) // where each term ends in terms
	pos := make([]int32, 0, len(text)/5)
	var word []byte
	stems.each(string(text), &word, func(at int32, _ uint32, term []byte) {
		terms = append(terms, term...)
		ends = append(ends, int32(len(terms)))
		pos = append(pos, at)
	})
	toks := make([]analysis.Token, len(ends))
	out := make(analysis.TokenStream, len(ends))
	start := int32(0)
	for i, end := range ends {
		toks[i] = analysis.Token{Term: terms[start:end:end], Position: int(pos[i]), Type: analysis.AlphaNumeric}
		out[i] = &toks[i]
		start = end
	}
	return out
}
