package api

import (
	"context"
	"net/http"
	"strings"

	"github.com/caddy-memory/memory/engine"
)

// Proxy is what the API knows of the proxy (the memory handlers) using its
// storage. The API cannot see the handlers' settings itself: they belong to
// another Caddy module.
type Proxy struct {
	// Recall builds the recall the proxy makes for a question of owner (an
	// owner id) in session, with the proxy's own budget, floor, scope, gate
	// and profile settings, so the preview shows what a chat request would
	// really get. Nil recalls with the engine's defaults.
	Recall func(owner, session, query string) engine.RecallRequest
	// Outcomes counts the proxy's chat requests by outcome (injected,
	// nothing_relevant, passed_through, ...) since the process started. Nil
	// shows none.
	Outcomes func() map[string]float64
}

// recallRequest is the recall the proxy would make for a question.
func (p Proxy) recallRequest(owner, session, query string) engine.RecallRequest {
	if p.Recall != nil {
		return p.Recall(owner, session, query)
	}
	// The memory handler's defaults, for an API used without one.
	return engine.RecallRequest{
		SearchRequest: engine.SearchRequest{Owner: owner, Session: session, Query: query,
			Limit: 10, MinScore: engine.DefaultMinScore, Gate: true},
		Profile: true, ProfileTokens: engine.DefaultProfileTokens, MaxTokens: 800, MaxItems: 10,
	}
}

// previewRequest is the body of POST /preview.
type previewRequest struct {
	ownerRef
	Query   string `json:"query"`
	Session string `json:"session"`
}

// previewMemory is one memory of a preview.
type previewMemory struct {
	ID   uint64 `json:"id"`
	Kind string `json:"kind"`
	// Text is the memory as the block shows it.
	Text  string  `json:"text"`
	Score float64 `json:"score"`
	Rank  float64 `json:"rank"`
	// Profile marks one of the owner's standing facts, which ride with
	// every block; it was not searched for, so it has no score.
	Profile bool `json:"profile,omitempty"`
}

// previewAnswer is the answer to POST /preview.
type previewAnswer struct {
	// Block is exactly what the proxy would add to the request, "" for
	// nothing.
	Block    string          `json:"block"`
	Memories []previewMemory `json:"memories"`
	// Nothing says why nothing would be injected (no_question, small_talk,
	// nothing_relevant), and Reason says it in words.
	Nothing string `json:"nothing,omitempty"`
	Reason  string `json:"reason,omitempty"`
	// BelowFloor are the closest memories the floor kept out, when nothing
	// was relevant enough: what to look at when a memory should have been
	// injected.
	BelowFloor []previewMemory `json:"below_floor,omitempty"`
	// Settings are the proxy's settings the preview used.
	Settings previewSettings `json:"settings"`
}

type previewSettings struct {
	MaxTokens   int     `json:"max_tokens"`
	MaxItems    int     `json:"max_items"`
	MinScore    float64 `json:"min_score"`
	OnlySession bool    `json:"only_session"`
	Gate        bool    `json:"gate"`
	Profile     bool    `json:"profile"`
}

var nothingReasons = map[string]string{
	engine.NothingNoQuestion: "the question holds no text to search for",
	engine.NothingSmallTalk:  "the relevance gate judged the question small talk, so nothing was searched",
	engine.NothingRelevant:   "no memory covers enough of the question to clear the relevance floor",
}

// maxBelowFloor is how many near misses a preview shows.
const maxBelowFloor = 5

// preview serves POST /preview: the block the proxy would inject for a
// question of this owner, each memory with its score, or why nothing would
// be injected. It counts no use: nothing was injected.
func (h *Handler) preview(w http.ResponseWriter, r *http.Request) {
	var in previewRequest
	if err := h.decode(w, r, &in); err != nil {
		h.fail(w, err)
		return
	}
	owner, err := h.ownerOf(r, in.ownerRef, true)
	switch {
	case err != nil:
	case len(in.Query) > maxContent:
		err = badRequest("query is %d bytes; the limit is %d", len(in.Query), maxContent)
	case len(in.Session) > maxSession:
		err = badRequest("session is longer than %d bytes", maxSession)
	}
	if err != nil {
		h.fail(w, err)
		return
	}
	req := h.cfg.Proxy.recallRequest(owner, in.Session, in.Query)
	rec, err := h.cfg.Engine.Recall(r.Context(), req)
	if err != nil {
		h.fail(w, err)
		return
	}
	out := previewAnswer{Block: rec.Block, Memories: []previewMemory{}, Nothing: rec.Nothing, Reason: nothingReasons[rec.Nothing],
		Settings: previewSettings{MaxTokens: req.MaxTokens, MaxItems: req.MaxItems, MinScore: req.MinScore,
			OnlySession: req.OnlySession, Gate: req.Gate, Profile: req.Profile}}
	for i, m := range rec.Memories {
		pm := previewMemory{ID: m.Memory.ID, Kind: m.Memory.Kind, Score: m.Score, Rank: m.Rank, Profile: m.Profile}
		if i < len(rec.Texts) {
			pm.Text = rec.Texts[i]
		}
		out.Memories = append(out.Memories, pm)
	}
	if rec.Nothing == engine.NothingRelevant {
		if out.BelowFloor, err = h.nearMisses(r.Context(), req); err != nil {
			h.fail(w, err)
			return
		}
	}
	writeJSON(w, http.StatusOK, out)
}

// nearMisses searches again without the floor.
func (h *Handler) nearMisses(ctx context.Context, req engine.RecallRequest) ([]previewMemory, error) {
	s := req.SearchRequest
	s.MinScore, s.Limit = 0, maxBelowFloor
	res, err := h.cfg.Engine.Search(ctx, s)
	var out []previewMemory
	for _, x := range res {
		out = append(out, previewMemory{ID: x.Memory.ID, Kind: x.Memory.Kind, Text: strings.TrimSpace(x.Memory.Content), Score: x.Score, Rank: x.Rank})
	}
	return out, err
}
