package dashboard

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

	"github.com/caddy-memory/memory/internal/harness"
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
	up := harness.NewFakeLLM(t)
	tester := harness.StartCaddy(t, harness.APIConfig(t, storage, up.Addr(), ""))
	a := harness.APICall{T: t, Client: tester.Client}

	page := strings.ReplaceAll(attackPage, "API", harness.CaddyAddr+"/memory/admin")
	elsewhere := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, page)
	}))
	t.Cleanup(elsewhere.Close)
	_, port, _ := net.SplitHostPort(elsewhere.Listener.Addr().String())

	tb := openTab(t, 1280, 900)
	challenges := tb.answerBasicAuth("admin", "s3cret")
	tb.do("sign in to the admin dashboard", chromedp.Navigate(harness.CaddyAddr+"/memory/admin/ui/"))
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
	_, out := a.Do("GET", "/memory/admin/memories?owner=sk-victim&include_deleted=true", "admin", nil)
	if got := harness.ListContents(out); len(got) != 0 {
		t.Errorf("pages of other origins wrote into sk-victim's memories through the operator's browser: %q", got)
	}

	// The dashboard itself still writes: an import (JSON lines) and a
	// consolidation (a POST without a body).
	file := filepath.Join(t.TempDir(), "victim.jsonl")
	line := fmt.Sprintf(`{"id":888001,"owner":%q,"kind":"note","content":"Imported from the dashboard"}`+"\n", harness.EngineAt(storage).OwnerID("sk-victim"))
	if err := os.WriteFile(file, []byte(line), 0o600); err != nil {
		t.Fatal(err)
	}
	tb.open("the dashboard again", harness.CaddyAddr+"/memory/admin/ui/")
	tb.do("import a file", chromedp.SetUploadFiles(chromedp.ID("import-file"), []string{file}), chromedp.Click(chromedp.CSS("#import-form button[type=submit]")))
	tb.until("imported", `document.querySelector('#notice').innerText.includes('Imported 1')`)
	tb.do("consolidate", chromedp.Click(chromedp.ID("consolidate")))
	tb.until("consolidated", `document.querySelector('#notice').innerText.includes('Consolidation done')`)
	_, out = a.Do("GET", "/memory/admin/memories?owner=sk-victim", "admin", nil)
	if got := harness.ListContents(out); fmt.Sprint(got) != "[Imported from the dashboard]" {
		t.Errorf("after the dashboard's import, sk-victim has %q", got)
	}
	tb.checkConsole()
}

// readingOrder says whether the characters of word, where it first
// appears in the text of the element sel, are laid out left to right on
// the screen, as they are written: what a reader sees, not the DOM.
func readingOrder(sel, word string) string {
	return fmt.Sprintf(`(() => {
		const walker = document.createTreeWalker(document.querySelector(%s), NodeFilter.SHOW_TEXT);
		for (let n; (n = walker.nextNode());) {
			const i = n.data.indexOf(%s);
			if (i < 0) continue;
			const r = document.createRange();
			const left = (k) => { r.setStart(n, i + k); r.setEnd(n, i + k + 1); return r.getBoundingClientRect().left; };
			for (let k = 1; k < %d; k++) if (left(k) <= left(k - 1)) return 'reversed';
			return 'left to right';
		}
		return 'not found';
	})()`, jsString(sel), jsString(word), len(word))
}

// TestDashboardShowsHiddenCharacters: stored text with bidi controls and
// zero-width characters shows them as marked tokens, so "evil.exe" reads
// as written rather than as "exe.live", and a zero-width space is seen;
// the joiners of emoji and of Persian words do their ordinary job; markup
// stays text.
func TestDashboardShowsHiddenCharacters(t *testing.T) {
	storage := t.TempDir()
	up := harness.NewFakeLLM(t)
	a := harness.APICall{T: t, Client: harness.StartCaddy(t, harness.APIConfig(t, storage, up.Addr(), "")).Client}
	create := func(content string) int {
		t.Helper()
		status, out := a.Do("POST", "/memory/admin/memories", "admin", map[string]any{"owner": "sk-bidi", "kind": "note", "content": content})
		if status != http.StatusCreated {
			t.Fatalf("creating %q: %d %s", content, status, harness.ErrCode(out))
		}
		return harness.IDOf(harness.MemoryOf(out))
	}
	rtl := create("Run the attachment RTL \u202eevil.exe\u202c today")
	zw := create("Log in at pay\u200bpal.example")
	joined := create("Family 👨\u200d👩\u200d👧 says می\u200cخواهم")
	markup := create(`Markup <img src=x onerror="window.pwned=1"><script>window.pwned=1</script> stays text`)
	if status, out := a.Do("PATCH", fmt.Sprintf("/memory/admin/memories/%d", zw), "admin", map[string]any{"content": "Log in at the bank\u2060 instead"}); status != http.StatusOK {
		t.Fatalf("editing: %d %s", status, harness.ErrCode(out))
	}
	owner := harness.EngineAt(storage).OwnerID("sk-bidi")

	tb := openTab(t, 1280, 900)
	tb.answerBasicAuth("admin", "s3cret")
	tb.do("open the owner", chromedp.Navigate(harness.CaddyAddr+"/memory/admin/ui/#owner="+owner))
	tb.until("the memories", `document.querySelectorAll('#memories-table tbody tr').length === 4`)
	cell := func(id int) string {
		return tb.eval(fmt.Sprintf(`document.querySelector(%s + ' td.content').innerText`, jsString(row(id))))
	}
	if got := cell(rtl); !strings.Contains(got, "RTL <U+202E>evil.exe<U+202C> today") || strings.ContainsRune(got, '\u202e') {
		t.Errorf("the memory with bidi controls shows as %q", got)
	}
	if got := tb.eval(readingOrder(row(rtl)+" td.content", "evil.exe")); got != "left to right" {
		t.Errorf("evil.exe is laid out %s", got)
	}
	if got := cell(zw); !strings.Contains(got, "the bank<U+2060> instead") {
		t.Errorf("the memory with a word joiner shows as %q", got)
	}
	if got := cell(joined); !strings.Contains(got, "Family 👨\u200d👩\u200d👧 says می\u200cخواهم") || strings.Contains(got, "<U+") {
		t.Errorf("emoji and Persian joiners show as %q", got)
	}
	if got := cell(markup); !strings.Contains(got, `<img src=x onerror="window.pwned=1"><script>`) ||
		tb.eval(`String(document.querySelectorAll('#memories-table img, #memories-table script').length) + ' ' + typeof window.pwned`) != "0 undefined" {
		t.Errorf("stored markup shows as %q, or became elements", got)
	}

	// The memory's page, its history included.
	tb.open("the edited memory's page", fmt.Sprintf("%s/memory/admin/ui/#owner=%s&memory=%d", harness.CaddyAddr, owner, zw))
	tb.until("its history", `!document.querySelector('#detail').hidden && document.querySelector('#history').innerText.includes('pal.example')`)
	if got := tb.eval(`document.querySelector('#history').innerText`); !strings.Contains(got, "pay<U+200B>pal.example") {
		t.Errorf("the history shows %q", got)
	}
	tb.open("the other memory's page", fmt.Sprintf("%s/memory/admin/ui/#owner=%s&memory=%d", harness.CaddyAddr, owner, rtl))
	tb.until("its page", `!document.querySelector('#detail').hidden && document.querySelector('#detail-fields').innerText.includes('today')`)
	if got := tb.eval(readingOrder("#detail-fields", "evil.exe")); got != "left to right" {
		t.Errorf("on the memory's page, evil.exe is laid out %s", got)
	}
	t.Logf("screenshot (CI artifact): %s", tb.screenshot("dashboard-hidden-characters.png"))
	tb.checkConsole()
}
