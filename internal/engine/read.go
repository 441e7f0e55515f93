package engine

import (
	"context"

	"github.com/caddy-memory/memory/internal/recall"
	"github.com/caddy-memory/memory/store"
)

// The read path's entry points. Searching, the profile and the block a
// recall injects are internal/recall's: the engine hands it the store, the
// index, the postings it keeps and embedding recall, and answers with it.

// The read path's requests and answers, as the entry points take and give
// them.
type (
	SearchRequest = recall.SearchRequest
	Result        = recall.Result
	RecallRequest = recall.Request
	Recalled      = recall.Recalled
)

// The read path's defaults, and why a recall injects nothing.
const (
	DefaultMinScore       = recall.DefaultMinScore
	DefaultProfileTokens  = recall.DefaultProfileTokens
	DefaultLocalSearchMax = recall.DefaultLocalSearchMax

	NothingNoQuestion = recall.NothingNoQuestion
	NothingSmallTalk  = recall.NothingSmallTalk
	NothingRelevant   = recall.NothingRelevant
)

// Search returns the owner's most relevant active memories, best first. It
// is the retrieval the proxy injects from and the API answers with.
func (e *Engine) Search(ctx context.Context, r SearchRequest) ([]Result, error) {
	e.rest.touch()
	return e.recall.Search(ctx, r)
}

// Recall is the retrieval the proxy injects (see recall.Searcher.Recall).
// It counts no use: the caller does, for what it injects (see Used).
func (e *Engine) Recall(ctx context.Context, r RecallRequest) (Recalled, error) {
	e.rest.touch()
	return e.recall.Recall(ctx, r)
}

// Profile returns owner's standing facts in the order they ride, each
// with how it has been used, and which of them fit within profileTokens
// (0: DefaultProfileTokens) of a block of maxTokens (0: no bound but
// profileTokens); see recall.Searcher.Profile.
func (e *Engine) Profile(owner string, profileTokens, maxTokens int) ([]recall.ProfileFact, error) {
	var out []recall.ProfileFact
	err := e.store.View(func(tx *store.Tx) error {
		var err error
		out, err = e.recall.Profile(tx, owner, profileTokens, maxTokens)
		for _, f := range out {
			e.withUsage(tx, f.Memory)
		}
		return err
	})
	return out, err
}

// ProfileKinds are the kinds of memories an owner's profile is made of.
func ProfileKinds() []string { return recall.ProfileKinds() }

// ConversationOf returns the conversation a provider response id belongs to,
// for requests that continue from a response rather than resend history.
func (e *Engine) ConversationOf(owner, ref string) string {
	return e.store.Conversation(owner, ref)
}
