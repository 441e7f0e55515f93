package api_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/caddy-memory/memory/internal/api"
	"github.com/caddy-memory/memory/internal/engine"
	"github.com/caddy-memory/memory/store"
)

// These tests talk to the API's /mcp route with the SDK's own client over
// real HTTP, as an MCP client does.

// withKey sends key as the Authorization header (none for "").
type withKey string

func (k withKey) RoundTrip(r *http.Request) (*http.Response, error) {
	if k != "" {
		r = r.Clone(r.Context())
		r.Header.Set("Authorization", string(k))
	}
	return http.DefaultTransport.RoundTrip(r)
}

func serveMCP(t *testing.T, cfg api.Config) string {
	t.Helper()
	srv := httptest.NewServer(newAPI(cfg))
	t.Cleanup(srv.Close)
	return srv.URL + "/mcp"
}

func mcpConnect(t *testing.T, endpoint, key string) (*mcp.ClientSession, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c := mcp.NewClient(&mcp.Implementation{Name: "api-test", Version: "v0"}, nil)
	cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: endpoint, HTTPClient: &http.Client{Transport: withKey(key)}}, nil)
	if err == nil {
		t.Cleanup(func() { cs.Close() })
	}
	return cs, err
}

func mcpSession(t *testing.T, endpoint, key string) *mcp.ClientSession {
	t.Helper()
	cs, err := mcpConnect(t, endpoint, key)
	if err != nil {
		t.Fatalf("connecting to %s: %v", endpoint, err)
	}
	return cs
}

// callTool calls a tool; a protocol failure fails the test (tools answer
// every mistake with a result).
func callTool(t *testing.T, cs *mcp.ClientSession, name string, args map[string]any) *mcp.CallToolResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s(%v): protocol error %v; want a tool result", name, args, err)
	}
	return res
}

// toolOK calls a tool that must succeed and decodes its structured result
// into out, checking that the text content carries the same JSON.
func toolOK(t *testing.T, cs *mcp.ClientSession, name string, args map[string]any, out any) {
	t.Helper()
	res := callTool(t, cs, name, args)
	if res.IsError {
		t.Fatalf("%s(%v) failed: %s", name, args, toolText(res))
	}
	structured, err := json.Marshal(res.StructuredContent)
	if err != nil {
		t.Fatal(err)
	}
	var fromText, fromStructured any
	if err := json.Unmarshal([]byte(toolText(res)), &fromText); err != nil {
		t.Fatalf("%s: text content %q is not JSON: %v", name, toolText(res), err)
	}
	_ = json.Unmarshal(structured, &fromStructured)
	if !reflect.DeepEqual(fromText, fromStructured) {
		t.Errorf("%s: text content %s differs from structured content %s", name, toolText(res), structured)
	}
	if out != nil {
		if err := json.Unmarshal(structured, out); err != nil {
			t.Fatalf("%s: decoding %s: %v", name, structured, err)
		}
	}
}

// toolErr calls a tool that must fail and returns its message.
func toolErr(t *testing.T, cs *mcp.ClientSession, name string, args map[string]any) string {
	t.Helper()
	res := callTool(t, cs, name, args)
	if !res.IsError {
		t.Errorf("%s(%v) succeeded (%s); want an error result", name, args, toolText(res))
	}
	return toolText(res)
}

func toolText(res *mcp.CallToolResult) string {
	var s []string
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			s = append(s, tc.Text)
		}
	}
	return strings.Join(s, "\n")
}

// The tools' answers, decoded.
type (
	mcpMemory struct {
		ID      uint64 `json:"id"`
		OwnerID string `json:"owner_id"`
		Kind    string `json:"kind"`
		Key     string `json:"key"`
		Content string `json:"content"`
		Source  string `json:"source"`
		Version int    `json:"version"`
	}
	mcpAdded struct {
		Memory mcpMemory `json:"memory"`
		Op     string    `json:"op"`
	}
	mcpFound struct {
		Results []engine.Recollection `json:"results"`
	}
	mcpPage struct {
		Memories   []mcpMemory `json:"memories"`
		NextCursor string      `json:"next_cursor"`
	}
)

func mcpAdd(t *testing.T, cs *mcp.ClientSession, args map[string]any) mcpMemory {
	t.Helper()
	var a mcpAdded
	toolOK(t, cs, "add_memory", args, &a)
	if a.Memory.ID == 0 {
		t.Fatalf("add_memory(%v) answered %+v", args, a)
	}
	return a.Memory
}

func mcpSearch(t *testing.T, cs *mcp.ClientSession, args map[string]any) []string {
	t.Helper()
	var f mcpFound
	toolOK(t, cs, "search_memory", args, &f)
	var s []string
	for _, r := range f.Results {
		s = append(s, r.Content)
	}
	return s
}

func mcpList(t *testing.T, cs *mcp.ClientSession, args map[string]any) []string {
	t.Helper()
	var all []string
	cursor := ""
	for range 100 {
		a := map[string]any{"limit": 2, "cursor": cursor}
		for k, v := range args {
			a[k] = v
		}
		var p mcpPage
		toolOK(t, cs, "list_memories", a, &p)
		for _, m := range p.Memories {
			all = append(all, m.Content)
		}
		if cursor = p.NextCursor; cursor == "" {
			return all
		}
	}
	t.Fatal("list_memories never ended")
	return nil
}

// toolSchemas lists the tools and their argument names.
func toolSchemas(t *testing.T, cs *mcp.ClientSession) map[string]map[string]any {
	t.Helper()
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]map[string]any{}
	for _, tool := range res.Tools {
		schema, _ := tool.InputSchema.(map[string]any)
		props, _ := schema["properties"].(map[string]any)
		out[tool.Name] = props
		if tool.Description == "" {
			t.Errorf("tool %s has no description", tool.Name)
		}
		if tool.OutputSchema == nil {
			t.Errorf("tool %s has no output schema", tool.Name)
		}
	}
	return out
}

func TestMCPToolsPerMode(t *testing.T) {
	e := openEngine(t)
	self := toolSchemas(t, mcpSession(t, serveMCP(t, api.Config{Engine: e, Mode: api.Self, Caller: caller}), "alice-key"))
	admin := toolSchemas(t, mcpSession(t, serveMCP(t, api.Config{Engine: e, Mode: api.Admin, Caller: caller}), ""))

	names := func(m map[string]map[string]any) []string {
		var s []string
		for n := range m {
			s = append(s, n)
		}
		slices.Sort(s)
		return s
	}
	want := []string{"add_memory", "delete_memory", "list_memories", "search_memory", "update_memory"}
	if got := names(self); !reflect.DeepEqual(got, want) {
		t.Errorf("self-mode tools %v, want %v", got, want)
	}
	wantAdmin := []string{"add_memory", "delete_memory", "forget_owner", "list_memories", "search_memory", "update_memory"}
	if got := names(admin); !reflect.DeepEqual(got, wantAdmin) {
		t.Errorf("admin tools %v, want %v", got, wantAdmin)
	}
	for name, props := range self {
		if props["owner"] != nil || props["owner_id"] != nil {
			t.Errorf("self-mode %s offers an owner argument: %v", name, props)
		}
	}
	for name, props := range admin {
		if props["owner"] == nil || props["owner_id"] == nil {
			t.Errorf("admin %s lacks the owner arguments: %v", name, props)
		}
	}
	// What struct tags cannot say is in the schema too.
	scope := self["search_memory"]["scope"].(map[string]any)
	if fmt.Sprint(scope["enum"]) != "[all facts episodes transcript]" {
		t.Errorf("scope schema %v", scope)
	}
	limit := self["search_memory"]["limit"].(map[string]any)
	if limit["minimum"] != 1.0 || limit["maximum"] != 50.0 || !strings.Contains(limit["description"].(string), "default 5") {
		t.Errorf("search limit schema %v", limit)
	}
}

// TestMCPArgumentsLeftOut: no arguments at all ("arguments": null, as the
// SDK's client sends for nil) take the defaults, or say what is missing.
func TestMCPArgumentsLeftOut(t *testing.T) {
	e := openEngine(t)
	cs := mcpSession(t, serveMCP(t, api.Config{Engine: e, Mode: api.Self, Caller: caller}), "alice-key")
	for i := range 7 {
		mcpAdd(t, cs, map[string]any{"content": fmt.Sprintf("Alice's zqfact number %d.", i)})
	}
	var p mcpPage
	toolOK(t, cs, "list_memories", nil, &p)
	if len(p.Memories) != 7 || p.NextCursor != "" {
		t.Errorf("list_memories with no arguments: %d memories, cursor %q", len(p.Memories), p.NextCursor)
	}
	if got := mcpSearch(t, cs, map[string]any{"query": "zqfact number"}); len(got) != 5 {
		t.Errorf("search_memory's default limit gave %d results, want 5", len(got))
	}
	for _, tool := range []string{"search_memory", "add_memory", "update_memory", "delete_memory"} {
		if msg := toolErr(t, cs, tool, nil); !strings.Contains(msg, "missing") && !strings.Contains(msg, "required") {
			t.Errorf("%s with no arguments: %q", tool, msg)
		}
	}
}

// TestMCPPanicFailsOnlyItsRequest: the SDK runs tools on its own
// goroutines, where no HTTP server recovers a panic; one must fail its
// request and leave the process (here, the test binary) running.
func TestMCPPanicFailsOnlyItsRequest(t *testing.T) {
	// No engine: resolving an owner dereferences nil.
	cs := mcpSession(t, serveMCP(t, api.Config{Mode: api.Admin, Caller: caller}), "")
	for range 2 {
		_, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "search_memory", Arguments: map[string]any{"owner": "a", "query": "x"}})
		if err == nil || !strings.Contains(err.Error(), "logged") {
			t.Errorf("a panicking tool: %v, want a failed request", err)
		}
	}
	if _, err := cs.ListTools(context.Background(), nil); err != nil {
		t.Errorf("after a panic: %v", err)
	}
}

func TestMCPSelfTools(t *testing.T) {
	e := openEngine(t)
	url := serveMCP(t, api.Config{Engine: e, Mode: api.Self, Caller: caller})
	cs := mcpSession(t, url, "alice-key")
	owner := e.OwnerID("alice-key")

	tea := mcpAdd(t, cs, map[string]any{"content": "  Alice prefers green tea.  ", "kind": "preference"})
	if tea.Content != "Alice prefers green tea." || tea.Kind != "preference" || tea.Source != store.SourceTool || tea.OwnerID != "" {
		t.Errorf("add_memory stored %+v", tea)
	}
	cat := mcpAdd(t, cs, map[string]any{"content": "Alice's cat is called Miso."})
	if cat.Kind != "note" {
		t.Errorf("default kind %q, want note", cat.Kind)
	}
	// Saying it again is another mention of the same memory.
	var again mcpAdded
	toolOK(t, cs, "add_memory", map[string]any{"content": "Alice's cat is called Miso."}, &again)
	if again.Memory.ID != cat.ID || again.Op != string(store.Updated) {
		t.Errorf("the same memory again: %+v, want an update of %d", again, cat.ID)
	}
	// A key makes a fact that changes: the new content supersedes.
	city := mcpAdd(t, cs, map[string]any{"content": "Alice lives in Lisbon.", "key": "home_city"})
	var moved mcpAdded
	toolOK(t, cs, "add_memory", map[string]any{"content": "Alice lives in Porto.", "key": "home_city"}, &moved)
	if moved.Memory.ID != city.ID || moved.Op != string(store.Superseded) || moved.Memory.Key != "home_city" {
		t.Errorf("a new content under the key: %+v", moved)
	}
	if m := storedMemory(t, e, owner, city.ID); len(m.History) != 1 || m.History[0].Content != "Alice lives in Lisbon." || m.Source != store.SourceTool {
		t.Errorf("keyed memory's record: %+v", m)
	}

	// Search: structured results with relevance, counted as used.
	var found mcpFound
	toolOK(t, cs, "search_memory", map[string]any{"query": "what is the cat called"}, &found)
	if len(found.Results) == 0 || found.Results[0].ID != cat.ID || found.Results[0].Relevance != 1 ||
		found.Results[0].Category != "note" || found.Results[0].CreatedAt.IsZero() {
		t.Fatalf("search_memory: %+v", found)
	}
	waitUsed(t, e, owner, cat.ID)
	if got := mcpSearch(t, cs, map[string]any{"query": "tea cat Porto", "limit": 1}); len(got) != 1 {
		t.Errorf("limit 1 gave %v", got)
	}
	if got := mcpSearch(t, cs, map[string]any{"query": "cat", "scope": "transcript"}); len(got) != 0 {
		t.Errorf("transcript scope found facts: %v", got)
	}

	// List, a page at a time.
	if got := mcpList(t, cs, nil); !reflect.DeepEqual(got, []string{"Alice prefers green tea.", "Alice's cat is called Miso.", "Alice lives in Porto."}) {
		t.Errorf("list_memories: %v", got)
	}
	if got := mcpList(t, cs, map[string]any{"kind": "preference"}); !reflect.DeepEqual(got, []string{"Alice prefers green tea."}) {
		t.Errorf("list_memories of a kind: %v", got)
	}

	// Update: a new version, the old text kept.
	var upd struct{ Memory mcpMemory }
	toolOK(t, cs, "update_memory", map[string]any{"id": tea.ID, "content": "Alice prefers black coffee."}, &upd)
	if upd.Memory.Content != "Alice prefers black coffee." || upd.Memory.Version != tea.Version+1 {
		t.Errorf("update_memory answered %+v", upd.Memory)
	}
	if m := storedMemory(t, e, owner, tea.ID); len(m.History) != 1 || m.History[0].Content != "Alice prefers green tea." {
		t.Errorf("the old text is not in the history: %+v", m.History)
	}
	if got := mcpSearch(t, cs, map[string]any{"query": "coffee"}); !reflect.DeepEqual(got, []string{"Alice prefers black coffee."}) {
		t.Errorf("the new text is not searchable: %v", got)
	}

	// Delete: soft, never recalled again.
	toolOK(t, cs, "delete_memory", map[string]any{"id": cat.ID}, nil)
	if m := storedMemory(t, e, owner, cat.ID); m.DeletedAt == nil {
		t.Error("delete_memory did not delete")
	}
	if got := mcpSearch(t, cs, map[string]any{"query": "cat Miso"}); len(got) != 0 {
		t.Errorf("a deleted memory is found: %v", got)
	}
	if got := mcpList(t, cs, nil); slices.Contains(got, "Alice's cat is called Miso.") {
		t.Errorf("a deleted memory is listed: %v", got)
	}
	msg := toolErr(t, cs, "update_memory", map[string]any{"id": cat.ID, "content": "Alice's cat is called Pixel."})
	if !strings.Contains(msg, "deleted") || !strings.Contains(msg, "add_memory") {
		t.Errorf("updating a deleted memory: %q", msg)
	}
}

// waitUsed waits for the engine to record a use of id (it writes uses in
// the background).
func waitUsed(t *testing.T, e *engine.Engine, owner string, id uint64) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for storedMemory(t, e, owner, id).Uses == 0 {
		if time.Now().After(deadline) {
			t.Fatalf("search_memory did not count memory %d as used", id)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestMCPSelfIsolatesOwners(t *testing.T) {
	e := openEngine(t)
	url := serveMCP(t, api.Config{Engine: e, Mode: api.Self, Caller: caller})
	alice, bob := mcpSession(t, url, "alice-key"), mcpSession(t, url, "bob-key")
	mcpAdd(t, alice, map[string]any{"content": "Alice likes zqsharedword and sailing."})
	bm := mcpAdd(t, bob, map[string]any{"content": "Bob likes zqsharedword and chess."})

	// Bob's id is simply not found for Alice, whatever she does with it.
	for _, c := range []struct {
		tool string
		args map[string]any
	}{
		{"update_memory", map[string]any{"id": bm.ID, "content": "hijacked"}},
		{"delete_memory", map[string]any{"id": bm.ID}},
	} {
		if msg := toolErr(t, alice, c.tool, c.args); !strings.Contains(msg, fmt.Sprintf("no memory %d", bm.ID)) {
			t.Errorf("%s on another owner's memory: %q, want not found", c.tool, msg)
		}
	}
	if m := storedMemory(t, e, e.OwnerID("bob-key"), bm.ID); m.Content != "Bob likes zqsharedword and chess." || m.DeletedAt != nil {
		t.Errorf("Alice changed Bob's memory: %+v", m)
	}
	// Search and list are one's own.
	for _, scope := range []string{"all", "facts"} {
		if got := mcpSearch(t, alice, map[string]any{"query": "zqsharedword chess", "scope": scope}); len(got) != 1 || strings.Contains(got[0], "Bob") {
			t.Errorf("Alice's search (%s) found %v", scope, got)
		}
	}
	if got := mcpList(t, alice, nil); len(got) != 1 || strings.Contains(got[0], "Bob") {
		t.Errorf("Alice lists %v", got)
	}
	// Even with Bob's cursor.
	var bobPage mcpPage
	mcpAdd(t, bob, map[string]any{"content": "Bob's second memory."})
	toolOK(t, bob, "list_memories", map[string]any{"limit": 1}, &bobPage)
	if bobPage.NextCursor == "" {
		t.Fatal("Bob's first page has no cursor")
	}
	if msg := toolErr(t, alice, "list_memories", map[string]any{"cursor": bobPage.NextCursor}); !strings.Contains(msg, "cursor") {
		t.Errorf("Alice with Bob's cursor: %q", msg)
	}

	// Naming an owner is refused, even oneself, and changes nothing.
	for _, args := range []map[string]any{
		{"query": "chess", "owner": "bob-key"},
		{"query": "chess", "owner_id": e.OwnerID("bob-key")},
		{"query": "chess", "owner": "alice-key"},
	} {
		if msg := toolErr(t, alice, "search_memory", args); !strings.Contains(msg, "owner") {
			t.Errorf("search naming an owner: %q", msg)
		}
	}
	toolErr(t, alice, "add_memory", map[string]any{"content": "planted", "owner": "bob-key"})
	if got := mcpList(t, bob, nil); len(got) != 2 {
		t.Errorf("Bob's memories after Alice's attempts: %v", got)
	}
}

func TestMCPSelfNeedsAnIdentity(t *testing.T) {
	e := openEngine(t)
	url := serveMCP(t, api.Config{Engine: e, Mode: api.Self, Caller: caller})

	// The SDK's client fails to connect, with the server's explanation.
	_, err := mcpConnect(t, url, "")
	if err == nil || !strings.Contains(err.Error(), "API key") {
		t.Errorf("connecting without an identity: %v, want the server's explanation", err)
	}
	// Over plain HTTP: 401, and a JSON-RPC error answering the request.
	req, _ := http.NewRequest("POST", url, strings.NewReader(`{"jsonrpc":"2.0","id":7,"method":"tools/list"}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var body struct {
		ID    json.RawMessage `json:"id"`
		Error struct {
			Message string `json:"message"`
		} `json:"error"`
	}
	raw, _ := io.ReadAll(resp.Body)
	if err := json.Unmarshal(raw, &body); err != nil || resp.StatusCode != http.StatusUnauthorized || string(body.ID) != "7" || body.Error.Message == "" {
		t.Errorf("without an identity: %d %s, want 401 with a JSON-RPC error for id 7", resp.StatusCode, raw)
	}
}

func TestMCPToolErrorsSayWhatToDo(t *testing.T) {
	e := openEngine(t)
	cs := mcpSession(t, serveMCP(t, api.Config{Engine: e, Mode: api.Self, Caller: caller}), "alice-key")
	m := mcpAdd(t, cs, map[string]any{"content": "Alice plays the cello."})
	for _, c := range []struct {
		tool string
		args map[string]any
		want string
	}{
		{"add_memory", map[string]any{"content": "   "}, "content is required"},
		{"add_memory", map[string]any{"content": strings.Repeat("x", store.MaxContent+1)}, "a memory holds at most"},
		{"add_memory", map[string]any{"content": "x", "kind": "Not A Kind"}, "lowercase"},
		{"add_memory", map[string]any{"content": "x", "key": strings.Repeat("k", 300)}, "key is longer"},
		{"add_memory", map[string]any{}, "content"},
		{"search_memory", map[string]any{"query": " "}, "say what to recall"},
		{"search_memory", map[string]any{"query": "cello", "limit": 51}, "maximum"},
		{"search_memory", map[string]any{"query": "cello", "limit": 0}, "minimum"},
		{"search_memory", map[string]any{"query": "cello", "scope": "everything"}, "episodes"},
		{"search_memory", map[string]any{"query": "cello", "limt": 3}, "limt"},
		{"list_memories", map[string]any{"cursor": "bogus"}, "cursor"},
		{"list_memories", map[string]any{"limit": 101}, "maximum"},
		{"update_memory", map[string]any{"id": 999, "content": "x"}, "no memory 999"},
		{"update_memory", map[string]any{"id": m.ID, "content": ""}, "content is required"},
		{"update_memory", map[string]any{"id": 0, "content": "x"}, "minimum"},
		{"delete_memory", map[string]any{"id": 999}, "no memory 999"},
		{"delete_memory", map[string]any{"id": "seven"}, "id"},
	} {
		if msg := toolErr(t, cs, c.tool, c.args); !strings.Contains(msg, c.want) {
			t.Errorf("%s(%v): %q, want it to say %q", c.tool, c.args, msg, c.want)
		}
	}
	if got := storedMemory(t, e, e.OwnerID("alice-key"), m.ID); got.Content != "Alice plays the cello." || got.Version != m.Version {
		t.Errorf("refused calls changed the memory: %+v", got)
	}
	if st, _ := e.Stats(); st.Memories != 1 {
		t.Errorf("refused calls stored memories: %d", st.Memories)
	}
}

func TestMCPAdmin(t *testing.T) {
	e := openEngine(t)
	authenticated := func(r *http.Request) bool { return r.Header.Get("Authorization") == "operator" }
	url := serveMCP(t, api.Config{Engine: e, Mode: api.Admin, Caller: caller, Authenticated: authenticated})

	// Admin mode answers only what Caddy authenticated, MCP included.
	if _, err := mcpConnect(t, url, ""); err == nil || !strings.Contains(err.Error(), "Unauthorized") {
		t.Errorf("unauthenticated admin MCP: %v, want 401", err)
	}
	cs := mcpSession(t, url, "operator")

	// The per-owner tools need an owner, by value or by id.
	for _, c := range []struct {
		tool string
		args map[string]any
	}{
		{"add_memory", map[string]any{"content": "x"}},
		{"search_memory", map[string]any{"query": "x"}},
		{"forget_owner", map[string]any{}},
	} {
		if msg := toolErr(t, cs, c.tool, c.args); !strings.Contains(msg, "name the owner") {
			t.Errorf("%s without an owner: %q", c.tool, msg)
		}
	}
	if msg := toolErr(t, cs, "search_memory", map[string]any{"query": "x", "owner": "a", "owner_id": e.OwnerID("a")}); !strings.Contains(msg, "not both") {
		t.Errorf("both owner and owner_id: %q", msg)
	}
	if msg := toolErr(t, cs, "search_memory", map[string]any{"query": "x", "owner_id": "alice"}); !strings.Contains(msg, "32 hex") {
		t.Errorf("a bad owner_id: %q", msg)
	}

	alice, bob := e.OwnerID("alice-key"), e.OwnerID("bob-key")
	am := mcpAdd(t, cs, map[string]any{"owner": "alice-key", "content": "Alice sails on weekends."})
	bm := mcpAdd(t, cs, map[string]any{"owner_id": bob, "content": "Bob plays chess on weekends."})
	if am.OwnerID != alice || bm.OwnerID != bob {
		t.Errorf("owners of the added memories: %s %s, want %s %s", am.OwnerID, bm.OwnerID, alice, bob)
	}
	if got := mcpSearch(t, cs, map[string]any{"owner": "alice-key", "query": "weekends"}); !reflect.DeepEqual(got, []string{"Alice sails on weekends."}) {
		t.Errorf("admin search for Alice: %v", got)
	}
	// Listing without an owner spans every owner; with one, only theirs.
	if got := mcpList(t, cs, nil); len(got) != 2 {
		t.Errorf("admin list of everyone: %v", got)
	}
	if got := mcpList(t, cs, map[string]any{"owner_id": alice}); !reflect.DeepEqual(got, []string{"Alice sails on weekends."}) {
		t.Errorf("admin list of Alice: %v", got)
	}
	// By id, with or without the owner; a wrong owner does not find it.
	toolOK(t, cs, "update_memory", map[string]any{"id": am.ID, "content": "Alice sails on Sundays."}, nil)
	if msg := toolErr(t, cs, "update_memory", map[string]any{"id": am.ID, "owner": "bob-key", "content": "x"}); !strings.Contains(msg, "no memory") {
		t.Errorf("update naming the wrong owner: %q", msg)
	}
	toolOK(t, cs, "delete_memory", map[string]any{"id": bm.ID, "owner": "bob-key"}, nil)
	if m := storedMemory(t, e, bob, bm.ID); m.DeletedAt == nil {
		t.Error("admin delete did not delete")
	}

	// forget_owner removes everything of one owner only.
	var f struct {
		OwnerID   string `json:"owner_id"`
		Forgotten struct {
			Memories int `json:"memories"`
		} `json:"forgotten"`
	}
	toolOK(t, cs, "forget_owner", map[string]any{"owner": "alice-key"}, &f)
	if f.OwnerID != alice || f.Forgotten.Memories != 1 {
		t.Errorf("forget_owner answered %+v", f)
	}
	if _, err := e.Get(alice, am.ID); err == nil {
		t.Error("Alice's memory survived forget_owner")
	}
	if _, err := e.Get(bob, bm.ID); err != nil {
		t.Errorf("forgetting Alice touched Bob: %v", err)
	}
}

func TestMCPHTTP(t *testing.T) {
	e := openEngine(t)
	url := serveMCP(t, api.Config{Engine: e, Mode: api.Self, Caller: caller})
	post := func(host, body string) *http.Response {
		req, _ := http.NewRequest("POST", url, strings.NewReader(body))
		req.Host = host
		req.Header.Set("Authorization", "alice-key")
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("MCP-Protocol-Version", "2025-06-18")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { resp.Body.Close() })
		return resp
	}
	// Stateless: a tools/list with no initialize and no session id, and a
	// plain JSON answer. The loopback listener with a public Host is how
	// Caddy behind a tunnel sees requests; Caddy, not the SDK, checks hosts.
	resp := post("memory.example.com", `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`)
	raw, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") ||
		!strings.Contains(string(raw), `"search_memory"`) || resp.Header.Get("Mcp-Session-Id") != "" {
		t.Errorf("stateless tools/list: %d %v %s", resp.StatusCode, resp.Header, raw)
	}
	// The SDK's own body limit is the API's.
	big := post("127.0.0.1", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"add_memory","arguments":{"content":"`+strings.Repeat("x", 2<<20)+`"}}}`)
	if big.StatusCode != http.StatusRequestEntityTooLarge {
		t.Errorf("a body over max_body: %d", big.StatusCode)
	}
	// Only POST.
	req, _ := http.NewRequest("GET", url, nil)
	req.Header.Set("Authorization", "alice-key")
	get, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	get.Body.Close()
	if get.StatusCode != http.StatusMethodNotAllowed || get.Header.Get("Allow") != "POST" {
		t.Errorf("GET /mcp: %d Allow %q", get.StatusCode, get.Header.Get("Allow"))
	}
}

// TestMCPConcurrentOwners runs many owners' sessions at once: each request
// builds its own server from shared tool definitions, and no owner may see
// another's memories.
func TestMCPConcurrentOwners(t *testing.T) {
	e := openEngine(t)
	url := serveMCP(t, api.Config{Engine: e, Mode: api.Self, Caller: caller})
	const owners = 8
	var wg sync.WaitGroup
	for i := range owners {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cs, err := mcpConnect(t, url, fmt.Sprintf("key-%d", i))
			if err != nil {
				t.Error(err)
				return
			}
			ctx := context.Background()
			for j := range 3 {
				content := fmt.Sprintf("Owner %d keeps zqcommon fact %d.", i, j)
				res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "add_memory", Arguments: map[string]any{"content": content}})
				if err != nil || res.IsError {
					t.Errorf("owner %d add: %v %v", i, err, res)
					return
				}
				res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "search_memory", Arguments: map[string]any{"query": "zqcommon fact", "limit": 50}})
				if err != nil || res.IsError {
					t.Errorf("owner %d search: %v %v", i, err, res)
					return
				}
				var found mcpFound
				b, _ := json.Marshal(res.StructuredContent)
				_ = json.Unmarshal(b, &found)
				if len(found.Results) != j+1 {
					t.Errorf("owner %d finds %d memories after %d adds", i, len(found.Results), j+1)
				}
				for _, r := range found.Results {
					if !strings.HasPrefix(r.Content, fmt.Sprintf("Owner %d ", i)) {
						t.Errorf("owner %d found %q", i, r.Content)
					}
				}
			}
		}()
	}
	wg.Wait()
}
