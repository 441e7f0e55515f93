package index

import (
	"math"
	"sort"
	"time"
)

// Candidate is a search hit with what the store knows about it.
type Candidate struct {
	ID       uint64
	Score    float64 // BM25 from Search
	Kind     string
	Updated  time.Time
	Mentions int
	// Importance is the memory's, 1 to 10, or 0 when its learner gave none.
	Importance int
	// Salience is how much the memory still matters, 0 to 1 (see package
	// consolidate): faded memories rank a little lower, confirmed and
	// used ones a little higher.
	Salience float64
	// Preferred: the question's focus ranks memories of its kind first
	// (see Gate).
	Preferred bool
	Rank      float64 // set by Rank
	// Content and Context are the memory's text, for a candidate found in
	// the index (NewFloor matches them); a small owner's were matched when
	// its records were read.
	Content, Context string
}

// Ranking priors. They are deliberately mild: relevance decides, and the
// priors only break near-ties in favour of what is fresh, distilled, or
// repeated.
const (
	recencyBoost = 0.2                 // up to +20% for a memory from today
	recencyHalf  = 30 * 24 * time.Hour // the boost halves every 30 days
	factBoost    = 1.15                // a distilled fact over a raw transcript turn
	mentionBoost = 0.05                // per restatement, up to mentionCap
	mentionCap   = 4
	// importanceBoost is the most an importance of 10 adds (and of 1 takes
	// away), against the middle of the scale; salienceBoost likewise for a
	// salience of 1 (and 0) against 0.5.
	importanceBoost = 0.1
	salienceBoost   = 0.1
	// preferBoost is what the question's focus gives its kinds.
	preferBoost = 1.5
)

// Rank sets each candidate's Rank from its score and priors and sorts them
// best first.
func Rank(cs []Candidate, now time.Time) {
	for i := range cs {
		c := &cs[i]
		r := c.Score
		if age := now.Sub(c.Updated); age >= 0 {
			r *= 1 + recencyBoost*math.Exp2(-float64(age)/float64(recencyHalf))
		}
		if c.Kind != "turn" {
			r *= factBoost
		}
		if m := c.Mentions - 1; m > 0 {
			r *= 1 + mentionBoost*float64(min(m, mentionCap))
		}
		if c.Importance > 0 {
			r *= 1 + importanceBoost*float64(min(c.Importance, 10)-5)/5
		}
		r *= 1 + salienceBoost*(2*min(max(c.Salience, 0), 1)-1)
		if c.Preferred {
			r *= preferBoost
		}
		c.Rank = r
	}
	sort.SliceStable(cs, func(i, j int) bool {
		if cs[i].Rank != cs[j].Rank {
			return cs[i].Rank > cs[j].Rank
		}
		return cs[i].ID > cs[j].ID // newer first on ties
	})
}
