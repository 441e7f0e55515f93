package engine

import (
	"cmp"
	"slices"
	"sync"
	"time"

	"github.com/caddy-memory/memory/index"
	"github.com/caddy-memory/memory/store"
)

// DefaultLocalSearchMax is the most memories an owner may have for a
// search to read its records instead of querying the index. Reading costs
// about 1 µs a memory (BenchmarkSearchOwner: 0.15 ms for 100 turn-sized
// memories, 1.1 ms for 1,000), a Bleve query about 0.4 ms in a shard of
// 1,500 memories and 1.5 to 2.5 ms in one of 15,000: the records are
// cheaper up to some 400 memories in a 100k store and 1,500 in a 1M one.
// 256 stays below both.
const DefaultLocalSearchMax = 256

func (e *Engine) localSearchMax() int {
	switch n := e.cfg.LocalSearchMax; {
	case n == 0:
		return DefaultLocalSearchMax
	case n < 0:
		return 0
	default:
		return n
	}
}

// localResult is what a search of an owner's records found: hits best
// first, their records (good until the transaction ends), and which query
// terms each holds. release gives its working space back.
type localResult struct {
	scratch *localScratch
	scorer  *index.Scorer
	hits    []index.Hit
	peeks   map[uint64]*store.Peek
	found   map[uint64]index.Match
	// has is every query term found in the content of any of the owner's
	// active memories: the owner has never used the others.
	has uint32
}

// localScratch is a local search's working space, one entry per matching
// memory of the owner. It is reused across searches: made afresh, it was
// about half of what a search allocated (BenchmarkSearchOwner: 60 KB at 100
// memories an owner, 28 KB without it), and the proxy's allocations set how
// often the collector runs beside its requests.
type localScratch struct {
	peeks   []store.Peek
	matches []index.Match
	all     []localScored
}

type localScored struct {
	i     int
	score float64
}

var localScratchPool = sync.Pool{New: func() any { return new(localScratch) }}

// release drops the scratch's references (peeks point into the
// transaction's pages) and returns it to the pool.
func (s *localScratch) release() {
	clear(s.peeks)
	s.peeks, s.matches, s.all = s.peeks[:0], s.matches[:0], s.all[:0]
	localScratchPool.Put(s)
}

// release returns the result's working space; its peeks are gone after.
func (l *localResult) release() {
	if l.scratch != nil {
		l.scratch.release()
		l.scratch = nil
	}
}

// searchLocal scores every active memory of a small owner against the
// query, with the same BM25 as the index (index.Scorer), keeping the best
// size. It reports false, having done nothing, when the owner has more than
// localSearchMax memories and the index holds it. Unlike the index, it also
// sees memories written since the last indexing pass. terms are the query's
// (index.Terms). The caller releases the result, before tx ends.
//
// Terms are weighed by the owner's own statistics (how many of its active
// memories hold each), not its index shard's: the index holds only larger
// owners, and what other owners say should not decide what this one is
// reminded of. On LoCoMo, whose owners each have a shard of their own, the
// two agree; with all five owners in one shard, shard statistics injected
// something for 12.3% of questions from another conversation instead of
// 6.7% (with recall@5, all but adversarial, 0.658 against 0.645).
//
// Memories are matched by the term digest in their records, and none is
// decoded here (the search decodes those it returns). A record written
// without a digest (by an earlier version) is decoded and its text matched.
func (e *Engine) searchLocal(tx *store.Tx, r SearchRequest, terms []string, size int, now time.Time) (localResult, bool, error) {
	if len(terms) == 0 || r.Owner == "" {
		return localResult{}, true, nil
	}
	big, err := e.outgrown(tx, r.Owner)
	if err != nil {
		return localResult{}, false, err
	}
	if big {
		// Until the indexer has enrolled a grown owner (or while its shard is
		// rebuilt), only its records have all its memories.
		held, err := e.index.Holds(r.Owner)
		if err != nil || held {
			return localResult{}, false, err
		}
	}
	// The memories that match, and their order: sorting indices moves 16
	// bytes a swap instead of a Peek and a Match.
	scratch := localScratchPool.Get().(*localScratch)
	sc := e.index.NewScorer(r.Owner, terms)
	l := localResult{scratch: scratch, scorer: sc}
	var counts index.Counts // of all the owner's active memories
	var match index.Match
	err = tx.PeekAll(r.Owner, func(p *store.Peek) error {
		if !p.Active(now) {
			return nil
		}
		found, read := sc.MatchDigest(p.Terms(), &match)
		if !read {
			m, err := p.Memory()
			if err != nil {
				return err
			}
			found = sc.Match(m.Content, m.Context, &match)
		}
		counts.Add(&match)
		if !found {
			return nil
		}
		l.has |= match.Content // names the owner used, in any session
		if r.OnlySession && !p.InSession(r.Session) {
			return nil
		}
		scratch.peeks, scratch.matches = append(scratch.peeks, *p), append(scratch.matches, match)
		return nil
	})
	if err != nil {
		l.release()
		return localResult{}, false, err
	}
	sc.UseCounts(&counts)
	peeks, matches := scratch.peeks, scratch.matches
	for i := range peeks {
		scratch.all = append(scratch.all, localScored{i, sc.Score(&matches[i])})
	}
	all := scratch.all
	// Best first, newer first on ties, as the index orders its hits.
	slices.SortFunc(all, func(a, b localScored) int {
		if c := cmp.Compare(b.score, a.score); c != 0 {
			return c
		}
		return cmp.Compare(peeks[b.i].ID, peeks[a.i].ID)
	})
	all = all[:min(len(all), size)]
	l.hits = make([]index.Hit, len(all))
	l.peeks = make(map[uint64]*store.Peek, len(all))
	l.found = make(map[uint64]index.Match, len(all))
	for i, s := range all {
		p := &peeks[s.i]
		l.hits[i] = index.Hit{ID: p.ID, Score: s.score}
		l.peeks[p.ID] = p
		l.found[p.ID] = matches[s.i]
	}
	return l, true, nil
}
