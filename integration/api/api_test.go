package api

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/caddy-memory/memory/internal/harness"
)

func TestAPIAdminEndpoints(t *testing.T) {
	storage := t.TempDir()
	up := harness.NewFakeLLM(t)
	tester := harness.StartCaddy(t, harness.APIConfig(t, storage, up.Addr(), ""))
	a := harness.APICall{T: t, Client: tester.Client}

	// The admin API is Caddy-auth protected.
	if status, _ := a.Do("GET", "/memory/admin/stats", "", nil); status != http.StatusUnauthorized {
		t.Fatalf("admin API without credentials: %d, want 401", status)
	}

	// Create, then the same key again: an upsert, with history.
	status, out := a.Do("POST", "/memory/admin/memories", "admin", map[string]any{
		"owner": "sk-alice", "kind": "preference", "key": "drink", "content": "Alice prefers green tea.", "session": "s1"})
	if status != http.StatusCreated {
		t.Fatalf("create: %d %v", status, out)
	}
	m := harness.MemoryOf(out)
	id := harness.IDOf(m)
	status, out = a.Do("POST", "/memory/admin/memories", "admin", map[string]any{
		"owner": "sk-alice", "kind": "preference", "key": "drink", "content": "Alice prefers black coffee."})
	if status != http.StatusOK || out["op"] != "superseded" || harness.IDOf(harness.MemoryOf(out)) != id {
		t.Fatalf("upsert by key: %d %v", status, out)
	}
	ownerID := m["owner"].(string)

	// Read by id; list by raw owner and by owner id; filter by kind; full text.
	if status, out = a.Do("GET", fmt.Sprintf("/memory/admin/memories/%d", id), "admin", nil); status != 200 ||
		harness.MemoryOf(out)["content"] != "Alice prefers black coffee." || len(harness.MemoryOf(out)["history"].([]any)) != 1 {
		t.Fatalf("get: %d %v", status, out)
	}
	a.Do("POST", "/memory/admin/memories", "admin", map[string]any{"owner": "sk-alice", "kind": "note", "content": "Alice's cat is called Miso."})
	a.Do("POST", "/memory/admin/memories", "admin", map[string]any{"owner": "sk-bob", "kind": "note", "content": "Bob's cat is called Pixel."})
	for _, q := range []string{"owner=sk-alice", "owner_id=" + ownerID} {
		status, out = a.Do("GET", "/memory/admin/memories?"+q, "admin", nil)
		if got := harness.ListContents(out); status != 200 || len(got) != 2 {
			t.Errorf("list %s: %d %v", q, status, got)
		}
		stats := out["stats"].(map[string]any)
		if stats["total"].(float64) != 2 || stats["by_kind"].(map[string]any)["note"].(float64) != 1 {
			t.Errorf("list %s stats: %v", q, stats)
		}
	}
	if _, out = a.Do("GET", "/memory/admin/memories?owner=sk-alice&kind=note", "admin", nil); fmt.Sprint(harness.ListContents(out)) != "[Alice's cat is called Miso.]" {
		t.Errorf("kind filter: %v", harness.ListContents(out))
	}
	if _, out = a.Do("GET", "/memory/admin/memories?owner=sk-alice&q=cat", "admin", nil); fmt.Sprint(harness.ListContents(out)) != "[Alice's cat is called Miso.]" {
		t.Errorf("full text: %v", harness.ListContents(out))
	}
	if _, out = a.Do("GET", "/memory/admin/memories?owner=sk-alice&session=s1", "admin", nil); len(harness.ListContents(out)) != 0 {
		// The superseding value was created without a session.
		t.Errorf("session filter: %v", harness.ListContents(out))
	}
	// Every owner, a page at a time.
	var all []string
	next := ""
	for pages := 0; pages < 5; pages++ {
		_, out = a.Do("GET", "/memory/admin/memories?limit=1&cursor="+next, "admin", nil)
		all = append(all, harness.ListContents(out)...)
		next, _ = out["next_cursor"].(string)
		if next == "" {
			break
		}
	}
	if len(all) != 3 {
		t.Errorf("paging through every owner gave %v", all)
	}

	// Search is the proxy's retrieval.
	status, out = a.Do("POST", "/memory/admin/search", "admin", map[string]any{"owner": "sk-alice", "query": "what is my cat called"})
	results, _ := out["results"].([]any)
	if status != 200 || len(results) != 1 || results[0].(map[string]any)["content"] != "Alice's cat is called Miso." {
		t.Errorf("search: %d %v", status, out)
	}
	if r := results[0].(map[string]any); r["score"].(float64) <= 0 || r["created_at"] == "" || r["kind"] != "note" {
		t.Errorf("search result lacks fields: %v", r)
	}

	// Patch: a new version; expires_at null clears.
	status, out = a.Do("PATCH", fmt.Sprintf("/memory/admin/memories/%d", id), "admin", map[string]any{"content": "Alice drinks espresso.", "meta": map[string]string{"source": "admin"}})
	if status != 200 || harness.MemoryOf(out)["content"] != "Alice drinks espresso." || len(harness.MemoryOf(out)["history"].([]any)) != 2 {
		t.Errorf("patch: %d %v", status, out)
	}
	if _, out = a.Do("POST", "/memory/admin/search", "admin", map[string]any{"owner": "sk-alice", "query": "espresso"}); len(out["results"].([]any)) != 1 {
		t.Errorf("a patched memory is not searchable by its new text: %v", out)
	}

	// Soft delete: gone from retrieval and lists, kept with include_deleted.
	if status, _ = a.Do("DELETE", fmt.Sprintf("/memory/admin/memories/%d", id), "admin", nil); status != 200 {
		t.Fatalf("delete: %d", status)
	}
	if _, out = a.Do("POST", "/memory/admin/search", "admin", map[string]any{"owner": "sk-alice", "query": "espresso"}); len(out["results"].([]any)) != 0 {
		t.Errorf("a deleted memory is still retrieved")
	}
	if _, out = a.Do("GET", "/memory/admin/memories?owner=sk-alice", "admin", nil); len(harness.ListContents(out)) != 1 {
		t.Errorf("a deleted memory is still listed: %v", harness.ListContents(out))
	}
	if _, out = a.Do("GET", "/memory/admin/memories?owner=sk-alice&include_deleted=true", "admin", nil); len(harness.ListContents(out)) != 2 {
		t.Errorf("include_deleted: %v", harness.ListContents(out))
	}
	// Purge: gone for good.
	if status, _ = a.Do("DELETE", fmt.Sprintf("/memory/admin/memories/%d?purge=true", id), "admin", nil); status != 200 {
		t.Fatalf("purge: %d", status)
	}
	if status, out = a.Do("GET", fmt.Sprintf("/memory/admin/memories/%d", id), "admin", nil); status != 404 || !strings.HasPrefix(harness.ErrCode(out), "not_found") {
		t.Errorf("a purged memory: %d %v", status, out)
	}

	// Stats and health.
	if status, out = a.Do("GET", "/memory/admin/stats", "admin", nil); status != 200 || out["owners"].(float64) != 2 || out["memories"].(float64) != 2 {
		t.Errorf("stats: %d %v", status, out)
	}
	if status, out = a.Do("GET", "/memory/admin/health", "admin", nil); status != 200 || out["status"] != "ok" || out["index_latency_ms"] == nil {
		t.Errorf("health: %d %v", status, out)
	}
}

func TestAPISelfModeServesOnlyTheCaller(t *testing.T) {
	storage := t.TempDir()
	up := harness.NewFakeLLM(t)
	tester := harness.StartCaddy(t, harness.APIConfig(t, storage, up.Addr(), ""))
	a := harness.APICall{T: t, Client: tester.Client}

	// Alice's memory comes from proxied traffic; Bob's from the self API.
	harness.Post(t, tester, "/v1/chat/completions", "sk-alice", harness.ChatBody(false, harness.Msg("user", "I live in Lisbon.")))
	harness.Settle(t, storage, 1)
	status, out := a.Do("POST", "/memory/memories", "sk-bob", map[string]any{"content": "Bob is learning Portuguese.", "kind": "note"})
	if status != http.StatusCreated {
		t.Fatalf("self create: %d %v", status, out)
	}
	bobID := harness.IDOf(harness.MemoryOf(out))

	_, out = a.Do("GET", "/memory/memories", "sk-alice", nil)
	alice := harness.ListContents(out)
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
		status, out := a.Do(c.method, c.path, "sk-alice", map[string]any{"content": "hijacked"})
		if c.method != "PATCH" {
			status, out = a.Do(c.method, c.path, "sk-alice", nil)
		}
		if status != http.StatusNotFound {
			t.Errorf("%s %s as another owner: %d %v, want 404", c.method, c.path, status, out)
		}
	}
	if _, out = a.Do("GET", fmt.Sprintf("/memory/memories/%d", bobID), "sk-bob", nil); harness.MemoryOf(out)["content"] != "Bob is learning Portuguese." {
		t.Errorf("Bob's memory changed: %v", out)
	}
	// Naming an owner, or no identity at all.
	if status, out = a.Do("GET", "/memory/memories?owner=sk-bob", "sk-alice", nil); status != http.StatusForbidden {
		t.Errorf("self mode with owner=: %d %v", status, out)
	}
	if status, out = a.Do("POST", "/memory/search", "sk-alice", map[string]any{"owner_id": strings.Repeat("a", 32), "query": "x"}); status != http.StatusForbidden {
		t.Errorf("self mode search naming an owner: %d %v", status, out)
	}
	if status, out = a.Do("GET", "/memory/memories", "", nil); status != http.StatusUnauthorized {
		t.Errorf("self mode without a key: %d %v", status, out)
	}
	if status, out = a.Do("DELETE", "/memory/owners/sk-bob", "sk-alice", nil); status != http.StatusForbidden {
		t.Errorf("forgetting someone else: %d %v", status, out)
	}
	// Search and stats are one's own.
	if _, out = a.Do("POST", "/memory/search", "sk-alice", map[string]any{"query": "Portuguese Lisbon"}); strings.Contains(fmt.Sprint(out), "Bob") {
		t.Errorf("search leaked: %v", out)
	}
	if _, out = a.Do("GET", "/memory/stats", "sk-bob", nil); out["memories"].(map[string]any)["total"].(float64) != 1 {
		t.Errorf("self stats: %v", out)
	}
	// Forgetting oneself.
	if status, out = a.Do("DELETE", "/memory/owners/me", "sk-bob", nil); status != 200 {
		t.Fatalf("forget me: %d %v", status, out)
	}
	if _, out = a.Do("GET", "/memory/memories", "sk-bob", nil); len(harness.ListContents(out)) != 0 {
		t.Errorf("after forgetting oneself: %v", harness.ListContents(out))
	}
	if _, out = a.Do("GET", "/memory/memories", "sk-alice", nil); len(harness.ListContents(out)) != 2 {
		t.Errorf("forgetting Bob touched Alice: %v", harness.ListContents(out))
	}
}

func TestAPIIngestIsSearchableOnReturn(t *testing.T) {
	storage := t.TempDir()
	up := harness.NewFakeLLM(t)
	tester := harness.StartCaddy(t, harness.APIConfig(t, storage, up.Addr(), ""))
	a := harness.APICall{T: t, Client: tester.Client}
	status, out := a.Do("POST", "/memory/admin/ingest", "admin", map[string]any{
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
	_, out = a.Do("POST", "/memory/admin/search", "admin", map[string]any{"owner": "sk-carol", "query": "support group"})
	res := out["results"].([]any)
	if len(res) == 0 || res[0].(map[string]any)["ref"] != "D1:1" || !strings.HasPrefix(res[0].(map[string]any)["content"].(string), "Caroline: ") {
		t.Errorf("ingested turn not found with its ref: %v", out)
	}
	_, out = a.Do("POST", "/memory/admin/search", "admin", map[string]any{"owner": "sk-carol", "query": "where does Caroline live"})
	if !strings.Contains(fmt.Sprint(out), "Caroline lives in Boston.") {
		t.Errorf("a speaker's fact is not about that speaker: %v", out)
	}
	if created := res[0].(map[string]any)["created_at"]; created != "2023-05-08T13:56:00Z" {
		t.Errorf("the turn's time was not kept: %v", created)
	}
	// Ingesting the same transcript again stores nothing new.
	a.Do("POST", "/memory/admin/ingest", "admin", map[string]any{"owner": "sk-carol", "session": "2023-05-08",
		"turns": []map[string]any{{"role": "Caroline", "content": "I went to the LGBTQ support group yesterday. I live in Boston.", "ref": "D1:1"}}})
	if _, out = a.Do("GET", "/memory/admin/memories?owner=sk-carol&kind=turn", "admin", nil); len(harness.ListContents(out)) != 2 {
		t.Errorf("re-ingesting duplicated turns: %v", harness.ListContents(out))
	}
}

func TestAPIRejectsBadInputClearly(t *testing.T) {
	storage := t.TempDir()
	up := harness.NewFakeLLM(t)
	tester := harness.StartCaddy(t, harness.APIConfig(t, storage, up.Addr(), "max_body 2KiB"))
	a := harness.APICall{T: t, Client: tester.Client}
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
		status, out := a.Do(c.method, c.path, "admin", c.body)
		if status != c.status || !strings.Contains(harness.ErrCode(out), c.want) {
			t.Errorf("%s %s: %d %q, want %d and %q", c.method, c.path, status, harness.ErrCode(out), c.status, c.want)
		}
	}
}

// TestAPIAdminNeedsCaddyAuth: admin mode with no authentication handler in
// front answers 401, whatever the request carries, unless the operator
// opted out with insecure_no_auth.
func TestAPIAdminNeedsCaddyAuth(t *testing.T) {
	storage := t.TempDir()
	up := harness.NewFakeLLM(t)
	cfg := func(extra string) string {
		return harness.WithStorage(storage, "") + fmt.Sprintf(`http://localhost {
	memory
	handle /memory/admin/* {
		memory_api {
			mode admin
			%[2]s
		}
	}
	reverse_proxy %[1]s
}
`, up.Addr(), extra)
	}
	tester := harness.StartCaddy(t, cfg(""))
	a := harness.APICall{T: t, Client: tester.Client}
	harness.Post(t, tester, "/v1/chat/completions", "sk-victim", harness.ChatBody(false, harness.Msg("user", "I live in Zqlima.")))
	harness.Settle(t, storage, 1)
	for _, auth := range []string{"", "sk-victim", "admin"} {
		status, out := a.Do("GET", "/memory/admin/memories", auth, nil)
		if status != http.StatusUnauthorized || strings.Contains(fmt.Sprint(out), "Zqlima") {
			t.Errorf("unauthenticated admin API with credentials %q: %d %v, want 401", auth, status, out)
		}
	}
	if status, _ := a.Do("DELETE", "/memory/admin/owners/sk-victim", "", nil); status != http.StatusUnauthorized {
		t.Errorf("unauthenticated forget: %d, want 401", status)
	}

	harness.Reload(t, tester, cfg("insecure_no_auth"))
	a.Client = tester.Client
	if status, out := a.Do("GET", "/memory/admin/memories?owner=sk-victim", "", nil); status != http.StatusOK || !strings.Contains(fmt.Sprint(out), "Zqlima") {
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
			up := harness.NewFakeLLM(t)
			tester := harness.StartCaddy(t, harness.WithStorage(storage, "")+"http://localhost {\n"+fmt.Sprintf(site, up.Addr())+"\n}\n")
			api := harness.APICall{T: t, Client: tester.Client}
			harness.Post(t, tester, "/v1/chat/completions", "sk-own-storage", harness.ChatBody(false, harness.Msg("user", "I live in Lisbon.")))
			harness.Settle(t, storage, 1)
			if _, out := api.Do("GET", "/memory/memories?kind=identity", "sk-own-storage", nil); !slices.Contains(harness.ListContents(out), "User lives in Lisbon.") {
				t.Errorf("the bare API lists %v, want what the proxy learned", harness.ListContents(out))
			}
		})
	}
}
