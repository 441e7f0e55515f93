package engine

import (
	"sync/atomic"
	"testing"
	"time"

	"github.com/caddy-memory/memory/store"
)

// handClock is a clock the test moves.
type handClock struct{ ns atomic.Int64 }

func (c *handClock) now() time.Time          { return time.Unix(0, c.ns.Load()) }
func (c *handClock) advance(d time.Duration) { c.ns.Add(int64(d)) }

// TestReleaseRunsAtRestNotUnderLoad: what a rest gives back is given back
// once a rest begins (restAfter without a request, a write or work under
// way), once per rest, and never while requests keep coming.
func TestReleaseRunsAtRestNotUnderLoad(t *testing.T) {
	e := open(t, t.TempDir(), 1)
	defer closeEngine(t, e)
	clock := &handClock{}
	clock.ns.Store(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).UnixNano())
	var working atomic.Bool
	r := newRest(e.core, func(uint64) bool { return working.Load() })
	r.clock = clock.now
	releases := 0
	r.atRest = func() { releases++ }
	second := func(request bool) {
		clock.advance(time.Second)
		if request {
			r.touch()
		}
		r.look()
	}

	r.touch()
	r.look() // the store's position, first seen
	for range restAfter/time.Second - 1 {
		second(false)
	}
	if releases != 0 {
		t.Fatalf("released %d times %s after a request, want none before %s", releases, restAfter-time.Second, restAfter)
	}
	second(false)
	if releases != 1 {
		t.Fatalf("released %d times after %s at rest, want once", releases, restAfter)
	}
	for range 30 {
		second(false)
	}
	if releases != 1 {
		t.Fatalf("released %d times over one rest, want once", releases)
	}

	// Under load: a request every second for two minutes.
	for range 120 {
		second(true)
	}
	if releases != 1 {
		t.Fatalf("released %d times, %d under load; want none under load", releases, releases-1)
	}
	for range restAfter / time.Second {
		second(false)
	}
	if releases != 2 {
		t.Fatalf("released %d times, want a second release when the load stops", releases)
	}

	// A write is not rest either, nor work under way (the postings being
	// built, turns or uses waiting).
	remember(t, e, "owner", store.Put{Kind: "note", Content: "A note written at rest."})
	second(false)
	working.Store(true)
	for range 30 {
		second(false)
	}
	if releases != 2 {
		t.Fatalf("released %d times, want none while work is under way", releases)
	}
	working.Store(false)
	for range restAfter / time.Second {
		second(false)
	}
	if releases != 3 {
		t.Fatalf("released %d times, want a release once the work is done", releases)
	}
}

// TestReleaseParksTheIndexAndSearchesStillFind: a release at rest parks
// the shards unused since, and the next search reopens its own.
func TestReleaseParksTheIndexAndSearchesStillFind(t *testing.T) {
	clock := &handClock{}
	clock.ns.Store(time.Now().UnixNano())
	e, err := openConfig(t, Config{Dir: t.TempDir(), Shards: 4, LockTimeout: 200 * time.Millisecond,
		LocalSearchMax: -1, PostingsBudget: -1, Clock: clock.now})
	if err != nil {
		t.Fatal(err)
	}
	defer closeEngine(t, e)
	remember(t, e, "owner", store.Put{Kind: "note", Content: "The boat is moored at the north pier."})
	settle(t, e)
	if got := search(t, e, "owner", "where is the boat moored"); len(got) != 1 {
		t.Fatalf("before the release: %d results, want 1", len(got))
	}
	clock.advance(restAfter)
	e.rest.release()
	if n := e.index.Parked(); n != e.index.K() {
		t.Fatalf("%d of %d shards parked by a release at rest", n, e.index.K())
	}
	if got := search(t, e, "owner", "where is the boat moored"); len(got) != 1 {
		t.Fatalf("after the release: %d results, want 1", len(got))
	}
	if n := e.index.Parked(); n != e.index.K()-1 {
		t.Errorf("%d shards parked after a search of one, want %d", n, e.index.K()-1)
	}
	if _, err := e.Stats(); err != nil {
		t.Error(err)
	}
}

// TestHeapIsNotFreedWhileAnotherStorageServes: the heap is the process's;
// one engine at rest does not collect it while another has requests.
func TestHeapIsNotFreedWhileAnotherStorageServes(t *testing.T) {
	busy := open(t, t.TempDir(), 1)
	defer closeEngine(t, busy)
	search(t, busy, "owner", "anything at all")
	if freeHeap() {
		t.Error("the heap was freed for one engine's rest while another had a request just now")
	}
	lastBusy.Store(time.Now().Add(-restAfter).UnixNano())
	if !freeHeap() {
		t.Error("the heap was not freed with every engine at rest")
	}
}
