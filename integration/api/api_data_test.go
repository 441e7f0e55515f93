package api

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	zap "github.com/blevesearch/zapx/v17"

	"github.com/caddy-memory/memory/internal/engine"
	"github.com/caddy-memory/memory/internal/harness"
	"github.com/caddy-memory/memory/store"
)

// searchSnapshot is what POST /search answers for a query, as comparable text.
func searchSnapshot(a harness.APICall, owner, query string) string {
	a.T.Helper()
	_, out := a.Do("POST", "/memory/admin/search", "admin", map[string]any{"owner": owner, "query": query, "limit": 20})
	var lines []string
	for _, r := range out["results"].([]any) {
		m := r.(map[string]any)
		lines = append(lines, fmt.Sprintf("%v|%v|%v|%v", m["id"], m["content"], m["kind"], m["created_at"]))
	}
	return strings.Join(lines, "\n")
}

// TestExportForgetImportRestores: export an owner, forget them, import the
// export: their memories and search results are back as they were.
func TestExportForgetImportRestores(t *testing.T) {
	storage := t.TempDir()
	up := harness.NewFakeLLM(t)
	tester := harness.StartCaddy(t, harness.APIConfig(t, storage, up.Addr(), ""))
	a := harness.APICall{T: t, Client: tester.Client}

	harness.Post(t, tester, "/v1/chat/completions", "sk-dana", harness.ChatBody(false, harness.Msg("user", "My name is Dana. I live in Oslo and I love skiing.")))
	harness.Post(t, tester, "/v1/chat/completions", "sk-dana", harness.ChatBody(false, harness.Msg("user", "I live in Bergen now.")))
	harness.Settle(t, storage, 2)
	a.Do("POST", "/memory/admin/memories", "admin", map[string]any{"owner": "sk-dana", "content": "Dana's locker code is 4471.", "kind": "note", "meta": map[string]string{"source": "admin"}})
	status, exported := a.Raw("GET", "/memory/admin/export?owner=sk-dana", "admin", nil)
	if status != 200 {
		t.Fatalf("export: %d", status)
	}
	lines := strings.Split(strings.TrimSpace(string(exported)), "\n")
	if len(lines) < 6 {
		t.Fatalf("export has %d lines:\n%s", len(lines), exported)
	}
	if !bytes.Contains(exported, []byte(`"history":[{"content":"User lives in Oslo."`)) {
		t.Errorf("export lacks history:\n%s", exported)
	}
	queries := []string{"where do I live", "skiing", "locker code", "what is my name"}
	before := map[string]string{}
	for _, q := range queries {
		before[q] = searchSnapshot(a, "sk-dana", q)
	}
	_, list := a.Do("GET", "/memory/admin/memories?owner=sk-dana&include_deleted=true", "admin", nil)

	status, out := a.Do("DELETE", "/memory/admin/owners/sk-dana", "admin", nil)
	f := out["forgotten"].(map[string]any)
	if status != 200 || int(f["memories"].(float64)) != len(lines) || f["history"].(float64) != 1 {
		t.Fatalf("forget: %d %v", status, out)
	}
	for _, q := range queries {
		if got := searchSnapshot(a, "sk-dana", q); got != "" {
			t.Fatalf("after forget, %q still finds:\n%s", q, got)
		}
	}

	status, out = a.Do("POST", "/memory/admin/import", "admin", exported)
	if status != 200 || int(out["imported"].(float64)) != len(lines) || len(out["errors"].([]any)) != 0 {
		t.Fatalf("import: %d %v", status, out)
	}
	for _, q := range queries {
		if got := searchSnapshot(a, "sk-dana", q); got != before[q] {
			t.Errorf("%q after export, forget, import:\n%s\nwant:\n%s", q, got, before[q])
		}
	}
	_, relist := a.Do("GET", "/memory/admin/memories?owner=sk-dana&include_deleted=true", "admin", nil)
	if fmt.Sprint(harness.ListContents(relist)) != fmt.Sprint(harness.ListContents(list)) {
		t.Errorf("listing changed:\n%v\n%v", harness.ListContents(relist), harness.ListContents(list))
	}
	// Importing the same export again is idempotent.
	status, out = a.Do("POST", "/memory/admin/import", "admin", exported)
	if status != 200 || out["imported"].(float64) != 0 || int(out["replaced"].(float64)) != len(lines) {
		t.Errorf("second import: %d %v", status, out)
	}
	if _, again := a.Do("GET", "/memory/admin/memories?owner=sk-dana&include_deleted=true", "admin", nil); len(harness.ListContents(again)) != len(lines) {
		t.Errorf("a second import duplicated memories: %v", harness.ListContents(again))
	}
	// And the proxy recalls the restored memories.
	harness.Post(t, tester, "/v1/chat/completions", "sk-dana", harness.ChatBody(false, harness.Msg("user", "Where do I live?")))
	if !strings.Contains(string(up.Last("/chat/completions").Body), "User lives in Bergen.") {
		t.Errorf("the proxy does not recall imported memories: %s", up.Last("/chat/completions").Body)
	}
}

func TestImportReportsBadLinesAndRemapsOwners(t *testing.T) {
	storage := t.TempDir()
	up := harness.NewFakeLLM(t)
	tester := harness.StartCaddy(t, harness.APIConfig(t, storage, up.Addr(), ""))
	a := harness.APICall{T: t, Client: tester.Client}
	good := `{"id":5,"owner":"` + strings.Repeat("ab", 16) + `","kind":"note","key":"k1","content":"Erin keeps bees.","created_at":"2024-01-02T03:04:05Z","updated_at":"2024-01-02T03:04:05Z","mentions":1,"version":0,"seq":9}`
	body := strings.Join([]string{
		good,
		`{"owner":"` + strings.Repeat("ab", 16) + `","kind":"note","content":"Erin sails on weekends."}`,
		`not json at all`,
		`{"owner":"` + strings.Repeat("ab", 16) + `","content":""}`,
		`{"owner":"someone","content":"no owner id"}`,
		`{"owner":"` + strings.Repeat("ab", 16) + `","content":"x","favourite":true}`,
		``,
	}, "\n")
	status, out := a.Do("POST", "/memory/admin/import", "admin", []byte(body))
	if status != 200 || out["imported"].(float64) != 2 {
		t.Fatalf("import: %d %v", status, out)
	}
	var lines []int
	for _, e := range out["errors"].([]any) {
		lines = append(lines, int(e.(map[string]any)["line"].(float64)))
	}
	if fmt.Sprint(lines) != "[3 4 5 6]" {
		t.Errorf("bad lines reported: %v (%v)", lines, out["errors"])
	}
	if !strings.Contains(fmt.Sprint(out["errors"]), `unknown field \"favourite\"`) && !strings.Contains(fmt.Sprint(out["errors"]), `unknown field "favourite"`) {
		t.Errorf("the unknown field is not named: %v", out["errors"])
	}
	if _, got := a.Do("GET", "/memory/admin/memories/5", "admin", nil); harness.MemoryOf(got)["content"] != "Erin keeps bees." {
		t.Errorf("an imported memory did not keep its id: %v", got)
	}
	// Remap to an owner the proxy knows: the proxy then recalls it.
	status, out = a.Do("POST", "/memory/admin/import?owner=sk-erin", "admin", []byte(good))
	if status != 200 || out["imported"].(float64) != 1 || out["renumbered"].(float64) != 0 {
		t.Errorf("import for another owner, whose id 5 is taken: %d %v", status, out)
	}
	harness.Post(t, tester, "/v1/chat/completions", "sk-erin", harness.ChatBody(false, harness.Msg("user", "Do I keep bees?")))
	if !strings.Contains(string(up.Last("/chat/completions").Body), "Erin keeps bees.") {
		t.Errorf("the remapped import is not recalled for its new owner")
	}
	// Nothing good at all: 400, with the reasons.
	if status, out = a.Do("POST", "/memory/admin/import", "admin", []byte("{}\n[]")); status != 400 || len(out["errors"].([]any)) != 2 {
		t.Errorf("all-bad import: %d %v", status, out)
	}
}

// TestSelfImportRevealsNoIDs: in self mode an import line's id is never
// kept: one that another owner holds is answered exactly as a fresh one
// (nothing says the id exists), and a huge one does not push the ids of
// memories created later.
func TestSelfImportRevealsNoIDs(t *testing.T) {
	storage := t.TempDir()
	up := harness.NewFakeLLM(t)
	tester := harness.StartCaddy(t, harness.APIConfig(t, storage, up.Addr(), ""))
	a := harness.APICall{T: t, Client: tester.Client}
	_, out := a.Do("POST", "/memory/memories", "sk-owner", map[string]any{"content": "Zqowner's own memory."})
	taken := harness.IDOf(harness.MemoryOf(out))
	line := func(id uint64, text string) []byte {
		return []byte(fmt.Sprintf(`{"id":%d,"owner":"%s","content":%q}`, id, strings.Repeat("ab", 16), text))
	}
	answers := map[string]string{}
	for name, id := range map[string]uint64{"taken": uint64(taken), "fresh": uint64(taken) + 500, "huge": 1 << 53} {
		status, raw := a.Raw("POST", "/memory/import", "sk-intruder", line(id, "import "+name))
		if status != http.StatusOK {
			t.Fatalf("self import of a %s id: %d %s", name, status, raw)
		}
		answers[name] = string(raw)
	}
	if answers["taken"] != answers["fresh"] || answers["huge"] != answers["fresh"] {
		t.Errorf("self-mode imports answer differently by id:\n taken: %s fresh: %s huge: %s", answers["taken"], answers["fresh"], answers["huge"])
	}
	if _, got := a.Do("GET", fmt.Sprintf("/memory/memories/%d", taken), "sk-owner", nil); harness.MemoryOf(got)["content"] != "Zqowner's own memory." {
		t.Errorf("the owner's memory changed: %v", got)
	}
	_, out = a.Do("POST", "/memory/memories", "sk-later", map[string]any{"content": "Created after the imports."})
	if id := harness.IDOf(harness.MemoryOf(out)); id > taken+10 {
		t.Errorf("a memory created after the self-mode imports got id %d", id)
	}
}

// TestForgetLeavesNoByteBehind: after DELETE /owners/{owner} the owner's
// words are in neither the store file nor any index dictionary, while
// another owner's are untouched.
func TestForgetLeavesNoByteBehind(t *testing.T) {
	const fillers = engine.DefaultLocalSearchMax
	storage := t.TempDir()
	up := harness.NewFakeLLM(t)
	up.Answer = func(body []byte) string {
		if strings.Contains(string(body), "zqgoneq") {
			return "Noted your zqgoneq plan."
		}
		return "Noted."
	}
	tester := harness.StartCaddy(t, harness.APIConfig(t, storage, up.Addr(), ""))
	a := harness.APICall{T: t, Client: tester.Client}

	harness.Post(t, tester, "/v1/chat/completions", "sk-gone", harness.ChatBody(false, harness.Msg("user", "Remember that my zqgoneq password hint is zqgoneq.")))
	harness.Post(t, tester, "/v1/chat/completions", "sk-keep", harness.ChatBody(true, harness.Msg("user", "Remember that my zqstayq hint is zqstayq.")))
	harness.Settle(t, storage, 2)
	a.Do("POST", "/memory/admin/memories", "admin", map[string]any{"owner": "sk-gone", "content": "zqgoneq old value", "key": "h"})
	a.Do("POST", "/memory/admin/memories", "admin", map[string]any{"owner": "sk-gone", "content": "zqgoneq newer value", "key": "h"})

	// The index holds only owners too large to search from their records:
	// both get that large, so their words are in it too.
	e := harness.EngineAt(storage)
	var puts []engine.OwnedPut
	for _, raw := range []string{"sk-gone", "sk-keep"} {
		for i := range fillers {
			puts = append(puts, engine.OwnedPut{Owner: e.OwnerID(raw), Put: store.Put{Kind: "note", Content: fmt.Sprintf("User noted filler %d", i)}})
		}
	}
	if _, err := e.Remember(context.Background(), puts...); err != nil {
		t.Fatal(err)
	}
	if err := e.Sync(context.Background()); err != nil {
		t.Fatal(err)
	}
	fileHas := func(word string) bool {
		b, err := os.ReadFile(filepath.Join(storage, "memory.db"))
		if err != nil {
			t.Fatal(err)
		}
		return bytes.Contains(b, []byte(word))
	}
	// The index is checked in the term dictionary of every segment file on
	// disk: a deleted document's terms stay in its segment until merged.
	// (The words below analyse to themselves.)
	indexHas := func(word string) bool { return segmentsHold(t, filepath.Join(storage, "index"), "content", word) }
	// The checks can see the words before the forget, once the engine has
	// closed and written every segment out.
	harness.UnloadCaddy(t)
	if !fileHas("zqgoneq") || !indexHas("zqgoneq") || !fileHas("zqstayq") || !indexHas("zqstayq") {
		t.Fatalf("the scan cannot see the words it looks for")
	}
	harness.Reload(t, tester, harness.APIConfig(t, storage, up.Addr(), ""))
	a = harness.APICall{T: t, Client: tester.Client}

	status, out := a.Do("DELETE", "/memory/admin/owners/sk-gone", "admin", nil)
	if status != 200 {
		t.Fatalf("forget: %d %v", status, out)
	}
	f := out["forgotten"].(map[string]any)
	if f["memories"].(float64) != 3+fillers || f["history"].(float64) != 1 {
		t.Errorf("forget counts: %v", f)
	}
	if fileHas("zqgoneq") {
		t.Errorf("the store file still holds the forgotten owner's words")
	}
	if indexHas("zqgoneq") {
		t.Errorf("the index still holds the forgotten owner's words")
	}
	var stray []string
	filepath.Walk(storage, func(p string, info os.FileInfo, err error) error {
		if err == nil && !info.IsDir() {
			if b, _ := os.ReadFile(p); bytes.Contains(b, []byte("zqgoneq")) {
				stray = append(stray, p)
			}
		}
		return nil
	})
	if len(stray) > 0 {
		t.Errorf("files under the storage still hold the forgotten words: %v", stray)
	}
	if !fileHas("zqstayq") || !indexHas("zqstayq") {
		t.Errorf("forgetting one owner damaged another")
	}
	// Pending work of the owner is gone too, and nothing comes back.
	_, list := a.Do("GET", "/memory/admin/memories?owner=sk-gone&include_deleted=true", "admin", nil)
	_, stats := a.Do("GET", "/memory/admin/stats", "admin", nil)
	if n := len(harness.ListContents(list)); n != 0 || stats["pending_jobs"] != 0.0 {
		t.Errorf("after forget: %d memories, %v pending jobs", n, stats["pending_jobs"])
	}
	harness.Post(t, tester, "/v1/chat/completions", "sk-keep", harness.ChatBody(false, harness.Msg("user", "What is my hint?")))
	if !strings.Contains(string(up.Last("/chat/completions").Body), "zqstayq") {
		t.Errorf("the other owner's memories are no longer recalled")
	}
}

// TestAdminEndpointAndDiagnostics: admin.api.memory on Caddy's admin
// endpoint, the diagnostic headers, and the metrics.
func TestAdminEndpointAndDiagnostics(t *testing.T) {
	storage := t.TempDir()
	up := harness.NewFakeLLM(t)
	tester := harness.StartCaddy(t, harness.SiteConfig(storage, up.Addr(), "diagnostics"))
	resp, _ := harness.Post(t, tester, "/v1/chat/completions", "sk-diag", harness.ChatBody(false, harness.Msg("user", "I live in Lisbon.")))
	if resp.Header.Get("X-Memory-Status") != "nothing_relevant" || resp.Header.Get("X-Memory-Injected") != "0" {
		t.Errorf("first turn headers: %v", resp.Header)
	}
	harness.Settle(t, storage, 1)
	resp, _ = harness.Post(t, tester, "/v1/chat/completions", "sk-diag", harness.ChatBody(false, harness.Msg("user", "Where do I live?")))
	// One: the location fact, in the profile; the turn that taught it says
	// nothing more.
	if resp.Header.Get("X-Memory-Status") != "injected" || resp.Header.Get("X-Memory-Injected") != "1" || !strings.HasSuffix(resp.Header.Get("X-Memory-Time"), "ms") {
		t.Errorf("diagnostic headers: %v", resp.Header)
	}
	resp, _ = harness.Post(t, tester, "/v1/chat/completions", "", harness.ChatBody(false, harness.Msg("user", "Hi")))
	if resp.Header.Get("X-Memory-Status") != "passed_through" {
		t.Errorf("no-owner headers: %v", resp.Header)
	}
	harness.Settle(t, storage, 2)

	admin := func(method, path string) (int, map[string]any) { return harness.AdminCall(t, method, path) }
	status, out := admin("GET", "/memory/stats")
	st, _ := out["default"].(map[string]any)
	if status != 200 || st == nil || st["memories"].(float64) != 3 || st["index_shards"].(float64) != 4 {
		t.Errorf("admin stats: %d %v", status, out)
	}
	// One owner of three memories: searched from its records, not indexed.
	if status, out = admin("POST", "/memory/reindex?storage=default"); status != 200 || out["default"].(map[string]any)["indexed_docs"].(float64) != 0 ||
		out["default"].(map[string]any)["index_lag"].(float64) != 0 {
		t.Errorf("admin reindex: %d %v", status, out)
	}
	if status, out = admin("POST", "/memory/compact"); status != 200 || out["default"].(map[string]any)["file_bytes_after"].(float64) <= 0 {
		t.Errorf("admin compact: %d %v", status, out)
	}
	if status, _ = admin("GET", "/memory/reindex"); status != http.StatusMethodNotAllowed {
		t.Errorf("GET reindex: %d", status)
	}
	if status, _ = admin("GET", "/memory/stats?storage=nowhere"); status != http.StatusNotFound {
		t.Errorf("stats of an unknown storage: %d", status)
	}
	// Recall still works after reindex and compaction.
	harness.Post(t, tester, "/v1/chat/completions", "sk-diag", harness.ChatBody(false, harness.Msg("user", "Where do I live?")))
	if !strings.Contains(string(up.Last("/chat/completions").Body), "User lives in Lisbon.") {
		t.Errorf("recall broke after reindex and compaction")
	}

	resp2, err := http.Get(harness.AdminAddr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	metrics, _ := io.ReadAll(resp2.Body)
	resp2.Body.Close()
	for _, want := range []string{
		`caddy_memory_requests_total{outcome="injected"}`,
		`caddy_memory_requests_total{outcome="passed_through"}`,
		`caddy_memory_extraction_jobs_total{result="done"}`,
		`caddy_memory_memories_stored_total`,
		`caddy_memory_retrieval_seconds_bucket`,
		`caddy_memory_injected_memories_bucket`,
	} {
		if !bytes.Contains(metrics, []byte(want)) {
			t.Errorf("metrics lack %s", want)
		}
	}
}

// segmentsHold reports whether any zap segment file under dir has term in
// its dictionary for field, live or deleted.
func segmentsHold(t *testing.T, dir, field, term string) bool {
	t.Helper()
	found := false
	filepath.Walk(dir, func(p string, info os.FileInfo, err error) error {
		if err != nil || info.IsDir() || !strings.HasSuffix(p, ".zap") {
			return nil
		}
		seg, err := (&zap.ZapPlugin{}).Open(p)
		if err != nil {
			t.Fatalf("opening segment %s: %v", p, err)
		}
		defer seg.Close()
		d, err := seg.Dictionary(field)
		if err != nil {
			t.Fatal(err)
		}
		if ok, err := d.Contains([]byte(term)); err == nil && ok {
			found = true
		}
		return nil
	})
	return found
}
