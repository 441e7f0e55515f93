package engine

import (
	"strings"
	"testing"
	"time"
)

func TestPassPacing(t *testing.T) {
	for _, c := range []struct {
		waited  int
		pending uint64
		shards  int
		due     bool
	}{
		{1, 0, 64, false},   // nothing to do
		{1, 3, 64, true},    // light load: every second
		{1, 16, 64, true},   // as many segments as one tick allows
		{1, 500, 64, false}, // every shard: wait for a larger batch
		{3, 500, 64, false},
		{4, 500, 64, true},
		{5, 1e6, 1024, true}, // never longer than indexAtMost
		{1, 500, 8, true},    // few shards: each pass is cheap
	} {
		if got := passDue(c.waited, c.pending, c.shards); got != c.due {
			t.Errorf("passDue(%d ticks, %d pending, %d shards) = %v, want %v", c.waited, c.pending, c.shards, got, c.due)
		}
	}
}

// A proxied turn becomes searchable on its own, without anyone waiting for
// the index, within about a second under light load.
func TestProxiedTurnSearchableWithoutSync(t *testing.T) {
	e := open(t, t.TempDir(), 64)
	defer closeEngine(t, e)
	owner := e.OwnerID("sk-pacing")
	start := time.Now()
	if !e.Enqueue(&Job{
		Owner: owner, Dialect: "openai_chat", Conversation: "c-1", Turn: 1, NewTurn: true,
		User:     "I live in Lisbon.",
		Response: chatJSON("Noted."), ContentType: "application/json", Time: time.Now(),
	}) {
		t.Fatal("job not accepted")
	}
	deadline := start.Add(time.Duration(indexAtMost+1) * indexEvery)
	for !strings.Contains(contents(search(t, e, owner, "where do I live")), "Lisbon") {
		if time.Now().After(deadline) {
			t.Fatalf("turn not searchable %s after it was handed over", time.Since(start).Round(time.Millisecond))
		}
		time.Sleep(20 * time.Millisecond)
	}
	if took := time.Since(start); took > 2500*time.Millisecond {
		t.Errorf("a lone turn took %s to become searchable; light load should index every %s", took, indexEvery)
	}
}
