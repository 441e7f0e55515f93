package engine

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/caddy-memory/memory/extract"
)

func TestDueShards(t *testing.T) {
	// Light load: every pending shard is indexed at the next tick.
	if got := dueShards(map[int]int{3: 1, 9: 1, 40: 1}); !slices.Equal(got, []int{3, 9, 40}) {
		t.Errorf("light load: due %v, want all three pending shards", got)
	}
	// Sustained writes to every shard: segmentsPerTick per tick, longest
	// waiting first, so each shard is indexed every few ticks, never in a
	// burst of all of them.
	waited := map[int]int{}
	last := map[int]int{} // shard -> tick it was last indexed
	worst := 0
	for tick := 1; tick <= 40; tick++ {
		for i := range 64 {
			waited[i]++
		}
		due := dueShards(waited)
		if len(due) > segmentsPerTick {
			t.Fatalf("tick %d: %d shards due, want at most %d while none waited %d ticks", tick, len(due), segmentsPerTick, indexAtMost)
		}
		for _, i := range due {
			worst = max(worst, tick-last[i])
			last[i] = tick
			delete(waited, i)
		}
	}
	if worst > indexAtMost {
		t.Errorf("under sustained writes a shard waited %d ticks, want at most %d", worst, indexAtMost)
	}
	// A shard that waited indexAtMost ticks is indexed whatever the budget.
	waited = map[int]int{}
	for i := range 40 {
		waited[i] = indexAtMost
	}
	if got := dueShards(waited); len(got) != 40 {
		t.Errorf("%d of 40 overdue shards due, want all", len(got))
	}
}

// A proxied turn becomes searchable on its own, without anyone waiting for
// the index, within the indexer's longest wait.
func TestProxiedTurnSearchableWithoutSync(t *testing.T) {
	e := open(t, t.TempDir(), 64)
	defer closeEngine(t, e)
	owner := e.OwnerID("sk-pacing")
	start := time.Now()
	if !e.Enqueue(&Job{Owner: owner, Turn: extract.Turn{Dialect: "openai_chat", Conversation: "c-1", Turn: 1, NewTurn: true,
		User:     "I live in Lisbon.",
		Response: chatJSON("Noted."), ContentType: "application/json", Time: time.Now(),
	}}) {
		t.Fatal("job not accepted")
	}
	deadline := start.Add(time.Duration(indexAtMost+1) * indexEvery)
	for !strings.Contains(contents(search(t, e, owner, "where do I live")), "Lisbon") {
		if time.Now().After(deadline) {
			t.Fatalf("turn not searchable %s after it was handed over", time.Since(start).Round(time.Millisecond))
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Turns of many owners at once reach more shards than one tick indexes:
// the rest follow at the next ticks, and none is lost or left behind.
func TestTurnsAcrossShardsAllSearchable(t *testing.T) {
	e := open(t, t.TempDir(), 64)
	defer closeEngine(t, e)
	const owners = 60
	shards := map[int]bool{}
	start := time.Now()
	for i := range owners {
		owner := e.OwnerID(fmt.Sprintf("sk-rotation-%d", i))
		shards[e.index.ShardOf(owner)] = true
		if !e.Enqueue(&Job{Owner: owner, Turn: extract.Turn{Dialect: "openai_chat", Conversation: "c-1", Turn: 1, NewTurn: true,
			User:     fmt.Sprintf("My locker number is %d.", 1000+i),
			Response: chatJSON("Noted."), ContentType: "application/json", Time: time.Now(),
		}}) {
			t.Fatal("job not accepted")
		}
	}
	if len(shards) <= segmentsPerTick {
		t.Fatalf("owners reach %d shards; the test needs more than one tick's %d", len(shards), segmentsPerTick)
	}
	deadline := start.Add(time.Duration(indexAtMost+3) * indexEvery)
	for i := range owners {
		owner := e.OwnerID(fmt.Sprintf("sk-rotation-%d", i))
		want := fmt.Sprint(1000 + i)
		for !strings.Contains(contents(search(t, e, owner, "what is my locker number")), want) {
			if time.Now().After(deadline) {
				t.Fatalf("owner %d's turn not searchable %s after it was handed over", i, time.Since(start).Round(time.Millisecond))
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	t.Logf("%d turns over %d shards searchable after %s", owners, len(shards), time.Since(start).Round(time.Millisecond))
}
