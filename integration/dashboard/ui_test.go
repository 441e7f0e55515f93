package dashboard

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/cdproto/browser"
	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/fetch"
	cdplog "github.com/chromedp/cdproto/log"
	"github.com/chromedp/chromedp"

	"github.com/caddy-memory/memory/internal/harness"
)

// The dashboard in a real browser: Debian's headless Chromium, driven with
// chromedp, through real Caddy on apiConfig's layout (admin mode behind
// basic_auth at /memory/admin/ui/, self mode at /memory/ui/).

// chromium is Debian's package's browser; .ci/run installs it.
const chromium = "/usr/bin/chromium"

// tab is one browser tab in a test.
type tab struct {
	t   *testing.T
	ctx context.Context
	mu  sync.Mutex
	// problems are what the page's console said went wrong: uncaught
	// exceptions, and anything the Content-Security-Policy refused.
	problems []string
}

// openTab starts Chromium at width×height, with more options. A missing
// browser fails the test: a dashboard test that skips proves nothing.
func openTab(t *testing.T, width, height int, more ...chromedp.ExecAllocatorOption) *tab {
	t.Helper()
	if _, err := os.Stat(chromium); err != nil {
		t.Fatalf("the dashboard test drives Chromium at %s: install it (apt-get install -y chromium; .ci/run does): %v", chromium, err)
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(chromium),
		chromedp.NoSandbox, // CI runs as root, where Chromium's sandbox refuses to start
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.WindowSize(width, height),
	)
	opts = append(opts, more...)
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(actx)
	t.Cleanup(func() { cancel(); cancelAlloc() })
	// The first call starts the browser, bound to a context without a
	// deadline; each step gets its own deadline.
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("starting Chromium: %v", err)
	}
	tb := &tab{t: t, ctx: ctx}
	if _, err := chromedp.Call(ctx, cdplog.Enable, cdp.Empty{}); err != nil {
		t.Fatal(err)
	}
	go func() {
		for m, err := range chromedp.Console(ctx) {
			if err != nil {
				return
			}
			if m.IsException() || strings.Contains(m.Text, "Content Security Policy") {
				tb.mu.Lock()
				tb.problems = append(tb.problems, m.String())
				tb.mu.Unlock()
			}
		}
	}()
	return tb
}

// answerBasicAuth makes the browser answer every basic auth challenge
// with these credentials, as a user typing them into the browser's dialog,
// and counts the challenges.
func (tb *tab) answerBasicAuth(user, pass string) *atomic.Int32 {
	tb.t.Helper()
	var challenges atomic.Int32
	err := chromedp.Listen(tb.ctx, func(ev any) {
		// Listen's callback must not call the browser: answer from another
		// goroutine.
		switch ev := ev.(type) {
		case *fetch.EventRequestPaused:
			go chromedp.Call(tb.ctx, fetch.ContinueRequest, fetch.ContinueRequestParams{RequestID: ev.RequestID})
		case *fetch.EventAuthRequired:
			challenges.Add(1)
			go chromedp.Call(tb.ctx, fetch.ContinueWithAuth, fetch.ContinueWithAuthParams{RequestID: ev.RequestID,
				AuthChallengeResponse: &fetch.AuthChallengeResponse{Response: fetch.AuthChallengeResponseResponseProvideCredentials, Username: user, Password: pass}})
		}
	})
	if err != nil {
		tb.t.Fatal(err)
	}
	handle := true
	if _, err := chromedp.Call(tb.ctx, fetch.Enable, fetch.EnableParams{HandleAuthRequests: &handle}); err != nil {
		tb.t.Fatal(err)
	}
	return &challenges
}

// do runs actions, failing the test with what the page shows if they fail.
func (tb *tab) do(what string, actions ...chromedp.Action[chromedp.Void]) {
	tb.t.Helper()
	ctx, cancel := context.WithTimeout(tb.ctx, 20*time.Second)
	defer cancel()
	if err := chromedp.Do(ctx, actions...); err != nil {
		tb.fatal(what, err)
	}
}

// until waits for a JavaScript condition to hold.
func (tb *tab) until(what, cond string) {
	tb.t.Helper()
	ctx, cancel := context.WithTimeout(tb.ctx, 20*time.Second)
	defer cancel()
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](cond, chromedp.WithPollingTimeout(15*time.Second))); err != nil {
		tb.fatal(what, err)
	}
}

// eval returns the value of a JavaScript expression.
func (tb *tab) eval(expr string) string {
	tb.t.Helper()
	ctx, cancel := context.WithTimeout(tb.ctx, 10*time.Second)
	defer cancel()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[string](expr))
	if err != nil {
		tb.t.Fatalf("evaluating %s: %v", expr, err)
	}
	return v
}

// await returns the value of a JavaScript expression that is a promise,
// once it settles.
func (tb *tab) await(expr string) string {
	tb.t.Helper()
	ctx, cancel := context.WithTimeout(tb.ctx, 10*time.Second)
	defer cancel()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[string](expr, chromedp.EvalAwaitPromise))
	if err != nil {
		tb.t.Fatalf("evaluating %s: %v", expr, err)
	}
	return v
}

func (tb *tab) fatal(what string, err error) {
	tb.t.Helper()
	ctx, cancel := context.WithTimeout(tb.ctx, 5*time.Second)
	defer cancel()
	body, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`document.body.innerText`))
	path := tb.screenshot("dashboard-failed-" + strings.ReplaceAll(tb.t.Name(), "/", "_") + ".png")
	tb.t.Fatalf("%s: %v\nscreenshot: %s\nthe page shows:\n%s", what, err, path, body)
}

// screenshot saves the whole page where CI keeps artifacts
// ($ARTIFACTS_DIR, else a folder in the system's temporary directory that
// outlives the test) and returns its path.
func (tb *tab) screenshot(name string) string {
	tb.t.Helper()
	dir := artifacts(tb.t)
	ctx, cancel := context.WithTimeout(tb.ctx, 10*time.Second)
	defer cancel()
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err == nil {
		err = os.WriteFile(filepath.Join(dir, name), png, 0o644)
	}
	if err != nil {
		tb.t.Errorf("screenshot: %v", err)
		return ""
	}
	return filepath.Join(dir, name)
}

// viewShot saves what the window shows (not the whole page) beside
// screenshot's, and returns its path.
func (tb *tab) viewShot(name string) string {
	tb.t.Helper()
	ctx, cancel := context.WithTimeout(tb.ctx, 10*time.Second)
	defer cancel()
	png, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
	if err != nil {
		tb.t.Errorf("screenshot: %v", err)
		return ""
	}
	path := filepath.Join(artifacts(tb.t), name)
	if err := os.WriteFile(path, png, 0o644); err != nil {
		tb.t.Errorf("screenshot: %v", err)
	}
	return path
}

// artifacts is where screenshots go: $ARTIFACTS_DIR, else a folder in
// the system's temporary directory that outlives the test.
func artifacts(t *testing.T) string {
	dir := os.Getenv("ARTIFACTS_DIR")
	if dir == "" {
		dir = filepath.Join(os.TempDir(), "caddy-memory-artifacts")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Errorf("screenshot: %v", err)
	}
	return dir
}

// checkConsole fails the test if the page threw or broke its own CSP.
func (tb *tab) checkConsole() {
	tb.t.Helper()
	tb.mu.Lock()
	defer tb.mu.Unlock()
	for _, p := range tb.problems {
		tb.t.Errorf("the page's console: %s", p)
	}
}

// row is the memories table's row of memory id.
func row(id int) string { return fmt.Sprintf(`#memories-table tr[data-id="%d"]`, id) }

// rowButton is the button labelled label in memory id's row.
func rowButton(id int, label string) chromedp.Search {
	return chromedp.Search(fmt.Sprintf(`//table[@id="memories-table"]//tr[@data-id="%d"]//button[normalize-space()=%q]`, id, label))
}

func jsString(s string) string { return strconv.Quote(s) }

func TestDashboardAdmin(t *testing.T) {
	storage := t.TempDir()
	up := harness.NewFakeLLM(t)
	tester := harness.StartCaddy(t, harness.APIConfig(t, storage, up.Addr(), ""))
	a := harness.APICall{T: t, Client: tester.Client}

	// Created through the API, as an operator or a script would.
	status, out := a.Do("POST", "/memory/admin/memories", "admin", map[string]any{
		"owner": "sk-alice-ui", "kind": "preference", "content": "Alice keeps her bonsai on the north balcony", "session": "garden"})
	if status != http.StatusCreated {
		t.Fatalf("creating alice's memory: %d %s", status, harness.ErrCode(out))
	}
	id := harness.IDOf(harness.MemoryOf(out))
	for _, c := range []string{"Alice drinks oolong tea every morning", "Alice is learning Portuguese"} {
		if status, out := a.Do("POST", "/memory/admin/memories", "admin", map[string]any{"owner": "sk-alice-ui", "kind": "note", "content": c}); status != http.StatusCreated {
			t.Fatalf("creating %q: %d %s", c, status, harness.ErrCode(out))
		}
	}
	if status, out := a.Do("POST", "/memory/memories", "sk-bob-ui", map[string]any{"content": "Bob's locker code is 4711", "kind": "note"}); status != http.StatusCreated {
		t.Fatalf("creating bob's memory: %d %s", status, harness.ErrCode(out))
	}
	alice := harness.EngineAt(storage).OwnerID("sk-alice-ui")

	tb := openTab(t, 1280, 1000)
	challenges := tb.answerBasicAuth("admin", "s3cret")
	downloads := t.TempDir()
	if _, err := chromedp.CallBrowser(tb.ctx, browser.SetDownloadBehavior, browser.SetDownloadBehaviorParams{
		Behavior: browser.SetDownloadBehaviorBehaviorAllow, DownloadPath: downloads}); err != nil {
		t.Fatal(err)
	}

	// Log in: Caddy's basic_auth challenges the browser, which answers.
	tb.do("open the admin dashboard", chromedp.Navigate(harness.CaddyAddr+"/memory/admin/ui/"))
	tb.until("the owners list shows alice", fmt.Sprintf(`!!document.querySelector('#owners-table tr[data-owner=%q]')`, alice))
	if challenges.Load() == 0 {
		t.Error("the admin dashboard opened without a basic_auth challenge")
	}
	if got := tb.eval(fmt.Sprintf(`document.querySelector('#owners-table tr[data-owner=%q]').innerText`, alice)); !strings.Contains(got, "3") {
		t.Errorf("alice's owner row %q does not count her 3 memories", got)
	}

	// Pick alice: her memories, and only hers.
	tb.do("open alice", chromedp.Click(chromedp.CSS(fmt.Sprintf(`#owners-table tr[data-owner=%q] button`, alice))))
	tb.until("alice's memories, and only hers", fmt.Sprintf(`document.querySelector('#scope').innerText.includes(%q) && !document.querySelector('#q').disabled &&
		document.querySelectorAll('#memories-table tbody tr').length === 3 && document.querySelector(%s).innerText.includes('north balcony')`, alice, jsString(row(id))))
	if body := tb.eval(`document.querySelector('#memories-table').innerText`); strings.Contains(body, "4711") {
		t.Errorf("alice's memories show bob's: %s", body)
	}

	// Search as you type.
	tb.do("search", chromedp.SendKeys(chromedp.ID("q"), "bonsai"))
	tb.until("the search finds only the bonsai", fmt.Sprintf(`document.querySelectorAll('#memories-table tbody tr').length === 1 && !!document.querySelector(%s)`, jsString(row(id))))
	tb.retype("q", "submarine")
	tb.until("nothing matches", `document.querySelectorAll('#memories-table tbody tr').length === 0 && !document.querySelector('#memories-empty').hidden`)
	tb.retype("q", "bonsai")
	tb.until("the bonsai again", fmt.Sprintf(`!!document.querySelector(%s)`, jsString(row(id))))

	// Edit: a new version, the old text in its history.
	version, _ := strconv.Atoi(tb.eval(fmt.Sprintf(`document.querySelector(%s + ' td.version').innerText.trim()`, jsString(row(id)))))
	tb.do("edit", chromedp.Click(rowButton(id, "Edit")))
	tb.do("type the new text", chromedp.SetValue(chromedp.ID(fmt.Sprintf("edit-%d", id)), "Alice keeps her bonsai on the south balcony now"),
		chromedp.Click(rowButton(id, "Save")))
	tb.until("the new version in the table", fmt.Sprintf(`(document.querySelector(%s)||{}).innerText?.includes('south balcony') && document.querySelector(%s + ' td.version').innerText.trim() === '%d'`,
		jsString(row(id)), jsString(row(id)), version+1))
	tb.do("open its history", chromedp.Click(rowButton(id, "History")))
	tb.until("the history shows the first version", `!document.querySelector('#detail').hidden && document.querySelector('#history').innerText.includes('north balcony')`)
	if !strings.Contains(tb.eval(`document.querySelector('#detail-fields').innerText`), "south balcony") {
		t.Error("the memory's page does not show its current text")
	}
	tb.do("close it", chromedp.Click(chromedp.ID("detail-close")))

	// Delete (soft), then restore.
	tb.do("delete", chromedp.Click(rowButton(id, "Delete")))
	tb.until("gone from the table", fmt.Sprintf(`!document.querySelector(%s) && document.querySelector('#notice').innerText.includes('Deleted memory %d')`, jsString(row(id)), id))
	if _, out := a.Do("GET", fmt.Sprintf("/memory/admin/memories/%d", id), "admin", nil); harness.MemoryOf(out)["deleted_at"] == nil {
		t.Errorf("the dashboard's delete left memory %d undeleted: %v", id, out)
	}
	tb.do("show deleted", chromedp.Click(chromedp.ID("f-deleted")))
	tb.until("the search finds active memories only", `document.querySelector('#memories-empty').innerText.includes('clear it to see deleted ones')`)
	tb.clear("q")
	tb.until("listed as deleted", fmt.Sprintf(`(document.querySelector(%s)||{}).className === 'deleted'`, jsString(row(id))))
	tb.do("restore", chromedp.Click(rowButton(id, "Restore")))
	tb.until("restored", fmt.Sprintf(`(document.querySelector(%s)||{className:'x'}).className === ''`, jsString(row(id))))
	if _, out := a.Do("GET", fmt.Sprintf("/memory/admin/memories/%d", id), "admin", nil); harness.MemoryOf(out)["deleted_at"] != nil {
		t.Errorf("the dashboard's restore left memory %d deleted: %v", id, out)
	}

	// What would be injected, with scores; and why nothing, for small talk.
	tb.do("preview", chromedp.SendKeys(chromedp.ID("preview-q"), "Where is my bonsai?"), chromedp.Click(chromedp.CSS("#preview-form button")))
	tb.until("the block", `(document.querySelector('#preview-block')||{}).innerText?.includes('<memory-context') && document.querySelector('#preview-block').innerText.includes('south balcony')`)
	if score := tb.eval(`document.querySelector('#preview-out table.scores td.num').innerText`); score == "" || score == "0.000" {
		t.Errorf("the preview shows score %q for the injected memory", score)
	}
	tb.retype("preview-q", "thanks!")
	tb.do("preview small talk", chromedp.Click(chromedp.CSS("#preview-form button")))
	tb.until("why nothing", `(document.querySelector('#preview-nothing')||{}).innerText?.includes('small talk')`)

	// Stats: charts and health.
	tb.until("the kinds chart", `!!document.querySelector('#chart-kinds svg rect') && document.querySelector('#chart-kinds svg').getAttribute('aria-label').includes('preference 1')`)
	tb.until("the outcome bars", `document.querySelectorAll('#chart-outcomes .bars > div').length >= 2`)
	tb.until("healthy, with latency", `document.querySelector('#health').classList.contains('ok') && /store [0-9.]+ ms/.test(document.querySelector('#health-text').innerText)`)

	// Export: the download holds alice's memories, history included.
	tb.do("export", chromedp.Click(chromedp.ID("export")))
	tb.until("exported", `document.querySelector('#notice').innerText.includes('Exported 3 memories')`)
	// Chromium writes the download in its own time: read it until it is
	// whole (three lines), or the time is up.
	var exported []byte
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline) && bytes.Count(exported, []byte("\n")) < 3; time.Sleep(50 * time.Millisecond) {
		files, _ := filepath.Glob(filepath.Join(downloads, "memories-*.jsonl"))
		if len(files) == 1 {
			exported, _ = os.ReadFile(files[0])
		}
	}
	if s := string(exported); strings.Count(s, "\n") != 3 || !strings.Contains(s, "south balcony") || !strings.Contains(s, "north balcony") || strings.Contains(s, "4711") {
		t.Errorf("the exported file holds:\n%s\nwant alice's 3 memories with the edit's history, not bob's", s)
	}

	// An API error is shown as the API's message.
	tb.open("a memory that does not exist", harness.CaddyAddr+"/memory/admin/ui/#memory=999999")
	tb.until("the API's message", `document.querySelector('#error').innerText.includes('no memory 999999')`)

	// The picture: alice's memories and what her question would get.
	tb.open("alice again", harness.CaddyAddr+"/memory/admin/ui/#owner="+alice)
	tb.until("her memories", `document.querySelectorAll('#memories-table tbody tr').length === 3`)
	tb.do("preview", chromedp.SendKeys(chromedp.ID("preview-q"), "Where is my bonsai?"), chromedp.Click(chromedp.CSS("#preview-form button")))
	tb.until("the block", `!!document.querySelector('#preview-block')`)
	block := tb.eval(`document.querySelector('#preview-block').textContent`)

	// The preview is what the proxy does: the same question through it
	// carries that very block upstream, and the outcome chart counts it.
	harness.Post(t, tester, "/v1/chat/completions", "sk-alice-ui", harness.ChatBody(false, harness.Msg("user", "Where is my bonsai?")))
	carried := false
	for _, m := range harness.Messages(t, up.Last("/chat/completions").Body) {
		c, _ := m["content"].(string)
		carried = carried || strings.Contains(c, block)
	}
	if !carried {
		t.Errorf("the upstream did not get the block the preview showed:\n%s\ngot: %s", block, up.Last("/chat/completions").Body)
	}
	tb.do("refresh the stats", chromedp.Click(chromedp.ID("refresh")))
	tb.until("an injection counted", `[...document.querySelectorAll('#chart-outcomes .bars > div')].some(d => d.innerText.startsWith('injected') && parseInt(d.lastChild.innerText) >= 1)`)
	t.Logf("dashboard screenshot (CI artifact): %s", tb.screenshot("dashboard-admin.png"))
	tb.checkConsole()
}

func TestDashboardSelf(t *testing.T) {
	storage := t.TempDir()
	up := harness.NewFakeLLM(t)
	tester := harness.StartCaddy(t, harness.APIConfig(t, storage, up.Addr(), ""))
	a := harness.APICall{T: t, Client: tester.Client}
	_, out := a.Do("POST", "/memory/memories", "sk-carol-ui", map[string]any{"content": "Carol's wifi password is lighthouse42", "kind": "note"})
	carols := harness.IDOf(harness.MemoryOf(out))
	_, out = a.Do("POST", "/memory/memories", "sk-dave-ui", map[string]any{"content": "Dave walks his greyhound at dawn", "kind": "note"})
	daves := harness.IDOf(harness.MemoryOf(out))
	if carols == 0 || daves == 0 {
		t.Fatalf("creating the memories: %d, %d", carols, daves)
	}

	// A phone-sized window: the page must fit it.
	tb := openTab(t, 375, 800)
	tb.do("open the dashboard at 375 px", chromedp.EmulateViewport(375, 800), chromedp.Navigate(harness.CaddyAddr+"/memory/ui/"))
	tb.do("the login form", chromedp.WaitVisible(chromedp.ID("login-key")))
	tb.do("sign in as dave", chromedp.SendKeys(chromedp.ID("login-key"), "sk-dave-ui"), chromedp.Click(chromedp.CSS("#login-form button")))
	tb.until("dave's memory", fmt.Sprintf(`(document.querySelector(%s)||{}).innerText?.includes('greyhound')`, jsString(row(daves))))
	if key := tb.eval(`sessionStorage.getItem('memory.api_key')`); key != "sk-dave-ui" {
		t.Errorf("session storage holds %q, want the key", key)
	}
	if body := tb.eval(`document.body.innerText`); strings.Contains(body, "lighthouse42") {
		t.Error("dave's dashboard shows carol's memory")
	}

	// Carol's memory by id in the URL: the API's "no memory", nothing of hers.
	tb.open("carol's memory by id", fmt.Sprintf("%s/memory/ui/#memory=%d", harness.CaddyAddr, carols))
	tb.until("refused", fmt.Sprintf(`!document.querySelector('#error').hidden && document.querySelector('#error').innerText.includes('no memory %d')`, carols))
	if body := tb.eval(`document.body.innerText`); strings.Contains(body, "lighthouse42") {
		t.Error("dave's dashboard shows carol's memory when asked for it by id")
	}
	if !tb.eval2bool(`document.querySelector('#detail').hidden`) {
		t.Error("the memory page opened for another owner's memory")
	}
	// His own by id, for contrast: the same path works.
	tb.open("dave's memory by id", fmt.Sprintf("%s/memory/ui/#memory=%d", harness.CaddyAddr, daves))
	tb.until("his memory's page", `!document.querySelector('#detail').hidden && document.querySelector('#detail-fields').innerText.includes('greyhound')`)

	// Search, preview and export, scoped to him.
	tb.do("search", chromedp.SendKeys(chromedp.ID("q"), "wifi"))
	tb.until("carol's memory is not found", `document.querySelectorAll('#memories-table tbody tr').length === 0`)
	tb.do("preview", chromedp.SendKeys(chromedp.ID("preview-q"), "What is the wifi password?"), chromedp.Click(chromedp.CSS("#preview-form button")))
	tb.until("nothing for him", `(document.querySelector('#preview-nothing')||{}).innerText?.includes('Nothing would be injected')`)
	tb.do("remember this", chromedp.SendKeys(chromedp.ID("add-content"), "Dave prefers window seats on trains"), chromedp.Click(chromedp.CSS("#add-form button[type=submit]")))
	tb.retype("q", "seats")
	tb.until("the new memory, alone", `document.querySelector('#memories-table').innerText.includes('window seats') && !document.querySelector('#memories-table').innerText.includes('greyhound')`)

	// 375 px wide: no sideways scrolling, the controls on screen.
	if w := tb.eval(`window.innerWidth + ' ' + document.documentElement.scrollWidth`); w != "375 375" {
		t.Errorf("viewport and page widths %s, want 375 375: the page scrolls sideways", w)
	}
	t.Logf("phone-size screenshot (CI artifact): %s", tb.screenshot("dashboard-self-375.png"))

	tb.do("sign out", chromedp.Click(chromedp.ID("logout")))
	tb.until("the login form again", `!document.querySelector('#login').hidden && sessionStorage.getItem('memory.api_key') === null`)
	tb.checkConsole()
}

// retype replaces what a text field holds by typing text into it, as a
// user does (the page sees each keystroke).
func (tb *tab) retype(id, text string) {
	tb.t.Helper()
	tb.eval(fmt.Sprintf(`document.getElementById(%q).value = ''`, id))
	tb.do("typing "+text, chromedp.SendKeys(chromedp.ID(id), text))
}

// clear empties a text field, as a user selecting and deleting its text.
func (tb *tab) clear(id string) {
	tb.t.Helper()
	tb.eval(fmt.Sprintf(`(e => { e.value = ''; e.dispatchEvent(new Event('input', {bubbles: true})); return '' })(document.getElementById(%q))`, id))
}

// open loads url afresh, as when it is typed or followed from elsewhere
// (a hash alone would not reload the page).
func (tb *tab) open(what, url string) {
	tb.t.Helper()
	tb.do(what, chromedp.Navigate("about:blank"), chromedp.Navigate(url), chromedp.WaitVisible(chromedp.CSS("header.top")))
}

func (tb *tab) eval2bool(expr string) bool {
	tb.t.Helper()
	return tb.eval(`String(`+expr+`)`) == "true"
}

// TestDashboardFindsAnOwnerAndShowsRecentRequests: the operator types the
// API key they know into "API key or user" and that owner opens; "Recent
// requests" lists the owner's chat requests, the injected memories' ids
// linking to each memory's page.
func TestDashboardFindsAnOwnerAndShowsRecentRequests(t *testing.T) {
	storage := t.TempDir()
	up := harness.NewFakeLLM(t)
	tester := harness.StartCaddy(t, harness.APIConfig(t, storage, up.Addr(), ""))
	harness.Post(t, tester, "/v1/chat/completions", "sk-erin-ui", harness.ChatBody(false, harness.Msg("user", "I live in Zqtallinn.")))
	harness.Settle(t, storage, 1)
	harness.Post(t, tester, "/v1/chat/completions", "sk-erin-ui", harness.ChatBody(false, harness.Msg("user", "Where do I live?")))
	if !harness.HasBlock(up.Last("/chat/completions").Body) {
		t.Fatal("nothing was injected: the test would show no receipt")
	}
	erin := harness.EngineAt(storage).OwnerID("sk-erin-ui")

	tb := openTab(t, 1280, 1000)
	tb.answerBasicAuth("admin", "s3cret")
	tb.do("open the admin dashboard", chromedp.Navigate(harness.CaddyAddr+"/memory/admin/ui/"))
	tb.until("the owners list", `document.querySelectorAll('#owners-table tbody tr').length > 0`)
	tb.do("find erin by her key", chromedp.SendKeys(chromedp.ID("find-owner"), "sk-erin-ui"), chromedp.Click(chromedp.CSS("#find-form button")))
	tb.until("erin's memories", fmt.Sprintf(`document.querySelector('#scope').innerText.includes(%q) && document.querySelector('#memories-table').innerText.includes('Zqtallinn')`, erin))
	tb.until("her recent requests", `document.querySelectorAll('#recent-table tbody tr').length === 2 && document.querySelectorAll('#recent-table tbody a').length > 0`)
	if got := tb.eval(`document.querySelector('#recent-table tbody tr').innerText`); !strings.Contains(got, "injected") {
		t.Errorf("the newest request's row: %q", got)
	}
	tb.do("open an injected memory", chromedp.Click(chromedp.CSS("#recent-table tbody a")))
	tb.until("its page", `!document.querySelector('#detail').hidden && document.querySelector('#detail-fields').innerText.includes('Zqtallinn')`)

	tb.do("find a key nobody uses", chromedp.SendKeys(chromedp.ID("find-owner"), "sk-nobody"), chromedp.Click(chromedp.CSS("#find-form button")))
	tb.until("said so", `!document.querySelector('#notice').hidden && document.querySelector('#notice').innerText.includes('No memories')`)
	tb.checkConsole()
}

// TestDashboardOpensAtTheMountRoot: GET <mount>/ (/memory/, and
// /memory/admin/ behind basic_auth) opens the dashboard rather than
// answering 404, and the page shows an icon of its own, served beside it:
// the browser's /favicon.ico goes to the site's root, proxied to the LLM.
func TestDashboardOpensAtTheMountRoot(t *testing.T) {
	storage := t.TempDir()
	up := harness.NewFakeLLM(t)
	tester := harness.StartCaddy(t, harness.APIConfig(t, storage, up.Addr(), ""))
	a := harness.APICall{T: t, Client: harness.NotFollowing(tester.Client)}
	for path, auth := range map[string]string{"/memory/": "", "/memory/admin/": "admin"} {
		status, body := a.Raw("GET", path, auth, nil)
		if status != http.StatusFound {
			t.Errorf("GET %s = %d %s, want a redirect to the dashboard", path, status, body)
		}
	}

	tb := openTab(t, 1024, 700)
	tb.answerBasicAuth("admin", "s3cret")
	for _, mount := range []string{"/memory/", "/memory/admin/"} {
		tb.open("the mount's root "+mount, harness.CaddyAddr+mount)
		tb.until("the dashboard at "+mount+"ui/", fmt.Sprintf(`location.pathname === %q && !!document.querySelector('#memories')`, mount+"ui/"))
		// The icon the page names is the API's, an image.
		icon := tb.await(`(async () => {
			const link = document.querySelector('link[rel=icon]');
			if (!link) return 'no icon link';
			const r = await fetch(link.href);
			return link.href.replace(location.origin, '') + ' ' + r.status + ' ' + r.headers.get('Content-Type');
		})()`)
		if want := mount + "ui/favicon.svg 200 image/svg+xml"; icon != want {
			t.Errorf("the page's icon: %s, want %s", icon, want)
		}
	}
	for _, r := range up.All() {
		if r.Path == "/favicon.ico" {
			t.Errorf("the browser asked the LLM upstream for /favicon.ico")
		}
	}
	tb.checkConsole()
}

// TestDashboardShowsWhatItKnows: a person who told their assistant eight
// things about themselves, over two conversations through the proxy, opens
// the dashboard on what it knows about them: those facts, grouped as a
// person thinks of them, before anything else; the transcripts folded
// under conversations named by time and first words, not hashes. One click
// edits a fact (the old value then shown as what it replaced), one click
// forgets one (and Undo brings it back).
func TestDashboardShowsWhatItKnows(t *testing.T) {
	storage := t.TempDir()
	up := harness.NewFakeLLM(t)
	tester := harness.StartCaddy(t, harness.APIConfig(t, storage, up.Addr(), ""))
	const key = "sk-maya-ui"
	conversation := func(lines ...string) {
		var msgs []map[string]any
		for _, l := range lines {
			msgs = append(msgs, harness.Msg("user", l))
			harness.Post(t, tester, "/v1/chat/completions", key, harness.ChatBody(false, msgs...))
			msgs = append(msgs, harness.Msg("assistant", "Noted."))
		}
	}
	conversation("Hi, my name is Maya Lindqvist.", "I live in Porto, near the river.",
		"I work as a nurse at Santo António hospital.", "My husband is called Tomás.", "What's a quick dinner I could make tonight?",
		"Remember that my passport expires in March 2027.")
	conversation("I'm allergic to peanuts.", "I'm vegetarian.", "Please always answer in metric units.",
		"I prefer short answers.", "Actually, I moved to Lisbon last month.")
	harness.Settle(t, storage, 11)

	// The facts' ids, as the API has them.
	a := harness.APICall{T: t, Client: tester.Client}
	status, prof := a.Do("GET", "/memory/profile", key, nil)
	ids := map[string]int{}
	groups, _ := prof["groups"].([]any)
	for _, g := range groups {
		facts, _ := g.(map[string]any)["facts"].([]any)
		for _, f := range facts {
			m := f.(map[string]any)["memory"].(map[string]any)
			ids[m["content"].(string)] = harness.IDOf(m)
		}
	}
	nurse, short, lisbon := ids["User works as a nurse at Santo António hospital."], ids["User prefers short answers."], 0
	for content, id := range ids {
		// "last month" is kept as the month it was said in.
		if strings.HasPrefix(content, "User moved to Lisbon in ") {
			lisbon = id
		}
	}
	if status != http.StatusOK || len(ids) != 8 || nurse == 0 || short == 0 || lisbon == 0 {
		t.Fatalf("GET /memory/profile = %d, facts %v: want the eight", status, ids)
	}
	fact := func(id int) string { return fmt.Sprintf(`#profile li.fact[data-id="%d"]`, id) }
	factButton := func(id int, label string) chromedp.Search {
		return chromedp.Search(fmt.Sprintf(`//section[@id="profile"]//li[@data-id="%d"]//button[normalize-space()=%q]`, id, label))
	}

	tb := openTab(t, 1280, 900)
	tb.do("open the dashboard", chromedp.Navigate(harness.CaddyAddr+"/memory/"))
	tb.do("the login form", chromedp.WaitVisible(chromedp.ID("login-key")))
	tb.do("sign in", chromedp.SendKeys(chromedp.ID("login-key"), key), chromedp.Click(chromedp.CSS("#login-form button")))
	tb.until("what it knows", `document.querySelectorAll('#profile li.fact').length === 8`)

	// First on the page: the profile, grouped, health and diet together.
	if first := tb.eval(`[...document.querySelectorAll('#app > section, #app > div')].find(e => !e.hidden && e.offsetParent !== null).id`); first != "profile" {
		t.Errorf("the page opens on #%s, want #profile", first)
	}
	if got := tb.eval(`document.querySelector('#profile h2').innerText`); got != "What it knows about you" {
		t.Errorf("the profile's heading %q", got)
	}
	want := "Who you are|Family, household and pets|Home and belongings|Work and study|Health and diet|Preferences and instructions"
	if got := tb.eval(`[...document.querySelectorAll('#profile h3')].map(h => h.textContent).join('|')`); got != want {
		t.Errorf("the profile's groups %q, want %q", got, want)
	}
	if got := tb.eval(`document.querySelector('#profile [data-group=health]').innerText`); !strings.Contains(got, "allergic to peanuts") || !strings.Contains(got, "vegetarian") {
		t.Errorf("health and diet: %q", got)
	}
	// What it replaced, shown with the fact.
	if got := tb.eval(`document.querySelector(` + jsString(fact(lisbon)) + `).innerText`); !strings.Contains(got, "Porto") {
		t.Errorf("the home fact %q does not show the Porto it replaced", got)
	}

	// Then what is found only when a question is about it.
	tb.until("the other memories", `!document.querySelector('#others').hidden && document.querySelector('#others').innerText.includes('passport expires in March 2027')`)

	// The transcripts: folded, under conversations named by time and first
	// words; nowhere else on the page until asked for.
	tb.until("two conversations", `document.querySelectorAll('#conversations details').length === 2`)
	if open := tb.eval(`String([...document.querySelectorAll('#conversations details')].filter(d => d.open).length)`); open != "0" {
		t.Errorf("%s conversations open by default, want them folded", open)
	}
	labels := tb.eval(`[...document.querySelectorAll('#conversations summary')].map(s => s.innerText).join('\n')`)
	if !strings.Contains(labels, "Hi, my name is Maya Lindqvist.") || !strings.Contains(labels, "I'm allergic to peanuts.") || !regexp.MustCompile(`\d{1,2}:\d{2}`).MatchString(labels) {
		t.Errorf("the conversations are labelled %q, want their time and first words", labels)
	}
	hash := regexp.MustCompile(`\bc-[0-9a-f]{6,}`)
	if body := tb.eval(`document.body.innerText`); hash.MatchString(body) || strings.Contains(body, "User: I'm allergic") {
		t.Errorf("the page shows a session hash or a transcript turn before it is asked for:\n%s", body)
	}
	tb.do("open a conversation", chromedp.Click(chromedp.Search(`//section[@id="conversations"]//summary[contains(., "Hi, my name is Maya")]`)))
	tb.until("its turns", `[...document.querySelectorAll('#conversations details')].some(d => d.open && d.innerText.includes('User: I live in Porto'))`)

	// Edit in one click: the text becomes a box, Enter saves a new version.
	tb.do("edit", chromedp.Click(factButton(nurse, "Edit")))
	tb.until("the edit box, focused", fmt.Sprintf(`document.activeElement && document.activeElement.id === 'fact-edit-%d'`, nurse))
	tb.eval(fmt.Sprintf(`document.getElementById('fact-edit-%d').value = ''`, nurse))
	tb.do("type the correction", chromedp.SendKeys(chromedp.ID(fmt.Sprintf("fact-edit-%d", nurse)), "User works as a midwife at Santo António hospital.\r"))
	tb.until("the new text, the old as history", fmt.Sprintf(`(e => e?.querySelector('.fact-text')?.innerText === 'User works as a midwife at Santo António hospital.' && !!e.querySelector('.was')?.innerText.includes('nurse'))(document.querySelector(%s))`, jsString(fact(nurse))))
	if _, out := a.Do("GET", fmt.Sprintf("/memory/memories/%d", nurse), key, nil); !strings.Contains(fmt.Sprint(harness.MemoryOf(out)["content"]), "midwife") {
		t.Errorf("the edit was not saved: %v", out)
	}
	tb.until("the conversation opened stays open", `[...document.querySelectorAll('#conversations details')].some(d => d.open && d.innerText.includes('User: I live in Porto'))`)

	// The first screen, as docs/dashboard.png shows it.
	tb.do("a tall window, at the top", chromedp.EmulateViewport(1280, 1300), chromedp.Evaluate[chromedp.Void](`window.scrollTo(0, 0)`))
	t.Logf("the first screen (docs/dashboard.png): %s", tb.viewShot("dashboard-profile-top.png"))

	// Forget in one click, and Undo.
	tb.do("forget", chromedp.Click(factButton(short, "Forget")))
	tb.until("gone from the profile", fmt.Sprintf(`!document.querySelector(%s) && document.querySelector('#notice').innerText.includes('Forgot')`, jsString(fact(short))))
	if _, out := a.Do("GET", fmt.Sprintf("/memory/memories/%d", short), key, nil); harness.MemoryOf(out)["deleted_at"] == nil {
		t.Errorf("Forget left memory %d undeleted: %v", short, out)
	}
	t.Logf("screenshot: %s", tb.screenshot("dashboard-profile.png"))
	tb.do("undo", chromedp.Click(chromedp.Search(`//div[@id="notice"]//button[normalize-space()="Undo"]`)))
	tb.until("back in the profile", fmt.Sprintf(`!!document.querySelector(%s)`, jsString(fact(short))))
	if _, out := a.Do("GET", fmt.Sprintf("/memory/memories/%d", short), key, nil); harness.MemoryOf(out)["deleted_at"] != nil {
		t.Errorf("Undo left memory %d deleted: %v", short, out)
	}
	// On a phone: the same, one column, no sideways scrolling.
	tb.do("375 px", chromedp.EmulateViewport(375, 800))
	tb.until("laid out again", `window.innerWidth === 375`)
	if w := tb.eval(`window.innerWidth + ' ' + document.documentElement.scrollWidth`); w != "375 375" {
		t.Errorf("viewport and page widths %s, want 375 375: the page scrolls sideways", w)
	}
	tb.do("at the top", chromedp.Evaluate[chromedp.Void](`window.scrollTo(0, 0)`))
	t.Logf("phone-size screenshots: %s, %s", tb.viewShot("dashboard-profile-375-top.png"), tb.screenshot("dashboard-profile-375.png"))
	tb.checkConsole()
}

// TestDashboardOpensForTheLocalUser: on Caddyfile.example, the person at
// the machine, whose chat client sends no key (Ollama's own), opens the
// dashboard on what it remembers of them without typing a key, the owner
// resolved as the proxy resolves it; they can sign in with a key instead
// (that key's memories, none of theirs) and come back without one. The
// same page under a name rebound to 127.0.0.1 (a web page's trick), or
// from elsewhere on the network (MEMORY_BIND=0.0.0.0), asks for a key,
// and the API gives it nothing.
func TestDashboardOpensForTheLocalUser(t *testing.T) {
	up, storage, _, tester := harness.ExposedExample(t)
	harness.OllamaChat(t, tester.Client, up, nil, "Hi, I am Ana. I live in Lisbon and I am allergic to peanuts.")
	harness.OllamaChat(t, tester.Client, up, map[string]string{"Authorization": "Bearer sk-zoe-ui"}, "I live in Zqoslo and I am vegetarian.")
	harness.Settle(t, storage, 2)

	tb := openTab(t, 1280, 900, chromedp.Flag("host-resolver-rules", "MAP rebound.test 127.0.0.1"))
	tb.do("open the dashboard", chromedp.Navigate(harness.CaddyAddr+"/memory/"))
	tb.until("what it knows about the person at the machine", `!!document.querySelector('#profile') && document.querySelector('#profile').innerText.includes('allergic to peanuts')`)
	if !tb.eval2bool(`document.querySelector('#login').hidden`) {
		t.Error("the dashboard asked the person at the machine for a key")
	}
	if who := tb.eval(`document.querySelector('#who').innerText`); !strings.Contains(who, "at this machine") {
		t.Errorf("the header says %q, want who it shows", who)
	}
	if body := tb.eval(`document.body.innerText`); strings.Contains(body, "Zqoslo") {
		t.Error("the local user's dashboard shows a key holder's memory")
	}
	t.Logf("screenshot (CI artifact): %s", tb.screenshot("dashboard-local-user.png"))

	// A key instead: that key's memories, then back without one.
	tb.do("sign in with a key", chromedp.Click(chromedp.ID("logout")))
	tb.do("the login form", chromedp.WaitVisible(chromedp.ID("login-key")), chromedp.WaitVisible(chromedp.ID("login-continue")))
	t.Logf("screenshot (CI artifact): %s", tb.viewShot("dashboard-local-user-sign-in.png"))
	tb.do("sign in as zoe", chromedp.SendKeys(chromedp.ID("login-key"), "sk-zoe-ui"), chromedp.Click(chromedp.CSS("#login-form button")))
	tb.until("zoe's memories, and only hers", `document.querySelector('#profile').innerText.includes('Zqoslo') && document.querySelector('#memories-table').innerText.includes('Zqoslo') && !document.body.innerText.includes('peanuts')`)
	if got := tb.eval(`document.querySelector('#logout').innerText + '|' + document.querySelector('#who').hidden`); got != "Sign out|true" {
		t.Errorf("signed in with a key, the header's button and who: %q", got)
	}
	tb.do("sign out", chromedp.Click(chromedp.ID("logout")))
	tb.do("continue without a key", chromedp.WaitVisible(chromedp.ID("login-continue")), chromedp.Click(chromedp.ID("login-continue")))
	tb.until("the local user's memories again", `!document.querySelector('#app').hidden && document.querySelector('#profile').innerText.includes('allergic to peanuts')`)

	// Under a name rebound to 127.0.0.1: nobody without a key.
	tb.open("the dashboard under a rebound name", "http://rebound.test:"+harness.Port+"/memory/ui/")
	tb.until("asks for a key", `!document.querySelector('#login').hidden && document.querySelector('#login-keyless').hidden`)
	if body := tb.eval(`document.body.innerText`); strings.Contains(body, "peanuts") {
		t.Error("the page under a rebound name shows the local user's memory")
	}
	if got := tb.await(`fetch('/memory/memories').then(r => String(r.status))`); got != "401" {
		t.Errorf("the API under a rebound name answered %s, want 401", got)
	}
	tb.checkConsole()

	// From elsewhere on the network (its address given by the PROXY
	// protocol): the page is not told it is the local user, the API answers
	// 401.
	bea := harness.From("203.0.113.7")
	for path, want := range map[string]string{"/memory/ui/": `data-local="false"`, "/memory/memories": `"unauthorized"`} {
		resp, err := bea.Get(harness.CaddyAddr + path)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if !strings.Contains(string(body), want) || strings.Contains(string(body), "peanuts") {
			t.Errorf("GET %s from elsewhere: %d %s, want %s", path, resp.StatusCode, body, want)
		}
	}
}
