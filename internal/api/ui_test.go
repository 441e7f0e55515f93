package api_test

import (
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/caddy-memory/memory/inject"
	"github.com/caddy-memory/memory/internal/api"
	"github.com/caddy-memory/memory/internal/engine"
)

func TestDashboardAssets(t *testing.T) {
	e := openEngine(t)
	for _, mode := range []api.Mode{api.Admin, api.Self} {
		h := newHandler(e, mode)
		rec := do(t, h, "GET", "/ui/", "", "")
		if rec.Code != http.StatusOK || !strings.HasPrefix(rec.Header().Get("Content-Type"), "text/html") {
			t.Fatalf("%s: GET /ui/ = %d %q", mode, rec.Code, rec.Header().Get("Content-Type"))
		}
		if want := `data-mode="` + string(mode) + `"`; !strings.Contains(rec.Body.String(), want) {
			t.Errorf("%s: the page does not say %s", mode, want)
		}
		if csp := rec.Header().Get("Content-Security-Policy"); !strings.Contains(csp, "default-src 'self'") {
			t.Errorf("%s: Content-Security-Policy %q lets the page load others' code", mode, csp)
		}
	}
	h := newHandler(e, api.Self)
	for path, ctype := range map[string]string{"/ui/app.js": "text/javascript", "/ui/app.css": "text/css", "/ui/index.html": "text/html"} {
		rec := do(t, h, "GET", path, "", "")
		if rec.Code != http.StatusOK || !strings.HasPrefix(rec.Header().Get("Content-Type"), ctype) || rec.Body.Len() == 0 {
			t.Errorf("GET %s = %d %q, %d bytes", path, rec.Code, rec.Header().Get("Content-Type"), rec.Body.Len())
		}
	}
	// Every script and style is the page's own: nothing from a CDN.
	page := do(t, h, "GET", "/ui/", "", "").Body.String()
	for _, bad := range []string{"http://", "https://", "//cdn"} {
		if strings.Contains(page, `src="`+bad) || strings.Contains(page, `href="`+bad) {
			t.Errorf("the page loads %s…", bad)
		}
	}
	for _, path := range []string{"/ui/nope.js", "/ui/../api.go", "/ui/%2e%2e/api.go", "/ui/ui_test.go"} {
		apiErr(t, do(t, h, "GET", path, "", ""), http.StatusNotFound, "not_found")
	}
	// Without the slash, the page's relative URLs would miss the API: the
	// redirect is relative, as the API does not know where it is mounted.
	rec := do(t, h, "GET", "/ui", "", "")
	if rec.Code != http.StatusFound || rec.Header().Get("Location") != "ui/" {
		t.Errorf("GET /ui = %d, Location %q; want 302 to ui/", rec.Code, rec.Header().Get("Location"))
	}
	// The mount's root opens the dashboard, wherever the API is mounted:
	// the redirect is relative, as for /ui.
	for _, mode := range []api.Mode{api.Admin, api.Self} {
		rec := do(t, newHandler(e, mode), "GET", "/", "", "")
		if rec.Code != http.StatusFound || rec.Header().Get("Location") != "ui/" {
			t.Errorf("%s: GET / = %d, Location %q; want 302 to ui/", mode, rec.Code, rec.Header().Get("Location"))
		}
	}
	// The page names its own icon, which the API serves: the browser's
	// /favicon.ico goes to whatever the site's root proxies to.
	if !strings.Contains(page, `<link rel="icon" href="favicon.svg"`) {
		t.Error("the page names no icon of its own")
	}
	if rec := do(t, h, "GET", "/ui/favicon.svg", "", ""); rec.Code != http.StatusOK || rec.Header().Get("Content-Type") != "image/svg+xml" ||
		!strings.Contains(rec.Body.String(), "<svg") {
		t.Errorf("GET /ui/favicon.svg = %d %q", rec.Code, rec.Header().Get("Content-Type"))
	}
	// Mounted, /memory/ui/ reaches the API as /ui: the page, not a loop.
	req := httptest.NewRequest("GET", "/ui", nil)
	req.RequestURI = "/memory/ui/?x=1"
	rec = httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), `data-mode="self"`) {
		t.Errorf("GET /memory/ui/ mounted = %d, want the page", rec.Code)
	}
}

type previewAnswer struct {
	Block    string `json:"block"`
	Memories []struct {
		ID    uint64  `json:"id"`
		Text  string  `json:"text"`
		Score float64 `json:"score"`
	} `json:"memories"`
	Nothing    string `json:"nothing"`
	Reason     string `json:"reason"`
	BelowFloor []struct {
		ID    uint64  `json:"id"`
		Score float64 `json:"score"`
	} `json:"below_floor"`
	Settings struct {
		MaxItems int     `json:"max_items"`
		MinScore float64 `json:"min_score"`
	} `json:"settings"`
}

// TestDashboardOpensOnADamagedStorage: a storage found damaged at start
// answers every route 503 but the dashboard, which shows the damage and
// what to run: its files, and the mount's root that leads to it.
func TestDashboardOpensOnADamagedStorage(t *testing.T) {
	// No engine: a storage found damaged at start has none.
	plan := func(string, string, *inject.Request) engine.RecallRequest { return engine.RecallRequest{} }
	h := api.New(api.Config{Mode: api.Self, Proxy: api.Proxy{Plan: plan},
		Damaged: func() error { return errors.New("the store file is damaged: run 'caddy memory salvage'") }})
	for path, want := range map[string]int{"/": http.StatusFound, "/ui/": http.StatusOK, "/ui/app.js": http.StatusOK, "/health": http.StatusServiceUnavailable, "/memories": http.StatusServiceUnavailable} {
		if rec := do(t, h, "GET", path, "", ""); rec.Code != want {
			t.Errorf("GET %s on a damaged storage = %d %s, want %d", path, rec.Code, rec.Body, want)
		}
	}
}

func TestPreview(t *testing.T) {
	e := openEngine(t)
	admin, self := newHandler(e, api.Admin), newHandler(e, api.Self)
	peanuts := create(t, admin, api.Admin, "alice", "Alice is allergic to peanuts")
	cello := create(t, admin, api.Admin, "alice", "Alice plays the cello in an orchestra")
	create(t, admin, api.Admin, "bob", "Bob is allergic to cats")

	const question = "What am I allergic to?"
	var a previewAnswer
	ok(t, do(t, self, "POST", "/preview", jsonBody(map[string]string{"query": question}), "alice"), http.StatusOK, &a)
	if a.Block == "" || !strings.Contains(a.Block, "Alice is allergic to peanuts") || a.Nothing != "" {
		t.Fatalf("preview for alice = %+v, want a block with her peanut allergy", a)
	}
	if strings.Contains(a.Block, "cats") {
		t.Errorf("alice's block carries bob's memory:\n%s", a.Block)
	}
	if len(a.Memories) == 0 || a.Memories[0].ID != peanuts.ID {
		t.Fatalf("preview memories = %+v, want memory %d first", a.Memories, peanuts.ID)
	}
	for _, m := range a.Memories {
		if m.Score <= 0 || !strings.Contains(a.Block, m.Text) {
			t.Errorf("memory %+v: want its score and the text the block shows", m)
		}
	}
	if a.Settings.MinScore != engine.DefaultMinScore || a.Settings.MaxItems != 10 {
		t.Errorf("settings = %+v, want the proxy's defaults", a.Settings)
	}
	// The preview is what the proxy injects: the engine's own recall.
	rec, err := e.Recall(t.Context(), engine.RecallRequest{SearchRequest: engine.SearchRequest{Owner: e.OwnerID("alice"),
		Query: question, Limit: 10, MinScore: engine.DefaultMinScore, Gate: true}, MaxTokens: 800, MaxItems: 10})
	if err != nil || rec.Block != a.Block {
		t.Errorf("preview block differs from the recall's (err %v):\n%q\n%q", err, a.Block, rec.Block)
	}

	// Why nothing: small talk, and a question no memory covers enough of.
	ok(t, do(t, self, "POST", "/preview", `{"query":"thanks!"}`, "alice"), http.StatusOK, &a)
	if a.Block != "" || a.Nothing != engine.NothingSmallTalk || a.Reason == "" {
		t.Errorf("small talk preview = %+v, want nothing with the reason small_talk", a)
	}
	a = previewAnswer{}
	ok(t, do(t, self, "POST", "/preview", `{"query":"Which volcanoes erupted near the orchestra in Iceland last winter?"}`, "alice"), http.StatusOK, &a)
	if a.Block != "" || len(a.Memories) != 0 || a.Nothing != engine.NothingRelevant || !strings.Contains(a.Reason, "floor") {
		t.Errorf("off-topic preview = %+v, want nothing_relevant explained by the floor", a)
	}
	if len(a.BelowFloor) != 1 || a.BelowFloor[0].ID != cello.ID || a.BelowFloor[0].Score <= 0 {
		t.Errorf("below_floor = %+v, want the orchestra memory the floor kept out, with its score", a.BelowFloor)
	}

	// Self mode previews only the caller's memories; admin names an owner.
	ok(t, do(t, self, "POST", "/preview", `{"query":"Who is allergic to peanuts?"}`, "bob"), http.StatusOK, &a)
	if strings.Contains(a.Block, "peanuts") {
		t.Errorf("bob's preview shows alice's memory:\n%s", a.Block)
	}
	apiErr(t, do(t, self, "POST", "/preview", `{"query":"peanuts","owner":"alice"}`, "bob"), http.StatusForbidden, "forbidden")
	apiErr(t, do(t, self, "POST", "/preview", `{"query":"peanuts"}`, ""), http.StatusUnauthorized, "unauthorized")
	apiErr(t, do(t, admin, "POST", "/preview", `{"query":"peanuts"}`, ""), http.StatusBadRequest, "bad_request")
	ok(t, do(t, admin, "POST", "/preview", jsonBody(map[string]string{"query": question, "owner": "alice"}), ""), http.StatusOK, &a)
	if !strings.Contains(a.Block, "peanuts") {
		t.Errorf("admin preview for alice = %+v", a)
	}
}

// The preview recalls with the proxy's settings, not the API's guess.
func TestPreviewUsesProxySettings(t *testing.T) {
	e := openEngine(t)
	var asked []string
	h := newAPI(api.Config{Engine: e, Mode: api.Self, Caller: caller, Proxy: api.Proxy{
		Plan: func(owner, session string, req *inject.Request) engine.RecallRequest {
			asked = append(asked, owner+"|"+session+"|"+req.Query())
			return engine.RecallRequest{SearchRequest: engine.SearchRequest{Owner: owner, Query: req.Query(), Limit: 1}, MaxTokens: 800, MaxItems: 1}
		},
	}})
	create(t, h, api.Self, "carol", "Carol likes green tea")
	create(t, h, api.Self, "carol", "Carol likes black tea")
	var a previewAnswer
	ok(t, do(t, h, "POST", "/preview", `{"query":"What tea does Carol like?","session":"s1"}`, "carol"), http.StatusOK, &a)
	if len(a.Memories) != 1 || a.Settings.MaxItems != 1 || a.Settings.MinScore != 0 {
		t.Errorf("preview = %+v, want one memory under the proxy's max_items 1 and floor 0", a)
	}
	if want := e.OwnerID("carol") + "|s1|What tea does Carol like?"; len(asked) != 1 || asked[0] != want {
		t.Errorf("the proxy was asked %q, want %q", asked, want)
	}
}

func TestStatsOwners(t *testing.T) {
	e := openEngine(t)
	admin, self := newHandler(e, api.Admin), newHandler(e, api.Self)
	create(t, admin, api.Admin, "alice", "Alice lives in Lyon")
	time.Sleep(2 * time.Millisecond) // distinct activity times
	gone := create(t, admin, api.Admin, "bob", "Bob lives in Oslo")
	create(t, admin, api.Admin, "bob", "Bob drives a tram")
	ok(t, do(t, admin, "DELETE", fmt.Sprintf("/memories/%d", gone.ID), "", ""), http.StatusOK, nil)

	var a struct {
		Owners []struct {
			OwnerID      string         `json:"owner_id"`
			Active       int            `json:"active"`
			Deleted      int            `json:"deleted"`
			ByKind       map[string]int `json:"by_kind"`
			LastActivity time.Time      `json:"last_activity"`
		} `json:"owners"`
		Total int `json:"total"`
	}
	ok(t, do(t, admin, "GET", "/stats/owners", "", ""), http.StatusOK, &a)
	if a.Total != 2 || len(a.Owners) != 2 {
		t.Fatalf("owners = %+v, want alice and bob", a)
	}
	bob, alice := a.Owners[0], a.Owners[1]
	if bob.OwnerID != e.OwnerID("bob") || alice.OwnerID != e.OwnerID("alice") {
		t.Errorf("owners %s, %s: want bob (the latest active) first", bob.OwnerID, alice.OwnerID)
	}
	if bob.Active != 1 || bob.Deleted != 1 || alice.Active != 1 || alice.Deleted != 0 || bob.ByKind["note"]+bob.ByKind[""] != 1 {
		t.Errorf("counts: bob %+v, alice %+v", bob, alice)
	}
	if !bob.LastActivity.After(alice.LastActivity) || time.Since(bob.LastActivity) > time.Minute {
		t.Errorf("last activity: bob %v, alice %v", bob.LastActivity, alice.LastActivity)
	}
	ok(t, do(t, admin, "GET", "/stats/owners?limit=1", "", ""), http.StatusOK, &a)
	if len(a.Owners) != 1 || a.Total != 2 {
		t.Errorf("limit=1 gave %d owners of %d", len(a.Owners), a.Total)
	}
	apiErr(t, do(t, admin, "GET", "/stats/owners?limit=0", "", ""), http.StatusBadRequest, "bad_request")
	apiErr(t, do(t, self, "GET", "/stats/owners", "", "alice"), http.StatusForbidden, "forbidden")
}

func TestStatsActivity(t *testing.T) {
	e := openEngine(t)
	outcomes := map[string]float64{"injected": 3, "nothing_relevant": 1}
	admin := newAPI(api.Config{Engine: e, Mode: api.Admin, Proxy: api.Proxy{Outcomes: func() map[string]float64 { return outcomes }}})
	self := newAPI(api.Config{Engine: e, Mode: api.Self, Caller: caller, Proxy: api.Proxy{Outcomes: func() map[string]float64 { return outcomes }}})
	for _, c := range []string{"Dan likes jazz", "Dan likes blues"} {
		ok(t, do(t, admin, "POST", "/memories", jsonBody(map[string]any{"owner": "dan", "content": c, "kind": "preference"}), ""), http.StatusCreated, nil)
	}
	ok(t, do(t, admin, "POST", "/memories", jsonBody(map[string]any{"owner": "erin", "content": "Erin is a nurse", "kind": "identity"}), ""), http.StatusCreated, nil)

	type days struct {
		Days []struct {
			Day    string         `json:"day"`
			ByKind map[string]int `json:"by_kind"`
		} `json:"days"`
		Outcomes map[string]float64 `json:"outcomes"`
	}
	today := time.Now().UTC().Format(time.DateOnly)
	var a days
	ok(t, do(t, admin, "GET", "/stats/activity?days=7", "", ""), http.StatusOK, &a)
	if len(a.Days) != 7 || a.Days[6].Day != today {
		t.Fatalf("days = %+v, want 7 ending today (%s)", a.Days, today)
	}
	if got := a.Days[6].ByKind; got["preference"] != 2 || got["identity"] != 1 {
		t.Errorf("today, every owner: %v, want 2 preference and 1 identity", got)
	}
	if a.Outcomes["injected"] != 3 {
		t.Errorf("admin outcomes = %v, want the proxy's counts", a.Outcomes)
	}
	a = days{}
	ok(t, do(t, self, "GET", "/stats/activity", "", "erin"), http.StatusOK, &a)
	if len(a.Days) != 30 || a.Days[29].ByKind["identity"] != 1 || a.Days[29].ByKind["preference"] != 0 {
		t.Errorf("erin's activity = %+v, want only her identity fact", a.Days[len(a.Days)-1])
	}
	if a.Outcomes != nil {
		t.Errorf("self mode sees everyone's request outcomes: %v", a.Outcomes)
	}
	apiErr(t, do(t, admin, "GET", "/stats/activity?days=1000", "", ""), http.StatusBadRequest, "bad_request")
}
