package proxy

import (
	"bufio"
	"bytes"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/caddy-memory/memory/internal/harness"
)

// twoStoragesConfig has storages a and b (b in pathB; none when pathB is
// ""), a site whose memory handler uses storage use, and a grace period
// long enough for a streamed answer to finish across a reload (Caddy's
// default grace period has no end).
func twoStoragesConfig(pathA, pathB, use, upstream string) string {
	b := ""
	if pathB != "" {
		b = fmt.Sprintf("\t\tstorage b {\n\t\t\tpath %s\n\t\t\tindex_shards 2\n\t\t}\n", pathB)
	}
	a := ""
	if pathA != "" {
		a = fmt.Sprintf("\t\tstorage a {\n\t\t\tpath %s\n\t\t\tindex_shards 2\n\t\t}\n", pathA)
	}
	global := strings.Replace(harness.GlobalOptions, "grace_period 1ns", "grace_period 30s", 1)
	return strings.TrimSuffix(global, "}\n") + "\tmemory {\n" + a + b + "\t}\n}\n" + fmt.Sprintf(`http://localhost {
	memory {
		storage %s
	}
	reverse_proxy %s
}
`, use, upstream)
}

// TestReloadRemovingAStorageMidStream: a reload that removes the storage
// a streamed answer is using lets that answer finish with its storage: the
// turn is learned into it, not dropped. Caddy cleans the old configuration
// up without waiting for its requests (only a stopping process waits), and
// the storage used to close under them.
func TestReloadRemovingAStorageMidStream(t *testing.T) {
	a, b := t.TempDir(), t.TempDir()
	up := harness.NewFakeLLM(t)
	up.Answer = func([]byte) string { return "Noted, your sister is Zofia." }
	up.Gate = make(chan struct{})
	tester := harness.StartCaddy(t, twoStoragesConfig(a, b, "a", up.Addr()))
	dropped := harness.Metric("caddy_memory_extraction_jobs_total", `result="dropped"`)

	resp := startStream(t, tester.Client, "sk-midstream", harness.ChatBody(true, harness.Msg("user", "My sister is called Zofia.")))
	defer resp.Body.Close()
	r := bufio.NewReader(resp.Body)
	reloaded := false
	for {
		line, err := r.ReadBytes('\n')
		if err != nil {
			break
		}
		if len(bytes.TrimSpace(line)) > 0 {
			continue
		}
		if !reloaded { // one event is out: storage a goes away
			reloaded = true
			if status, body := harness.LoadConfig(t, twoStoragesConfig("", b, "b", up.Addr())); status != 200 {
				t.Fatalf("the reload without storage a: %d %s", status, body)
			}
		}
		up.Gate <- struct{}{}
	}
	if !reloaded {
		t.Fatal("the answer was not streamed")
	}

	deadline := time.Now().Add(10 * time.Second)
	for harness.HandedOver()-harness.TurnsAtStart < 1 {
		if time.Now().After(deadline) {
			t.Fatal("the turn was never handed to learning")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if n := harness.Metric("caddy_memory_extraction_jobs_total", `result="dropped"`) - dropped; n != 0 {
		t.Errorf("%v turns dropped: the storage closed under the answer still streaming", n)
	}
	// Storage a back (once the last request let it close): the turn is in it.
	for status, body := harness.LoadConfig(t, twoStoragesConfig(a, b, "a", up.Addr())); status != 200; status, body = harness.LoadConfig(t, twoStoragesConfig(a, b, "a", up.Addr())) {
		if time.Now().After(deadline) {
			t.Fatalf("storage a does not open again: %d %s", status, body)
		}
		time.Sleep(50 * time.Millisecond)
	}
	harness.Settle(t, a, 1)
	if got := harness.SearchFor(t, harness.EngineAt(a), "sk-midstream", "What is my sister called?"); !strings.Contains(got, "Zofia") {
		t.Errorf("storage a does not hold the turn answered across the reload: %q", got)
	}
}
