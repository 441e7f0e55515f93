package proxy

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/caddy-memory/memory/internal/harness"
)

// TestExampleRemembersItsLocalUser: Caddyfile.example as shipped (on
// 127.0.0.1, proxying to a local Ollama) remembers the person at the
// machine whose client sends no key, as Ollama's own do: the second
// conversation carries what the first said, and their dashboard's API
// lists it. A key holder, even one whose key is "local", is someone else.
func TestExampleRemembersItsLocalUser(t *testing.T) {
	up := harness.NewFakeLLM(t)
	storage, logFile := t.TempDir(), filepath.Join(t.TempDir(), "caddy.log")
	t.Setenv("MEMORY_PORT", harness.Port)
	t.Setenv("MEMORY_UPSTREAM", up.URL)
	os.Unsetenv("MEMORY_BIND")
	tester := harness.StartCaddy(t, harness.ExampleUnderTest(t, storage, logFile, ""))

	first := harness.OllamaChat(t, tester.Client, up, nil, "Hi, I am Ana. I live in Lisbon and I am allergic to peanuts.")
	if harness.HasBlock(first) {
		t.Fatalf("the first request had nothing to recall, yet carries a block: %s", first)
	}
	harness.Settle(t, storage, 1)
	second := string(harness.OllamaChat(t, tester.Client, up, nil, "Suggest a snack I could buy near where I live."))
	if !harness.HasBlock([]byte(second)) || !strings.Contains(second, "User is allergic to peanuts.") || !strings.Contains(second, "Lisbon") {
		t.Errorf("the local user's second conversation did not carry what the first said:\n%s", second)
	}
	if got := string(harness.OllamaChat(t, tester.Client, up, map[string]string{"Authorization": "Bearer local"},
		"Suggest a snack I could buy near where I live.")); strings.Contains(got, "peanuts") || strings.Contains(got, "Lisbon") {
		t.Errorf("a key holder whose key is \"local\" got the local user's memories:\n%s", got)
	}

	// The dashboard's API, mounted with the same owners, is theirs.
	req, _ := http.NewRequest(http.MethodGet, harness.CaddyAddr+"/memory/memories", nil)
	resp, err := tester.Client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), "peanuts") {
		t.Errorf("the local user's GET /memory/memories: %d %s", resp.StatusCode, body)
	}
	if lines := harness.LogLines(t, logFile, harness.NoOwnerMsg); len(lines) != 0 {
		t.Errorf("requests that had an owner were logged as without one: %v", lines)
	}
}

// TestExampleKeepsStrangersApart: Caddyfile.example exposed with
// MEMORY_BIND=0.0.0.0 remembers no keyless client but the person at the
// machine: two clients elsewhere on the network (their addresses given by
// the PROXY protocol, as a load balancer's would be) share nothing and are
// not remembered, and neither is a request a proxy on this machine relays
// (X-Forwarded-For), one naming another host (a name rebound to
// 127.0.0.1) or one a page from another site sends (its Origin, or a
// browser's Sec-Fetch-Site); the log says why, once for each cause.
func TestExampleKeepsStrangersApart(t *testing.T) {
	up, storage, logFile, tester := harness.ExposedExample(t)
	bea, carl := harness.From("203.0.113.7"), harness.From("198.51.100.9")

	harness.OllamaChat(t, bea, up, nil, "My name is Bea and I live in Zqbraga.")
	harness.OllamaChat(t, carl, up, nil, "My name is Carl and I live in Zqcoimbra.")
	for name, c := range map[string]*http.Client{"Bea": bea, "Carl": carl} {
		if got := harness.OllamaChat(t, c, up, nil, "Where do I live, Zqbraga or Zqcoimbra?"); harness.HasBlock(got) {
			t.Errorf("%s, a keyless client elsewhere, was given memories: %s", name, got)
		}
	}
	for name, h := range map[string]map[string]string{
		"relayed by a proxy on this machine": {"X-Forwarded-For": "203.0.113.7"},
		"naming another host":                {"Host": "rebound.example:" + harness.Port},
		"sent by another site's page":        {"Origin": "https://evil.example"},
		"a cross-site browser request":       {"Sec-Fetch-Site": "cross-site"},
	} {
		harness.OllamaChat(t, tester.Client, up, h, "My name is Dora and I live in Zqdouro.")
		if got := harness.OllamaChat(t, tester.Client, up, h, "Where do I live, Zqdouro?"); harness.HasBlock(got) {
			t.Errorf("a keyless request %s was given memories: %s", name, got)
		}
	}
	// The person at the machine still is someone.
	harness.OllamaChat(t, tester.Client, up, nil, "My name is Eva and I live in Zqevora.")
	harness.Settle(t, storage, 1)
	if got := string(harness.OllamaChat(t, tester.Client, up, nil, "Where do I live, Zqevora?")); !strings.Contains(got, "Zqevora") ||
		strings.Contains(got, "Zqbraga") || strings.Contains(got, "Zqdouro") {
		t.Errorf("the local user's block: %s", got)
	}
	if st, err := harness.EngineAt(storage).Stats(); err != nil || st.Owners != 1 {
		t.Errorf("%d owners (%v), want the local user alone", st.Owners, err)
	}

	lines := harness.LogLines(t, logFile, harness.NoOwnerMsg)
	causes := map[string]int{}
	for _, l := range lines {
		why := fmt.Sprint(l["why"])
		if !strings.Contains(why, "{memory.api_key}: the request sends no API key") {
			t.Errorf("a line does not say the key is missing: %v", why)
		}
		for _, c := range []string{"comes from 203.0.113.7", "comes from 198.51.100.9", "X-Forwarded-For", "rebound.example", "evil.example", "Sec-Fetch-Site"} {
			if strings.Contains(why, c) {
				causes[c]++
			}
		}
	}
	// Bea and Carl share one cause (a keyless request from elsewhere):
	// logged once, for the first of them. So do a cross-site Origin and
	// Sec-Fetch-Site: whichever came first.
	if len(lines) != 4 || causes["comes from 203.0.113.7"] != 1 || causes["comes from 198.51.100.9"] != 0 ||
		causes["X-Forwarded-For"] != 1 || causes["rebound.example"] != 1 || causes["evil.example"]+causes["Sec-Fetch-Site"] != 1 {
		t.Errorf("want one line for each cause; the log has %d: %v", len(lines), lines)
	}
}
