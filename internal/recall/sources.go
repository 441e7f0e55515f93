package recall

import (
	"context"
	"sync"
	"time"

	"github.com/caddy-memory/memory/index"
	"github.com/caddy-memory/memory/store"
)

// Where a search reads an owner's memories from: its postings in memory
// when they are current, its records when it is small, or else the index.

// localResult is what a search of an owner's own memories found (its
// postings, or its records): hits best first, and what the floor needs to
// know (nil when the owner was searched in the index). peeks are the
// records of the hits read so far (good until the transaction ends); with
// peek, the others are read as they are needed.
type localResult struct {
	records *index.Records
	known   *index.Known
	hits    []index.Hit
	peeks   map[uint64]*store.Peek
	peek    bool
	kept    *[]store.Peek // the matching records, pooled
	// briefs are what the postings know of the hits: they are ranked
	// from them, and only those returned are read; shown is what the block
	// shows of them, for a recall to render without reading them.
	briefs map[uint64]index.Brief
	shown  map[uint64]index.Shown
}

// keptPool reuses the slices of matching records, as index.Records reuses
// its working space: a search's allocations add to the collector's work
// beside every request.
var keptPool = sync.Pool{New: func() any { return new([]store.Peek) }}

// release returns the search's working space; its peeks are gone after.
func (l *localResult) release() {
	if l.records != nil {
		l.records.Release()
		l.records = nil
	}
	if l.kept != nil {
		clear(*l.kept) // they point into the transaction's pages
		*l.kept = (*l.kept)[:0]
		keptPool.Put(l.kept)
		l.kept = nil
	}
}

// searchLocal searches the owner's own memories: its postings when they
// are up to date, else its records when it is small enough, else (no
// records, no known) the index, or, with no terms, nothing.
func (s *Searcher) searchLocal(ctx context.Context, tx *store.Tx, r SearchRequest, terms []string, size int, now time.Time) (localResult, error) {
	if len(terms) == 0 || r.Owner == "" {
		return localResult{}, nil
	}
	if l, ok := s.searchPostings(tx, r, terms, size, now); ok {
		return l, nil
	}
	local, err := s.searchRecords(tx, r, terms, size, now)
	if err != nil || local.records != nil {
		return local, err
	}
	hits, err := s.cfg.Index.Search(ctx, index.Query{
		Owner: r.Owner, Session: r.Session, OnlySession: r.OnlySession,
		Text: r.Query, Terms: terms, Size: size, Kinds: r.Kinds, ExcludeKinds: r.ExcludeKinds,
	})
	return localResult{hits: hits}, err
}

// searchPostings ranks owner's memories from its postings in memory, as
// tx has them: ok is false when the postings do not hold the owner, or
// have not applied changes of its that tx has (see Postings).
func (s *Searcher) searchPostings(tx *store.Tx, r SearchRequest, terms []string, size int, now time.Time) (localResult, bool) {
	if s.cfg.Postings == nil {
		return localResult{}, false
	}
	o := s.cfg.Postings.Current(tx, r.Owner)
	if o == nil {
		return localResult{}, false
	}
	f := index.Filter{Session: r.Session, OnlySession: r.OnlySession, Kinds: r.Kinds, Except: r.ExcludeKinds}
	hits, known, briefs, shown := o.Search(s.cfg.Index.NewScorer(r.Owner, terms), f, now, size)
	l := localResult{known: known, hits: hits, peeks: make(map[uint64]*store.Peek, len(hits)), peek: true,
		briefs: make(map[uint64]index.Brief, len(hits)), shown: make(map[uint64]index.Shown, len(hits))}
	for i, h := range hits {
		l.briefs[h.ID], l.shown[h.ID] = briefs[i], shown[i]
	}
	return l, true
}

// searchRecords ranks every active memory of a small owner against the
// question (see index.Records), keeping the best size. It does nothing, and
// returns no records, when the owner has more than localSearchMax memories
// and the index holds it. Unlike the index, it also sees memories written
// since the last indexing pass. terms are the question's (index.Terms). The
// caller releases the result, before tx ends.
func (s *Searcher) searchRecords(tx *store.Tx, r SearchRequest, terms []string, size int, now time.Time) (localResult, error) {
	if len(terms) == 0 || r.Owner == "" {
		return localResult{}, nil
	}
	big, err := s.outgrown(tx, r.Owner)
	if err != nil {
		return localResult{}, err
	}
	if big {
		// Until the indexer has enrolled a grown owner (or while its shard is
		// rebuilt), only its records have all its memories.
		if held, err := s.cfg.Index.Holds(r.Owner); err != nil || held {
			return localResult{}, err
		}
	}
	rec := s.cfg.Index.NewRecords(r.Owner, terms)
	l := localResult{records: rec, kept: keptPool.Get().(*[]store.Peek)}
	err = tx.PeekAll(r.Owner, func(p *store.Peek) error {
		if !p.Active(now) {
			return nil
		}
		text := func() (string, string, error) {
			m, err := p.Memory()
			if err != nil {
				return "", "", err
			}
			return m.Content, m.Context, nil
		}
		inScope := !r.OnlySession || p.InSession(r.Session)
		if inScope && (r.Kinds != nil || r.ExcludeKinds != nil) {
			b, err := p.Brief()
			if err != nil {
				return err
			}
			inScope = r.wantsKind(b.Kind)
		}
		kept, err := rec.Add(p.ID, p.Terms(), text, inScope)
		if kept {
			*l.kept = append(*l.kept, *p)
		}
		return err
	})
	if err != nil {
		l.release()
		return localResult{}, err
	}
	hits, kept := rec.Top(size)
	l.hits, l.peeks, l.known = hits, make(map[uint64]*store.Peek, len(hits)), rec.Known()
	for i, h := range hits {
		l.peeks[h.ID] = &(*l.kept)[kept[i]]
	}
	return l, nil
}
