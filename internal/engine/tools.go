package engine

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/caddy-memory/memory/store"
)

// The model's own memory tools (in the proxy, and over MCP) save and
// recall through these two entry points, for the owner of the request.

// Scopes of a recall.
const (
	ScopeFacts      = "facts"      // facts: everything but transcripts and episodes
	ScopeEpisodes   = "episodes"   // session digests
	ScopeTranscript = "transcript" // raw turns
	ScopeAll        = "all"
)

// ErrBadScope is returned for a scope that is none of the Scope values.
var ErrBadScope = errors.New(`scope must be "facts", "episodes", "transcript" or "all"`)

// scopeKinds is the search's restriction for a scope.
func scopeKinds(scope string) (only, exclude []string, err error) {
	switch scope {
	case ScopeFacts:
		return nil, []string{"turn", "episode"}, nil
	case ScopeEpisodes:
		return []string{"episode"}, nil, nil
	case ScopeTranscript:
		return []string{"turn"}, nil, nil
	case ScopeAll, "":
		return nil, nil, nil
	}
	return nil, nil, ErrBadScope
}

// Recollection is a memory a recall returns.
type Recollection struct {
	ID       uint64 `json:"id"`
	Content  string `json:"content"`
	Category string `json:"category"`
	// Relevance is the memory's rank against the best of the recall, 0 to 1.
	Relevance float64   `json:"relevance"`
	CreatedAt time.Time `json:"created_at"`
}

// RecallMemory returns up to limit of owner's memories most relevant to
// query, within scope, and counts them as used. Unlike the proxy's block,
// it has no relevance floor: the model asked.
func (e *Engine) RecallMemory(ctx context.Context, owner, query, scope string, limit int) ([]Recollection, error) {
	if strings.TrimSpace(query) == "" {
		return nil, errors.New("query is empty: say what to recall")
	}
	only, exclude, err := scopeKinds(scope)
	if err != nil {
		return nil, err
	}
	res, err := e.Search(ctx, SearchRequest{Owner: owner, Query: query, Limit: limit, Kinds: only, ExcludeKinds: exclude})
	if err != nil {
		return nil, err
	}
	out := make([]Recollection, len(res))
	ids := make([]uint64, len(res))
	for i, r := range res {
		rel := 0.0
		if res[0].Rank > 0 {
			rel = float64(int(100*r.Rank/res[0].Rank+0.5)) / 100
		}
		out[i] = Recollection{ID: r.Memory.ID, Content: r.Memory.Content, Category: r.Memory.Kind, Relevance: rel, CreatedAt: r.Memory.CreatedAt}
		ids[i] = r.Memory.ID
	}
	e.Used(owner, ids...)
	return out, nil
}

// SaveMemory stores content for owner as a memory the model chose to keep
// (source), of kind category ("note" when empty), keyed by its text, so
// saving it again is another mention of it; it returns once searchable.
func (e *Engine) SaveMemory(ctx context.Context, owner, content, category, source string) (*store.Memory, store.Op, error) {
	content = strings.TrimSpace(content)
	if content == "" {
		return nil, "", errors.New("content is empty: say what to remember")
	}
	if err := store.CheckContent(content); err != nil {
		return nil, "", err
	}
	if category == "" {
		category = "note"
	}
	res, err := e.Remember(ctx, OwnedPut{Owner: owner, Put: store.Put{Kind: category, Content: content, Source: source}})
	if err != nil {
		return nil, "", err
	}
	return res[0].Memory, res[0].Op, nil
}
