package proxy

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"

	"github.com/caddy-memory/memory/internal/harness"
)

// TestOwnersNeverSeeEachOthersMemories sends interleaved, concurrent traffic
// for many owners whose facts all look alike, and checks every request the
// upstream received: an injected block may only ever hold its own owner's
// facts.
func TestOwnersNeverSeeEachOthersMemories(t *testing.T) {
	const owners = 16
	storage := t.TempDir()
	up := harness.NewFakeOpenAI(t)
	tester := harness.StartCaddy(t, harness.SiteConfig(storage, up.Addr(), ""))

	// Each owner has distinctive tokens; every owner's questions share the
	// same words ("live", "secret", "code", "name") so that without the
	// owner filter every owner's facts would match.
	tokens := func(i int) []string {
		return []string{fmt.Sprintf("zqcity%dx", i), fmt.Sprintf("zqcode%dx", i), fmt.Sprintf("Zqname%dx", i)}
	}
	statement := func(i int) string {
		tk := tokens(i)
		return fmt.Sprintf("My name is %s and I live in %s. Remember that my secret code is %s.", tk[2], tk[0], tk[1])
	}
	const question = "Where do I live, what is my name, and what is my secret code?"

	type call struct{ owner, kind int }
	var calls []call
	for i := range owners {
		calls = append(calls, call{i, 0}, call{i, 1}, call{i, 1}, call{i, 1})
	}
	rng := rand.New(rand.NewPCG(7, 11))
	rng.Shuffle(len(calls), func(a, b int) { calls[a], calls[b] = calls[b], calls[a] })

	var wg sync.WaitGroup
	work := make(chan call)
	for range 6 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for c := range work {
				text := question
				if c.kind == 0 {
					text = statement(c.owner)
				}
				harness.Post(t, tester, "/v1/chat/completions", fmt.Sprintf("sk-owner-%02d", c.owner),
					harness.ChatBody(c.owner%2 == 0, harness.Msg("user", text)))
			}
		}()
	}
	for _, c := range calls {
		work <- c
	}
	close(work)
	wg.Wait()
	harness.Settle(t, storage, len(calls))

	// A final question per owner, once everything is stored, so the check
	// below is not vacuous: every owner must get their own facts back.
	for i := range owners {
		harness.Post(t, tester, "/v1/chat/completions", fmt.Sprintf("sk-owner-%02d", i), harness.ChatBody(false, harness.Msg("user", question)))
	}

	injected := 0
	for _, rec := range up.All() {
		key := strings.TrimPrefix(rec.Header.Get("Authorization"), "Bearer ")
		var me int
		if _, err := fmt.Sscanf(key, "sk-owner-%02d", &me); err != nil {
			t.Fatalf("request without a known owner reached the upstream: %q", key)
		}
		body := string(rec.Body)
		if !harness.HasBlock([]byte(body)) {
			continue
		}
		injected++
		for j := range owners {
			if j == me {
				continue
			}
			for _, tk := range tokens(j) {
				if strings.Contains(body, tk) {
					t.Fatalf("owner %d's request carried owner %d's memory %q:\n%s", me, j, tk, body)
				}
			}
		}
	}
	finals := up.All()[len(up.All())-owners:]
	for i, rec := range finals {
		for _, tk := range tokens(i) {
			if !strings.Contains(string(rec.Body), tk) {
				t.Errorf("owner %d did not get their own memory %q back", i, tk)
			}
		}
	}
	if injected < owners {
		t.Errorf("only %d requests carried memories; the isolation check saw too little", injected)
	}
}
