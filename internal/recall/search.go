package recall

import (
	"context"
	"errors"
	"slices"
	"strings"
	"time"

	"github.com/caddy-memory/memory/index"
	"github.com/caddy-memory/memory/internal/consolidate"
	"github.com/caddy-memory/memory/internal/embed"
	"github.com/caddy-memory/memory/internal/norm"
	"github.com/caddy-memory/memory/store"
)

// DefaultMinScore is the relevance floor the proxy uses unless configured:
// a request gets memories when one covers at least this share of its
// question (see index.Floor). It is tuned on LoCoMo (docs/recall.md): it
// costs little recall, and keeps questions about something else from
// getting memories at all.
const DefaultMinScore = 0.35

// SearchRequest asks for an owner's memories relevant to a text.
type SearchRequest struct {
	Owner string // stored owner id
	// Session with OnlySession restricts the search to one session.
	Session     string
	OnlySession bool
	Query       string
	Limit       int
	// MinScore drops memories whose coverage of the query (0 to 1: the
	// IDF-weighted share of its terms they hold) is below it.
	MinScore float64
	// ExcludeTurn leaves out the memories learned from this turn (see
	// TurnKey): its transcript and its facts. A request never needs to be
	// told what it says itself, and a tool-call loop re-sending the same turn
	// then gets the same block each time.
	ExcludeTurn string
	// Kinds, when set, restricts the search to memories of these kinds,
	// ExcludeKinds to memories of other kinds; Prefer ranks memories of
	// these kinds first.
	Kinds, ExcludeKinds, Prefer []string
	// Gate judges the question first (index.Gate): small talk searches
	// nothing, an identity question ranks identity facts first, and so on.
	Gate bool
	// shown: the memories returned need only what the block shows of them
	// (a recall's): those the postings rank and keep the text of are not
	// read (see candidates.memory).
	shown bool
}

// wantsKind reports whether the search looks at memories of kind.
func (r *SearchRequest) wantsKind(kind string) bool {
	return (r.Kinds == nil || slices.Contains(r.Kinds, kind)) && !slices.Contains(r.ExcludeKinds, kind)
}

// Result is a retrieved memory.
type Result struct {
	Memory *store.Memory
	Score  float64 // text relevance (fused with vector similarity when embeddings are on)
	Rank   float64 // relevance with priors; results are sorted by it
	// Similarity is the cosine similarity to the question, when the memory
	// was found by meaning.
	Similarity float32
	// Profile: the memory rides in the block as one of the owner's
	// standing facts, not found for the question (no score). A standing
	// fact the budget left out, brought back by the question's domains,
	// has neither a score nor this mark.
	Profile bool
	// hash is norm.Hash of the memory's content, when the search made it.
	hash uint64
	// turn is index.TurnHash of the turn the memory is or was learned
	// from, for a memory made from what the postings show (its Key and
	// Meta are not read).
	turn uint32
}

// fromTurn is index.TurnHash of the turn a transcript memory is: its key.
func (x *Result) fromTurn() uint32 {
	if x.Memory.Key == "" {
		return x.turn
	}
	return index.TurnHash(x.Memory.Key)
}

// textHash is norm.Hash of the result's content.
func (x *Result) textHash() uint64 {
	if x.hash == 0 {
		x.hash = norm.Hash(x.Memory.Content)
	}
	return x.hash
}

// candidatesPerResult is how many index hits are read per result wanted:
// some are dropped as expired, deleted or near-duplicate.
const candidatesPerResult = 3

// Search returns the owner's most relevant active memories, best first. It
// is the retrieval the proxy injects from and the API answers with.
func (s *Searcher) Search(ctx context.Context, r SearchRequest) ([]Result, error) {
	focus := index.FocusAll
	if r.Gate {
		focus = index.Gate(r.Query)
	}
	return s.searchFocused(ctx, r, focus)
}

// searchFocused is search with the gate's judgement of the question
// already made (focus; index.FocusAll when the gate is off): a recall
// judges it once for both.
func (s *Searcher) searchFocused(ctx context.Context, r SearchRequest, focus index.Focus) ([]Result, error) {
	if r.Gate {
		if focus == index.FocusNone {
			return nil, nil
		}
		only, prefer := focus.Kinds()
		if r.Kinds == nil {
			r.Kinds = only
		}
		if r.Prefer == nil {
			r.Prefer = prefer
		}
	}
	if r.Limit <= 0 {
		r.Limit = 10
	}
	size := r.Limit * candidatesPerResult
	// With embeddings on, the question is embedded first (within the
	// query timeout; the vector ranking joins only if it arrives in time).
	em := s.embedding()
	var qvec chan []float32
	if em != nil && strings.TrimSpace(r.Query) != "" {
		qvec = make(chan []float32, 1)
		go func() { qvec <- em.Embed(ctx, r.Query) }()
	}
	now := s.now()
	terms := s.cfg.Index.Terms(r.Query)
	var qv []float32
	if qvec != nil {
		qv = <-qvec
	}
	// One read transaction for the whole search: a small owner's records
	// are ranked from the store's own bytes and only the memories returned
	// are decoded (decoding every candidate would be much of a search's CPU
	// and most of what it allocates). The question's embedding is awaited
	// before: no transaction waits on the network.
	var out []Result
	search := func(tx *store.Tx) error {
		var err error
		out, err = s.searchIn(ctx, tx, r, terms, size, qv, em, now)
		return err
	}
	err := s.cfg.Store.View(search)
	if errors.Is(err, index.ErrDamaged) {
		// The owner's shard was found damaged: it is rebuilt in the
		// background (the engine's repair), and holds no owner meanwhile,
		// so the search is answered from the records.
		err = s.cfg.Store.View(search)
	}
	return out, err
}

// searchIn is Search inside its read transaction, with the question's
// terms and, if embeddings are on and it arrived, its vector qv: the
// owner's memories found (sources.go) and by meaning, read into
// candidates, ranked, and picked above the relevance floor.
func (s *Searcher) searchIn(ctx context.Context, tx *store.Tx, r SearchRequest, terms []string, size int, qv []float32, em Embedding, now time.Time) ([]Result, error) {
	local, err := s.searchLocal(ctx, tx, r, terms, size, now)
	if err != nil {
		return nil, err
	}
	defer local.release()
	hits := local.hits
	var sn sense // found by meaning
	if qv != nil {
		if sn.vectors, err = em.Vectors(tx, r.Owner); err != nil {
			return nil, err
		}
		top := sn.vectors.Top(qv, size)
		sn.similar = make(map[uint64]float32, len(top))
		bySense := make([]index.Hit, len(top))
		for i, v := range top {
			sn.similar[v.ID] = v.Similarity
			bySense[i] = index.Hit{ID: v.ID, Score: float64(v.Similarity)}
		}
		hits = index.Fuse(hits, bySense)
	}
	if len(hits) == 0 {
		return nil, nil
	}
	// The owner's buckets, found once for all the candidates.
	part, err := tx.Partition(r.Owner)
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil // forgotten since it was indexed
	} else if err != nil {
		return nil, err
	}
	c := candidates{score: make(map[uint64]float64, len(hits)), mems: make(map[uint64]*store.Memory)}
	cands, err := c.read(tx, part, &r, hits, &local, &sn, now)
	if err != nil {
		return nil, err
	}
	var floor *index.Floor
	if r.MinScore > 0 {
		if floor, err = s.cfg.Index.NewFloor(ctx, r.Owner, r.Query, terms, cands, local.known); err != nil {
			return nil, err
		}
		floor.MinScore = r.MinScore
		if em != nil {
			floor.MinSimilarity = em.MinSimilarity()
		}
	}
	index.Rank(cands, now)
	return c.pick(cands, part, &r, floor, &local, &sn, now)
}

// sense is what a search found by meaning: each memory's similarity to
// the question, and the owner's vectors.
type sense struct {
	similar map[uint64]float32 // nil: embeddings off, or the question's vector late
	vectors *Vectors
}

// candidates is what a search keeps of its hits besides what ranks them
// (index.Candidate): each one's text relevance and, where it was read
// whole, its memory.
type candidates struct {
	score map[uint64]float64
	mems  map[uint64]*store.Memory
}

// read reads the hits as they are ranked (index.Candidate). Memories found in the index (or
// only by meaning) are read whole; a small owner's, already read, are
// ranked by their records' Brief, and those found in the postings by what
// the postings keep of them; both are decoded only when returned (pick).
func (c *candidates) read(tx *store.Tx, part *store.Partition, r *SearchRequest, hits []index.Hit, local *localResult, sn *sense, now time.Time) ([]index.Candidate, error) {
	list := make([]index.Candidate, 0, len(hits))
	excluded := index.TurnHash(r.ExcludeTurn)
	for _, h := range hits {
		_, bySense := sn.similar[h.ID]
		b, m, ok, err := readCandidate(tx, part, r, h.ID, local, bySense, excluded, now)
		if err != nil {
			return nil, err
		}
		if !ok || r.ExcludeTurn != "" && b.FromTurn(r.ExcludeTurn) {
			continue
		}
		if bySense {
			if m == nil {
				if m, err = local.peeks[h.ID].Memory(); skipRecord(err) {
					continue
				} else if err != nil {
					return nil, err
				}
			}
			if sn.vectors.Hashes[h.ID] != embed.TextHash(m.Content) {
				delete(sn.similar, h.ID) // a vector of text the memory no longer has
			}
		}
		u := part.Usage(h.ID)
		cand := index.Candidate{ID: h.ID, Score: h.Score, Kind: b.Kind, Updated: b.Updated, Mentions: b.Mentions, Importance: b.Importance,
			Salience: consolidate.Salience(consolidate.Memory{Kind: b.Kind, Importance: b.Importance, Mentions: b.Mentions,
				Updated: b.Updated, Uses: u.Uses, LastUsed: u.LastUsed, Boost: u.Boost}, now),
			Preferred: slices.Contains(r.Prefer, b.Kind)}
		if m != nil {
			c.mems[h.ID] = m
			cand.Content, cand.Context = m.Content, m.Context
		}
		c.score[h.ID] = h.Score
		list = append(list, cand)
	}
	return list, nil
}

// readCandidate reads what ranks hit id: its Brief, and its memory whole
// when it had not been read (found in the index, or only by meaning); ok
// is false for a hit the search passes over (gone, damaged, another
// session's or kind's, or the turn left out). excluded is
// index.TurnHash(r.ExcludeTurn).
func readCandidate(tx *store.Tx, part *store.Partition, r *SearchRequest, id uint64, local *localResult, bySense bool, excluded uint32, now time.Time) (b store.Brief, m *store.Memory, ok bool, err error) {
	p := local.peeks[id]
	switch br, known := local.briefs[id]; {
	case known && p == nil && !bySense && br.Kind != "" && (excluded == 0 || br.Turn != excluded):
		// Ranked from what the postings know of it; its record is read,
		// and checked, only if it is returned (pick).
		b = store.Brief{Kind: br.Kind, Updated: br.Updated, Mentions: br.Mentions, Importance: br.Importance}
		return b, nil, r.wantsKind(b.Kind), nil
	case p == nil && local.peek:
		// Found in the postings: its record is read now, and checked
		// (the postings may be newer than this snapshot, and a session
		// or a kind past the numbered ones is only admitted there).
		if p, b, ok, err = readHit(part, id, r, now); err != nil || !ok {
			return b, nil, false, err
		}
		local.peeks[id] = p
		return b, nil, true, nil
	case p != nil:
		if b, err = p.Brief(); skipRecord(err) {
			return b, nil, false, nil
		}
		return b, nil, err == nil, err
	}
	m, err = tx.Get(r.Owner, id)
	if errors.Is(err, store.ErrNotFound) || skipRecord(err) {
		return b, nil, false, nil // purged after it was indexed, or damaged
	}
	if err != nil {
		return b, nil, false, err
	}
	// The index is derived data: trust only what the owner's own
	// partition says.
	if m.Owner != r.Owner || !m.Active(now) || (r.OnlySession && m.Session != r.Session) || !r.wantsKind(m.Kind) {
		return b, nil, false, nil
	}
	return store.BriefOf(m), m, true, nil
}

// pick returns the ranked candidates (list) that the floor admits (all, with no
// floor), checked in rank order only as far as needed, one of each text,
// up to r.Limit; none when none covers the question.
func (c *candidates) pick(list []index.Candidate, part *store.Partition, r *SearchRequest, floor *index.Floor, local *localResult, sn *sense, now time.Time) ([]Result, error) {
	out := make([]Result, 0, r.Limit)
	seen := make(map[uint64]bool, len(list))
	relevant := floor == nil
	for _, cand := range list {
		covers := false
		if floor != nil {
			sim, bySense := sn.similar[cand.ID]
			var keep bool
			if keep, covers = floor.Admit(cand.ID, sim, bySense); !keep {
				continue
			}
		}
		m, turn, ok, err := c.memory(part, r, cand.ID, local, now)
		if err != nil {
			return nil, err
		} else if !ok {
			continue
		}
		// Restatements after the floor: hashing the text of every candidate,
		// most of which the floor drops, would cost more than the rest.
		h := norm.Hash(m.Content)
		if seen[h] {
			continue
		}
		seen[h] = true
		relevant = relevant || covers
		out = append(out, Result{Memory: m, Score: c.score[cand.ID], Rank: cand.Rank, Similarity: sn.similar[m.ID], hash: h, turn: turn})
		if len(out) == r.Limit {
			break
		}
	}
	if !relevant {
		return nil, nil
	}
	return out, nil
}

// memory is candidate id's memory whole: as it was read, or decoded now
// from its record (read now, and checked, when it was ranked from the
// postings: they may be newer than this snapshot, and only the records
// say a session for sure). A recall's (r.shown) is made from what the
// postings keep when they rank it and keep its text: they hold every
// change of the owner the snapshot has (Postings.Current), a memory
// deleted, expired or rewritten among them, so its record would say
// nothing more of what the block shows; turn is then the TurnHash of its
// turn. ok is false for one passed over.
func (c *candidates) memory(part *store.Partition, r *SearchRequest, id uint64, local *localResult, now time.Time) (m *store.Memory, turn uint32, ok bool, err error) {
	if m := c.mems[id]; m != nil {
		return m, 0, true, nil
	}
	p := local.peeks[id]
	if p == nil && r.shown && !r.OnlySession {
		// A session search reads the records: the postings tell sessions
		// apart by a hash.
		if br, known := local.briefs[id]; known && br.Kind != "" {
			if content, framed, kept := local.shown[id].Text(); kept {
				m := &store.Memory{ID: id, Owner: r.Owner, Kind: br.Kind, Content: content, UpdatedAt: br.Updated,
					Mentions: br.Mentions, Importance: br.Importance}
				if framed {
					m.Meta = map[string]string{"framed": "1"}
				}
				return m, br.Turn, true, nil
			}
		}
	}
	if p == nil {
		if p, _, ok, err = readHit(part, id, r, now); err != nil || !ok {
			return nil, 0, false, err
		}
	}
	m, err = p.Memory()
	if skipRecord(err) {
		return nil, 0, false, nil
	}
	return m, 0, err == nil, err
}

// readHit reads and checks a hit the postings found: whether its record
// is in the snapshot, active, and one the search asks for (its session,
// kind, and not of the turn left out); with its Brief.
func readHit(part *store.Partition, id uint64, r *SearchRequest, now time.Time) (*store.Peek, store.Brief, bool, error) {
	p, err := part.Peek(id)
	if errors.Is(err, store.ErrNotFound) || skipRecord(err) {
		return nil, store.Brief{}, false, nil
	} else if err != nil {
		return nil, store.Brief{}, false, err
	}
	if !p.Active(now) || (r.OnlySession && !p.InSession(r.Session)) {
		return nil, store.Brief{}, false, nil
	}
	b, err := p.Brief()
	if skipRecord(err) {
		return nil, store.Brief{}, false, nil
	} else if err != nil {
		return nil, store.Brief{}, false, err
	}
	return p, b, r.wantsKind(b.Kind) && (r.ExcludeTurn == "" || !b.FromTurn(r.ExcludeTurn)), nil
}

// skipRecord reports whether err is a damaged record's: a search passes
// over it as over one not found (one bad record costs a recall only
// itself).
func skipRecord(err error) bool { return errors.Is(err, store.ErrRecordDamaged) }
