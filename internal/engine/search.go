package engine

import (
	"context"
	"errors"
	"slices"
	"strings"
	"time"

	"go.uber.org/zap"

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

// searcher finds an owner's memories for a question: it plans each search
// (an owner's records, its postings in memory, or the index; by meaning
// too with embedding recall on) and ranks what it finds, and it makes the
// block a recall injects, the owner's profile first. It holds what
// searches keep in memory between requests.
type searcher struct {
	*core
	embedder *embedder
	postings *postings             // every owner's postings in memory (postings.go)
	profiles *ownerCache[*profile] // owners' standing facts (profile.go)
	asked    askedCache            // turns in which the user only asked something
}

// Search returns the owner's most relevant active memories, best first. It
// is the retrieval the proxy injects from and the API answers with.
func (e *Engine) Search(ctx context.Context, r SearchRequest) ([]Result, error) {
	return e.searcher.search(ctx, r)
}

func (sr *searcher) search(ctx context.Context, r SearchRequest) ([]Result, error) {
	focus := index.FocusAll
	if r.Gate {
		focus = index.Gate(r.Query)
	}
	return sr.searchFocused(ctx, r, focus)
}

// searchFocused is search with the gate's judgement of the question
// already made (focus; index.FocusAll when the gate is off): a recall
// judges it once for both.
func (sr *searcher) searchFocused(ctx context.Context, r SearchRequest, focus index.Focus) ([]Result, error) {
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
	em := sr.embedder.running()
	var qvec chan []float32
	if em != nil && strings.TrimSpace(r.Query) != "" {
		qvec = make(chan []float32, 1)
		go func() {
			ctx, cancel := context.WithTimeout(ctx, em.config().QueryTimeout)
			defer cancel()
			v, err := em.config().Client.Embed(ctx, []string{r.Query})
			if err != nil || len(v) != 1 {
				sr.cfg.Observer.EmbeddingFailed()
				if c := sr.log().Check(zap.DebugLevel, "embedding the question failed; lexical recall only"); c != nil {
					c.Write(zap.Error(err))
				}
				qvec <- nil
				return
			}
			qvec <- v[0]
		}()
	}
	now := sr.now()
	terms := sr.index.Terms(r.Query)
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
		out, err = sr.searchIn(ctx, tx, r, terms, size, qv, em, now)
		return err
	}
	err := sr.store.View(search)
	if errors.Is(err, index.ErrDamaged) {
		// The owner's shard was found damaged: it is rebuilt in the
		// background (repair.go), and holds no owner meanwhile, so the
		// search is answered from the records.
		err = sr.store.View(search)
	}
	return out, err
}

// searchIn is Search inside its read transaction, with the question's
// terms and, if embeddings are on and it arrived, its vector qv.
func (sr *searcher) searchIn(ctx context.Context, tx *store.Tx, r SearchRequest, terms []string, size int, qv []float32, em *embedding, now time.Time) ([]Result, error) {
	local, err := sr.searchLocal(ctx, tx, r, terms, size, now)
	if err != nil {
		return nil, err
	}
	defer local.release()
	hits := local.hits
	var similar map[uint64]float32
	var vectors *vectorSet
	if qv != nil {
		if vectors, err = em.vectorsOf(tx, r.Owner); err != nil {
			return nil, err
		}
		top := vectors.Top(qv, size)
		similar = make(map[uint64]float32, len(top))
		bySense := make([]index.Hit, len(top))
		for i, s := range top {
			similar[s.ID] = s.Similarity
			bySense[i] = index.Hit{ID: s.ID, Score: float64(s.Similarity)}
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
	score := make(map[uint64]float64, len(hits))
	cands := make([]index.Candidate, 0, len(hits))
	// Memories found in the index (or only by meaning) are read whole; a
	// small owner's, already read, are ranked by their records' Brief, and
	// those found in the postings by what the postings keep of them; both
	// are decoded only when returned.
	mems := make(map[uint64]*store.Memory)
	excluded := index.TurnHash(r.ExcludeTurn)
	for _, h := range hits {
		var b store.Brief
		var m *store.Memory
		p := local.peeks[h.ID]
		_, bySense := similar[h.ID]
		if br, ok := local.briefs[h.ID]; ok && p == nil && !bySense && br.Kind != "" && (excluded == 0 || br.Turn != excluded) {
			// Ranked from what the postings know of it; its record is read,
			// and checked, only if it is returned (below).
			b = store.Brief{Kind: br.Kind, Updated: br.Updated, Mentions: br.Mentions, Importance: br.Importance}
			if !r.wantsKind(b.Kind) {
				continue
			}
		} else if p == nil && local.peek {
			// Found in the postings: its record is read now, and checked
			// (the postings may be newer than this snapshot, and a session
			// or a kind past the numbered ones is only admitted there).
			var ok bool
			if p, b, ok, err = readHit(part, h.ID, &r, now); err != nil {
				return nil, err
			} else if !ok {
				continue
			}
			local.peeks[h.ID] = p
		} else if p != nil {
			if b, err = p.Brief(); skipRecord(err) {
				continue
			} else if err != nil {
				return nil, err
			}
		} else {
			m, err = tx.Get(r.Owner, h.ID)
			if errors.Is(err, store.ErrNotFound) || skipRecord(err) {
				continue // purged after it was indexed, or damaged
			}
			if err != nil {
				return nil, err
			}
			// The index is derived data: trust only what the owner's own
			// partition says.
			if m.Owner != r.Owner || !m.Active(now) || (r.OnlySession && m.Session != r.Session) ||
				!r.wantsKind(m.Kind) {
				continue
			}
			b = store.BriefOf(m)
		}
		if r.ExcludeTurn != "" && b.FromTurn(r.ExcludeTurn) {
			continue
		}
		if bySense {
			if m == nil {
				if m, err = p.Memory(); skipRecord(err) {
					continue
				} else if err != nil {
					return nil, err
				}
			}
			if vectors.hashes[h.ID] != embed.TextHash(m.Content) {
				delete(similar, h.ID) // a vector of text the memory no longer has
			}
		}
		u := part.Usage(h.ID)
		c := index.Candidate{ID: h.ID, Score: h.Score, Kind: b.Kind, Updated: b.Updated, Mentions: b.Mentions, Importance: b.Importance,
			Salience: consolidate.Salience(consolidate.Memory{Kind: b.Kind, Importance: b.Importance, Mentions: b.Mentions,
				Updated: b.Updated, Uses: u.Uses, LastUsed: u.LastUsed, Boost: u.Boost}, now),
			Preferred: slices.Contains(r.Prefer, b.Kind)}
		if m != nil {
			mems[h.ID] = m
			c.Content, c.Context = m.Content, m.Context
		}
		score[h.ID] = h.Score
		cands = append(cands, c)
	}
	var floor *index.Floor
	if r.MinScore > 0 {
		if floor, err = sr.index.NewFloor(ctx, r.Owner, r.Query, terms, cands, local.known); err != nil {
			return nil, err
		}
		floor.MinScore = r.MinScore
		if em != nil {
			floor.MinSimilarity = em.config().MinSimilarity
		}
	}
	index.Rank(cands, now)
	out := make([]Result, 0, r.Limit)
	seen := make(map[uint64]bool, len(cands))
	relevant := floor == nil
	for _, c := range cands {
		// The floor is checked in rank order, only as far as needed.
		covers := false
		if floor != nil {
			sim, bySense := similar[c.ID]
			var keep bool
			if keep, covers = floor.Admit(c.ID, sim, bySense); !keep {
				continue
			}
		}
		m := mems[c.ID]
		if m == nil {
			p := local.peeks[c.ID]
			if p == nil {
				// Ranked from the postings: read now, and checked (they may be
				// newer than this snapshot, and only the records say a
				// session for sure).
				var ok bool
				if p, _, ok, err = readHit(part, c.ID, &r, now); err != nil {
					return nil, err
				} else if !ok {
					continue
				}
			}
			if m, err = p.Memory(); skipRecord(err) {
				continue
			} else if err != nil {
				return nil, err
			}
		}
		// Restatements after the floor: hashing the text of every candidate,
		// most of which the floor drops, would cost more than the rest.
		h := norm.Hash(m.Content)
		if seen[h] {
			continue
		}
		seen[h] = true
		relevant = relevant || covers
		out = append(out, Result{Memory: m, Score: score[c.ID], Rank: c.Rank, Similarity: similar[m.ID], hash: h})
		if len(out) == r.Limit {
			break
		}
	}
	if !relevant {
		return nil, nil
	}
	return out, nil
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

// ConversationOf returns the conversation a provider response id belongs to,
// for requests that continue from a response rather than resend history.
func (e *Engine) ConversationOf(owner, ref string) string {
	return e.store.Conversation(owner, ref)
}
