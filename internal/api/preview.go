package api

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"

	"github.com/caddy-memory/memory/inject"
	"github.com/caddy-memory/memory/internal/engine"
)

// Proxy is what the API knows of the proxy (the memory handlers) using its
// storage. The API cannot see the handlers' settings itself: they belong to
// another Caddy module, which holds their defaults too.
type Proxy struct {
	// Plan builds the recall the proxy makes for a chat request of owner
	// (an owner id; session is what the proxy's session template would
	// give, "" for none), with the proxy's own budget, floor, scope, gate
	// and profile settings, so the preview is what a chat request would
	// really get. Required: with no handler on the storage, the caller
	// plans as one with the default settings would.
	Plan func(owner, session string, req *inject.Request) engine.RecallRequest
	// Outcomes counts the proxy's chat requests by outcome (injected,
	// nothing_relevant, passed_through, ...) since the process started. Nil
	// shows none.
	Outcomes func() map[string]float64
}

// previewRequest is the body of POST /preview: a question, or the chat
// request the proxy would see (its body, in one of the wire formats).
type previewRequest struct {
	ownerRef
	Query   string `json:"query"`
	Session string `json:"session"`
	// Request is a chat request body, as a client sends it; Format its
	// wire format (default openai_chat).
	Request json.RawMessage `json:"request"`
	Format  string          `json:"format"`
}

// chat is the chat request a preview is for: Request, or a conversation
// of the question alone.
func (in previewRequest) chat() (*inject.Request, error) {
	switch {
	case len(in.Request) > 0 && in.Query != "":
		return nil, badRequest("give the question (query) or the chat request (request), not both")
	case len(in.Request) == 0:
		body, _ := json.Marshal(map[string]any{"messages": []any{map[string]string{"role": "user", "content": in.Query}}})
		return inject.OpenAIChat.Parse(body)
	}
	d := inject.OpenAIChat
	if in.Format != "" {
		if d = inject.ByName(in.Format); d == nil {
			return nil, badRequest("format must be %s, not %q", inject.Names(), in.Format)
		}
	}
	req, err := d.Parse(in.Request)
	if err != nil {
		return nil, badRequest("request is not a chat request in format %s: %v", d.Name(), err)
	}
	return req, nil
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
	chat, err := in.chat()
	if err != nil {
		h.fail(w, err)
		return
	}
	req := h.cfg.Proxy.Plan(owner, in.Session, chat)
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
