package index

import (
	"slices"
	"testing"
)

// TestRankTextsFindsTheAnswer: texts are ranked by BM25 over analysed
// terms (stems, no stop words), the question's filler words ignored: the
// text that answers comes first, texts sharing no term are left out, and
// a question of fillers alone finds nothing.
func TestRankTextsFindsTheAnswer(t *testing.T) {
	texts := []string{
		"Tell me more about the history of the harbour and its ships.",
		"My balcony faces north, so it gets hardly any direct sun.",
		"The harbour grew busy with ships and plants for the docks.",
		"I planted tomatoes on the balcony last spring.",
	}
	got := RankTexts("Which plants would grow well on my balcony?", texts)
	if len(got) != 3 || got[0] != 3 || !slices.Contains(got, 1) || !slices.Contains(got, 2) || slices.Contains(got, 0) {
		t.Errorf("ranked %v; want the tomatoes (plant, balcony) first, then the balcony and the plants, never the ships alone", got)
	}
	if got := RankTexts("where does my balcony face?", texts); len(got) != 2 || got[0] != 1 {
		t.Errorf("ranked %v; want the shorter balcony text first", got)
	}
	if got := RankTexts("can you please tell me", texts); got != nil {
		t.Errorf("a question of fillers ranked %v", got)
	}
	if got := RankTexts("balcony", nil); got != nil {
		t.Errorf("no texts ranked %v", got)
	}
}
