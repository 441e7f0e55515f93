package memory

import (
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// The dashboard's API against hostile pages and hostile memories, in
// Chromium, through real Caddy (apiConfig's layout; see ui_test.go).

// attackPage is a page of another origin that makes the operator's
// browser write into the admin API at api every way a page can without
// the API's consent: a text/plain form, no-cors fetches (which can carry
// only the types of forms, whatever the page asks), and a CORS fetch (which
// needs a preflight the API never grants). window.done is set once all
// were sent; window.results says how each went, as far as the page knows.
const attackPage = `<!doctype html>
<title>a page elsewhere</title>
<iframe name="sink" id="sink"></iframe>
<form id="form" method="POST" enctype="text/plain" target="sink" action="API/memories">
<input type="hidden" name='{"owner":"sk-victim","content":"Injected by a text/plain form","session":"x' value='y"}'>
</form>
<script>
const api = 'API';
const line = (id, how) => JSON.stringify({id: id, owner: 'x', kind: 'note', content: 'Injected by ' + how}) + '\n';
const post = (path, body, extra) => fetch(api + path, Object.assign({method: 'POST', mode: 'no-cors', credentials: 'include', body: body}, extra || {}));
const tries = [
	['a no-cors fetch', () => post('/memories', JSON.stringify({owner: 'sk-victim', content: 'Injected by a no-cors fetch'}))],
	['a no-cors import', () => post('/import?owner=sk-victim', line(777001, 'a no-cors import'))],
	['a no-cors import typed as JSON lines', () => post('/import?owner=sk-victim', new Blob([line(777002, 'a typed import')], {type: 'application/x-ndjson'}))],
	['a multipart import', () => { const f = new FormData(); f.append('file', new Blob([line(777003, 'a multipart import')]), 'm.jsonl'); return post('/import?owner=sk-victim', f); }],
	['a no-cors ingest', () => post('/ingest', JSON.stringify({owner: 'sk-victim', turns: [{role: 'user', content: 'Injected by an ingest: I live in Zqville.'}]}))],
	['a CORS fetch', () => post('/memories', JSON.stringify({owner: 'sk-victim', content: 'Injected by a CORS fetch'}), {mode: 'cors', headers: {'Content-Type': 'application/json'}})],
];
(async () => {
	window.results = [];
	for (const [name, send] of tries) {
		try { await send(); window.results.push(name + ': sent'); } catch (e) { window.results.push(name + ': ' + e.message); }
	}
	await new Promise((resolve) => { document.getElementById('sink').onload = resolve; document.getElementById('form').submit(); });
	window.results.push('the form: sent');
	window.done = true;
})();
</script>
`

// TestForeignPagesCannotWriteThroughTheOperatorsBrowser: an operator
// signed in to the admin dashboard (basic_auth, the credentials cached by
// the browser) opens pages of another site and of another port of the
// same host; nothing they send is written. The dashboard's own writes,
// an import among them, still are.
func TestForeignPagesCannotWriteThroughTheOperatorsBrowser(t *testing.T) {
	storage := t.TempDir()
	up := newFakeLLM(t)
	tester := startCaddy(t, apiConfig(t, storage, up.addr(), ""))
	a := apiCall{t, tester.Client}

	page := strings.ReplaceAll(attackPage, "API", caddyAddr+"/memory/admin")
	elsewhere := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, page)
	}))
	t.Cleanup(elsewhere.Close)
	_, port, _ := net.SplitHostPort(elsewhere.Listener.Addr().String())

	tb := openTab(t, 1280, 900)
	challenges := tb.answerBasicAuth("admin", "s3cret")
	tb.do("sign in to the admin dashboard", chromedp.Navigate(caddyAddr+"/memory/admin/ui/"))
	tb.until("the dashboard is up", `document.querySelector('#health').classList.contains('ok')`)
	if challenges.Load() == 0 {
		t.Fatal("the dashboard opened without a basic_auth challenge: the browser has no credentials to misuse")
	}

	for _, origin := range []string{
		"http://127.0.0.1:" + port, // another site
		"http://localhost:" + port, // the same site, another origin (port)
	} {
		tb.do("open "+origin, chromedp.Navigate(origin+"/"))
		tb.until("the page sent everything", `window.done === true`)
		t.Logf("%s: %s", origin, tb.eval(`window.results.join('; ')`))
	}
	_, out := a.do("GET", "/memory/admin/memories?owner=sk-victim&include_deleted=true", "admin", nil)
	if got := listContents(out); len(got) != 0 {
		t.Errorf("pages of other origins wrote into sk-victim's memories through the operator's browser: %q", got)
	}

	// The dashboard itself still writes: an import (JSON lines) and a
	// consolidation (a POST without a body).
	file := filepath.Join(t.TempDir(), "victim.jsonl")
	line := fmt.Sprintf(`{"id":888001,"owner":%q,"kind":"note","content":"Imported from the dashboard"}`+"\n", engineAt(storage).OwnerID("sk-victim"))
	if err := os.WriteFile(file, []byte(line), 0o600); err != nil {
		t.Fatal(err)
	}
	tb.open("the dashboard again", caddyAddr+"/memory/admin/ui/")
	tb.do("import a file", chromedp.SetUploadFiles(chromedp.ID("import-file"), []string{file}), chromedp.Click(chromedp.CSS("#import-form button[type=submit]")))
	tb.until("imported", `document.querySelector('#notice').innerText.includes('Imported 1')`)
	tb.do("consolidate", chromedp.Click(chromedp.ID("consolidate")))
	tb.until("consolidated", `document.querySelector('#notice').innerText.includes('Consolidation done')`)
	_, out = a.do("GET", "/memory/admin/memories?owner=sk-victim", "admin", nil)
	if got := listContents(out); fmt.Sprint(got) != "[Imported from the dashboard]" {
		t.Errorf("after the dashboard's import, sk-victim has %q", got)
	}
	tb.checkConsole()
}
