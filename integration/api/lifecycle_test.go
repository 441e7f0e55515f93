package api

import (
	"fmt"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/caddy-memory/memory/internal/harness"
)

// TestALongLivedOwnerIsConsolidated: through Caddy, an owner with 5,000
// turns spread over 400 days keeps, after one pass, its facts and its
// recent turns; POST /consolidate answers the counts, and searching that
// owner costs less afterwards.
func TestALongLivedOwnerIsConsolidated(t *testing.T) {
	storage := t.TempDir()
	up := harness.NewFakeLLM(t)
	tester := harness.StartCaddy(t, harness.APIConfigWith(t, storage, "", up.Addr(), "diagnostics", ""))
	a := harness.APICall{T: t, Client: tester.Client}
	const turns, days = 5000, 400
	now := time.Now().UTC()
	start := now.Add(-days * 24 * time.Hour)
	for batch := 0; batch < turns; batch += 1000 {
		var said []map[string]any
		for i := batch; i < batch+1000; i++ {
			text := fmt.Sprintf("Day %d: I went for a walk along the river and thought about the garden, note %d.", i*days/turns, i)
			switch i {
			case 0:
				text = "My name is Ola and I live in Gdansk."
			case turns - 3:
				text = "I prefer green tea in the evening."
			}
			said = append(said, map[string]any{"role": "user", "content": text, "ref": "m" + strconv.Itoa(i),
				"time": start.Add(time.Duration(i) * (days * 24 * time.Hour / turns)).Format(time.RFC3339)})
		}
		if status, out := a.Do("POST", "/memory/admin/ingest", "admin", map[string]any{
			"owner": "sk-ola", "session": "s" + strconv.Itoa(batch), "turns": said}); status != http.StatusOK {
			t.Fatalf("ingest: %d %v", status, out)
		}
	}
	searchCost := func() time.Duration {
		var took []time.Duration
		for range 15 {
			resp, _ := harness.Post(t, tester, "/v1/chat/completions", "sk-ola", harness.ChatBody(false, harness.Msg("user", "What did I think about on my walk along the river?")))
			d, err := time.ParseDuration(strings.TrimSuffix(resp.Header.Get("X-Memory-Time"), "ms") + "ms")
			if err != nil {
				t.Fatalf("X-Memory-Time %q", resp.Header.Get("X-Memory-Time"))
			}
			took = append(took, d)
		}
		sort.Slice(took, func(i, j int) bool { return took[i] < took[j] })
		return took[len(took)/2]
	}
	before := searchCost()
	_, stats := a.Do("GET", "/memory/admin/stats", "admin", nil)

	status, res := a.Do("POST", "/memory/admin/consolidate?owner=sk-ola", "admin", nil)
	if status != http.StatusOK {
		t.Fatalf("consolidate: %d %v", status, res)
	}
	for _, k := range []string{"decayed", "merged", "promoted", "evicted", "pruned", "owners"} {
		if _, ok := res[k].(float64); !ok {
			t.Errorf("the answer lacks %q: %v", k, res)
		}
	}
	// Turns older than 90 days (about 310 of the 400 days) are pruned.
	if pruned := res["pruned"].(float64); pruned < 3700 || pruned > 4000 || res["owners"] != 1.0 {
		t.Errorf("pruned %v of %d turns, want those older than 90 days", pruned, turns)
	}
	_, list := a.Do("GET", "/memory/admin/memories?owner=sk-ola&limit=500&kind=identity", "admin", nil)
	if got := strings.Join(harness.ListContents(list), " | "); !strings.Contains(got, "User's name is Ola.") || !strings.Contains(got, "Gdansk") {
		t.Errorf("identity facts after the pass: %s", got)
	}
	_, list = a.Do("GET", "/memory/admin/memories?owner=sk-ola&limit=500&kind=preference", "admin", nil)
	if got := strings.Join(harness.ListContents(list), " | "); !strings.Contains(got, "green tea") {
		t.Errorf("a recent fact after the pass: %s", got)
	}
	byKind, _ := list["stats"].(map[string]any)["by_kind"].(map[string]any)
	if n, _ := byKind["turn"].(float64); n < 1000 || n > 1300 {
		t.Errorf("%v turns after the pass, want the last 90 days' (about 1,125)", byKind["turn"])
	}
	after := searchCost()
	_, statsAfter := a.Do("GET", "/memory/admin/stats", "admin", nil)
	t.Logf("consolidation: %v", res)
	t.Logf("owner of %d turns over %d days: search p50 %v before the pass, %v after; memories %v before, %v after",
		turns, days, before, after, stats["memories"], statsAfter["memories"])
	// Searching costs less with a quarter of the memories; the times are
	// a shared machine's, so only a clear regression fails.
	if after > 2*before {
		t.Errorf("search p50 %v after the pass, %v before", after, before)
	}
}

// TestTheGateAndProfileThroughCaddy: small talk gets no memories, even
// where its words match one; every other block carries the owner's
// profile; what is injected is counted as used.
func TestTheGateAndProfileThroughCaddy(t *testing.T) {
	storage := t.TempDir()
	up := harness.NewFakeLLM(t)
	tester := harness.StartCaddy(t, harness.APIConfigWith(t, storage, "", up.Addr(), "diagnostics", ""))
	a := harness.APICall{T: t, Client: tester.Client}
	harness.Post(t, tester, "/v1/chat/completions", "sk-gate", harness.ChatBody(false, harness.Msg("user", "My name is Ola and I live in Gdansk.")))
	harness.Post(t, tester, "/v1/chat/completions", "sk-gate", harness.ChatBody(false, harness.Msg("user", "I go running every morning at six. I am allergic to peanuts.")))
	harness.Settle(t, storage, 2)

	resp, _ := harness.Post(t, tester, "/v1/chat/completions", "sk-gate", harness.ChatBody(false, harness.Msg("user", "Good morning!")))
	if s := resp.Header.Get("X-Memory-Status"); s != "nothing_relevant" || harness.HasBlock(up.Last("/chat/completions").Body) {
		t.Errorf("small talk: status %q, want %q and no block", s, "nothing_relevant")
	}
	harness.Post(t, tester, "/v1/chat/completions", "sk-gate", harness.ChatBody(false, harness.Msg("user", "Suggest a snack without peanuts.")))
	body := string(up.Last("/chat/completions").Body)
	for _, want := range []string{"User is allergic to peanuts.", "User's name is Ola.", "User lives in Gdansk."} {
		if !strings.Contains(body, want) {
			t.Errorf("the block lacks %q: %s", want, body)
		}
	}
	// Uses are counted in the background.
	deadline := time.Now().Add(10 * time.Second)
	for {
		_, list := a.Do("GET", "/memory/admin/memories?owner=sk-gate&min_uses=1", "admin", nil)
		if got := strings.Join(harness.ListContents(list), " | "); strings.Contains(got, "peanuts") && strings.Contains(got, "Ola") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the injected memories' uses were not counted")
		}
		time.Sleep(100 * time.Millisecond)
	}

	// With the gate off, the same small talk finds the morning run.
	harness.Reload(t, tester, harness.APIConfigWith(t, storage, "", up.Addr(), "diagnostics\n\t\tgate off\n\t\tmin_score 0", ""))
	resp, _ = harness.Post(t, tester, "/v1/chat/completions", "sk-gate", harness.ChatBody(false, harness.Msg("user", "Good morning!")))
	if s := resp.Header.Get("X-Memory-Status"); s != "injected" {
		t.Errorf("small talk without the gate: status %q; the test would not show the gate does anything", s)
	}
}

// TestPinRestoreAndFilterThroughTheAPI: a memory can be pinned when made
// and with PATCH, an evicted or deleted one restored with PATCH, and the
// list shows and filters by source, pinning, uses and salience.
func TestPinRestoreAndFilterThroughTheAPI(t *testing.T) {
	storage := t.TempDir()
	up := harness.NewFakeLLM(t)
	tester := harness.StartCaddy(t, harness.APIConfig(t, storage, up.Addr(), ""))
	a := harness.APICall{T: t, Client: tester.Client}
	_, out := a.Do("POST", "/memory/memories", "sk-pin", map[string]any{"content": "The user's locker code is 4711.", "pinned": true})
	pinned := harness.MemoryOf(out)
	if pinned["pinned"] != true || pinned["source"] != "api" || pinned["salience"] == nil || pinned["uses"] != 0.0 {
		t.Fatalf("created: %v", pinned)
	}
	_, out = a.Do("POST", "/memory/memories", "sk-pin", map[string]any{"content": "The user's bike is blue."})
	bike := harness.MemoryOf(out)
	if status, out := a.Do("PATCH", fmt.Sprintf("/memory/memories/%d", harness.IDOf(bike)), "sk-pin", map[string]any{"pinned": true}); status != 200 || harness.MemoryOf(out)["pinned"] != true {
		t.Errorf("pin with PATCH: %d %v", status, out)
	}
	_, list := a.Do("GET", "/memory/memories?pinned=true&source=api", "sk-pin", nil)
	if n := len(harness.ListContents(list)); n != 2 {
		t.Errorf("%d pinned memories made through the API, want 2", n)
	}
	a.Do("DELETE", fmt.Sprintf("/memory/memories/%d", harness.IDOf(bike)), "sk-pin", nil)
	if status, out := a.Do("PATCH", fmt.Sprintf("/memory/memories/%d", harness.IDOf(bike)), "sk-pin", map[string]any{"deleted": false}); status != 200 || harness.MemoryOf(out)["deleted_at"] != nil {
		t.Errorf("restore: %d %v", status, out)
	}
	if _, list := a.Do("GET", "/memory/memories?max_salience=0.1", "sk-pin", nil); len(harness.ListContents(list)) != 0 {
		t.Errorf("fresh memories listed as faded: %v", harness.ListContents(list))
	}
	if status, out := a.Do("GET", "/memory/memories?max_salience=2", "sk-pin", nil); status != http.StatusBadRequest {
		t.Errorf("a salience out of range: %d %v", status, out)
	}
	if status, _ := a.Do("POST", "/memory/consolidate", "sk-pin", nil); status != http.StatusForbidden {
		t.Errorf("consolidation in self mode: %d, want 403", status)
	}
}
