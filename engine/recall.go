package engine

import (
	"context"
	"strings"

	"github.com/caddy-memory/memory/index"
	"github.com/caddy-memory/memory/inject"
)

// RecallRequest asks what the proxy injects for a question: the block of
// the owner's relevant memories, within a budget.
type RecallRequest struct {
	SearchRequest
	// Identity makes the owner's identity facts ride along with any block.
	Identity bool
	// MaxTokens and MaxItems bound the block.
	MaxTokens, MaxItems int
}

// Why a recall injects nothing.
const (
	NothingNoQuestion = "no_question"      // the request holds no user text
	NothingSmallTalk  = "small_talk"       // the gate judged it small talk: nothing searched
	NothingRelevant   = "nothing_relevant" // searched; nothing cleared the relevance floor
)

// maxIdentity is the most identity facts a block carries.
const maxIdentity = 3

// Recalled is what a recall injects.
type Recalled struct {
	// Block is the block as placed in the request, "" for none.
	Block string
	// Memories are those in the block, in its order (identity facts first;
	// they have no score), and Texts each as the block shows it.
	Memories []Result
	Texts    []string
	// Nothing says why Block is empty.
	Nothing string
}

// Recall is the retrieval the proxy injects: search (gated, if asked),
// the owner's identity facts along with any relevant memory, and the block
// rendered within the budget. It counts no use: the caller does, for what
// it injects (see Used).
func (e *Engine) Recall(ctx context.Context, r RecallRequest) (Recalled, error) {
	switch {
	case strings.TrimSpace(r.Query) == "":
		return Recalled{Nothing: NothingNoQuestion}, nil
	case r.Gate && index.Gate(r.Query) == index.FocusNone:
		return Recalled{Nothing: NothingSmallTalk}, nil
	}
	res, err := e.Search(ctx, r.SearchRequest)
	if err != nil || len(res) == 0 {
		return Recalled{Nothing: NothingRelevant}, err
	}
	if r.Identity {
		ids, err := e.Identity(ctx, r.Owner, maxIdentity)
		if err != nil {
			return Recalled{}, err
		}
		var lead []Result
		for _, m := range ids {
			found := false
			for _, x := range res {
				found = found || x.Memory.ID == m.ID
			}
			if !found {
				lead = append(lead, Result{Memory: m})
			}
		}
		res = append(lead, res...)
	}
	items := make([]inject.Item, len(res))
	for i, m := range res {
		items[i] = inject.Item{Text: m.Memory.Content, Time: m.Memory.UpdatedAt}
	}
	block, kept, texts := inject.Render(items, r.MaxTokens, r.MaxItems)
	if block == "" {
		return Recalled{Nothing: NothingRelevant}, nil
	}
	out := Recalled{Block: block, Texts: texts}
	for _, i := range kept {
		out.Memories = append(out.Memories, res[i])
	}
	return out, nil
}
