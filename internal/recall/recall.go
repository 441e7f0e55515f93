package recall

import (
	"context"
	"slices"
	"strings"

	"github.com/caddy-memory/memory/index"
	"github.com/caddy-memory/memory/internal/block"
)

// Request asks what the proxy injects for a question: the block of the
// owner's relevant memories, within a budget.
type Request struct {
	SearchRequest
	// Profile makes the owner's standing facts (see profile.go) lead the
	// block, within ProfileTokens of it (0: DefaultProfileTokens).
	Profile       bool
	ProfileTokens int
	// MaxTokens and MaxItems bound the block; MaxItems counts the memories
	// retrieved for the question, not the profile's.
	MaxTokens, MaxItems int
}

// Why a recall injects nothing.
const (
	NothingNoQuestion = "no_question"      // the request holds no user text
	NothingSmallTalk  = "small_talk"       // the gate judged it small talk: nothing searched
	NothingRelevant   = "nothing_relevant" // searched; nothing cleared the relevance floor
)

// Recalled is what a recall injects.
type Recalled struct {
	// Block is the block as placed in the request, "" for none.
	Block string
	// Memories are those in the block, in its order (the profile's first;
	// they have no score), and Texts each as the block shows it.
	Memories []Result
	Texts    []string
	// Nothing says why Block is empty.
	Nothing string
}

// Recall is the retrieval the proxy injects: search (gated, if asked), the
// owner's profile, and the block rendered within the budget: the profile
// first, then what the question found that the profile does not already
// say, that is not a question the user once asked, and that no later fact
// contradicts. It counts no use: the caller does, for what it injects.
func (s *Searcher) Recall(ctx context.Context, r Request) (Recalled, error) {
	focus := index.FocusAll
	if r.Gate {
		focus = index.Gate(r.Query)
	}
	switch {
	case strings.TrimSpace(r.Query) == "":
		return Recalled{Nothing: NothingNoQuestion}, nil
	case focus == index.FocusNone:
		return Recalled{Nothing: NothingSmallTalk}, nil
	}
	sr := r.SearchRequest
	sr.shown = true // a recall needs only what its block shows of each
	res, err := s.searchFocused(ctx, sr, focus)
	if err != nil {
		return Recalled{Nothing: NothingRelevant}, err
	}
	var prof *profile
	if r.Profile && !r.OnlySession {
		if prof, err = s.profileOf(r.Owner); err != nil {
			return Recalled{}, err
		}
	}
	// What the question's focus asks to see again: a question the user
	// asked is no memory about them, unless they ask what was discussed.
	keepAsked := r.OnlySession || focus == index.FocusConversation || focus == index.FocusVerbatim
	kept := res[:0:0]
	for _, x := range res {
		if (!keepAsked && s.asked.onlyAsked(x.Memory)) || prof.contradicted(x.Memory) || prof.saysStale(&x) {
			continue
		}
		kept = append(kept, x)
	}
	return s.render(r, prof, kept)
}

// render makes a recall's block: the profile is placed first; what it
// shows is not repeated below it, nor the transcripts its facts say all
// of. Last come the facts the budget left out that fall in the question's
// domains (index.Domains), in the room the question's own finds (kept)
// leave.
func (s *Searcher) render(r Request, prof *profile, kept []Result) (Recalled, error) {
	// The profile, but what the turn being answered taught: a request is
	// never told what it says itself.
	var facts []*fact
	var standing []block.Standing
	if prof != nil {
		facts, standing = make([]*fact, 0, len(prof.facts)), make([]block.Standing, 0, len(prof.facts))
	}
	now := s.now()
	// out is whether a fact of the profile stays out of this request's
	// block: expired since the profile was read, or taught by the turn
	// being answered.
	out := func(f *fact) bool { return !f.active(now) || r.ExcludeTurn != "" && f.turn == r.ExcludeTurn }
	if prof != nil {
		for i := range prof.facts {
			if f := &prof.facts[i]; !out(f) {
				facts = append(facts, f)
				standing = append(standing, f.shown)
			}
		}
	}
	tokens := r.ProfileTokens
	if tokens <= 0 {
		tokens = DefaultProfileTokens
	}
	// The facts that fit their budget, by id and by text.
	var shown []*fact
	var shownStanding []block.Standing
	inProfile, sameText, taught := map[uint64]bool{}, map[uint64]bool{}, map[uint32][]string{}
	for _, i := range block.StandingFits(standing, tokens, r.MaxTokens) {
		st := standing[i]
		st.Rank = 0 // below the question's finds, in the order they fitted
		shown, shownStanding = append(shown, facts[i]), append(shownStanding, st)
		inProfile[facts[i].id] = true
		sameText[facts[i].hash] = true
	}
	// The facts the budget left out that the question's domains bring
	// back, of those it did not find itself.
	var bridged []*fact
	if len(shown) < len(facts) {
		searched := map[uint64]bool{}
		for _, x := range kept {
			searched[x.Memory.ID] = true
		}
		skip := func(f *fact) bool { return searched[f.id] || out(f) }
		for _, i := range prof.bridged(s.cfg.Index.Domains(r.Query), inProfile, skip) {
			bridged = append(bridged, &prof.facts[i])
		}
	}
	for _, f := range bridged {
		sameText[f.hash] = true
	}
	for _, f := range slices.Concat(shown, bridged) {
		if f.turn != "" {
			t := index.TurnHash(f.turn)
			taught[t] = append(taught[t], f.content())
		}
	}
	// What the question found that the profile does not already say, then
	// the facts bridged.
	items := make([]block.Item, 0, len(kept)+len(bridged))
	found := kept[:0]
	for _, x := range kept {
		if inProfile[x.Memory.ID] || sameText[x.textHash()] || saysAll(taught[x.fromTurn()], x.Memory) {
			continue
		}
		found = append(found, x)
		items = append(items, block.Item{Text: x.Memory.Content, Time: x.Memory.UpdatedAt})
	}
	for _, f := range bridged {
		found = append(found, Result{Memory: f.memory()})
		items = append(items, block.Item{Text: f.content()}) // undated, as the profile's
	}
	if len(found) == 0 && len(inProfile) == 0 {
		return Recalled{Nothing: NothingRelevant}, nil
	}
	text, keptStanding, keptItems, texts := block.RenderWith(shownStanding, r.MaxTokens, items, r.MaxTokens, r.MaxItems+len(bridged))
	if text == "" {
		return Recalled{Nothing: NothingRelevant}, nil
	}
	rec := Recalled{Block: text, Texts: texts}
	for _, i := range keptStanding {
		rec.Memories = append(rec.Memories, Result{Memory: shown[i].memory(), Profile: true})
	}
	for _, i := range keptItems {
		rec.Memories = append(rec.Memories, found[i])
	}
	return rec, nil
}
