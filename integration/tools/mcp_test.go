package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/caddy-memory/memory/internal/harness"
)

// MCP through real Caddy, with the SDK's own client, on apiConfig's
// layout: self mode at /memory/mcp, admin mode behind basic_auth at
// /memory/admin/mcp.

// mcpAuth sends a self-mode key as a bearer token, or "admin" as the
// basic_auth credentials apiConfig accepts.
type mcpAuth string

func (a mcpAuth) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	switch {
	case a == "admin":
		r.SetBasicAuth("admin", "s3cret")
	case a != "":
		r.Header.Set("Authorization", "Bearer "+string(a))
	}
	return http.DefaultTransport.RoundTrip(r)
}

func mcpDial(t *testing.T, path, auth string) (*mcp.ClientSession, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	client := mcp.NewClient(&mcp.Implementation{Name: "caddy-test", Version: "v0"}, nil)
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{
		Endpoint:   harness.CaddyAddr + path,
		HTTPClient: &http.Client{Transport: mcpAuth(auth), Timeout: 20 * time.Second},
	}, nil)
	if err == nil {
		t.Cleanup(func() { cs.Close() })
	}
	return cs, err
}

// mcpClient is one MCP client session in a test.
type mcpClient struct {
	t  *testing.T
	cs *mcp.ClientSession
}

func dialMCP(t *testing.T, path, auth string) mcpClient {
	t.Helper()
	cs, err := mcpDial(t, path, auth)
	if err != nil {
		t.Fatalf("connecting to %s as %q: %v", path, auth, err)
	}
	return mcpClient{t, cs}
}

func (c mcpClient) tools() []string {
	c.t.Helper()
	res, err := c.cs.ListTools(context.Background(), nil)
	if err != nil {
		c.t.Fatal(err)
	}
	var names []string
	for _, tool := range res.Tools {
		names = append(names, tool.Name)
	}
	slices.Sort(names)
	return names
}

// call calls a tool and returns its structured result decoded, and its
// text if it failed. A protocol error fails the test.
func (c mcpClient) call(name string, args map[string]any) (map[string]any, string) {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	res, err := c.cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		c.t.Fatalf("%s(%v): %v", name, args, err)
	}
	if res.IsError {
		text := ""
		for _, content := range res.Content {
			if tc, ok := content.(*mcp.TextContent); ok {
				text += tc.Text
			}
		}
		return nil, text
	}
	var out map[string]any
	b, _ := json.Marshal(res.StructuredContent)
	if err := json.Unmarshal(b, &out); err != nil {
		c.t.Fatalf("%s: structured content %s: %v", name, b, err)
	}
	return out, ""
}

// ok calls a tool that must succeed.
func (c mcpClient) ok(name string, args map[string]any) map[string]any {
	c.t.Helper()
	out, failed := c.call(name, args)
	if failed != "" {
		c.t.Fatalf("%s(%v) failed: %s", name, args, failed)
	}
	return out
}

// fails calls a tool that must fail and returns its message.
func (c mcpClient) fails(name string, args map[string]any) string {
	c.t.Helper()
	out, failed := c.call(name, args)
	if failed == "" {
		c.t.Errorf("%s(%v) succeeded (%v); want an error result", name, args, out)
	}
	return failed
}

// contents are the contents of a search's results or a list's memories.
func contents(out map[string]any) []string { return harness.FieldContents(out, "results", "memories") }

func TestMCPSelfModeThroughCaddy(t *testing.T) {
	storage := t.TempDir()
	up := harness.NewFakeLLM(t)
	tester := harness.StartCaddy(t, harness.APIConfig(t, storage, up.Addr(), ""))
	a := harness.APICall{T: t, Client: tester.Client}

	// Alice's first memory is learned from proxied traffic: MCP knows her by
	// the same key the proxy does.
	harness.Post(t, tester, "/v1/chat/completions", "sk-alice", harness.ChatBody(false, harness.Msg("user", "I live in Lisbon.")))
	harness.Settle(t, storage, 1)

	alice, bob := dialMCP(t, "/memory/mcp", "sk-alice"), dialMCP(t, "/memory/mcp", "sk-bob")
	if got := alice.tools(); fmt.Sprint(got) != "[add_memory delete_memory list_memories search_memory update_memory]" {
		t.Errorf("self-mode tools: %v", got)
	}
	if got := contents(alice.ok("search_memory", map[string]any{"query": "where do I live", "scope": "facts"})); len(got) == 0 || !strings.Contains(got[0], "Lisbon") {
		t.Errorf("the proxy's memory through MCP: %v", got)
	}

	// Every tool, as Alice.
	added := alice.ok("add_memory", map[string]any{"content": "Alice's cat is called Miso.", "kind": "note"})
	catID := int(added["memory"].(map[string]any)["id"].(float64))
	alice.ok("add_memory", map[string]any{"content": "Alice works at a zqbakery.", "key": "job", "kind": "identity"})
	if got := contents(alice.ok("list_memories", map[string]any{"kind": "note"})); fmt.Sprint(got) != "[Alice's cat is called Miso.]" {
		t.Errorf("list_memories: %v", got)
	}
	alice.ok("update_memory", map[string]any{"id": catID, "content": "Alice's cat is called Pixel."})
	if got := contents(alice.ok("search_memory", map[string]any{"query": "cat"})); fmt.Sprint(got) != "[Alice's cat is called Pixel.]" {
		t.Errorf("after update_memory: %v", got)
	}

	// The REST API finds what MCP added, as a tool's memory, with history.
	status, out := a.Do("GET", fmt.Sprintf("/memory/memories/%d", catID), "sk-alice", nil)
	m := harness.MemoryOf(out)
	if status != 200 || m["source"] != "tool" || m["content"] != "Alice's cat is called Pixel." || len(m["history"].([]any)) != 1 {
		t.Errorf("the MCP memory through REST: %d %v", status, out)
	}

	// Bob cannot touch Alice's memories, by id or otherwise, and never
	// sees them.
	bobAdded := bob.ok("add_memory", map[string]any{"content": "Bob's cat is called Zqrex."})
	bobID := int(bobAdded["memory"].(map[string]any)["id"].(float64))
	for _, c := range []struct {
		tool string
		args map[string]any
	}{
		{"update_memory", map[string]any{"id": catID, "content": "hijacked"}},
		{"delete_memory", map[string]any{"id": catID}},
		{"search_memory", map[string]any{"query": "cat", "owner": "sk-alice"}},
		{"list_memories", map[string]any{"owner_id": m["owner"]}},
	} {
		if msg := bob.fails(c.tool, c.args); msg == "" {
			t.Errorf("Bob's %s on Alice's memories succeeded", c.tool)
		}
	}
	if got := contents(bob.ok("search_memory", map[string]any{"query": "cat Pixel Miso Lisbon zqbakery"})); fmt.Sprint(got) != "[Bob's cat is called Zqrex.]" {
		t.Errorf("Bob's search: %v", got)
	}
	if got := contents(bob.ok("list_memories", nil)); fmt.Sprint(got) != "[Bob's cat is called Zqrex.]" {
		t.Errorf("Bob's list: %v", got)
	}
	if got := contents(alice.ok("search_memory", map[string]any{"query": "cat Zqrex"})); slices.Contains(got, "Bob's cat is called Zqrex.") {
		t.Errorf("Alice's search found Bob's memory: %v", got)
	}
	if got := contents(alice.ok("list_memories", map[string]any{"limit": 100})); strings.Contains(fmt.Sprint(got), "Bob") || len(got) < 3 {
		t.Errorf("Alice's list: %v", got)
	}
	if msg := alice.fails("delete_memory", map[string]any{"id": bobID}); !strings.Contains(msg, "no memory") {
		t.Errorf("Alice deleting Bob's memory: %q", msg)
	}
	if _, out := a.Do("GET", fmt.Sprintf("/memory/memories/%d", catID), "sk-alice", nil); harness.MemoryOf(out)["content"] != "Alice's cat is called Pixel." {
		t.Errorf("Bob's calls changed Alice's memory: %v", out)
	}

	// Alice deletes her own.
	alice.ok("delete_memory", map[string]any{"id": catID})
	if got := contents(alice.ok("search_memory", map[string]any{"query": "cat"})); len(got) != 0 {
		t.Errorf("a deleted memory is found: %v", got)
	}

	// No identity: refused when connecting, with the reason.
	if _, err := mcpDial(t, "/memory/mcp", ""); err == nil || !strings.Contains(err.Error(), "API key") {
		t.Errorf("connecting without a key: %v", err)
	}
}

func TestMCPAdminModeThroughCaddy(t *testing.T) {
	storage := t.TempDir()
	up := harness.NewFakeLLM(t)
	tester := harness.StartCaddy(t, harness.APIConfig(t, storage, up.Addr(), ""))
	a := harness.APICall{T: t, Client: tester.Client}
	harness.Post(t, tester, "/v1/chat/completions", "sk-carol", harness.ChatBody(false, harness.Msg("user", "I live in Zqoslo.")))
	harness.Settle(t, storage, 1)

	// basic_auth stands in front of the admin MCP as of the REST routes.
	for _, auth := range []string{"", "sk-carol"} {
		if _, err := mcpDial(t, "/memory/admin/mcp", auth); err == nil || !strings.Contains(err.Error(), "Unauthorized") {
			t.Errorf("admin MCP with credentials %q: %v, want 401", auth, err)
		}
	}
	op := dialMCP(t, "/memory/admin/mcp", "admin")
	if got := op.tools(); fmt.Sprint(got) != "[add_memory delete_memory forget_owner list_memories search_memory update_memory]" {
		t.Errorf("admin tools: %v", got)
	}

	// The owner argument, by raw value or owner id.
	if msg := op.fails("search_memory", map[string]any{"query": "live"}); !strings.Contains(msg, "name the owner") {
		t.Errorf("admin search without an owner: %q", msg)
	}
	if got := contents(op.ok("search_memory", map[string]any{"owner": "sk-carol", "query": "where does she live"})); len(got) == 0 || !strings.Contains(got[0], "Zqoslo") {
		t.Errorf("admin search for Carol: %v", got)
	}
	added := op.ok("add_memory", map[string]any{"owner": "sk-dave", "content": "Dave is allergic to zqpeanuts.", "kind": "identity"})
	dave := added["memory"].(map[string]any)
	daveID := int(dave["id"].(float64))
	if got := contents(op.ok("list_memories", map[string]any{"owner_id": dave["owner_id"]})); fmt.Sprint(got) != "[Dave is allergic to zqpeanuts.]" {
		t.Errorf("admin list by owner_id: %v", got)
	}
	op.ok("update_memory", map[string]any{"id": daveID, "content": "Dave is allergic to zqpeanuts and cats."})
	// Dave, in self mode, sees the operator's memory as a tool's.
	_, out := a.Do("GET", "/memory/memories", "sk-dave", nil)
	if ms, _ := out["memories"].([]any); len(ms) != 1 || ms[0].(map[string]any)["source"] != "tool" ||
		ms[0].(map[string]any)["content"] != "Dave is allergic to zqpeanuts and cats." {
		t.Errorf("Dave's memories through REST: %v", out)
	}
	op.ok("delete_memory", map[string]any{"id": daveID})

	// forget_owner removes Carol and nobody else.
	if _, out = a.Do("GET", "/memory/injections", "sk-carol", nil); len(out["injections"].([]any)) != 1 {
		t.Fatalf("Carol's receipts before forget_owner: %v", out)
	}
	forgot := op.ok("forget_owner", map[string]any{"owner": "sk-carol"})
	if f := forgot["forgotten"].(map[string]any); f["memories"].(float64) < 1 {
		t.Errorf("forget_owner answered %v", forgot)
	}
	if got := contents(op.ok("list_memories", map[string]any{"owner": "sk-carol"})); len(got) != 0 {
		t.Errorf("Carol after forget_owner: %v", got)
	}
	// Her chat request's receipt goes with her, as through REST.
	if _, out = a.Do("GET", "/memory/injections", "sk-carol", nil); len(out["injections"].([]any)) != 0 {
		t.Errorf("Carol's receipts after forget_owner: %v", out)
	}
	if _, out = a.Do("GET", "/memory/admin/memories?owner=sk-dave&include_deleted=true", "admin", nil); len(harness.ListContents(out)) != 1 {
		t.Errorf("forgetting Carol touched Dave: %v", out)
	}
}

// TestMCPBatchIsRefusedThroughCaddy: a JSON-RPC batch buys no work per
// item. Self mode takes any bearer string as an identity, so anyone who
// reaches /mcp could otherwise send one small request of 10,000 calls and
// get tens of megabytes back. MCP removed batches in 2025-06-18; a client
// that announces an earlier revision (or none) gets the same refusal.
func TestMCPBatchIsRefusedThroughCaddy(t *testing.T) {
	storage := t.TempDir()
	up := harness.NewFakeLLM(t)
	harness.StartCaddy(t, harness.APIConfig(t, storage, up.Addr(), ""))

	send := func(body, version string) (int, []byte, time.Duration) {
		t.Helper()
		req, _ := http.NewRequest(http.MethodPost, harness.CaddyAddr+"/memory/mcp", strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer anyone-at-all")
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if version != "" {
			req.Header.Set("MCP-Protocol-Version", version)
		}
		start := time.Now()
		resp, err := (&http.Client{Timeout: 60 * time.Second}).Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		// Read at most a little more than a refusal can be: the
		// unbounded answer was 58 MB.
		raw, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
		return resp.StatusCode, raw, time.Since(start)
	}
	calls := make([]string, 10_000)
	for i := range calls {
		calls[i] = fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/list"}`, i+1)
	}
	batch := "[" + strings.Join(calls, ",") + "]"
	for _, c := range []struct{ name, body, version string }{
		{"10,000 calls, no protocol version", batch, ""},
		{"10,000 calls, 2025-03-26", batch, "2025-03-26"},
		{"after whitespace", " \r\n\t" + batch, ""},
		{"one call", "[" + calls[0] + "]", ""},
	} {
		status, raw, took := send(c.body, c.version)
		var answer struct {
			JSONRPC string          `json:"jsonrpc"`
			ID      json.RawMessage `json:"id"`
			Error   struct {
				Code    int    `json:"code"`
				Message string `json:"message"`
			} `json:"error"`
		}
		err := json.Unmarshal(raw, &answer)
		if status != http.StatusBadRequest || err != nil || answer.JSONRPC != "2.0" || string(answer.ID) != "null" ||
			answer.Error.Code != -32600 || !strings.Contains(answer.Error.Message, "one request per") {
			t.Errorf("%s: %d, %d bytes in %v: %.300s", c.name, status, len(raw), took, raw)
			continue
		}
		t.Logf("%s (%d bytes): refused with %d bytes in %v", c.name, len(c.body), len(raw), took)
	}
	// A single call still works, as does the SDK's client.
	if status, raw, _ := send(calls[0], "2025-06-18"); status != http.StatusOK || !strings.Contains(string(raw), `"search_memory"`) {
		t.Errorf("one tools/list: %d %.300s", status, raw)
	}
	if got := dialMCP(t, "/memory/mcp", "sk-batch").tools(); len(got) != 5 {
		t.Errorf("the SDK's client lists %v", got)
	}
}
