package index

import (
	"context"
	"sort"
	"strings"
	"unicode"
)

// Floor is the relevance floor of one search: whether the question is about
// something the owner's memories hold at all, and which candidates come
// along. A BM25 score means nothing across questions, so the floor is
// coverage (see Coverage): a request gets memories when one of them covers
// MinScore of its question, or, found by meaning, is similar enough; others
// then come along if they cover a companion share of that.
type Floor struct {
	MinScore float64
	// MinSimilarity is the cosine similarity at which a memory found by
	// meaning counts as relevant (embedding recall); 0 when off.
	MinSimilarity float64

	weights          []float64
	content, context map[uint64]uint32
}

// companionFloor is the share of the floor a memory needs once another
// memory has cleared the floor itself.
const companionFloor = 0.5

// unknownNameWeight is how much a name the owner never mentioned weighs in
// the floor, against the heaviest term of the question.
const unknownNameWeight = 2.0

// Admit says of a candidate, in rank order, whether it comes along (keep)
// and whether it clears the floor itself (relevant). similar is its
// similarity to the question when it was found by meaning (bySense).
func (f *Floor) Admit(id uint64, similar float32, bySense bool) (keep, relevant bool) {
	cov := Coverage(f.weights, f.content[id], f.context[id])
	sim := float64(similar)
	switch {
	case cov >= f.MinScore || (bySense && f.MinSimilarity > 0 && sim >= f.MinSimilarity):
		return true, true
	case cov >= f.MinScore*companionFloor || (bySense && f.MinSimilarity > 0 && sim >= f.MinSimilarity*companionFloor):
		return true, false
	}
	return false, false
}

// NewFloor weighs the question's terms for the floor of a search of owner.
// A word the owner has used weighs its IDF. A word the owner never used says
// nothing either way ("suggest a snack" asked of someone whose memories are
// about allergies) and weighs nothing, with one exception: a question about
// someone or something never mentioned, asked in the third person ("What did
// John buy?"), is not about what this owner's memories hold, however many
// ordinary words it shares with them, so such a name (a capitalised word
// inside the question) weighs double the heaviest word. Said in the first
// person ("I live in Oslo", "what should I cook for John?") a new name is
// only context.
//
// "Used" is judged from the candidates: a memory containing a question word
// matches the question, so the words of the candidates are, in practice,
// the question words the owner has used. cands are the search's
// candidates, with the text of those found in the index. known, when the
// search read all of the owner's memories (its records or its postings),
// is what it knows: the terms each candidate holds, the owner's own counts,
// and which terms the owner ever used; without it, names found in no
// candidate are looked up in the owner's whole index.
func (x *Index) NewFloor(ctx context.Context, owner, question string, terms []string, cands []Candidate, known *Known) (*Floor, error) {
	var sc *Scorer
	if known != nil {
		sc = known.scorer
	} else {
		sc = x.NewScorer(owner, terms)
	}
	f := &Floor{content: make(map[uint64]uint32, len(cands)), context: make(map[uint64]uint32, len(cands))}
	var used uint32
	for _, c := range cands {
		// A known search's candidates were matched as it read them; the
		// others are matched by their text.
		var m termSet
		if known != nil {
			m = known.found[c.ID]
		} else {
			m.content, m.context = sc.Matcher.Match(c.Content), sc.Matcher.Match(c.Context)
		}
		f.content[c.ID], f.context[c.ID] = m.content, m.context
		used |= m.content | m.context
	}
	names := map[string]bool{}
	for _, name := range thirdPersonNames(question) {
		for _, t := range x.Terms(name) {
			names[t] = true
		}
	}
	var unknown uint32 // names among the unused terms
	for i, t := range sc.Matcher.Terms {
		if used&(1<<i) == 0 && names[t] {
			unknown |= 1 << i
		}
	}
	// The heaviest term is needed, and so every term's weight, only when
	// there is a name to weigh against it.
	weigh := used
	if unknown != 0 {
		weigh = sc.All()
	}
	w, err := sc.Weights(weigh)
	if err != nil {
		return nil, err
	}
	heaviest := 0.0
	for _, v := range w {
		heaviest = max(heaviest, v)
	}
	for i, t := range sc.Matcher.Terms {
		if used&(1<<i) != 0 {
			continue
		}
		w[i] = 0
		if unknown&(1<<i) == 0 {
			continue
		}
		// A known search read all the owner's memories: a name is known
		// when any memory holds it. Otherwise the owner's index is asked.
		var has bool
		if known != nil {
			has = known.has&(1<<i) != 0
		} else if has, err = x.OwnerHas(ctx, owner, t); err != nil {
			return nil, err
		}
		if !has {
			w[i] = heaviest * unknownNameWeight
		}
	}
	f.weights = w
	return f, nil
}

// thirdPersonNames are the capitalised words of a text that do not start
// a sentence (people, places, products), when the text speaks of others:
// none when it is in the first person.
func thirdPersonNames(text string) []string {
	var out []string
	start := true
	for _, w := range strings.Fields(text) {
		word := strings.Trim(w, `"'()[]{},;:!?.`)
		if firstPerson[strings.ToLower(word)] {
			return nil
		}
		if !start && word != "" && unicode.IsUpper([]rune(word)[0]) {
			out = append(out, word)
		}
		start = strings.HasSuffix(w, ".") || strings.HasSuffix(w, "?") || strings.HasSuffix(w, "!")
	}
	return out
}

var firstPerson = map[string]bool{
	"i": true, "i'm": true, "i've": true, "i'd": true, "i'll": true, "me": true, "my": true,
	"mine": true, "myself": true, "we": true, "we're": true, "we've": true, "us": true, "our": true, "ours": true,
}

// rrfK is the constant of reciprocal-rank fusion: a memory's fused score is
// the sum over the rankings it is in of 1/(rrfK + its rank).
const rrfK = 60

// Fuse merges two rankings of one search (the lexical hits and those found
// by meaning, each best first) by reciprocal rank. The fused score replaces
// BM25 as the relevance the priors then adjust.
func Fuse(lexical, bySense []Hit) []Hit {
	fused := make(map[uint64]float64, len(lexical)+len(bySense))
	for _, ranking := range [][]Hit{lexical, bySense} {
		for i, h := range ranking {
			fused[h.ID] += 1 / float64(rrfK+i+1)
		}
	}
	out := make([]Hit, 0, len(fused))
	for id, sc := range fused {
		out = append(out, Hit{ID: id, Score: sc})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Score != out[j].Score {
			return out[i].Score > out[j].Score
		}
		return out[i].ID > out[j].ID
	})
	return out
}
