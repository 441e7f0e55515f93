package extract

import (
	"bufio"
	"encoding/json"
	"os"
	"strings"
	"testing"
)

// prefevalItems is PrefEval's development split, beside the repository
// (see ../shared/evals/prefeval/README.md).
const prefevalItems = "../../shared/evals/prefeval/items.jsonl"

// contentWords are a text's lower-cased words of 4+ letters outside a small
// stop list, by their first 6 letters: PrefEval's measure of whether a
// memory carries a preference.
func contentWords(s string) map[string]bool {
	out := map[string]bool{}
	for _, w := range strings.FieldsFunc(strings.ToLower(s), func(r rune) bool { return r < 'a' || r > 'z' }) {
		if len(w) < 4 || coverageStop[w] {
			continue
		}
		out[w[:min(6, len(w))]] = true
	}
	return out
}

var coverageStop = map[string]bool{}

func init() {
	for _, w := range strings.Fields(`about above after again against also although among another because been before being
	below between both cannot could does doing down during each either else even ever every from further have having here
	into just many might more most much must myself never none nothing only other over same should since some such than that
	their them then there these they this those though through under until very were what when where whether which while
	will with within without would your`) {
		coverageStop[w] = true
	}
}

// keeps reports whether a fact carries at least half of what a statement
// said.
func keeps(fact, said string) bool {
	want, have := contentWords(said), contentWords(fact)
	n := 0
	for w := range want {
		if have[w] {
			n++
		}
	}
	return len(want) > 0 && 2*n >= len(want)
}

// TestPrefEvalCoverage: the rules read most of PrefEval's 481 stated
// preferences (real phrasings, one to two sentences each) into a fact that
// keeps at least half of what was said. The rules name kinds of phrasing,
// not these sentences: the same measure on the topics kept out of this
// split is what counts.
func TestPrefEvalCoverage(t *testing.T) {
	f, err := os.Open(prefevalItems)
	if err != nil {
		t.Skipf("PrefEval split not found beside the repository: %v", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	seen := map[string]bool{}
	read, total := 0, 0
	for sc.Scan() {
		var it struct{ Preference string }
		if json.Unmarshal(sc.Bytes(), &it) != nil || seen[it.Preference] {
			continue
		}
		seen[it.Preference] = true
		total++
		ok := false
		for _, fact := range Facts(it.Preference) { // as sent, quote marks and all
			ok = ok || keeps(fact.Content, it.Preference)
		}
		if ok {
			read++
		} else if testing.Verbose() {
			t.Logf("not read: %s -> %v", it.Preference, Facts(it.Preference))
		}
	}
	share := float64(read) / float64(total)
	t.Logf("%d of %d preferences (%.3f) yield a fact keeping half of their words", read, total, share)
	if total < 400 || share < 0.9 {
		t.Errorf("%d of %d preferences read (%.3f), want at least 0.9", read, total, share)
	}
}
