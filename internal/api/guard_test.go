package api_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/caddy-memory/memory/internal/api"
	"github.com/caddy-memory/memory/store"
)

// send is do with exactly the headers given, as a browser or curl sends them.
func send(t *testing.T, h http.Handler, method, path, body string, header map[string]string) *httptest.ResponseRecorder {
	t.Helper()
	req := httptest.NewRequest(method, path, strings.NewReader(body))
	req.Host = "memory.example.com"
	for k, v := range header {
		req.Header.Set(k, v)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}

// stateChanging are the API's routes that change something, each with a
// body it would act on in mode: one that names the victim in admin mode,
// and names no one in self mode, where the victim is the caller.
func stateChanging(mode api.Mode, victim string, id uint64) [][3]string {
	owner, query, who := `"owner":"victim",`, "?owner=victim", "victim"
	if mode == api.Self {
		owner, query, who = "", "", "me"
	}
	line := fmt.Sprintf(`{"id":900,"owner":%q,"kind":"note","content":"imported by a foreign page"}`, victim)
	return [][3]string{
		{"POST", "/memories", `{` + owner + `"content":"written by a foreign page"}`},
		{"PATCH", fmt.Sprintf("/memories/%d", id), `{"content":"edited by a foreign page"}`},
		{"DELETE", fmt.Sprintf("/memories/%d", id), ""},
		{"POST", "/import" + query, line + "\n"},
		{"POST", "/ingest", `{` + owner + `"turns":[{"role":"user","content":"I live in Zqville."}]}`},
		{"POST", "/consolidate", ""},
		{"POST", "/search", `{` + owner + `"query":"anything"}`},
		{"POST", "/preview", `{` + owner + `"query":"anything"}`},
		{"DELETE", "/owners/" + who, ""},
		{"POST", "/mcp", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"add_memory","arguments":{` + owner + `"content":"added by a foreign page"}}}`},
	}
}

// TestForeignPagesChangeNothing: what a page of another origin can make
// the operator's browser send (the browser adds the operator's credentials)
// is refused on every state-changing route, in both modes: by where it
// comes from, or by the type of its body.
func TestForeignPagesChangeNothing(t *testing.T) {
	for _, mode := range []api.Mode{api.Admin, api.Self} {
		t.Run(string(mode), func(t *testing.T) {
			e := openEngine(t)
			h := newHandler(e, mode)
			as := map[string]string{}
			if mode == api.Self {
				as["Authorization"] = "victim"
			}
			with := func(more map[string]string) map[string]string {
				m := map[string]string{"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
				for k, v := range as {
					m[k] = v
				}
				for k, v := range more {
					m[k] = v
				}
				return m
			}
			victim := e.OwnerID("victim")
			var made memoryAnswer
			ok(t, send(t, h, "POST", "/memories", strings.Replace(stateChanging(mode, victim, 0)[0][2], "written by a foreign page", "The victim keeps bees.", 1), with(nil)), http.StatusCreated, &made)

			foreign := map[string]map[string]string{
				"cross-site":            {"Sec-Fetch-Site": "cross-site", "Origin": "https://evil.example"},
				"same-site, other port": {"Sec-Fetch-Site": "same-site", "Origin": "https://memory.example.com:8443"},
				"same-site, subdomain":  {"Sec-Fetch-Site": "same-site", "Origin": "https://blog.example.com"},
				"an old browser":        {"Origin": "https://evil.example"},
				"an opaque origin":      {"Sec-Fetch-Site": "cross-site", "Origin": "null"},
			}
			for what, hdr := range foreign {
				for _, c := range stateChanging(mode, victim, made.Memory.ID) {
					rec := send(t, h, c[0], c[1], c[2], with(hdr))
					if msg := apiErr(t, rec, http.StatusForbidden, "cross_origin"); !strings.Contains(msg, "curl") {
						t.Errorf("%s %s from %s: %q does not say what to do", c[0], c[1], what, msg)
					}
				}
			}
			// What forms and no-cors fetches can send: refused by type,
			// even when the browser sends no Origin at all.
			for _, ct := range []string{"text/plain", "text/plain;charset=UTF-8", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x", ""} {
				for _, c := range stateChanging(mode, victim, made.Memory.ID) {
					if c[0] == "DELETE" || c[1] == "/mcp" {
						continue // no body, or the SDK's own check (below)
					}
					if c[1] == "/consolidate" && ct == "" {
						continue // takes no body: curl -X POST
					}
					hdr := with(map[string]string{"Content-Type": ct})
					if ct == "" {
						delete(hdr, "Content-Type")
					}
					rec := send(t, h, c[0], c[1], c[2], hdr)
					if rec.Code == http.StatusForbidden && c[1] == "/consolidate" && mode == api.Self {
						continue // an operator's task anyway
					}
					if msg := apiErr(t, rec, http.StatusUnsupportedMediaType, "unsupported_media_type"); !strings.Contains(msg, "Content-Type: application/") {
						t.Errorf("%s %s as %q: %q does not say what to send", c[0], c[1], ct, msg)
					}
				}
			}
			if rec := send(t, h, "POST", "/mcp", stateChanging(mode, victim, 1)[9][2], with(map[string]string{"Content-Type": "text/plain"})); rec.Code != http.StatusUnsupportedMediaType {
				t.Errorf("MCP as text/plain: %d %s", rec.Code, rec.Body)
			}

			// Nothing changed: one memory, the victim's, as written.
			var list struct{ Memories []*store.Memory }
			path := "/memories?include_deleted=true"
			if mode == api.Admin {
				path += "&owner=victim"
			}
			ok(t, send(t, h, "GET", path, "", with(nil)), http.StatusOK, &list)
			if st, _ := e.Stats(); st.Memories != 1 || len(list.Memories) != 1 || list.Memories[0].Content != "The victim keeps bees." || list.Memories[0].DeletedAt != nil {
				t.Errorf("after the foreign requests: %d memories stored, the victim's %+v", st.Memories, list.Memories)
			}
		})
	}
}

// TestOwnPagesAndProgramsAreServed: the dashboard's own requests, programs
// that send no Origin (curl), and safe methods from anywhere are answered;
// every answer says nosniff.
func TestOwnPagesAndProgramsAreServed(t *testing.T) {
	e := openEngine(t)
	h := newHandler(e, api.Admin)
	json := map[string]string{"Content-Type": "application/json"}
	for what, hdr := range map[string]map[string]string{
		"curl":                          {},
		"the dashboard":                 {"Sec-Fetch-Site": "same-origin", "Origin": "https://memory.example.com"},
		"typed in the address bar":      {"Sec-Fetch-Site": "none"},
		"an old browser, same host":     {"Origin": "https://memory.example.com"},
		"JSON with a charset parameter": {"Content-Type": "application/json; charset=utf-8"},
	} {
		for k, v := range json {
			if _, set := hdr[k]; !set {
				hdr[k] = v
			}
		}
		rec := send(t, h, "POST", "/memories", jsonBody(map[string]any{"owner": "o", "content": "Written by " + what + "."}), hdr)
		var made memoryAnswer
		ok(t, rec, http.StatusCreated, &made)
		if got := rec.Header().Get("X-Content-Type-Options"); got != "nosniff" {
			t.Errorf("%s: X-Content-Type-Options %q", what, got)
		}
		ok(t, send(t, h, "PATCH", fmt.Sprintf("/memories/%d", made.Memory.ID), `{"pinned":true}`, hdr), http.StatusOK, nil)
	}
	// Import takes JSON lines under each of their names, and JSON.
	for i, ct := range []string{"application/x-ndjson", "application/jsonl", "application/json"} {
		line := jsonBody(map[string]any{"id": 500 + i, "owner": e.OwnerID("o"), "kind": "note", "content": "Imported as " + ct + "."})
		ok(t, send(t, h, "POST", "/import", line+"\n", map[string]string{"Content-Type": ct}), http.StatusOK, nil)
	}
	ok(t, send(t, h, "POST", "/consolidate?dry_run=true", "", nil), http.StatusOK, nil)
	// Reading is safe from anywhere (a foreign page cannot read the answer).
	rec := send(t, h, "GET", "/memories?owner=o", "", map[string]string{"Sec-Fetch-Site": "cross-site", "Origin": "https://evil.example"})
	var list listAnswer
	ok(t, rec, http.StatusOK, &list)
	if len(list.Memories) != 8 {
		t.Errorf("listed %d memories, want 8", len(list.Memories))
	}
	for _, path := range []string{"/export", "/nothing", "/health"} {
		if got := send(t, h, "GET", path, "", nil).Header().Get("X-Content-Type-Options"); got != "nosniff" {
			t.Errorf("GET %s: X-Content-Type-Options %q", path, got)
		}
	}
}
