package api

import (
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/caddy-memory/memory/inject"
	"github.com/caddy-memory/memory/internal/engine"
	"github.com/caddy-memory/memory/internal/openapi"
)

// The OpenAPI document and the route table say the same: every route is
// documented with its method, every documented operation is a route, each
// body with the content types the guard lets through, each path parameter
// declared; and every reference names something.
func TestOpenAPIDescribesTheRouteTable(t *testing.T) {
	doc, err := openapi.Parse(openAPIDoc)
	if err != nil {
		t.Fatal(err)
	}
	if broken := doc.Refs(); len(broken) > 0 {
		t.Errorf("references that name nothing: %v", broken)
	}
	ops := map[string]openapi.Operation{}
	ids := map[string]bool{}
	pathParam := regexp.MustCompile(`\{([^}]+)\}`)
	for _, op := range doc.Operations() {
		ops[op.Method+" "+op.Path] = op
		id, _ := op.Op["operationId"].(string)
		if id == "" || ids[id] {
			t.Errorf("%s %s: operationId %q missing or not unique", op.Method, op.Path, id)
		}
		ids[id] = true
		if s, _ := op.Op["summary"].(string); s == "" {
			t.Errorf("%s %s has no summary", op.Method, op.Path)
		}
		for _, m := range pathParam.FindAllStringSubmatch(op.Path, -1) {
			if !slices.ContainsFunc(op.Params, func(p map[string]any) bool { return p["in"] == "path" && p["name"] == m[1] && p["required"] == true }) {
				t.Errorf("%s %s does not declare its path parameter %s", op.Method, op.Path, m[1])
			}
		}
		if !slices.ContainsFunc(routes, func(rt route) bool {
			method, path := split(rt.pattern)
			return path == op.Path && (method == "" || method == op.Method)
		}) {
			t.Errorf("%s %s is documented, and no route serves it", op.Method, op.Path)
		}
	}
	for _, rt := range routes {
		method, path := split(rt.pattern)
		if method == "" {
			if !slices.ContainsFunc(doc.Operations(), func(op openapi.Operation) bool { return op.Path == path }) {
				t.Errorf("route %s is not documented", rt.pattern)
			}
			continue
		}
		op, ok := ops[method+" "+path]
		if !ok {
			t.Errorf("route %s is not documented", rt.pattern)
			continue
		}
		body, _ := op.Op["requestBody"].(map[string]any)
		content, _ := body["content"].(map[string]any)
		var types []string
		for ct := range content {
			types = append(types, ct)
		}
		slices.Sort(types)
		want := slices.Sorted(slices.Values(rt.body))
		if rt.bodyOptional {
			want = nil // it reads none; a type is only allowed
		}
		if !slices.Equal(types, want) {
			t.Errorf("%s: the document's body types %v, the route's %v", rt.pattern, types, want)
		}
	}
}

// split is a mux pattern's method ("" for any) and path, "/{$}" read as
// "/".
func split(pattern string) (method, path string) {
	method, path, ok := strings.Cut(pattern, " ")
	if !ok {
		method, path = "", pattern
	}
	return method, strings.TrimSuffix(path, "{$}")
}

// The document is served with the mount it was asked at as its server.
func TestOpenAPIServedWithItsMount(t *testing.T) {
	h := New(Config{Mode: Self, Proxy: Proxy{Plan: unplanned}})
	for uri, want := range map[string]string{"/memory/openapi.json": "/memory", "/openapi.json": "/", "/a/b/openapi.json?x=1": "/a/b"} {
		req := httptest.NewRequest("GET", "/openapi.json", nil)
		req.RequestURI = uri
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		var doc struct {
			OpenAPI string `json:"openapi"`
			Servers []struct {
				URL string `json:"url"`
			} `json:"servers"`
		}
		if err := json.Unmarshal(rec.Body.Bytes(), &doc); rec.Code != http.StatusOK || err != nil || rec.Header().Get("Content-Type") != "application/json" {
			t.Fatalf("GET %s = %d %q: %v", uri, rec.Code, rec.Header().Get("Content-Type"), err)
		}
		if doc.OpenAPI != "3.1.0" || len(doc.Servers) != 1 || doc.Servers[0].URL != want {
			t.Errorf("GET %s: openapi %q, servers %+v, want %s", uri, doc.OpenAPI, doc.Servers, want)
		}
	}
}

// A damaged storage's answers are as documented: /health's 503, and
// another route's error.
func TestOpenAPIDescribesADamagedStorage(t *testing.T) {
	doc, err := openapi.Parse(openAPIDoc)
	if err != nil {
		t.Fatal(err)
	}
	h := New(Config{Mode: Admin, Proxy: Proxy{Plan: unplanned}, Damaged: func() error { return errors.New("the store file is damaged: run 'caddy memory check'") }})
	for _, op := range doc.Operations() {
		if op.Path != "/health" && op.Path != "/stats" {
			continue
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(op.Method, op.Path, nil))
		schema, ok := doc.Response(op, rec.Code, "application/json")
		var v any
		if rec.Code != http.StatusServiceUnavailable || !ok || json.Unmarshal(rec.Body.Bytes(), &v) != nil {
			t.Fatalf("%s %s = %d %s", op.Method, op.Path, rec.Code, rec.Body)
		}
		if err := doc.Validate(schema, v); err != nil {
			t.Errorf("%s %s = %d, not as documented: %v\n%s", op.Method, op.Path, rec.Code, err, rec.Body)
		}
	}
}

// unplanned is the Plan of a handler whose tests never recall.
func unplanned(string, string, *inject.Request) engine.RecallRequest { return engine.RecallRequest{} }
