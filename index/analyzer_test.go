package index

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/blevesearch/bleve/v2/analysis"
)

// TestAnalyzerAgreesWithBleve: the index's analyzer makes the terms Bleve's
// English analyzer makes, at the same positions, so replacing one with the
// other changes no search.
func TestAnalyzerAgreesWithBleve(t *testing.T) {
	texts := append(slices.Clone(digestTexts),
		"東京で寿司を食べた。カタカナ とても",
		"안녕하세요 저는 서울에 살아요",
		"Emoji 🙂 between 🙂words🙂 and ♥ symbols © 2024 ™",
		"Numbers: 1st 2nd 3rd 4th 1990s 10am 5pm 3.5kg 2,500.75 -7 +8 #9 v1.2.3-beta",
		"Repeated repeated REPEATED words words words, the the the.",
		"naïve coöperate façade piñata Ærø smörgåsbord",
	)
	bleve := bleveEn(t)
	for _, text := range texts {
		want, got := tokens(bleve.Analyze([]byte(text))), tokens(memoryAnalyzer{}.Analyze([]byte(text)))
		if !slices.Equal(got, want) {
			t.Errorf("%q:\n got %v\nwant %v", text, got, want)
		}
	}
}

func tokens(ts analysis.TokenStream) []string {
	out := make([]string, len(ts))
	for i, tok := range ts {
		out[i] = fmt.Sprintf("%s@%d", tok.Term, tok.Position)
	}
	return out
}

// TestAnalyzerTermsAreTheirOwn: each token's term is its own slice, so
// nothing Bleve does with one changes another.
func TestAnalyzerTermsAreTheirOwn(t *testing.T) {
	ts := memoryAnalyzer{}.Analyze([]byte("shoes running shoes"))
	if len(ts) != 3 {
		t.Fatalf("%d tokens, want 3", len(ts))
	}
	ts[0].Term = append(ts[0].Term, "XX"...)
	if got := string(ts[1].Term); got != "run" {
		t.Errorf("appending to the first term changed the second to %q", got)
	}
}

func BenchmarkAnalyze(b *testing.B) {
	content := "User: I went hiking with my father near the lake and we talked about guitars and camping trips.\n" +
		"Assistant: That sounds like a lovely weekend. Did you bring the new tent, or borrow one from your neighbour again?"
	context := strings.Repeat("We planned the route over coffee in the morning and packed sandwiches. ", 4)
	for _, c := range []struct {
		name string
		a    analysis.Analyzer
	}{{"index", memoryAnalyzer{}}, {"bleve-en", bleveEn(b)}} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				c.a.Analyze([]byte(content))
				c.a.Analyze([]byte(context))
			}
		})
	}
}

// analyzerGoldenText covers what the analyzer does: case, possessives,
// contractions, stop words, stemming, numbers, URLs, accents, CJK, emoji.
const analyzerGoldenText = "Ana's cats aren't running to the U.S. on 3.14 km/h; visit https://ex.ample/path?q=1 — Zürich café, naïve résumé. 東京に住んでいます 서울 🚲 relational generalizations"

// TestAnalyzerGolden: the analyzer makes exactly these terms. When a change
// to the analyzer changes them, bump AnalyzerVersion (so shards are rebuilt
// and record digests made again, instead of silently missing terms) and
// update the golden terms here.
func TestAnalyzerGolden(t *testing.T) {
	const golden = "ana@1 cat@2 run@4 u.@7 3.14@9 km@10 h@11 visit@12 http@13 ex.ampl@14 path@15 q@16 1@17 zürich@18 café@19 naïv@20 résumé@21 " +
		"東@22 京@23 に@24 住@25 ん@26 で@27 い@28 ま@29 す@30 서울@31 relat@32 gener@33"
	const goldenVersion = 1
	var terms []string
	for _, tok := range (memoryAnalyzer{}).Analyze([]byte(analyzerGoldenText)) {
		terms = append(terms, fmt.Sprintf("%s@%d", tok.Term, tok.Position))
	}
	if got := strings.Join(terms, " "); got != golden || AnalyzerVersion != goldenVersion {
		t.Errorf("the analyzer (version %d) makes\n%s\nwhere version %d made\n%s\nbump AnalyzerVersion and update this test", AnalyzerVersion, got, goldenVersion, golden)
	}
}
