package index

import (
	"strings"
	"testing"
)

func TestMatcherAgreesWithTheAnalyzer(t *testing.T) {
	x, err := Open(t.TempDir(), 1, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer x.Close()
	query := "Where did Caroline's running shoes go? Café résumé, Zürich 2023"
	m := NewMatcher(x.Terms(query))
	for _, text := range []string{
		"Caroline runs in new shoes every morning.",
		"CAFÉ in ZÜRICH since 2023; she went RUNNING.",
		"Nothing in common here at all.",
		strings.Repeat("supercalifragilistic", 10) + " shoes",
		"shoes—running… Caroline—café 2023! shoes,shoes;SHOES résumé-shoes",
		"Zürich’s café: runner's RUNS, ran; Carolines 2023rd",
		"naïvecafé café",
		"",
	} {
		a := x.mapping.AnalyzerNamed(contentAnalyzer)
		want := uint32(0)
		var wantCounts [32]uint16
		for _, tok := range a.Analyze([]byte(text)) {
			for i, q := range m.Terms {
				if string(tok.Term) == q {
					want |= 1 << i
					wantCounts[i]++
				}
			}
		}
		if got := m.Match(text); got != want {
			t.Errorf("Match(%q) = %b, the analyzer says %b (terms %v)", text, got, want, m.Terms)
		}
		var counts [32]uint16
		if got := m.Count(text, &counts); got != want || counts != wantCounts {
			t.Errorf("Count(%q) = %b %v, the analyzer says %b %v (terms %v)", text, got, counts[:len(m.Terms)], want, wantCounts[:len(m.Terms)], m.Terms)
		}
	}
}

func TestCoverage(t *testing.T) {
	w := []float64{1, 3}
	if c := Coverage(w, 0b11, 0); c != 1 {
		t.Errorf("all terms: %v", c)
	}
	if c := Coverage(w, 0b10, 0); c != 0.75 {
		t.Errorf("the heavy term: %v", c)
	}
	if c := Coverage(w, 0, 0b10); c != 0.75*contextWeight {
		t.Errorf("only in context: %v", c)
	}
	if c := Coverage(nil, 1, 1); c != 0 {
		t.Errorf("no terms: %v", c)
	}
}

func BenchmarkMatch(b *testing.B) {
	m := NewMatcher([]string{"carolin", "run", "shoe", "morn", "adopt"})
	text := strings.Repeat("Caroline said she went running in her new shoes every morning before the adoption meeting. ", 10)
	b.SetBytes(int64(len(text)))
	b.ReportAllocs()
	for b.Loop() {
		m.Match(text)
	}
}
