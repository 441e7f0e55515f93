package index

import (
	"cmp"
	"slices"
	"sync"
)

// Records ranks the memories of an owner small enough to be searched from
// its records rather than the index (the engine reads them and offers each
// with Add): the same BM25 as Search, over the owner's own statistics
// instead of its shard's. What other owners say should not decide what
// this one is reminded of, and a small owner is not in the index at all.
// On LoCoMo, whose owners each have a shard of their own, the two agree;
// with all five owners in one shard, the shard's statistics injected
// something for questions from another conversation about twice as often.
//
// Memories are matched by their digest (see Digest), or by their text for a
// record without a current one. A Records is not safe for concurrent use;
// Release returns its working space.
type Records struct {
	scorer  *Scorer
	counts  Counts // of all the owner's active memories
	matches []Match
	ids     []uint64
	order   []scored
	// has is every query term found in the content of any of the owner's
	// active memories, in any session: the owner never used the others.
	has   uint32
	found map[uint64]termSet
}

type scored struct {
	i     int
	score float64
}

// recordsPool reuses working space: made afresh for every search, it was
// about half of what a search allocated, and the proxy's allocations set
// how often the collector runs beside its requests.
var recordsPool = sync.Pool{New: func() any { return new(Records) }}

// NewRecords prepares to rank owner's memories against terms (from Terms).
func (x *Index) NewRecords(owner string, terms []string) *Records {
	r := recordsPool.Get().(*Records)
	r.scorer = x.NewScorer(owner, terms)
	return r
}

// Add offers one active memory of the owner. digest is its record's (nil
// for none); text, called only when the digest cannot be read, returns its
// content and context. inScope says whether it may be returned (it is in
// the searched session); every active memory counts towards the owner's
// statistics. Add reports whether the memory matched and is in scope: the
// k-th memory Add kept is k in Top's answer.
func (r *Records) Add(id uint64, digest []byte, text func() (content, context string, err error), inScope bool) (bool, error) {
	var m Match
	found, ok := r.scorer.MatchDigest(digest, &m)
	if !ok {
		content, context, err := text()
		if err != nil {
			return false, err
		}
		found = r.scorer.Match(content, context, &m)
	}
	r.counts.Add(&m)
	if !found {
		return false, nil
	}
	r.has |= m.Content
	if !inScope {
		return false, nil
	}
	r.ids, r.matches = append(r.ids, id), append(r.matches, m)
	return true, nil
}

// Top scores the memories kept and returns the best size of them, best
// first (newer first on ties, as the index orders its hits), each with the
// position Add kept it at.
func (r *Records) Top(size int) (hits []Hit, kept []int) {
	r.scorer.UseCounts(&r.counts)
	for i := range r.matches {
		r.order = append(r.order, scored{i, r.scorer.Score(&r.matches[i])})
	}
	// Sorting positions moves 16 bytes a swap instead of a Match.
	slices.SortFunc(r.order, func(a, b scored) int {
		if c := cmp.Compare(b.score, a.score); c != 0 {
			return c
		}
		return cmp.Compare(r.ids[b.i], r.ids[a.i])
	})
	top := r.order[:min(len(r.order), size)]
	hits, kept = make([]Hit, len(top)), make([]int, len(top))
	r.found = make(map[uint64]termSet, len(top))
	for i, s := range top {
		hits[i], kept[i] = Hit{ID: r.ids[s.i], Score: s.score}, s.i
		m := &r.matches[s.i]
		r.found[r.ids[s.i]] = termSet{m.Content, m.Context}
	}
	return hits, kept
}

// Known is what the floor needs to know of the search, after Top; good
// until Release.
func (r *Records) Known() *Known { return &Known{scorer: r.scorer, found: r.found, has: r.has} }

// Release returns the working space; r is not to be used after.
func (r *Records) Release() {
	*r = Records{matches: r.matches[:0], ids: r.ids[:0], order: r.order[:0]}
	recordsPool.Put(r)
}
