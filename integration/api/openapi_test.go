package api

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"mime"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/caddy-memory/memory/internal/api"
	"github.com/caddy-memory/memory/internal/harness"
	"github.com/caddy-memory/memory/internal/openapi"
)

// TestOpenAPIDocumentsTheAPI: memory_api serves its OpenAPI document at
// <mount>/openapi.json, with that mount as its server; every route of the
// route table is in it; and every operation it documents, called through
// Caddy as it documents it (its parameters' and bodies' examples), answers
// (neither 404 nor 405), in admin mode with success, with a body of the
// type and the schema the document gives for that status.
func TestOpenAPIDocumentsTheAPI(t *testing.T) {
	storage := t.TempDir()
	up := harness.NewFakeLLM(t)
	tester := harness.StartCaddy(t, harness.APIConfig(t, storage, up.Addr(), ""))
	client := harness.NotFollowing(tester.Client)
	a := harness.APICall{T: t, Client: client}

	// Alice has a fact learned through the proxy, a transcript, a receipt
	// and a memory made through the API, so each route has something to
	// answer with.
	harness.Post(t, tester, "/v1/chat/completions", "sk-alice", harness.ChatBody(false, harness.Msg("user", "I'm allergic to peanuts.")))
	harness.Settle(t, storage, 1)
	status, out := a.Do("POST", "/memory/admin/memories", "admin", map[string]any{"owner": "sk-alice", "kind": "note", "content": "Alice keeps her bonsai on the north balcony"})
	id := harness.IDOf(harness.MemoryOf(out))
	if status != http.StatusCreated || id == 0 {
		t.Fatalf("creating alice's memory: %d %v", status, out)
	}

	var doc *openapi.Doc
	for mount, auth := range map[string]string{"/memory": "sk-alice", "/memory/admin": "admin"} {
		status, raw := a.Raw("GET", mount+"/openapi.json", auth, nil)
		d, err := openapi.Parse(raw)
		if status != http.StatusOK || err != nil {
			t.Fatalf("GET %s/openapi.json = %d: %v", mount, status, err)
		}
		servers, _ := d.Root()["servers"].([]any)
		if len(servers) != 1 || servers[0].(map[string]any)["url"] != mount {
			t.Errorf("%s/openapi.json names the servers %v, want %s", mount, servers, mount)
		}
		doc = d
	}
	ops := doc.Operations()
	for _, pattern := range api.Routes() {
		method, path, ok := strings.Cut(pattern, " ")
		if !ok {
			method, path = "", pattern
		}
		path = strings.TrimSuffix(path, "{$}")
		if !slices.ContainsFunc(ops, func(op openapi.Operation) bool { return op.Path == path && (method == "" || op.Method == method) }) {
			t.Errorf("the route %s is not in the document", pattern)
		}
	}

	// Changes last: deleting the memory, then forgetting alice.
	rank := func(op openapi.Operation) int {
		switch {
		case op.Method != "DELETE":
			return 0
		case strings.HasPrefix(op.Path, "/memories"):
			return 1
		}
		return 2
	}
	slices.SortStableFunc(ops, func(x, y openapi.Operation) int { return rank(x) - rank(y) })
	called := 0
	for _, op := range ops {
		modes := []string{"self", "admin"}
		if op.Method == "DELETE" {
			modes = []string{"admin"} // once: it changes what the next would find
		}
		for _, mode := range modes {
			status, ctype, body := callDocumented(t, client, doc, op, mode, id)
			called++
			what := fmt.Sprintf("%s %s (%s mode)", op.Method, op.Path, mode)
			adminOnly := op.Path == "/stats/owners" || op.Path == "/consolidate"
			switch {
			case status == http.StatusNotFound || status == http.StatusMethodNotAllowed:
				t.Errorf("%s = %d, as documented: %s", what, status, body)
				continue
			case (mode == "admin" || !adminOnly) && status >= 400:
				t.Errorf("%s = %d, called as documented: %s", what, status, body)
			case mode == "self" && adminOnly && status != http.StatusForbidden:
				t.Errorf("%s = %d, want 403: an operator's route", what, status)
			}
			schema, ok := doc.Response(op, status, ctype)
			if !ok {
				t.Errorf("%s = %d, a status the document does not give", what, status)
				continue
			}
			if err := validateBody(doc, schema, ctype, body); err != nil {
				t.Errorf("%s = %d %s, not as documented: %v\n%s", what, status, ctype, err, body)
			}
		}
	}
	if called < 30 {
		t.Errorf("only %d calls made", called)
	}
}

// callDocumented calls op through Caddy at mode's mount as the document
// gives it: its parameters' examples (in self mode, no owner named: the
// caller is the owner), its body's example, alice's memory id for {id}.
func callDocumented(t *testing.T, c *http.Client, doc *openapi.Doc, op openapi.Operation, mode string, id int) (status int, ctype string, body []byte) {
	t.Helper()
	path, query, header := op.Path, url.Values{}, http.Header{}
	for _, p := range op.Params {
		name, _ := p["name"].(string)
		ex, has := p["example"]
		switch {
		case p["in"] == "path" && name == "id":
			path = strings.ReplaceAll(path, "{id}", fmt.Sprint(id))
		case p["in"] == "path" && name == "owner" && mode == "self":
			path = strings.ReplaceAll(path, "{owner}", "me")
		case p["in"] == "path":
			path = strings.ReplaceAll(path, "{"+name+"}", url.PathEscape(fmt.Sprint(ex)))
		case !has, mode == "self" && (name == "owner" || name == "owner_id"):
		case p["in"] == "query":
			query.Set(name, fmt.Sprint(ex))
		case p["in"] == "header":
			header.Set(name, fmt.Sprint(ex))
		}
	}
	var payload io.Reader
	if rb, ok := op.Op["requestBody"].(map[string]any); ok {
		content, _ := rb["content"].(map[string]any)
		for _, ct := range slices.Sorted(func(yield func(string) bool) {
			for k := range content {
				if !yield(k) {
					return
				}
			}
		}) {
			media, _ := content[ct].(map[string]any)
			ex, ok := media["example"]
			if !ok {
				continue
			}
			var b []byte
			if s, isString := ex.(string); isString {
				b = []byte(s)
			} else {
				if m, isObject := ex.(map[string]any); isObject && mode == "self" {
					m = maps.Clone(m) // the document's own is for the next call too
					delete(m, "owner")
					ex = m
				}
				b, _ = json.Marshal(ex)
			}
			payload = bytes.NewReader(b)
			header.Set("Content-Type", ct)
			break
		}
	}
	mount := "/memory"
	if mode == "admin" {
		mount = "/memory/admin"
	}
	u := harness.CaddyAddr + mount + path
	if len(query) > 0 {
		u += "?" + query.Encode()
	}
	req, err := http.NewRequest(op.Method, u, payload)
	if err != nil {
		t.Fatal(err)
	}
	req.Header = header
	if mode == "admin" {
		req.SetBasicAuth("admin", "s3cret")
	} else {
		req.Header.Set("Authorization", "Bearer sk-alice")
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ = io.ReadAll(resp.Body)
	ctype, _, _ = mime.ParseMediaType(resp.Header.Get("Content-Type"))
	return resp.StatusCode, ctype, body
}

// validateBody checks an answer against its schema: JSON as one value,
// JSON lines each; nil schema (no content documented) wants no body.
func validateBody(doc *openapi.Doc, schema any, ctype string, body []byte) error {
	if schema == nil {
		if len(bytes.TrimSpace(body)) > 0 && ctype != "text/html" {
			return fmt.Errorf("a body of type %q, which the document does not give", ctype)
		}
		return nil
	}
	switch ctype {
	case "application/json":
		var v any
		if err := json.Unmarshal(body, &v); err != nil {
			return err
		}
		return doc.Validate(schema, v)
	case "application/x-ndjson":
		sc := bufio.NewScanner(bytes.NewReader(body))
		sc.Buffer(nil, 1<<20)
		lines := 0
		for sc.Scan() {
			var v any
			if err := json.Unmarshal(sc.Bytes(), &v); err != nil {
				return err
			}
			if err := doc.Validate(schema, v); err != nil {
				return fmt.Errorf("line %d: %w", lines+1, err)
			}
			lines++
		}
		if lines == 0 {
			return fmt.Errorf("no lines")
		}
	}
	return nil
}

// TestAPIUnderHandlePath: mounted with handle_path (the prefix stripped
// before memory_api sees the request), the mount's root still opens the
// dashboard, whose files load, and the OpenAPI document names the mount
// the client asked at as its server.
func TestAPIUnderHandlePath(t *testing.T) {
	storage := t.TempDir()
	up := harness.NewFakeLLM(t)
	tester := harness.StartCaddy(t, harness.WithStorage(storage, "")+fmt.Sprintf(`http://localhost {
	memory
	handle_path /tools/memory/* {
		memory_api
	}
	reverse_proxy %s
}
`, up.Addr()))
	a := harness.APICall{T: t, Client: harness.NotFollowing(tester.Client)}
	if status, _ := a.Raw("GET", "/tools/memory/", "", nil); status != http.StatusFound {
		t.Errorf("GET /tools/memory/ = %d, want a redirect to the dashboard", status)
	}
	for _, path := range []string{"/tools/memory/ui/", "/tools/memory/ui/app.js", "/tools/memory/ui/favicon.svg"} {
		if status, _ := a.Raw("GET", path, "", nil); status != http.StatusOK {
			t.Errorf("GET %s = %d", path, status)
		}
	}
	status, raw := a.Raw("GET", "/tools/memory/openapi.json", "", nil)
	doc, err := openapi.Parse(raw)
	if status != http.StatusOK || err != nil {
		t.Fatalf("GET /tools/memory/openapi.json = %d: %v", status, err)
	}
	if servers, _ := doc.Root()["servers"].([]any); len(servers) != 1 || servers[0].(map[string]any)["url"] != "/tools/memory" {
		t.Errorf("the document names the servers %v, want /tools/memory", servers)
	}
	if status, out := a.Do("GET", "/tools/memory/profile", "sk-zed", nil); status != http.StatusOK || out["groups"] == nil {
		t.Errorf("GET /tools/memory/profile = %d %v", status, out)
	}
}
