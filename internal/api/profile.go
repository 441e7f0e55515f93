package api

import (
	"net/http"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/caddy-memory/memory/inject"
	"github.com/caddy-memory/memory/internal/engine"
	"github.com/caddy-memory/memory/store"
)

// What a person sees of their memories first: the profile (the standing
// facts that ride with every request), grouped as a person thinks of them,
// and their conversations, each named by when it was and how it began.

// profileGroups are the profile's groups, in the order a person reads
// them, with their titles.
var profileGroups = []struct{ id, title string }{
	{"you", "Who you are"},
	{"household", "Family, household and pets"},
	{"home", "Home and belongings"},
	{"work", "Work and study"},
	{"health", "Health and diet"},
	{"preferences", "Preferences and instructions"},
	{"said", "In your own words"},
}

// groupOf is the profile group of a memory of kind with key: by the slot
// the learners key it by (identity:location, family:partner, ...), else by
// its kind.
func groupOf(kind, key string) string {
	slot := func(prefixes ...string) bool {
		for _, p := range prefixes {
			if key == p || strings.HasPrefix(key, p+":") {
				return true
			}
		}
		return false
	}
	switch {
	case kind == "health", slot("identity:diet"):
		return "health"
	case slot("identity:job", "identity:employer", "identity:study", "family:boss", "habit:commute"), kind == "work":
		return "work"
	case slot("identity:location", "identity:home"), kind == "possession":
		return "home"
	case kind == "family", kind == "relationship", slot("identity:relationship"):
		return "household"
	case kind == "preference", kind == "instruction", kind == "habit":
		return "preferences"
	case kind == "said":
		return "said" // what no rule read: extract/notes.go
	}
	return "you"
}

// profileAnswer is the answer to GET /profile.
type profileAnswer struct {
	OwnerID  string          `json:"owner_id"`
	Settings profileSettings `json:"settings"`
	// Kinds are the kinds of memories the profile is made of; the owner's
	// other memories are found only when a question is about them.
	Kinds  []string       `json:"kinds"`
	Groups []profileGroup `json:"groups"`
}

// profileSettings are the proxy's settings that decide what of the
// profile rides.
type profileSettings struct {
	// Profile is false when the proxy sends no profile (profile off, or
	// scope session).
	Profile       bool `json:"profile"`
	ProfileTokens int  `json:"profile_tokens"`
	MaxTokens     int  `json:"max_tokens"`
}

type profileGroup struct {
	Group string        `json:"group"`
	Title string        `json:"title"`
	Facts []profileFact `json:"facts"`
}

type profileFact struct {
	// Order is the fact's place (from 1) in the order the proxy sends the
	// profile: what would harm the owner if missed first.
	Order int `json:"order"`
	// Rides: it leads every chat request's block; a fact that does not fit
	// the profile's budget comes back with a question of its domain.
	Rides  bool          `json:"rides"`
	Memory *store.Memory `json:"memory"`
}

// profile serves GET /profile: the owner's standing facts, as the proxy
// orders them, in the groups a person reads them in (empty groups left
// out), each whole with what it replaced (history).
func (h *Handler) profile(w http.ResponseWriter, r *http.Request) {
	owner, err := h.ownerOf(r, queryOwner(r), true)
	if err != nil {
		h.fail(w, err)
		return
	}
	// The proxy's own settings, as a request with no question has them.
	chat, err := inject.OpenAIChat.Parse([]byte(`{"messages":[{"role":"user","content":""}]}`))
	if err != nil {
		h.fail(w, err)
		return
	}
	plan := h.cfg.Proxy.Plan(owner, "", chat)
	on := plan.Profile && !plan.OnlySession
	tokens := plan.ProfileTokens
	if tokens <= 0 {
		tokens = engine.DefaultProfileTokens
	}
	facts, err := h.cfg.Engine.Profile(owner, tokens, plan.MaxTokens)
	if err != nil {
		h.fail(w, err)
		return
	}
	out := profileAnswer{OwnerID: owner, Kinds: engine.ProfileKinds(), Groups: []profileGroup{},
		Settings: profileSettings{Profile: on, ProfileTokens: tokens, MaxTokens: plan.MaxTokens}}
	for _, g := range profileGroups {
		group := profileGroup{Group: g.id, Title: g.title}
		for i, f := range facts {
			if groupOf(f.Memory.Kind, f.Memory.Key) == g.id {
				group.Facts = append(group.Facts, profileFact{Order: i + 1, Rides: on && f.Rides, Memory: f.Memory})
			}
		}
		if len(group.Facts) > 0 {
			out.Groups = append(out.Groups, group)
		}
	}
	writeJSON(w, http.StatusOK, out)
}

// sessionSummary is one conversation of GET /sessions.
type sessionSummary struct {
	Session string    `json:"session"`
	Turns   int       `json:"turns"`
	First   time.Time `json:"first"`
	Last    time.Time `json:"last"`
	// FirstWords are how the conversation began: the start of its first
	// turn's user text, to name it by.
	FirstWords string `json:"first_words"`
	// OpeningID is the id of that first turn.
	OpeningID uint64 `json:"opening_id"`
}

// maxFirstWords bounds a session's first words, in bytes.
const maxFirstWords = 120

// sessions serves GET /sessions: the owner's conversations, the most
// recently active first, each with its first words, turns and times.
func (h *Handler) sessions(w http.ResponseWriter, r *http.Request) {
	owner, err := h.ownerOf(r, queryOwner(r), true)
	if err != nil {
		h.fail(w, err)
		return
	}
	limit, err := intParam(r, "limit", defaultLimit, maxLimit)
	if err != nil {
		h.fail(w, err)
		return
	}
	all, err := h.cfg.Engine.Sessions(owner)
	if err != nil {
		h.fail(w, err)
		return
	}
	out := make([]sessionSummary, 0, min(limit, len(all)))
	for _, s := range all[:min(limit, len(all))] {
		out = append(out, sessionSummary{Session: s.Session, Turns: s.Turns, First: s.First, Last: s.Last,
			FirstWords: firstWords(s.Opening.Content), OpeningID: s.Opening.ID})
	}
	writeJSON(w, http.StatusOK, map[string]any{"sessions": out, "total": len(all)})
}

// firstWords is the start of a transcript turn's first speaker's words
// ("User: Hi, I'm Maya\nAssistant: ..." is "Hi, I'm Maya"), on one line,
// cut at a word within maxFirstWords.
func firstWords(turn string) string {
	said, _, _ := strings.Cut(turn, "\nAssistant: ")
	if speaker, rest, ok := strings.Cut(said, ": "); ok && len(speaker) <= 64 && !strings.ContainsAny(speaker, "\n.") {
		said = rest
	}
	said = strings.Join(strings.Fields(said), " ")
	if len(said) <= maxFirstWords {
		return said
	}
	cut := maxFirstWords
	for cut > 0 && !utf8.RuneStart(said[cut]) {
		cut--
	}
	if sp := strings.LastIndexByte(said[:cut], ' '); sp > maxFirstWords/2 {
		cut = sp
	}
	return strings.TrimRight(said[:cut], " ,;:") + "…"
}
