package api_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/caddy-memory/memory/index"
	"github.com/caddy-memory/memory/inject"
	"github.com/caddy-memory/memory/internal/api"
	"github.com/caddy-memory/memory/internal/engine"
	"github.com/caddy-memory/memory/internal/engine/enginetest"
	"github.com/caddy-memory/memory/internal/pgtest/pgshared"
	"github.com/caddy-memory/memory/store"
)

func openEngine(t *testing.T) *engine.Engine {
	t.Helper()
	dir := t.TempDir()
	return enginetest.Open(t, engine.Config{Dir: dir, Shared: pgshared.For(t, dir), Shards: 2, LockTimeout: 500 * time.Millisecond})
}

func caller(r *http.Request) string { return r.Header.Get("Authorization") }

func newHandler(e *engine.Engine, mode api.Mode) *api.Handler {
	return newAPI(api.Config{Engine: e, Mode: mode, Caller: caller})
}

// newAPI is api.New, planning recalls (unless cfg says how) as a memory
// handler with the default settings does: gate and profile on, the block
// within 800 tokens and 10 memories, the engine's floor.
func newAPI(cfg api.Config) *api.Handler {
	if cfg.Proxy.Plan == nil {
		cfg.Proxy.Plan = func(owner, session string, req *inject.Request) engine.RecallRequest {
			return engine.RecallRequest{
				SearchRequest: engine.SearchRequest{Owner: owner, Session: session, Query: req.Query(),
					Limit: 10, MinScore: engine.DefaultMinScore, Gate: true},
				Profile: true, MaxTokens: 800, MaxItems: 10,
			}
		}
	}
	return api.New(cfg)
}

// do sends one request to h; as is the Authorization header ("" for none).
func do(t *testing.T, h http.Handler, method, path, body, as string) *httptest.ResponseRecorder {
	t.Helper()
	var r io.Reader
	if body != "" {
		r = strings.NewReader(body)
	}
	req := httptest.NewRequest(method, path, r)
	if method == "POST" || method == "PATCH" {
		req.Header.Set("Content-Type", contentType(path))
	}
	if as != "" {
		req.Header.Set("Authorization", as)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}

// contentType is what a client sends a body to path as: JSON lines to
// /import, JSON elsewhere.
func contentType(path string) string {
	if strings.HasPrefix(path, "/import") {
		return "application/x-ndjson"
	}
	return "application/json"
}

// ok decodes a successful JSON answer into v.
func ok(t *testing.T, rec *httptest.ResponseRecorder, status int, v any) {
	t.Helper()
	if rec.Code != status {
		t.Fatalf("status %d, want %d; body %s", rec.Code, status, rec.Body)
	}
	if ct := rec.Header().Get("Content-Type"); ct != "application/json" {
		t.Errorf("Content-Type %q, want application/json", ct)
	}
	if v != nil {
		if err := json.Unmarshal(rec.Body.Bytes(), v); err != nil {
			t.Fatalf("decoding %s: %v", rec.Body, err)
		}
	}
}

// apiErr checks that rec is an error answer of the documented shape,
// {"error":{"code","message"}} in JSON, and returns its message.
func apiErr(t *testing.T, rec *httptest.ResponseRecorder, status int, code string) string {
	t.Helper()
	if rec.Code != status {
		t.Errorf("status %d, want %d; body %s", rec.Code, status, rec.Body)
	}
	if ct := rec.Header().Get("Content-Type"); ct != "application/json" {
		t.Errorf("error Content-Type %q, want application/json", ct)
	}
	var body map[string]map[string]string
	dec := json.NewDecoder(bytes.NewReader(rec.Body.Bytes()))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&body); err != nil {
		t.Errorf("error body %s is not {\"error\":{...}}: %v", rec.Body, err)
		return ""
	}
	e, found := body["error"]
	if !found || len(body) != 1 || len(e) != 2 || e["message"] == "" {
		t.Errorf("error body %s, want exactly {\"error\":{\"code\",\"message\"}}", rec.Body)
	}
	if e["code"] != code {
		t.Errorf("error code %q, want %q (message %q)", e["code"], code, e["message"])
	}
	return e["message"]
}

func jsonBody(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}

type memoryAnswer struct {
	Memory *store.Memory `json:"memory"`
	Op     string        `json:"op"`
}

type listAnswer struct {
	Memories   []*store.Memory `json:"memories"`
	NextCursor string          `json:"next_cursor"`
	Stats      store.Counts    `json:"stats"`
}

type searchAnswer struct {
	Results []struct {
		ID      uint64 `json:"id"`
		Content string `json:"content"`
	} `json:"results"`
}

// create adds a memory through the API (admin: owner names the owner; self:
// as is the caller) and returns it.
func create(t *testing.T, h http.Handler, mode api.Mode, who, content string) *store.Memory {
	t.Helper()
	body := map[string]any{"content": content}
	as := who
	if mode == api.Admin {
		body["owner"], as = who, ""
	}
	var a memoryAnswer
	ok(t, do(t, h, "POST", "/memories", jsonBody(body), as), http.StatusCreated, &a)
	if a.Memory == nil || a.Op != "created" {
		t.Fatalf("create %q answered %+v", content, a)
	}
	return a.Memory
}

func searchIDs(t *testing.T, h http.Handler, body map[string]any, as string) []uint64 {
	t.Helper()
	var a searchAnswer
	ok(t, do(t, h, "POST", "/search", jsonBody(body), as), http.StatusOK, &a)
	var ids []uint64
	for _, r := range a.Results {
		ids = append(ids, r.ID)
	}
	return ids
}

func storedMemory(t *testing.T, e *engine.Engine, owner string, id uint64) *store.Memory {
	t.Helper()
	m, err := e.Get(owner, id)
	if err != nil {
		t.Fatalf("Get(%s, %d): %v", owner, id, err)
	}
	return m
}

func TestRouting(t *testing.T) {
	h := newHandler(openEngine(t), api.Admin)
	for _, c := range []struct{ method, path string }{
		{"GET", "/nope"},
		{"POST", "/memory"},
		{"GET", "/memories/1/history"},
		{"GET", "/owners"},
		{"DELETE", "/owners/a/b"},
	} {
		t.Run("404 "+c.method+" "+c.path, func(t *testing.T) {
			msg := apiErr(t, do(t, h, c.method, c.path, "", ""), http.StatusNotFound, "not_found")
			if !strings.Contains(msg, c.path) {
				t.Errorf("message %q does not name the path", msg)
			}
		})
	}
	for _, c := range []struct{ method, path string }{
		{"PUT", "/memories"},
		{"DELETE", "/memories"},
		{"POST", "/memories/1"},
		{"GET", "/search"},
		{"GET", "/ingest"},
		{"POST", "/export"},
		{"GET", "/import"},
		{"GET", "/owners/someone"},
		{"POST", "/stats"},
		{"DELETE", "/health"},
	} {
		t.Run("405 "+c.method+" "+c.path, func(t *testing.T) {
			msg := apiErr(t, do(t, h, c.method, c.path, "", ""), http.StatusMethodNotAllowed, "method_not_allowed")
			if !strings.Contains(msg, c.method) {
				t.Errorf("message %q does not name the method", msg)
			}
		})
	}
	// The known endpoints answer.
	ok(t, do(t, h, "GET", "/health", "", ""), http.StatusOK, nil)
	ok(t, do(t, h, "GET", "/stats", "", ""), http.StatusOK, nil)
	apiErr(t, do(t, h, "GET", "/memories/abc", "", ""), http.StatusBadRequest, "bad_request")
	apiErr(t, do(t, h, "GET", "/memories/0", "", ""), http.StatusBadRequest, "bad_request")
	apiErr(t, do(t, h, "GET", "/memories/99", "", ""), http.StatusNotFound, "not_found")
}

func TestStrictDecoding(t *testing.T) {
	e := openEngine(t)
	h := newAPI(api.Config{Engine: e, Mode: api.Admin, Caller: caller, MaxBody: 300})

	msg := apiErr(t, do(t, h, "POST", "/memories", `{"owner":"a","content":"x","colour":"red"}`, ""), http.StatusBadRequest, "bad_request")
	if !strings.Contains(msg, "colour") {
		t.Errorf("unknown field error %q does not name the field", msg)
	}
	msg = apiErr(t, do(t, h, "POST", "/search", `{"owner":"a","query":"x","limt":3}`, ""), http.StatusBadRequest, "bad_request")
	if !strings.Contains(msg, "limt") {
		t.Errorf("unknown field error %q does not name the field", msg)
	}
	for _, body := range []string{
		`{"owner":"a","content":"first"} {"owner":"a","content":"second"}`,
		`{"owner":"a","content":"first"}{}`,
		`{"owner":"a","content":"first"} 7`,
		`{"owner":"a","content":"first"} }`,
		`{"owner":"a","content":"first"} garbage`,
	} {
		apiErr(t, do(t, h, "POST", "/memories", body, ""), http.StatusBadRequest, "bad_request")
	}
	for _, body := range []string{``, `{"owner":"a","content":`, `[1]`, `{"owner":"a","content":5}`, `not json`} {
		apiErr(t, do(t, h, "POST", "/memories", body, ""), http.StatusBadRequest, "bad_request")
	}
	// A refused body stores nothing.
	if st, _ := e.Stats(); st.Memories != 0 {
		t.Errorf("refused bodies stored %d memories", st.Memories)
	}

	big := jsonBody(map[string]any{"owner": "a", "content": strings.Repeat("x", 1000)})
	msg = apiErr(t, do(t, h, "POST", "/memories", big, ""), http.StatusRequestEntityTooLarge, "too_large")
	if !strings.Contains(msg, "300") {
		t.Errorf("too-large error %q does not name the limit", msg)
	}
	ok(t, do(t, h, "POST", "/memories", `{"owner":"a","content":"fits"}`, ""), http.StatusCreated, nil)
}

func TestSelfModeNeedsACaller(t *testing.T) {
	e := openEngine(t)
	h := newHandler(e, api.Self)
	m := create(t, h, api.Self, "alice-key", "Alice's memory")
	line := jsonBody(m)
	for _, c := range []struct{ method, path, body string }{
		{"GET", "/memories", ""},
		{"POST", "/memories", `{"content":"x"}`},
		{"GET", fmt.Sprintf("/memories/%d", m.ID), ""},
		{"PATCH", fmt.Sprintf("/memories/%d", m.ID), `{"content":"hijacked"}`},
		{"DELETE", fmt.Sprintf("/memories/%d", m.ID), ""},
		{"DELETE", fmt.Sprintf("/memories/%d?purge=true", m.ID), ""},
		{"POST", "/search", `{"query":"memory"}`},
		{"POST", "/ingest", `{"turns":[{"role":"user","content":"hello"}]}`},
		{"GET", "/export", ""},
		{"POST", "/import", line},
		{"DELETE", "/owners/me", ""},
		{"GET", "/stats", ""},
	} {
		t.Run(c.method+" "+c.path, func(t *testing.T) {
			apiErr(t, do(t, h, c.method, c.path, c.body, ""), http.StatusUnauthorized, "unauthorized")
		})
	}
	if got := storedMemory(t, e, e.OwnerID("alice-key"), m.ID); got.Content != "Alice's memory" || got.DeletedAt != nil {
		t.Errorf("a request without a caller changed the memory: %+v", got)
	}
	if st, _ := e.Stats(); st.Memories != 1 {
		t.Errorf("requests without a caller stored memories: %d", st.Memories)
	}
	ok(t, do(t, h, "GET", "/health", "", ""), http.StatusOK, nil) // needs no owner
}

func TestSelfModeRefusesNamingAnOwner(t *testing.T) {
	e := openEngine(t)
	h := newHandler(e, api.Self)
	me := "alice-key"
	myID := e.OwnerID(me)
	for _, c := range []struct{ method, path, body string }{
		{"GET", "/memories?owner=bob-key", ""},
		{"GET", "/memories?owner=" + me, ""}, // even oneself
		{"GET", "/memories?owner_id=" + myID, ""},
		{"POST", "/memories", `{"owner":"bob-key","content":"x"}`},
		{"POST", "/memories", `{"owner_id":"` + myID + `","content":"x"}`},
		{"POST", "/search", `{"owner":"bob-key","query":"x"}`},
		{"POST", "/search", `{"owner_id":"` + myID + `","query":"x"}`},
		{"POST", "/ingest", `{"owner":"bob-key","turns":[{"role":"user","content":"hello"}]}`},
		{"GET", "/export?owner=bob-key", ""},
		{"GET", "/export?owner_id=" + myID, ""},
		{"POST", "/import?owner=bob-key", `{"id":1,"owner":"x","kind":"note","key":"k","content":"c"}`},
	} {
		t.Run(c.method+" "+c.path+" "+c.body, func(t *testing.T) {
			apiErr(t, do(t, h, c.method, c.path, c.body, me), http.StatusForbidden, "forbidden")
		})
	}
	if st, _ := e.Stats(); st.Memories != 0 {
		t.Errorf("refused requests stored %d memories", st.Memories)
	}
}

func TestSelfModeIsolatesOwners(t *testing.T) {
	e := openEngine(t)
	h := newHandler(e, api.Self)
	alice, bob := "alice-key", "bob-key"
	am := create(t, h, api.Self, alice, "Alice likes zqalicesword")
	bm := create(t, h, api.Self, bob, "Bob likes zqbobsword")

	// Bob's id is not found for Alice, whatever she does with it.
	bobPath := fmt.Sprintf("/memories/%d", bm.ID)
	apiErr(t, do(t, h, "GET", bobPath, "", alice), http.StatusNotFound, "not_found")
	apiErr(t, do(t, h, "PATCH", bobPath, `{"content":"hijacked"}`, alice), http.StatusNotFound, "not_found")
	apiErr(t, do(t, h, "PATCH", bobPath, `{"expires_at":"2000-01-01T00:00:00Z"}`, alice), http.StatusNotFound, "not_found")
	apiErr(t, do(t, h, "DELETE", bobPath, "", alice), http.StatusNotFound, "not_found")
	apiErr(t, do(t, h, "DELETE", bobPath+"?purge=true", "", alice), http.StatusNotFound, "not_found")
	if got := storedMemory(t, e, e.OwnerID(bob), bm.ID); got.Content != "Bob likes zqbobsword" || got.DeletedAt != nil || got.ExpiresAt != nil {
		t.Errorf("Alice's requests changed Bob's memory: %+v", got)
	}
	var got memoryAnswer
	ok(t, do(t, h, "GET", bobPath, "", bob), http.StatusOK, &got)
	if got.Memory.Content != "Bob likes zqbobsword" {
		t.Errorf("Bob reads %q", got.Memory.Content)
	}

	// Listing and search see only the caller's memories.
	var page listAnswer
	ok(t, do(t, h, "GET", "/memories", "", alice), http.StatusOK, &page)
	if len(page.Memories) != 1 || page.Memories[0].ID != am.ID || page.Stats.Total != 1 {
		t.Errorf("Alice's listing = %+v", page)
	}
	if ids := searchIDs(t, h, map[string]any{"query": "zqbobsword likes"}, alice); len(ids) != 1 || ids[0] != am.ID {
		t.Errorf("Alice's search finds %v, want only her memory %d", ids, am.ID)
	}
	var stats struct {
		OwnerID  string       `json:"owner_id"`
		Memories store.Counts `json:"memories"`
	}
	ok(t, do(t, h, "GET", "/stats", "", alice), http.StatusOK, &stats)
	if stats.OwnerID != e.OwnerID(alice) || stats.Memories.Total != 1 {
		t.Errorf("Alice's stats = %+v", stats)
	}

	// A cursor of another listing is refused.
	cur := base64.RawURLEncoding.EncodeToString([]byte(e.OwnerID(bob) + ":0"))
	apiErr(t, do(t, h, "GET", "/memories?cursor="+cur, "", alice), http.StatusBadRequest, "bad_request")

	// Forgetting: only oneself, and only one's own memories.
	apiErr(t, do(t, h, "DELETE", "/owners/"+bob, "", alice), http.StatusForbidden, "forbidden")
	apiErr(t, do(t, h, "DELETE", "/owners/"+e.OwnerID(bob)+"?id=true", "", alice), http.StatusForbidden, "forbidden")
	if m := storedMemory(t, e, e.OwnerID(bob), bm.ID); m == nil {
		t.Fatal("Bob's memory is gone")
	}
	var f struct {
		OwnerID   string           `json:"owner_id"`
		Forgotten engine.Forgotten `json:"forgotten"`
	}
	ok(t, do(t, h, "DELETE", "/owners/me", "", alice), http.StatusOK, &f)
	if f.OwnerID != e.OwnerID(alice) || f.Forgotten.Memories != 1 {
		t.Errorf("DELETE /owners/me = %+v", f)
	}
	ok(t, do(t, h, "GET", "/memories", "", alice), http.StatusOK, &page)
	if len(page.Memories) != 0 {
		t.Errorf("after forgetting herself Alice still lists %d memories", len(page.Memories))
	}
	if ids := searchIDs(t, h, map[string]any{"query": "zqalicesword"}, alice); len(ids) != 0 {
		t.Errorf("after forgetting herself Alice still finds %v", ids)
	}
	if ids := searchIDs(t, h, map[string]any{"query": "zqbobsword"}, bob); len(ids) != 1 || ids[0] != bm.ID {
		t.Errorf("after Alice forgot herself Bob finds %v", ids)
	}
}

func TestAdminOwnerValidation(t *testing.T) {
	e := openEngine(t)
	h := newHandler(e, api.Admin)
	id := e.OwnerID("a")
	for _, c := range []struct{ method, path, body string }{
		{"GET", "/memories?owner=a&owner_id=" + id, ""},
		{"POST", "/memories", `{"owner":"a","owner_id":"` + id + `","content":"x"}`},
		{"POST", "/search", `{"owner":"a","owner_id":"` + id + `","query":"x"}`},
		{"GET", "/export?owner=a&owner_id=" + id, ""},
	} {
		msg := apiErr(t, do(t, h, c.method, c.path, c.body, ""), http.StatusBadRequest, "bad_request")
		if !strings.Contains(msg, "not both") {
			t.Errorf("%s %s: message %q", c.method, c.path, msg)
		}
	}
	for _, bad := range []string{
		strings.ToUpper(id),                // not lowercase
		id[:31],                            // too short
		id + "0",                           // too long
		strings.Repeat("g", 32),            // not hex
		"zz" + id[2:],                      // not hex
		"0x" + id[2:],                      // not hex
		strings.Repeat("0", 30) + "%20%20", // spaces
	} {
		apiErr(t, do(t, h, "GET", "/memories?owner_id="+bad, "", ""), http.StatusBadRequest, "bad_request")
		apiErr(t, do(t, h, "POST", "/search", jsonBody(map[string]any{"owner_id": bad, "query": "x"}), ""), http.StatusBadRequest, "bad_request")
		apiErr(t, do(t, h, "DELETE", "/owners/"+bad+"?id=true", "", ""), http.StatusBadRequest, "bad_request")
	}
	// Writes need an owner.
	apiErr(t, do(t, h, "POST", "/memories", `{"content":"whose?"}`, ""), http.StatusBadRequest, "bad_request")
	apiErr(t, do(t, h, "POST", "/search", `{"query":"whose?"}`, ""), http.StatusBadRequest, "bad_request")
	// owner and owner_id name the same owner.
	m := create(t, h, api.Admin, "a", "Named by value zqnamedword")
	for _, body := range []map[string]any{{"owner": "a", "query": "zqnamedword"}, {"owner_id": id, "query": "zqnamedword"}} {
		if ids := searchIDs(t, h, body, ""); len(ids) != 1 || ids[0] != m.ID {
			t.Errorf("search %v finds %v", body, ids)
		}
	}
}

func TestAdminListingAndCursor(t *testing.T) {
	e := openEngine(t)
	h := newHandler(e, api.Admin)
	var want []*store.Memory
	for i := range 5 {
		who := []string{"first", "second"}[i%2]
		want = append(want, create(t, h, api.Admin, who, fmt.Sprintf("memory %d of %s", i, who)))
	}
	sort.Slice(want, func(i, j int) bool {
		if want[i].Owner != want[j].Owner {
			return want[i].Owner < want[j].Owner
		}
		return want[i].ID < want[j].ID
	})
	wantIDs := func() []uint64 {
		var ids []uint64
		for _, m := range want {
			ids = append(ids, m.ID)
		}
		return ids
	}()

	// Without an owner: everyone's.
	var page listAnswer
	ok(t, do(t, h, "GET", "/memories", "", ""), http.StatusOK, &page)
	if len(page.Memories) != 5 || page.NextCursor != "" || page.Stats.Total != 5 {
		t.Fatalf("listing all = %d memories, cursor %q, stats %+v", len(page.Memories), page.NextCursor, page.Stats)
	}

	var got []uint64
	var cursors []string
	path := "/memories?limit=2"
	for pages := 0; ; pages++ {
		if pages > 5 {
			t.Fatalf("pagination does not end; ids so far %v", got)
		}
		var p listAnswer
		ok(t, do(t, h, "GET", path, "", ""), http.StatusOK, &p)
		if len(p.Memories) > 2 {
			t.Fatalf("a page of limit 2 holds %d memories", len(p.Memories))
		}
		for _, m := range p.Memories {
			got = append(got, m.ID)
		}
		if p.NextCursor == "" {
			break
		}
		cursors = append(cursors, p.NextCursor)
		path = "/memories?limit=2&cursor=" + p.NextCursor
	}
	if !reflect.DeepEqual(got, wantIDs) {
		t.Errorf("paged ids = %v, want each once in (owner id, id) order %v", got, wantIDs)
	}
	if len(cursors) != 2 {
		t.Errorf("%d cursors for 5 memories by 2, want 2", len(cursors))
	}

	// One owner, paged.
	first := e.OwnerID("first")
	var own []uint64
	path = "/memories?limit=2&owner=first"
	for range 5 {
		var p listAnswer
		ok(t, do(t, h, "GET", path, "", ""), http.StatusOK, &p)
		for _, m := range p.Memories {
			if m.Owner != first {
				t.Errorf("owner listing returned a memory of %s", m.Owner)
			}
			own = append(own, m.ID)
		}
		if p.NextCursor == "" {
			break
		}
		path = "/memories?limit=2&owner=first&cursor=" + p.NextCursor
	}
	if len(own) != 3 {
		t.Errorf("owner listing paged %v, want first's 3 memories", own)
	}

	// Tampered cursors are refused.
	c := cursors[0]
	raw, _ := base64.RawURLEncoding.DecodeString(c)
	for _, bad := range []string{
		c + "!",
		"not-a-cursor",
		c[:len(c)-3],
		base64.RawURLEncoding.EncodeToString([]byte(strings.ToUpper(string(raw)))),
		base64.RawURLEncoding.EncodeToString([]byte(string(raw) + "x")),
		base64.RawURLEncoding.EncodeToString([]byte("nobody:1")),
		base64.RawURLEncoding.EncodeToString([]byte(first)),
	} {
		apiErr(t, do(t, h, "GET", "/memories?limit=2&cursor="+bad, "", ""), http.StatusBadRequest, "bad_request")
	}
	for _, bad := range []string{"0", "-1", "501", "x"} {
		apiErr(t, do(t, h, "GET", "/memories?limit="+bad, "", ""), http.StatusBadRequest, "bad_request")
	}
}

// export reads GET /export as memories, strictly.
func export(t *testing.T, base, query string) []*store.Memory {
	t.Helper()
	resp, err := http.Get(base + "/export" + query)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("export: status %d: %s", resp.StatusCode, b)
	}
	if ct := resp.Header.Get("Content-Type"); ct != "application/x-ndjson" {
		t.Errorf("export Content-Type %q", ct)
	}
	var out []*store.Memory
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		dec := json.NewDecoder(bytes.NewReader(sc.Bytes()))
		dec.DisallowUnknownFields()
		m := new(store.Memory)
		if err := dec.Decode(m); err != nil {
			t.Fatalf("export line %q: %v", sc.Text(), err)
		}
		out = append(out, m)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

func importBody(t *testing.T, url, body string) (int, map[string]any) {
	t.Helper()
	resp, err := http.Post(url, "application/x-ndjson", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		t.Fatalf("import answer: %v", err)
	}
	return resp.StatusCode, out
}

// withoutSeq is ms without what differs between two reads of the same
// memories: the change sequence, and the salience, computed at read time.
func withoutSeq(ms []*store.Memory) []store.Memory {
	out := make([]store.Memory, len(ms))
	for i, m := range ms {
		out[i] = *m
		out[i].Seq, out[i].Salience = 0, 0
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

func TestExportImportRoundTrip(t *testing.T) {
	src := openEngine(t)
	srcH := newHandler(src, api.Admin)
	srv := httptest.NewServer(srcH)
	defer srv.Close()

	a := create(t, srcH, api.Admin, "alice", "Alice likes zqroundtrip tea")
	create(t, srcH, api.Admin, "bob", "Bob likes coffee")
	b2 := create(t, srcH, api.Admin, "bob", "Bob deleted this")
	ok(t, do(t, srcH, "PATCH", fmt.Sprintf("/memories/%d", a.ID),
		`{"content":"Alice likes zqroundtrip green tea","meta":{"source":"test"},"expires_at":"2099-01-01T00:00:00Z"}`, ""), http.StatusOK, nil)
	ok(t, do(t, srcH, "DELETE", fmt.Sprintf("/memories/%d", b2.ID), "", ""), http.StatusOK, nil)
	ok(t, do(t, srcH, "POST", "/ingest",
		`{"owner":"alice","session":"s1","turns":[{"role":"user","content":"I live in Lisbon.","ref":"m1","time":"2024-01-02T03:04:05Z"}]}`, ""), http.StatusOK, nil)

	exported := export(t, srv.URL, "")
	if len(exported) != 5 {
		t.Fatalf("exported %d memories, want 5 (deleted included)", len(exported))
	}
	var sawHistory, sawDeleted bool
	for _, m := range exported {
		sawHistory = sawHistory || (m.ID == a.ID && len(m.History) == 1 && m.Meta["source"] == "test" && m.ExpiresAt != nil)
		sawDeleted = sawDeleted || (m.ID == b2.ID && m.DeletedAt != nil)
	}
	if !sawHistory || !sawDeleted {
		t.Errorf("export lost history/meta/expiry (%v) or deletion (%v)", sawHistory, sawDeleted)
	}
	if own := export(t, srv.URL, "?owner=bob"); len(own) != 2 {
		t.Errorf("export of one owner holds %d memories, want 2", len(own))
	}
	var buf strings.Builder
	for _, m := range exported {
		buf.WriteString(jsonBody(m) + "\n")
	}
	lines := buf.String()

	// Into a fresh database: the same memories, ids and all.
	dst := openEngine(t)
	dstSrv := httptest.NewServer(newHandler(dst, api.Admin))
	defer dstSrv.Close()
	status, res := importBody(t, dstSrv.URL+"/import", lines)
	if status != http.StatusOK || res["imported"] != 5.0 || res["replaced"] != 0.0 || res["renumbered"] != 0.0 || len(res["errors"].([]any)) != 0 {
		t.Fatalf("import = %d %v, want 5 imported", status, res)
	}
	reexported := export(t, dstSrv.URL, "")
	if got, want := withoutSeq(reexported), withoutSeq(exported); !reflect.DeepEqual(got, want) {
		t.Errorf("round trip changed the memories:\n got %+v\nwant %+v", got, want)
	}
	// Searchable once the import answers.
	var sr searchAnswer
	resp, err := http.Post(dstSrv.URL+"/search", "application/json", strings.NewReader(`{"owner_id":"`+a.Owner+`","query":"zqroundtrip"}`))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.NewDecoder(resp.Body).Decode(&sr); err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if len(sr.Results) != 1 || sr.Results[0].ID != a.ID {
		t.Errorf("imported memory not searchable: %+v", sr)
	}

	// Importing the same lines again changes nothing.
	status, res = importBody(t, dstSrv.URL+"/import", lines)
	if status != http.StatusOK || res["imported"] != 0.0 || res["replaced"] != 5.0 {
		t.Errorf("second import = %d %v, want 5 replaced", status, res)
	}
	if got := export(t, dstSrv.URL, ""); !reflect.DeepEqual(withoutSeq(got), withoutSeq(exported)) {
		t.Errorf("a second import changed the memories")
	}
	// A new memory is numbered after the imported ones.
	n := create(t, dstSrv.Config.Handler, api.Admin, "carol", "new after import")
	for _, m := range exported {
		if n.ID <= m.ID {
			t.Errorf("memory created after import got id %d, not above imported %d", n.ID, m.ID)
		}
	}

	// Bad lines are reported by line number; good ones are kept.
	mixed := lines[:strings.Index(lines, "\n")+1] + "{not json}\n" + `{"id":1,"owner":"not-an-owner-id","kind":"note","key":"k","content":"c"}` + "\n"
	status, res = importBody(t, dstSrv.URL+"/import", mixed)
	errs, _ := res["errors"].([]any)
	if status != http.StatusOK || len(errs) != 2 || res["replaced"] != 1.0 {
		t.Errorf("mixed import = %d %v", status, res)
	} else if l := errs[0].(map[string]any)["line"]; l != 2.0 {
		t.Errorf("first bad line reported as %v, want 2", l)
	}
}

func TestImportTooLarge(t *testing.T) {
	e := openEngine(t)
	h := newAPI(api.Config{Engine: e, Mode: api.Admin, Caller: caller, MaxImport: 512})
	owner := e.OwnerID("big")
	var body strings.Builder
	for i := range 20 {
		body.WriteString(jsonBody(&store.Memory{ID: uint64(i + 1), Owner: owner, Kind: "note", Key: fmt.Sprint(i),
			Content: fmt.Sprintf("line %d", i)}) + "\n")
	}
	if body.Len() <= 512 {
		t.Fatalf("test body is only %d bytes", body.Len())
	}
	msg := apiErr(t, do(t, h, "POST", "/import", body.String(), ""), http.StatusRequestEntityTooLarge, "too_large")
	if !strings.Contains(msg, "512") {
		t.Errorf("message %q does not name the limit", msg)
	}
	if st, _ := e.Stats(); st.Memories != 0 {
		t.Errorf("a refused import stored %d memories", st.Memories)
	}
	// The first lines alone fit.
	first := strings.SplitAfterN(body.String(), "\n", 3)
	var res map[string]any
	ok(t, do(t, h, "POST", "/import", first[0]+first[1], ""), http.StatusOK, &res)
	if res["imported"] != 2.0 {
		t.Errorf("import within the limit = %v", res)
	}
}

func TestPatchExpiresAt(t *testing.T) {
	e := openEngine(t)
	h := newHandler(e, api.Self)
	me := "expiring-key"
	m := create(t, h, api.Self, me, "The zqexpiringword memory")
	path := fmt.Sprintf("/memories/%d", m.ID)
	find := func() []uint64 { return searchIDs(t, h, map[string]any{"query": "zqexpiringword"}, me) }
	if ids := find(); len(ids) != 1 || ids[0] != m.ID {
		t.Fatalf("control: search finds %v before the expiry", ids)
	}

	var a memoryAnswer
	ok(t, do(t, h, "PATCH", path, `{"expires_at":"2000-01-01T00:00:00Z"}`, me), http.StatusOK, &a)
	if a.Memory.ExpiresAt == nil || !a.Memory.ExpiresAt.Equal(time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)) {
		t.Errorf("PATCH answered expires_at %v", a.Memory.ExpiresAt)
	}
	if ids := find(); len(ids) != 0 {
		t.Errorf("a memory that expired in 2000 is still found: %v", ids)
	}
	var page listAnswer
	ok(t, do(t, h, "GET", "/memories", "", me), http.StatusOK, &page)
	if len(page.Memories) != 0 || page.Stats.Expired != 1 {
		t.Errorf("listing after expiry = %d memories, stats %+v", len(page.Memories), page.Stats)
	}

	a = memoryAnswer{}
	ok(t, do(t, h, "PATCH", path, `{"expires_at":null}`, me), http.StatusOK, &a)
	if a.Memory.ExpiresAt != nil {
		t.Errorf("expires_at null left %v", a.Memory.ExpiresAt)
	}
	if ids := find(); len(ids) != 1 || ids[0] != m.ID {
		t.Errorf("after clearing the expiry search finds %v, want %d", ids, m.ID)
	}
	if got := storedMemory(t, e, e.OwnerID(me), m.ID); got.ExpiresAt != nil || got.Content != "The zqexpiringword memory" {
		t.Errorf("stored after clearing the expiry: %+v", got)
	}

	// A future expiry keeps it findable; a bad one is refused.
	ok(t, do(t, h, "PATCH", path, `{"expires_at":"2099-01-01T00:00:00Z"}`, me), http.StatusOK, nil)
	if ids := find(); len(ids) != 1 {
		t.Errorf("a memory expiring in 2099 is not found: %v", ids)
	}
	apiErr(t, do(t, h, "PATCH", path, `{"expires_at":"tomorrow"}`, me), http.StatusBadRequest, "bad_request")
	apiErr(t, do(t, h, "PATCH", path, `{}`, me), http.StatusBadRequest, "bad_request")
}

func TestSelfImportCannotDisturbOtherOwnersIDs(t *testing.T) {
	e := openEngine(t)
	h := newHandler(e, api.Self)
	alice := create(t, h, api.Self, "alice-key", "Alice's zqaliceonly memory")

	// Any caller may import lines; one carries the largest id.
	line := `{"id":18446744073709551615,"owner":"x","kind":"note","key":"k","content":"Mallory's line"}` + "\n"
	// Refusing the line or renumbering it are both fine; what follows is not.
	if rec := do(t, h, "POST", "/import", line, "mallory-key"); rec.Code != http.StatusOK && rec.Code != http.StatusBadRequest {
		t.Fatalf("import answered %d %s", rec.Code, rec.Body)
	}

	// Other users go on creating memories: each must be theirs, by its id.
	carol := "carol-key"
	st, _ := e.Stats()
	for i := 0; index.Shard(e.OwnerID(carol), st.IndexShards) != index.Shard(e.OwnerID("alice-key"), st.IndexShards); i++ {
		carol = fmt.Sprintf("carol-key-%d", i) // share Alice's index shard
	}
	for _, who := range []string{"bob-key", carol} {
		m := create(t, h, api.Self, who, "A memory of "+who)
		rec := do(t, h, "GET", fmt.Sprintf("/memories/%d", m.ID), "", who)
		if rec.Code != http.StatusOK {
			t.Errorf("%s created memory %d and cannot read it back: %d %s", who, m.ID, rec.Code, rec.Body)
		}
	}
	var got memoryAnswer
	ok(t, do(t, newHandler(e, api.Admin), "GET", fmt.Sprintf("/memories/%d", alice.ID), "", ""), http.StatusOK, &got)
	if got.Memory.Owner != alice.Owner || got.Memory.Content != alice.Content {
		t.Errorf("admin GET /memories/%d = %q of %s; want Alice's memory", alice.ID, got.Memory.Content, got.Memory.Owner)
	}
	if ids := searchIDs(t, h, map[string]any{"query": "zqaliceonly"}, "alice-key"); len(ids) != 1 || ids[0] != alice.ID {
		t.Errorf("after another user's import, Alice's search finds %v, want her memory %d", ids, alice.ID)
	}
}

func TestStatsAndHealth(t *testing.T) {
	e := openEngine(t)
	h := newHandler(e, api.Admin)
	create(t, h, api.Admin, "a", "one")
	create(t, h, api.Admin, "a", "two")
	d := create(t, h, api.Admin, "b", "three")
	ok(t, do(t, h, "DELETE", fmt.Sprintf("/memories/%d", d.ID), "", ""), http.StatusOK, nil)
	var st map[string]any
	ok(t, do(t, h, "GET", "/stats", "", ""), http.StatusOK, &st)
	// Owners this small are searched from their records: none is indexed.
	for k, want := range map[string]float64{"owners": 2, "memories": 3, "indexed_docs": 0, "index_lag": 0, "index_shards": 2} {
		if st[k] != want {
			t.Errorf("stats %s = %v, want %v (all: %v)", k, st[k], want, st)
		}
	}

	var hl map[string]any
	ok(t, do(t, h, "GET", "/health", "", ""), http.StatusOK, &hl)
	if hl["status"] != "ok" {
		t.Errorf("health = %v", hl)
	}
	for _, k := range []string{"store_latency_ms", "index_latency_ms"} {
		if v, ok := hl[k].(float64); !ok || v < 0 {
			t.Errorf("health %s = %v, want a duration in milliseconds", k, hl[k])
		}
	}
	if err := e.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	apiErr(t, do(t, h, "GET", "/health", "", ""), http.StatusServiceUnavailable, "unhealthy")
}
