package api

import (
	"bytes"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/caddy-memory/memory/internal/harness"
	"github.com/caddy-memory/memory/internal/receipts"
)

// postWith sends a chat request through Caddy with extra headers.
func postWith(t *testing.T, client *http.Client, key string, headers map[string]string, body []byte) *http.Response {
	t.Helper()
	resp, _ := harness.SendChat(t, client, "/v1/chat/completions", key, headers, body)
	return resp
}

// TestXMemoryHeader: X-Memory: off makes a request go through without
// memory, neither injected nor learned (the store holds nothing of it);
// no-learn injects and learns nothing; the header never reaches the
// upstream, and another value is ignored. Sent more than once or as a
// list, the strictest value rules.
func TestXMemoryHeader(t *testing.T) {
	storage := t.TempDir()
	up := harness.NewFakeLLM(t)
	tester := harness.StartCaddy(t, harness.APIConfigWith(t, storage, "", up.Addr(), "diagnostics", ""))
	a := harness.APICall{T: t, Client: tester.Client}
	harness.Post(t, tester, "/v1/chat/completions", "sk-incognito", harness.ChatBody(false, harness.Msg("user", "I live in Zqlisbon.")))
	harness.Settle(t, storage, 1)
	before := harness.ListContents(mustList(t, a, "sk-incognito"))

	resp := postWith(t, tester.Client, "sk-incognito", map[string]string{"X-Memory": "off"},
		harness.ChatBody(false, harness.Msg("user", "Where do I live? I also keep a zqparrot.")))
	sent := up.Last("/chat/completions")
	if harness.HasBlock(sent.Body) || resp.Header.Get("X-Memory-Status") != "opted_out" {
		t.Errorf("X-Memory: off: status %q, block sent %v", resp.Header.Get("X-Memory-Status"), harness.HasBlock(sent.Body))
	}
	if sent.Header.Get("X-Memory") != "" {
		t.Errorf("the upstream got X-Memory: %q", sent.Header.Get("X-Memory"))
	}

	resp = postWith(t, tester.Client, "sk-incognito", map[string]string{"X-Memory": "No-Learn"},
		harness.ChatBody(false, harness.Msg("user", "Where do I live? My cat is zqwhiskers.")))
	sent = up.Last("/chat/completions")
	if !strings.Contains(string(sent.Body), "Zqlisbon") || resp.Header.Get("X-Memory-Status") != "injected" {
		t.Errorf("X-Memory: no-learn did not inject: %q %s", resp.Header.Get("X-Memory-Status"), sent.Body)
	}
	if sent.Header.Get("X-Memory") != "" {
		t.Errorf("the upstream got X-Memory: %q", sent.Header.Get("X-Memory"))
	}

	listed := sendListed(t, tester.Client, up)

	postWith(t, tester.Client, "sk-incognito", map[string]string{"X-Memory": "maybe"},
		harness.ChatBody(false, harness.Msg("user", "I keep bees.")))
	if sent := up.Last("/chat/completions"); sent.Header.Get("X-Memory") != "" {
		t.Errorf("the upstream got X-Memory: %q", sent.Header.Get("X-Memory"))
	}
	harness.Settle(t, storage, 2) // the first turn and the last: off and no-learn hand nothing over
	after := strings.Join(harness.ListContents(mustList(t, a, "sk-incognito")), " | ")
	for _, secret := range append(listed, "zqparrot", "zqwhiskers") {
		if strings.Contains(after, secret) {
			t.Errorf("a request with X-Memory off or no-learn left %q in the store: %s", secret, after)
		}
	}
	if !strings.Contains(after, "bees") || len(harness.ListContents(mustList(t, a, "sk-incognito"))) <= len(before) {
		t.Errorf("a request with another X-Memory value was not learned: %s", after)
	}
}

func mustList(t *testing.T, a harness.APICall, key string) map[string]any {
	t.Helper()
	status, out := a.Do("GET", "/memory/memories", key, nil)
	if status != http.StatusOK {
		t.Fatalf("listing %s: %d %v", key, status, out)
	}
	return out
}

// TestReceiptOfInjections: with diagnostics, a response names the injected
// memories' ids in block order; GET /injections gives the owner's recent
// requests, newest first, with the same ids and no text; another owner
// sees only their own, and an operator finds an owner by the key they know.
func TestReceiptOfInjections(t *testing.T) {
	storage := t.TempDir()
	up := harness.NewFakeLLM(t)
	tester := harness.StartCaddy(t, harness.APIConfigWith(t, storage, "", up.Addr(), "diagnostics", ""))
	a := harness.APICall{T: t, Client: tester.Client}
	harness.Post(t, tester, "/v1/chat/completions", "sk-receipt", harness.ChatBody(false, harness.Msg("user", "I live in Zqporto and I work as a zqbaker.")))
	harness.Settle(t, storage, 1)

	resp, _ := harness.Post(t, tester, "/v1/chat/completions", "sk-receipt", harness.ChatBody(false, harness.Msg("user", "Where do I live and what is my job?")))
	idsHeader := resp.Header.Get("X-Memory-Ids")
	if resp.Header.Get("X-Memory-Status") != "injected" || idsHeader == "" {
		t.Fatalf("headers: %v", resp.Header)
	}
	var ids []uint64
	for _, s := range strings.Split(idsHeader, ",") {
		id, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			t.Fatalf("X-Memory-Ids %q", idsHeader)
		}
		ids = append(ids, id)
	}
	if n, _ := strconv.Atoi(resp.Header.Get("X-Memory-Injected")); n != len(ids) {
		t.Errorf("X-Memory-Injected %d, X-Memory-Ids %v", n, ids)
	}
	// Block order: each id's memory appears in the block in that order.
	sent := string(up.Last("/chat/completions").Body)
	at := -1
	for _, id := range ids {
		status, m := a.Do("GET", fmt.Sprintf("/memory/memories/%d", id), "sk-receipt", nil)
		content, _ := m["content"].(string)
		i := strings.Index(sent, strings.TrimSuffix(content, "."))
		if status != http.StatusOK || i < 0 || i < at {
			t.Errorf("memory %d (%q) is not next in the block: %d", id, content, i)
		}
		at = i
	}
	harness.Post(t, tester, "/v1/chat/completions", "sk-receipt", harness.ChatBody(false, harness.Msg("user", "Good morning!")))

	status, out := a.Do("GET", "/memory/injections", "sk-receipt", nil)
	list, _ := out["injections"].([]any)
	if status != http.StatusOK || len(list) != 3 {
		t.Fatalf("GET /injections: %d %v", status, out)
	}
	newest, second := list[0].(map[string]any), list[1].(map[string]any)
	if newest["outcome"] != "nothing_relevant" || len(newest["memory_ids"].([]any)) != 0 {
		t.Errorf("the newest receipt: %v", newest)
	}
	var got []uint64
	for _, v := range second["memory_ids"].([]any) {
		got = append(got, uint64(v.(float64)))
	}
	if second["outcome"] != "injected" || !slices.Equal(got, ids) || second["tokens"].(float64) <= 0 || second["time"] == "" {
		t.Errorf("the receipt of the injected request: %v, want ids %v", second, ids)
	}
	_, raw := a.Raw("GET", "/memory/injections", "sk-receipt", nil)
	if strings.Contains(string(raw), "Where do I live") || strings.Contains(string(raw), "Zqporto") {
		t.Errorf("a receipt holds text: %s", raw)
	}
	if _, out := a.Do("GET", "/memory/injections", "sk-stranger", nil); len(out["injections"].([]any)) != 0 {
		t.Errorf("another owner sees receipts: %v", out)
	}
	if status, _ := a.Do("GET", "/memory/injections?owner=sk-receipt", "sk-stranger", nil); status != http.StatusForbidden {
		t.Errorf("self mode naming an owner: %d", status)
	}
	if _, out := a.Do("GET", "/memory/admin/injections?owner=sk-receipt", "admin", nil); len(out["injections"].([]any)) != 3 {
		t.Errorf("the operator's view: %v", out)
	}

	// Finding an owner by the key the operator knows.
	_, out = a.Do("GET", "/memory/admin/stats/owners?owner=sk-receipt", "admin", nil)
	owners, _ := out["owners"].([]any)
	if len(owners) != 1 || owners[0].(map[string]any)["owner_id"] != harness.EngineAt(storage).OwnerID("sk-receipt") {
		t.Errorf("GET /stats/owners?owner=: %v", out)
	}
	// A key pasted with the spaces around it is the key: the proxy trims
	// them too, so no owner can have them.
	_, out = a.Do("GET", "/memory/admin/stats/owners?owner=%20sk-receipt%09", "admin", nil)
	if owners, _ := out["owners"].([]any); len(owners) != 1 || owners[0].(map[string]any)["owner_id"] != harness.EngineAt(storage).OwnerID("sk-receipt") {
		t.Errorf("GET /stats/owners?owner= with spaces around the key: %v", out)
	}
	if status, out := a.Do("POST", "/memory/admin/memories", "admin", map[string]any{"owner": " sk-receipt ", "content": "The operator says: zqtulips."}); status != http.StatusCreated ||
		!strings.Contains(strings.Join(harness.ListContents(mustList(t, a, "sk-receipt")), " | "), "zqtulips") {
		t.Errorf("an operator's memory for \" sk-receipt \" is not sk-receipt's: %d %v", status, out)
	}
	if _, out = a.Do("GET", "/memory/admin/stats/owners?owner=sk-nobody", "admin", nil); len(out["owners"].([]any)) != 0 {
		t.Errorf("an owner with no memory: %v", out)
	}
}

// sendListed sends sk-incognito's requests with X-Memory more than once or
// as a list, as a client and a gateway in front of it can: a request that
// says off anywhere is neither injected nor learned, whatever else it
// says, and one that says no-learn is not learned. It returns the secret
// each request told, for the caller to find none of them stored.
func sendListed(t *testing.T, client *http.Client, up *harness.FakeLLM) []string {
	t.Helper()
	cases := []struct {
		values []string
		secret string
		want   string // the outcome
	}{
		{[]string{"no-learn", "off"}, "zqferret", "opted_out"},
		{[]string{"no-learn, off"}, "zqgecko", "opted_out"},
		{[]string{"maybe", "OFF"}, "zqhamster", "opted_out"},
		{[]string{"maybe,No-Learn"}, "zqiguana", "injected"},
	}
	var secrets []string
	for _, c := range cases {
		req, err := http.NewRequest(http.MethodPost, harness.CaddyAddr+"/v1/chat/completions",
			bytes.NewReader(harness.ChatBody(false, harness.Msg("user", "Where do I live? I also keep a "+c.secret+"."))))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer sk-incognito")
		for _, v := range c.values {
			req.Header.Add("X-Memory", v)
		}
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		sent := up.Last("/chat/completions")
		if got := resp.Header.Get("X-Memory-Status"); got != c.want || harness.HasBlock(sent.Body) != (c.want == "injected") {
			t.Errorf("X-Memory %q: status %q, block sent %v; want %q", c.values, got, harness.HasBlock(sent.Body), c.want)
		}
		if v := sent.Header.Values("X-Memory"); len(v) != 0 {
			t.Errorf("X-Memory %q: the upstream got X-Memory %q", c.values, v)
		}
		secrets = append(secrets, c.secret)
	}
	return secrets
}

// TestManyInjectedIdsFitInAHeader: with a max_items in the hundreds, the
// X-Memory-Ids header lists the first 64 ids (a front proxy refuses an
// answer whose headers pass a few KiB), X-Memory-Injected counts them all,
// and GET /injections keeps the same first ids and the count (a receipt's
// memory is bounded too).
func TestManyInjectedIdsFitInAHeader(t *testing.T) {
	const maxHeaderIds = 64 // the most ids X-Memory-Ids lists, as its documentation says
	storage := t.TempDir()
	up := harness.NewFakeLLM(t)
	tester := harness.StartCaddy(t, harness.APIConfigWith(t, storage, "", up.Addr(), "diagnostics\n\t\tmax_items 300\n\t\tmax_tokens 60000", ""))
	a := harness.APICall{T: t, Client: tester.Client}
	const n = 150
	for i := range n {
		if status, out := a.Do("POST", "/memory/memories", "sk-many", map[string]any{
			"content": fmt.Sprintf("The zqgarden bed number %d grows zqherb%d.", i, i)}); status != http.StatusCreated {
			t.Fatalf("adding memory %d: %d %v", i, status, out)
		}
	}
	resp, _ := harness.Post(t, tester, "/v1/chat/completions", "sk-many", harness.ChatBody(false, harness.Msg("user", "What grows in my zqgarden beds?")))
	injected, _ := strconv.Atoi(resp.Header.Get("X-Memory-Injected"))
	idsHeader := resp.Header.Get("X-Memory-Ids")
	listed := strings.Split(idsHeader, ",")
	if injected <= maxHeaderIds || len(listed) != maxHeaderIds || len(idsHeader) > 2048 {
		t.Fatalf("%d injected; X-Memory-Ids lists %d ids in %d bytes", injected, len(listed), len(idsHeader))
	}
	status, out := a.Do("GET", "/memory/injections", "sk-many", nil)
	recs, _ := out["injections"].([]any)
	if status != http.StatusOK || len(recs) == 0 {
		t.Fatalf("injections: %d %v", status, out)
	}
	all, _ := recs[0].(map[string]any)["memory_ids"].([]any)
	if count := recs[0].(map[string]any)["injected"]; len(all) != receipts.MaxIDs || count != float64(injected) {
		t.Errorf("GET /injections lists %d ids and counts %v; %d were injected", len(all), count, injected)
	}
	for i, id := range listed {
		if fmt.Sprint(all[i]) != id {
			t.Errorf("id %d: %s in the header, %v in /injections", i, id, all[i])
			break
		}
	}
}
