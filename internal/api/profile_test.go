package api_test

import (
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/caddy-memory/memory/inject"
	"github.com/caddy-memory/memory/internal/api"
	"github.com/caddy-memory/memory/internal/engine"
	"github.com/caddy-memory/memory/store"
)

type profileAnswer struct {
	OwnerID  string `json:"owner_id"`
	Settings struct {
		Profile       bool `json:"profile"`
		ProfileTokens int  `json:"profile_tokens"`
		MaxTokens     int  `json:"max_tokens"`
	} `json:"settings"`
	Kinds  []string `json:"kinds"`
	Groups []struct {
		Group string `json:"group"`
		Title string `json:"title"`
		Facts []struct {
			Order  int           `json:"order"`
			Rides  bool          `json:"rides"`
			Memory *store.Memory `json:"memory"`
		} `json:"facts"`
	} `json:"groups"`
}

// group is the group's facts' contents, in the answer's order.
func (a profileAnswer) group(id string) []string {
	for _, g := range a.Groups {
		if g.Group == id {
			var out []string
			for _, f := range g.Facts {
				out = append(out, f.Memory.Content)
			}
			return out
		}
	}
	return nil
}

// said ingests what a user said, one user turn each, as one conversation.
func said(t *testing.T, h *api.Handler, as, session string, lines ...string) {
	t.Helper()
	var turns []map[string]any
	for _, l := range lines {
		turns = append(turns, map[string]any{"role": "user", "content": l})
	}
	ok(t, do(t, h, "POST", "/ingest", jsonBody(map[string]any{"session": session, "turns": turns}), as), http.StatusOK, nil)
}

// A person who said eight things about themselves, and asked a question:
// GET /profile holds those facts (not the transcripts, not the question),
// in the groups a person reads them in, each with its place in the order
// the proxy sends them (health and diet first), what it replaced kept.
func TestProfile(t *testing.T) {
	e := openEngine(t)
	self, admin := newHandler(e, api.Self), newHandler(e, api.Admin)
	said(t, self, "maya", "s1",
		"Hi, my name is Maya Lindqvist.",
		"I live in Porto, near the river.",
		"I work as a nurse at Santo António hospital.",
		"My husband is called Tomás.",
		"I'm allergic to peanuts.",
		"I'm vegetarian.",
		"Please always answer in metric units.",
		"I prefer short answers.",
		"Actually, I moved to Lisbon last month.",
		"What's a good recipe for dinner tonight?")
	said(t, self, "bob", "s9", "I'm allergic to cats.")

	var a profileAnswer
	ok(t, do(t, self, "GET", "/profile", "", "maya"), http.StatusOK, &a)
	var groups []string
	for _, g := range a.Groups {
		groups = append(groups, g.Group)
		if g.Title == "" {
			t.Errorf("group %s has no title", g.Group)
		}
	}
	if want := []string{"you", "household", "home", "work", "health", "preferences"}; !slices.Equal(groups, want) {
		t.Errorf("groups %v, want %v", groups, want)
	}
	for id, want := range map[string][]string{
		"you":         {"User's name is Maya Lindqvist."},
		"household":   {"User's husband is named Tomás."},
		"home":        {"User moved to Lisbon last month and lives there."},
		"work":        {"User works as a nurse at Santo António hospital."},
		"health":      {"User is allergic to peanuts.", "User is vegetarian."},
		"preferences": {"User's standing instruction: always answer in metric units.", "User prefers short answers."},
	} {
		if got := a.group(id); !slices.Equal(got, want) {
			t.Errorf("group %s = %q, want %q", id, got, want)
		}
	}
	orders := map[string]int{}
	for _, g := range a.Groups {
		for _, f := range g.Facts {
			orders[f.Memory.Content] = f.Order
			if !f.Rides {
				t.Errorf("%q does not ride within the default budget", f.Memory.Content)
			}
			if f.Memory.Kind == "turn" || strings.Contains(f.Memory.Content, "recipe") || strings.Contains(f.Memory.Content, "cats") {
				t.Errorf("the profile holds %q", f.Memory.Content)
			}
			if f.Memory.Content == "User moved to Lisbon last month and lives there." &&
				(len(f.Memory.History) != 1 || !strings.Contains(f.Memory.History[0].Content, "Porto")) {
				t.Errorf("the home fact's history %+v, want the Porto it replaced", f.Memory.History)
			}
		}
	}
	if len(orders) != 8 || orders["User is allergic to peanuts."] != 1 || orders["User's name is Maya Lindqvist."] <= orders["User is vegetarian."] {
		t.Errorf("orders %v: want 8 facts, health and diet first", orders)
	}
	if !a.Settings.Profile || a.Settings.ProfileTokens != engine.DefaultProfileTokens || a.OwnerID != e.OwnerID("maya") {
		t.Errorf("settings %+v, owner %s", a.Settings, a.OwnerID)
	}
	if !slices.Contains(a.Kinds, "identity") || slices.Contains(a.Kinds, "turn") {
		t.Errorf("kinds %v", a.Kinds)
	}

	// The order is the proxy's: what a recall puts first in the block.
	rec, err := e.Recall(t.Context(), engine.RecallRequest{SearchRequest: engine.SearchRequest{Owner: e.OwnerID("maya"),
		Query: "What should I cook tonight?", Limit: 10, MinScore: engine.DefaultMinScore}, Profile: true, MaxTokens: 800, MaxItems: 10})
	if err != nil {
		t.Fatal(err)
	}
	byOrder := map[int]uint64{}
	for _, g := range a.Groups {
		for _, f := range g.Facts {
			byOrder[f.Order] = f.Memory.ID
		}
	}
	inBlock := 0
	for i, m := range rec.Memories {
		if m.Profile {
			inBlock++
			if byOrder[i+1] != m.Memory.ID {
				t.Errorf("the block's profile fact %d is memory %d, the profile's is %d", i+1, m.Memory.ID, byOrder[i+1])
			}
		}
	}
	if inBlock != 8 {
		t.Errorf("the block holds %d profile facts, want 8:\n%s", inBlock, rec.Block)
	}

	// The admin names the owner; self mode names none.
	var b profileAnswer
	ok(t, do(t, admin, "GET", "/profile?owner=maya", "", ""), http.StatusOK, &b)
	if len(b.Groups) != len(a.Groups) || b.OwnerID != a.OwnerID {
		t.Errorf("admin's profile of maya = %+v", b)
	}
	apiErr(t, do(t, admin, "GET", "/profile", "", ""), http.StatusBadRequest, "bad_request")
	apiErr(t, do(t, self, "GET", "/profile?owner=bob", "", "maya"), http.StatusForbidden, "forbidden")
	apiErr(t, do(t, self, "GET", "/profile", "", ""), http.StatusUnauthorized, "unauthorized")

	// An edit is seen at once, the old text in its history.
	id := a.Groups[0].Facts[0].Memory.ID
	ok(t, do(t, self, "PATCH", "/memories/"+itoa(id), `{"content":"User's name is Maya Lind."}`, "maya"), http.StatusOK, nil)
	ok(t, do(t, self, "GET", "/profile", "", "maya"), http.StatusOK, &b)
	if got := b.Groups[0].Facts[0].Memory; got.Content != "User's name is Maya Lind." || len(got.History) != 1 {
		t.Errorf("after the edit: %+v", got)
	}
}

func itoa(id uint64) string { return strconv.FormatUint(id, 10) }

// The profile says what rides with the proxy's settings: a small budget
// leaves the preferences to questions of their domain; profile off, none.
func TestProfileFollowsTheProxysSettings(t *testing.T) {
	e := openEngine(t)
	plan := engine.RecallRequest{Profile: true, ProfileTokens: 12, MaxTokens: 800}
	h := newAPI(api.Config{Engine: e, Mode: api.Self, Caller: caller, Proxy: api.Proxy{
		Plan: func(owner, session string, req *inject.Request) engine.RecallRequest { return plan },
	}})
	said(t, h, "ana", "s1", "I'm allergic to peanuts.", "I prefer short answers.", "I live in Zurich.")
	var a profileAnswer
	ok(t, do(t, h, "GET", "/profile", "", "ana"), http.StatusOK, &a)
	rides := map[string]bool{}
	for _, g := range a.Groups {
		for _, f := range g.Facts {
			rides[f.Memory.Content] = f.Rides
		}
	}
	if len(rides) != 3 || !rides["User is allergic to peanuts."] || rides["User prefers short answers."] {
		t.Errorf("rides %v with profile_tokens 12: want the allergy, not the preference", rides)
	}
	plan.Profile = false
	ok(t, do(t, h, "GET", "/profile", "", "ana"), http.StatusOK, &a)
	if a.Settings.Profile {
		t.Error("profile off, and the answer says the profile is sent")
	}
	for _, g := range a.Groups {
		for _, f := range g.Facts {
			if f.Rides {
				t.Errorf("profile off, and %q rides", f.Memory.Content)
			}
		}
	}
}

type sessionsAnswer struct {
	Sessions []struct {
		Session    string    `json:"session"`
		Turns      int       `json:"turns"`
		First      time.Time `json:"first"`
		Last       time.Time `json:"last"`
		FirstWords string    `json:"first_words"`
		OpeningID  uint64    `json:"opening_id"`
	} `json:"sessions"`
	Total int `json:"total"`
}

// GET /sessions names each conversation by how it began, newest first;
// GET /memories?exclude_kind leaves transcripts (and any kind) out.
func TestSessions(t *testing.T) {
	e := openEngine(t)
	self, admin := newHandler(e, api.Self), newHandler(e, api.Admin)
	said(t, self, "kim", "c-531c633c0a1b", "I'm planning a trip to Japan in April with my sister and her two kids.", "What should we pack?")
	time.Sleep(5 * time.Millisecond)
	said(t, self, "kim", "c-77aa", "Hello there")
	said(t, self, "lee", "c-0000", "Lee's secret conversation")

	var a sessionsAnswer
	ok(t, do(t, self, "GET", "/sessions", "", "kim"), http.StatusOK, &a)
	if a.Total != 2 || len(a.Sessions) != 2 {
		t.Fatalf("sessions %+v, want kim's two", a)
	}
	newest, older := a.Sessions[0], a.Sessions[1]
	if newest.Session != "c-77aa" || newest.FirstWords != "Hello there" || newest.Turns != 1 {
		t.Errorf("newest %+v", newest)
	}
	if older.Session != "c-531c633c0a1b" || older.Turns != 2 || older.FirstWords != "I'm planning a trip to Japan in April with my sister and her two kids." ||
		older.First.IsZero() || older.Last.Before(older.First) || older.OpeningID == 0 {
		t.Errorf("older %+v", older)
	}
	ok(t, do(t, self, "GET", "/sessions?limit=1", "", "kim"), http.StatusOK, &a)
	if len(a.Sessions) != 1 || a.Total != 2 {
		t.Errorf("limit=1: %+v", a)
	}
	ok(t, do(t, admin, "GET", "/sessions?owner=lee", "", ""), http.StatusOK, &a)
	if len(a.Sessions) != 1 || a.Sessions[0].FirstWords != "Lee's secret conversation" {
		t.Errorf("lee's sessions %+v", a)
	}
	apiErr(t, do(t, admin, "GET", "/sessions", "", ""), http.StatusBadRequest, "bad_request")
	apiErr(t, do(t, self, "GET", "/sessions?limit=0", "", "kim"), http.StatusBadRequest, "bad_request")

	var l listAnswer
	ok(t, do(t, self, "GET", "/memories?exclude_kind=turn", "", "kim"), http.StatusOK, &l)
	for _, m := range l.Memories {
		if m.Kind == "turn" {
			t.Errorf("exclude_kind=turn lists %q", m.Content)
		}
	}
	ok(t, do(t, self, "GET", "/memories?exclude_kind=plan,%20note", "", "kim"), http.StatusOK, &l)
	if len(l.Memories) != 3 {
		t.Errorf("exclude_kind=plan, note: %d memories, want the 3 turns", len(l.Memories))
	}
}

// A long first turn is named by its first words, cut at a word.
func TestSessionsFirstWordsAreShort(t *testing.T) {
	e := openEngine(t)
	h := newHandler(e, api.Self)
	long := strings.Repeat("Kalimera, this conversation starts with a very long opening line ", 6)
	said(t, h, "zoe", "s", long)
	var a sessionsAnswer
	ok(t, do(t, h, "GET", "/sessions", "", "zoe"), http.StatusOK, &a)
	w := a.Sessions[0].FirstWords
	if len(w) > 130 || !strings.HasPrefix(w, "Kalimera, this") || !strings.HasSuffix(w, "…") || strings.Contains(w, "  ") {
		t.Errorf("first words %q", w)
	}
	if !strings.HasPrefix(long, strings.TrimSuffix(w, "…")) {
		t.Errorf("first words %q are not the turn's start", w)
	}
}
