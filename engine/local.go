package engine

import (
	"sort"
	"time"

	"github.com/caddy-memory/memory/index"
	"github.com/caddy-memory/memory/store"
)

// DefaultLocalSearchMax is the most memories an owner may have for a
// search to read and score them all instead of querying the index. Scoring
// costs about 3.5 µs per memory the size of a proxied turn (index
// BenchmarkScoreOwner), a Bleve query 0.4 ms in a shard of 1,500 memories
// and 1.5 to 2.5 ms in one of 15,000: the index is cheaper past ~120
// memories in a 100k store and ~500 in a 1M one. 256 sits between.
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
// first, the memories they are, and which query terms each holds.
type localResult struct {
	scorer *index.Scorer
	hits   []index.Hit
	mems   map[uint64]*store.Memory
	found  map[uint64]index.Match
	// has is every query term found in the content of any of the owner's
	// active memories: the owner has never used the others.
	has uint32
}

// searchLocal scores every active memory of a small owner against the
// query, with the same BM25 as the index (index.Scorer), keeping the best
// size. It reports false, having done nothing, when the owner has more than
// localSearchMax memories. Unlike the index, it also sees memories written
// since the last indexing pass. terms are the query's (index.Terms).
func (e *Engine) searchLocal(r SearchRequest, terms []string, size int, now time.Time) (localResult, bool, error) {
	if len(terms) == 0 || r.Owner == "" {
		return localResult{}, true, nil
	}
	type scored struct {
		m     *store.Memory
		match index.Match
		score float64
	}
	var all []scored
	sc := e.index.NewScorer(r.Owner, terms)
	// Terms in the content of any active memory (what the owner has said),
	// and in the context of the results.
	var has, inContext uint32
	var match index.Match
	var ok bool
	err := e.store.View(func(tx *store.Tx) (err error) {
		ok, err = tx.ForEachIfAtMost(r.Owner, e.localSearchMax(), func(m *store.Memory) error {
			if !m.Active(now) || !sc.Match(m.Content, m.Context, &match) {
				return nil
			}
			has |= match.Content // names the owner used, in any session
			if r.OnlySession && m.Session != r.Session {
				return nil
			}
			all = append(all, scored{m: m, match: match})
			inContext |= match.Context
			return nil
		})
		return err
	})
	if err != nil || !ok {
		return localResult{}, false, err
	}
	if err := sc.Load(has, inContext); err != nil {
		return localResult{}, false, err
	}
	for i := range all {
		all[i].score = sc.Score(&all[i].match)
	}
	// Best first, newer first on ties, as the index orders its hits.
	sort.Slice(all, func(i, j int) bool {
		if all[i].score != all[j].score {
			return all[i].score > all[j].score
		}
		return all[i].m.ID > all[j].m.ID
	})
	all = all[:min(len(all), size)]
	l := localResult{
		scorer: sc, has: has,
		hits:  make([]index.Hit, len(all)),
		mems:  make(map[uint64]*store.Memory, len(all)),
		found: make(map[uint64]index.Match, len(all)),
	}
	for i, s := range all {
		l.hits[i] = index.Hit{ID: s.m.ID, Score: s.score}
		l.mems[s.m.ID] = s.m
		l.found[s.m.ID] = s.match
	}
	return l, true, nil
}
