package engine

import (
	"context"
	"errors"
	"time"

	"github.com/caddy-memory/memory/index"
	"github.com/caddy-memory/memory/store"
)

// SearchRequest asks for an owner's memories relevant to a text.
type SearchRequest struct {
	Owner string // stored owner id
	// Session with OnlySession restricts the search to one session.
	Session     string
	OnlySession bool
	Query       string
	Limit       int
	// MinScore drops hits whose text relevance (BM25) is below it.
	MinScore float64
	// ExcludeTurn leaves out the memories learned from this turn (see
	// TurnKey): its transcript and its facts. A request never needs to be
	// told what it says itself, and a tool-call loop re-sending the same turn
	// then gets the same block each time.
	ExcludeTurn string
}

// Result is a retrieved memory.
type Result struct {
	Memory *store.Memory
	Score  float64 // text relevance
	Rank   float64 // relevance with priors; results are sorted by it
}

// candidatesPerResult is how many index hits are read per result wanted:
// some are dropped as expired, deleted or near-duplicate.
const candidatesPerResult = 3

// Search returns the owner's most relevant active memories, best first. It
// is the retrieval the proxy injects from and the API answers with.
func (e *Engine) Search(ctx context.Context, r SearchRequest) ([]Result, error) {
	if r.Limit <= 0 {
		r.Limit = 10
	}
	hits, err := e.index.Search(ctx, index.Query{
		Owner: r.Owner, Session: r.Session, OnlySession: r.OnlySession,
		Text: r.Query, Size: r.Limit * candidatesPerResult,
	})
	if err != nil || len(hits) == 0 {
		return nil, err
	}
	score := make(map[uint64]float64, len(hits))
	var cands []index.Candidate
	mems := make(map[uint64]*store.Memory, len(hits))
	now := time.Now()
	err = e.store.View(func(tx *store.Tx) error {
		for _, h := range hits {
			if h.Score < r.MinScore {
				continue
			}
			m, err := tx.Get(r.Owner, h.ID)
			if errors.Is(err, store.ErrNotFound) {
				continue // purged after it was indexed
			}
			if err != nil {
				return err
			}
			// The index is derived data: trust only what the owner's own
			// partition says.
			if m.Owner != r.Owner || !m.Active(now) || (r.OnlySession && m.Session != r.Session) {
				continue
			}
			if r.ExcludeTurn != "" && (m.Key == r.ExcludeTurn || m.Meta["turn"] == r.ExcludeTurn) {
				continue
			}
			mems[m.ID], score[m.ID] = m, h.Score
			cands = append(cands, index.Candidate{ID: m.ID, Score: h.Score, Kind: m.Kind, Updated: m.UpdatedAt, Mentions: m.Mentions})
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	index.Rank(cands, now)
	out := make([]Result, 0, r.Limit)
	seen := make(map[string]bool, len(cands))
	for _, c := range cands {
		m := mems[c.ID]
		norm := store.Normalize(m.Content)
		if seen[norm] {
			continue
		}
		seen[norm] = true
		out = append(out, Result{Memory: m, Score: score[c.ID], Rank: c.Rank})
		if len(out) == r.Limit {
			break
		}
	}
	return out, nil
}

// ConversationOf returns the conversation a provider response id belongs to,
// for requests that continue from a response rather than resend history.
func (e *Engine) ConversationOf(owner, ref string) string {
	return e.store.Conversation(owner, ref)
}
