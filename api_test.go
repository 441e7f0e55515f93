package memory

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"

	"golang.org/x/crypto/bcrypt"
)

// apiConfig serves the proxy and both API modes on one storage: the admin
// API behind basic_auth, the self-service API for API-key holders, the way
// the README shows.
func apiConfig(t *testing.T, storage, upstream, extra string) string {
	return apiConfigWith(t, storage, "", upstream, "", extra)
}

// apiConfigWith is apiConfig with settings of the storage (settings) and
// of the memory handler (directives).
func apiConfigWith(t *testing.T, storage, settings, upstream, directives, extra string) string {
	hash, err := bcrypt.GenerateFromPassword([]byte("s3cret"), bcrypt.MinCost)
	if err != nil {
		t.Fatal(err)
	}
	return withStorage(storage, settings) + fmt.Sprintf(`http://localhost:9080 {
	memory {
		%[4]s
	}
	handle /memory/admin/* {
		basic_auth {
			admin %[2]s
		}
		memory_api {
			mode admin
			%[3]s
		}
	}
	handle /memory/* {
		memory_api {
			%[3]s
		}
	}
	reverse_proxy %[1]s
}
`, upstream, hash, extra, directives)
}

// apiCall is one request to the API.
type apiCall struct {
	t      *testing.T
	client *http.Client
}

// do sends a request; body is JSON-encoded unless it is []byte. It returns
// the status and the decoded JSON answer (nil if not JSON).
func (a apiCall) do(method, path, auth string, body any) (int, map[string]any) {
	a.t.Helper()
	status, raw := a.raw(method, path, auth, body)
	var out map[string]any
	_ = json.Unmarshal(raw, &out)
	return status, out
}

func (a apiCall) raw(method, path, auth string, body any) (int, []byte) {
	a.t.Helper()
	var r io.Reader
	switch b := body.(type) {
	case nil:
	case []byte:
		r = bytes.NewReader(b)
	default:
		r = bytes.NewReader(mustBytes(b))
	}
	req, err := http.NewRequest(method, caddyAddr+path, r)
	if err != nil {
		a.t.Fatal(err)
	}
	if r != nil {
		// As docs/api.md has it: JSON lines to /import, JSON elsewhere.
		req.Header.Set("Content-Type", "application/json")
		if strings.Contains(path, "/import") {
			req.Header.Set("Content-Type", "application/x-ndjson")
		}
	}
	switch {
	case auth == "admin":
		req.SetBasicAuth("admin", "s3cret")
	case auth != "":
		req.Header.Set("Authorization", "Bearer "+auth)
	}
	resp, err := a.client.Do(req)
	if err != nil {
		a.t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, raw
}

// errCode is the error code of an error answer.
func errCode(out map[string]any) string {
	e, _ := out["error"].(map[string]any)
	code, _ := e["code"].(string)
	msg, _ := e["message"].(string)
	return code + ": " + msg
}

func memoryOf(out map[string]any) map[string]any {
	m, _ := out["memory"].(map[string]any)
	return m
}

func idOf(m map[string]any) int {
	f, _ := m["id"].(float64)
	return int(f)
}

func listContents(out map[string]any) []string { return fieldContents(out, "memories") }

// fieldContents are the contents of the memories in out's fields.
func fieldContents(out map[string]any, fields ...string) []string {
	var s []string
	for _, field := range fields {
		ms, _ := out[field].([]any)
		for _, m := range ms {
			s = append(s, m.(map[string]any)["content"].(string))
		}
	}
	return s
}

func TestAPIAdminEndpoints(t *testing.T) {
	storage := t.TempDir()
	up := newFakeLLM(t)
	tester := startCaddy(t, apiConfig(t, storage, up.addr(), ""))
	a := apiCall{t, tester.Client}

	// The admin API is Caddy-auth protected.
	if status, _ := a.do("GET", "/memory/admin/stats", "", nil); status != http.StatusUnauthorized {
		t.Fatalf("admin API without credentials: %d, want 401", status)
	}

	// Create, then the same key again: an upsert, with history.
	status, out := a.do("POST", "/memory/admin/memories", "admin", map[string]any{
		"owner": "sk-alice", "kind": "preference", "key": "drink", "content": "Alice prefers green tea.", "session": "s1"})
	if status != http.StatusCreated {
		t.Fatalf("create: %d %v", status, out)
	}
	m := memoryOf(out)
	id := idOf(m)
	status, out = a.do("POST", "/memory/admin/memories", "admin", map[string]any{
		"owner": "sk-alice", "kind": "preference", "key": "drink", "content": "Alice prefers black coffee."})
	if status != http.StatusOK || out["op"] != "superseded" || idOf(memoryOf(out)) != id {
		t.Fatalf("upsert by key: %d %v", status, out)
	}
	ownerID := m["owner"].(string)

	// Read by id; list by raw owner and by owner id; filter by kind; full text.
	if status, out = a.do("GET", fmt.Sprintf("/memory/admin/memories/%d", id), "admin", nil); status != 200 ||
		memoryOf(out)["content"] != "Alice prefers black coffee." || len(memoryOf(out)["history"].([]any)) != 1 {
		t.Fatalf("get: %d %v", status, out)
	}
	a.do("POST", "/memory/admin/memories", "admin", map[string]any{"owner": "sk-alice", "kind": "note", "content": "Alice's cat is called Miso."})
	a.do("POST", "/memory/admin/memories", "admin", map[string]any{"owner": "sk-bob", "kind": "note", "content": "Bob's cat is called Pixel."})
	for _, q := range []string{"owner=sk-alice", "owner_id=" + ownerID} {
		status, out = a.do("GET", "/memory/admin/memories?"+q, "admin", nil)
		if got := listContents(out); status != 200 || len(got) != 2 {
			t.Errorf("list %s: %d %v", q, status, got)
		}
		stats := out["stats"].(map[string]any)
		if stats["total"].(float64) != 2 || stats["by_kind"].(map[string]any)["note"].(float64) != 1 {
			t.Errorf("list %s stats: %v", q, stats)
		}
	}
	if _, out = a.do("GET", "/memory/admin/memories?owner=sk-alice&kind=note", "admin", nil); fmt.Sprint(listContents(out)) != "[Alice's cat is called Miso.]" {
		t.Errorf("kind filter: %v", listContents(out))
	}
	if _, out = a.do("GET", "/memory/admin/memories?owner=sk-alice&q=cat", "admin", nil); fmt.Sprint(listContents(out)) != "[Alice's cat is called Miso.]" {
		t.Errorf("full text: %v", listContents(out))
	}
	if _, out = a.do("GET", "/memory/admin/memories?owner=sk-alice&session=s1", "admin", nil); len(listContents(out)) != 0 {
		// The superseding value was created without a session.
		t.Errorf("session filter: %v", listContents(out))
	}
	// Every owner, a page at a time.
	var all []string
	next := ""
	for pages := 0; pages < 5; pages++ {
		_, out = a.do("GET", "/memory/admin/memories?limit=1&cursor="+next, "admin", nil)
		all = append(all, listContents(out)...)
		next, _ = out["next_cursor"].(string)
		if next == "" {
			break
		}
	}
	if len(all) != 3 {
		t.Errorf("paging through every owner gave %v", all)
	}

	// Search is the proxy's retrieval.
	status, out = a.do("POST", "/memory/admin/search", "admin", map[string]any{"owner": "sk-alice", "query": "what is my cat called"})
	results, _ := out["results"].([]any)
	if status != 200 || len(results) != 1 || results[0].(map[string]any)["content"] != "Alice's cat is called Miso." {
		t.Errorf("search: %d %v", status, out)
	}
	if r := results[0].(map[string]any); r["score"].(float64) <= 0 || r["created_at"] == "" || r["kind"] != "note" {
		t.Errorf("search result lacks fields: %v", r)
	}

	// Patch: a new version; expires_at null clears.
	status, out = a.do("PATCH", fmt.Sprintf("/memory/admin/memories/%d", id), "admin", map[string]any{"content": "Alice drinks espresso.", "meta": map[string]string{"source": "admin"}})
	if status != 200 || memoryOf(out)["content"] != "Alice drinks espresso." || len(memoryOf(out)["history"].([]any)) != 2 {
		t.Errorf("patch: %d %v", status, out)
	}
	if _, out = a.do("POST", "/memory/admin/search", "admin", map[string]any{"owner": "sk-alice", "query": "espresso"}); len(out["results"].([]any)) != 1 {
		t.Errorf("a patched memory is not searchable by its new text: %v", out)
	}

	// Soft delete: gone from retrieval and lists, kept with include_deleted.
	if status, _ = a.do("DELETE", fmt.Sprintf("/memory/admin/memories/%d", id), "admin", nil); status != 200 {
		t.Fatalf("delete: %d", status)
	}
	if _, out = a.do("POST", "/memory/admin/search", "admin", map[string]any{"owner": "sk-alice", "query": "espresso"}); len(out["results"].([]any)) != 0 {
		t.Errorf("a deleted memory is still retrieved")
	}
	if _, out = a.do("GET", "/memory/admin/memories?owner=sk-alice", "admin", nil); len(listContents(out)) != 1 {
		t.Errorf("a deleted memory is still listed: %v", listContents(out))
	}
	if _, out = a.do("GET", "/memory/admin/memories?owner=sk-alice&include_deleted=true", "admin", nil); len(listContents(out)) != 2 {
		t.Errorf("include_deleted: %v", listContents(out))
	}
	// Purge: gone for good.
	if status, _ = a.do("DELETE", fmt.Sprintf("/memory/admin/memories/%d?purge=true", id), "admin", nil); status != 200 {
		t.Fatalf("purge: %d", status)
	}
	if status, out = a.do("GET", fmt.Sprintf("/memory/admin/memories/%d", id), "admin", nil); status != 404 || !strings.HasPrefix(errCode(out), "not_found") {
		t.Errorf("a purged memory: %d %v", status, out)
	}

	// Stats and health.
	if status, out = a.do("GET", "/memory/admin/stats", "admin", nil); status != 200 || out["owners"].(float64) != 2 || out["memories"].(float64) != 2 {
		t.Errorf("stats: %d %v", status, out)
	}
	if status, out = a.do("GET", "/memory/admin/health", "admin", nil); status != 200 || out["status"] != "ok" || out["index_latency_ms"] == nil {
		t.Errorf("health: %d %v", status, out)
	}
}

func TestAPISelfModeServesOnlyTheCaller(t *testing.T) {
	storage := t.TempDir()
	up := newFakeLLM(t)
	tester := startCaddy(t, apiConfig(t, storage, up.addr(), ""))
	a := apiCall{t, tester.Client}

	// Alice's memory comes from proxied traffic; Bob's from the self API.
	post(t, tester, "/v1/chat/completions", "sk-alice", chatBody(false, msg("user", "I live in Lisbon.")))
	settle(t, storage, 1)
	status, out := a.do("POST", "/memory/memories", "sk-bob", map[string]any{"content": "Bob is learning Portuguese.", "kind": "note"})
	if status != http.StatusCreated {
		t.Fatalf("self create: %d %v", status, out)
	}
	bobID := idOf(memoryOf(out))

	_, out = a.do("GET", "/memory/memories", "sk-alice", nil)
	alice := listContents(out)
	if len(alice) != 2 || strings.Contains(fmt.Sprint(alice), "Bob") { // the fact and the turn
		t.Fatalf("alice lists %v", alice)
	}
	// Bob's memory, by id, through Alice's key: not found, whatever she does.
	for _, c := range []struct{ method, path string }{
		{"GET", fmt.Sprintf("/memory/memories/%d", bobID)},
		{"PATCH", fmt.Sprintf("/memory/memories/%d", bobID)},
		{"DELETE", fmt.Sprintf("/memory/memories/%d", bobID)},
		{"DELETE", fmt.Sprintf("/memory/memories/%d?purge=true", bobID)},
	} {
		status, out := a.do(c.method, c.path, "sk-alice", map[string]any{"content": "hijacked"})
		if c.method != "PATCH" {
			status, out = a.do(c.method, c.path, "sk-alice", nil)
		}
		if status != http.StatusNotFound {
			t.Errorf("%s %s as another owner: %d %v, want 404", c.method, c.path, status, out)
		}
	}
	if _, out = a.do("GET", fmt.Sprintf("/memory/memories/%d", bobID), "sk-bob", nil); memoryOf(out)["content"] != "Bob is learning Portuguese." {
		t.Errorf("Bob's memory changed: %v", out)
	}
	// Naming an owner, or no identity at all.
	if status, out = a.do("GET", "/memory/memories?owner=sk-bob", "sk-alice", nil); status != http.StatusForbidden {
		t.Errorf("self mode with owner=: %d %v", status, out)
	}
	if status, out = a.do("POST", "/memory/search", "sk-alice", map[string]any{"owner_id": strings.Repeat("a", 32), "query": "x"}); status != http.StatusForbidden {
		t.Errorf("self mode search naming an owner: %d %v", status, out)
	}
	if status, out = a.do("GET", "/memory/memories", "", nil); status != http.StatusUnauthorized {
		t.Errorf("self mode without a key: %d %v", status, out)
	}
	if status, out = a.do("DELETE", "/memory/owners/sk-bob", "sk-alice", nil); status != http.StatusForbidden {
		t.Errorf("forgetting someone else: %d %v", status, out)
	}
	// Search and stats are one's own.
	if _, out = a.do("POST", "/memory/search", "sk-alice", map[string]any{"query": "Portuguese Lisbon"}); strings.Contains(fmt.Sprint(out), "Bob") {
		t.Errorf("search leaked: %v", out)
	}
	if _, out = a.do("GET", "/memory/stats", "sk-bob", nil); out["memories"].(map[string]any)["total"].(float64) != 1 {
		t.Errorf("self stats: %v", out)
	}
	// Forgetting oneself.
	if status, out = a.do("DELETE", "/memory/owners/me", "sk-bob", nil); status != 200 {
		t.Fatalf("forget me: %d %v", status, out)
	}
	if _, out = a.do("GET", "/memory/memories", "sk-bob", nil); len(listContents(out)) != 0 {
		t.Errorf("after forgetting oneself: %v", listContents(out))
	}
	if _, out = a.do("GET", "/memory/memories", "sk-alice", nil); len(listContents(out)) != 2 {
		t.Errorf("forgetting Bob touched Alice: %v", listContents(out))
	}
}

func TestAPIIngestIsSearchableOnReturn(t *testing.T) {
	storage := t.TempDir()
	up := newFakeLLM(t)
	tester := startCaddy(t, apiConfig(t, storage, up.addr(), ""))
	a := apiCall{t, tester.Client}
	status, out := a.do("POST", "/memory/admin/ingest", "admin", map[string]any{
		"owner": "sk-carol", "session": "2023-05-08",
		"turns": []map[string]any{
			{"role": "Caroline", "content": "I went to the LGBTQ support group yesterday. I live in Boston.", "time": "2023-05-08T13:56:00Z", "ref": "D1:1"},
			{"role": "Melanie", "content": "That sounds brave! I love painting sunsets.", "time": "2023-05-08T13:57:00Z", "ref": "D1:2"},
		},
	})
	if status != 200 || out["turns"].(float64) != 2 || out["facts"].(float64) < 2 {
		t.Fatalf("ingest: %d %v", status, out)
	}
	// No waiting: the answer came once it was searchable.
	_, out = a.do("POST", "/memory/admin/search", "admin", map[string]any{"owner": "sk-carol", "query": "support group"})
	res := out["results"].([]any)
	if len(res) == 0 || res[0].(map[string]any)["ref"] != "D1:1" || !strings.HasPrefix(res[0].(map[string]any)["content"].(string), "Caroline: ") {
		t.Errorf("ingested turn not found with its ref: %v", out)
	}
	_, out = a.do("POST", "/memory/admin/search", "admin", map[string]any{"owner": "sk-carol", "query": "where does Caroline live"})
	if !strings.Contains(fmt.Sprint(out), "Caroline lives in Boston.") {
		t.Errorf("a speaker's fact is not about that speaker: %v", out)
	}
	if created := res[0].(map[string]any)["created_at"]; created != "2023-05-08T13:56:00Z" {
		t.Errorf("the turn's time was not kept: %v", created)
	}
	// Ingesting the same transcript again stores nothing new.
	a.do("POST", "/memory/admin/ingest", "admin", map[string]any{"owner": "sk-carol", "session": "2023-05-08",
		"turns": []map[string]any{{"role": "Caroline", "content": "I went to the LGBTQ support group yesterday. I live in Boston.", "ref": "D1:1"}}})
	if _, out = a.do("GET", "/memory/admin/memories?owner=sk-carol&kind=turn", "admin", nil); len(listContents(out)) != 2 {
		t.Errorf("re-ingesting duplicated turns: %v", listContents(out))
	}
}

func TestAPIRejectsBadInputClearly(t *testing.T) {
	storage := t.TempDir()
	up := newFakeLLM(t)
	tester := startCaddy(t, apiConfig(t, storage, up.addr(), "max_body 2KiB"))
	a := apiCall{t, tester.Client}
	cases := []struct {
		method, path string
		body         any
		status       int
		want         string
	}{
		{"POST", "/memory/admin/memories", map[string]any{"owner": "o", "content": "x", "colour": "red"}, 400, `unknown field "colour"`},
		{"POST", "/memory/admin/memories", map[string]any{"owner": "o"}, 400, "content is required"},
		{"POST", "/memory/admin/memories", map[string]any{"content": "x"}, 400, "name the owner"},
		{"POST", "/memory/admin/memories", map[string]any{"owner": "o", "content": "x", "kind": "Not A Kind"}, 400, "kind"},
		{"POST", "/memory/admin/memories", map[string]any{"owner": "o", "content": 42}, 400, `field "content" must be string`},
		{"POST", "/memory/admin/memories", []byte(`{"owner":`), 400, "not valid JSON"},
		{"POST", "/memory/admin/memories", []byte(``), 400, "body is empty"},
		{"POST", "/memory/admin/memories", map[string]any{"owner": "o", "content": strings.Repeat("x", 4096)}, 413, "larger than 2048 bytes"},
		{"GET", "/memory/admin/memories/abc", nil, 400, `"abc" is not a memory id`},
		{"GET", "/memory/admin/memories/0", nil, 400, "is not a memory id"},
		{"GET", "/memory/admin/memories/999999", nil, 404, "no memory 999999"},
		{"GET", "/memory/admin/memories?limit=9999", nil, 400, "limit must be"},
		{"GET", "/memory/admin/memories?since=yesterday", nil, 400, "since"},
		{"GET", "/memory/admin/memories?cursor=nope", nil, 400, "cursor"},
		{"GET", "/memory/admin/memories?owner_id=xyz", nil, 400, "not an owner id"},
		{"GET", "/memory/admin/memories?q=cat", nil, 400, "needs an owner"},
		{"POST", "/memory/admin/search", map[string]any{"owner": "o"}, 400, "query is required"},
		{"POST", "/memory/admin/ingest", map[string]any{"owner": "o", "turns": []any{}}, 400, "turns is empty"},
		{"POST", "/memory/admin/ingest", map[string]any{"owner": "o", "turns": []any{map[string]any{"content": "hi"}}}, 400, "turns[0]: role is required"},
		{"PATCH", "/memory/admin/memories/1", map[string]any{}, 400, "nothing to change"},
		{"PUT", "/memory/admin/memories", nil, 405, "PUT is not allowed"},
		{"GET", "/memory/admin/nothing-here", nil, 404, "no such endpoint"},
		{"DELETE", "/memory/admin/memories/1?purge=maybe", nil, 400, "purge must be true or false"},
	}
	for _, c := range cases {
		status, out := a.do(c.method, c.path, "admin", c.body)
		if status != c.status || !strings.Contains(errCode(out), c.want) {
			t.Errorf("%s %s: %d %q, want %d and %q", c.method, c.path, status, errCode(out), c.status, c.want)
		}
	}
}

// TestAPIAdminNeedsCaddyAuth: admin mode with no authentication handler in
// front answers 401, whatever the request carries, unless the operator
// opted out with insecure_no_auth.
func TestAPIAdminNeedsCaddyAuth(t *testing.T) {
	storage := t.TempDir()
	up := newFakeLLM(t)
	cfg := func(extra string) string {
		return withStorage(storage, "") + fmt.Sprintf(`http://localhost:9080 {
	memory
	handle /memory/admin/* {
		memory_api {
			mode admin
			%[2]s
		}
	}
	reverse_proxy %[1]s
}
`, up.addr(), extra)
	}
	tester := startCaddy(t, cfg(""))
	a := apiCall{t, tester.Client}
	post(t, tester, "/v1/chat/completions", "sk-victim", chatBody(false, msg("user", "I live in Zqlima.")))
	settle(t, storage, 1)
	for _, auth := range []string{"", "sk-victim", "admin"} {
		status, out := a.do("GET", "/memory/admin/memories", auth, nil)
		if status != http.StatusUnauthorized || strings.Contains(fmt.Sprint(out), "Zqlima") {
			t.Errorf("unauthenticated admin API with credentials %q: %d %v, want 401", auth, status, out)
		}
	}
	if status, _ := a.do("DELETE", "/memory/admin/owners/sk-victim", "", nil); status != http.StatusUnauthorized {
		t.Errorf("unauthenticated forget: %d, want 401", status)
	}

	reload(t, tester, cfg("insecure_no_auth"))
	a.client = tester.Client
	if status, out := a.do("GET", "/memory/admin/memories?owner=sk-victim", "", nil); status != http.StatusOK || !strings.Contains(fmt.Sprint(out), "Zqlima") {
		t.Errorf("admin API with insecure_no_auth: %d %v, want 200 with the memory", status, out)
	}
}

// TestAPITakesTheProxysStorage: a bare memory_api serves the storage the
// bare memory handler uses, wherever the two sit: memory first, or memory
// in a later handle and memory_api in an earlier one (which Caddy
// provisions first). Before the memory app, the second order served
// Caddy's default storage, another database, silently.
func TestAPITakesTheProxysStorage(t *testing.T) {
	for name, site := range map[string]string{
		"memory first": `	memory
	handle /memory/* {
		memory_api
	}
	reverse_proxy %s`,
		"memory_api first": `	handle_path /memory/* {
		memory_api
	}
	handle /v1/* {
		memory
		reverse_proxy %s
	}`,
	} {
		t.Run(name, func(t *testing.T) {
			storage := t.TempDir()
			up := newFakeLLM(t)
			tester := startCaddy(t, withStorage(storage, "")+"http://localhost:9080 {\n"+fmt.Sprintf(site, up.addr())+"\n}\n")
			api := apiCall{t, tester.Client}
			post(t, tester, "/v1/chat/completions", "sk-own-storage", chatBody(false, msg("user", "I live in Lisbon.")))
			settle(t, storage, 1)
			if _, out := api.do("GET", "/memory/memories?kind=identity", "sk-own-storage", nil); !slices.Contains(listContents(out), "User lives in Lisbon.") {
				t.Errorf("the bare API lists %v, want what the proxy learned", listContents(out))
			}
		})
	}
}
