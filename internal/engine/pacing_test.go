package engine

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/caddy-memory/memory/extract"
	"github.com/caddy-memory/memory/store"
)

// Learning's pace, on the writer's clock moved by the test (no test here
// waits for time to pass): under a steady load the writer commits once
// every learnEvery, however many turns arrive; when the load stops, what
// was read is committed learnQuiet later; a turn after a quiet spell is
// learned at once; and no turn is dropped.

// fakeClock is a writer's time that moves when the test says.
type fakeClock struct {
	mu      sync.Mutex
	t       time.Time
	waiters []fakeWaiter
	// idled has a value when the writer has waited since the test last
	// took one.
	idled chan struct{}
}

type fakeWaiter struct {
	at time.Time
	ch chan time.Time
}

func newFakeClock() *fakeClock {
	return &fakeClock{t: time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC), idled: make(chan struct{}, 1)}
}

func (c *fakeClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) until(t time.Time) <-chan time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	ch := make(chan time.Time, 1)
	if !t.After(c.t) {
		ch <- c.t
		return ch
	}
	// The writer waits on its latest plan only.
	c.waiters = []fakeWaiter{{t, ch}}
	return ch
}

// planned is when the writer waits for, if it does.
func (c *fakeClock) planned() (time.Time, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.waiters) == 0 {
		return time.Time{}, false
	}
	return c.waiters[0].at, true
}

// sleep is the writer's pause before reading a turn: no time passes.
func (c *fakeClock) sleep(time.Duration) {}

func (c *fakeClock) idle() {
	select {
	case c.idled <- struct{}{}:
	default:
	}
}

func (c *fakeClock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
	kept := c.waiters[:0]
	for _, w := range c.waiters {
		if w.at.After(c.t) {
			kept = append(kept, w)
			continue
		}
		w.ch <- c.t
	}
	c.waiters = kept
}

// paced opens an engine whose writer runs on a fake clock.
func paced(t *testing.T) (*Engine, *fakeClock, *countingObserver) {
	t.Helper()
	obs := &countingObserver{}
	c := newFakeClock()
	e, err := openConfig(t, Config{Dir: t.TempDir(), Shards: 1, LockTimeout: 200 * time.Millisecond, Observer: obs,
		testWriterClock: c})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { closeEngine(t, e) })
	// Each turn read as it comes, so the test knows when the writer has
	// read it (reading in batches is measured by BenchmarkTurnCost).
	e.learner.readEvery.Store(0)
	return e, c, obs
}

// tell hands the writer a turn of owner that teaches word, and returns
// once the writer has read it and waits.
func tell(t *testing.T, e *Engine, c *fakeClock, owner, word string, i int) {
	t.Helper()
	j := &Job{Owner: owner, Turn: extract.Turn{Dialect: "openai_chat", NewTurn: true, Turn: i + 1,
		User: fmt.Sprintf("My locker number is %d and its tag says %s.", i, word), Time: time.Now()}}
	select {
	case <-c.idled:
	default:
	}
	if !e.Enqueue(j) {
		t.Fatalf("turn %d dropped", i)
	}
	for {
		<-c.idled
		if len(e.learner.queue) == 0 && e.learner.handed.Load() == e.learner.committed.Load() {
			return
		}
	}
}

// learned waits until every turn told is learned and searchable.
func learned(t *testing.T, e *Engine) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	if err := e.Sync(ctx); err != nil {
		t.Fatal(err)
	}
}

func TestUnderLoadLearningCommitsOnceEveryInterval(t *testing.T) {
	e, c, obs := paced(t)
	owner := e.OwnerID("sk-load")
	// A turn every 4 ms for 2.6 learnEvery: 650 turns.
	const step = 4 * time.Millisecond
	n := int(26 * learnEvery / 10 / step)
	var last time.Time
	for i := range n {
		last = c.now()
		tell(t, e, c, owner, fmt.Sprint("zqload", i), i)
		c.advance(step)
	}
	// The first turn is learned at once, then a group every learnEvery.
	if got := e.learner.handed.Load(); got < 3 || got > 4 {
		t.Errorf("%d turns over %s made %d commits; want one every %s (3 or 4)", n, 26*learnEvery/10, got, learnEvery)
	}
	// The load stops: the last group is committed learnQuiet after the
	// last turn.
	if at, ok := c.planned(); !ok || !at.Equal(last.Add(learnQuiet)) {
		t.Errorf("after the load, the writer waits until %s after the last turn (waits: %v); want %s", at.Sub(last), ok, learnQuiet)
	}
	c.advance(learnQuiet)
	learned(t, e)
	if d, done := obs.dropped.Load(), obs.done.Load(); d != 0 || done != int64(n) {
		t.Errorf("%d turns: %d learned, %d dropped", n, done, d)
	}
	for _, i := range []int{0, n / 2, n - 1} {
		if res := search(t, e, owner, fmt.Sprint("zqload", i)); len(res) == 0 {
			t.Errorf("turn %d is not searchable", i)
		}
	}
}

func TestAfterAQuietSpellATurnIsLearnedAtOnce(t *testing.T) {
	e, c, obs := paced(t)
	owner := e.OwnerID("sk-quiet")
	for i := range 3 {
		c.advance(2 * learnEvery)
		before := e.learner.handed.Load()
		tell(t, e, c, owner, fmt.Sprint("zqquiet", i), i)
		// No time passes: the turn is learned all the same.
		learned(t, e)
		if got := e.learner.handed.Load() - before; got != 1 {
			t.Errorf("turn %d made %d commits", i, got)
		}
	}
	if d, done := obs.dropped.Load(), obs.done.Load(); d != 0 || done != 3 {
		t.Errorf("3 turns: %d learned, %d dropped", done, d)
	}
}

// The uses of memories ride in learning's commit once they are due, not in
// a transaction of their own.
func TestUsesAreWrittenInLearningsCommit(t *testing.T) {
	obs := &countingObserver{}
	wc, cfgClock := newFakeClock(), &clock{}
	cfgClock.set(time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC))
	e, err := openConfig(t, Config{Dir: t.TempDir(), Shards: 1, LockTimeout: 200 * time.Millisecond, Observer: obs,
		Clock: cfgClock.now, testWriterClock: wc})
	if err != nil {
		t.Fatal(err)
	}
	defer closeEngine(t, e)
	e.learner.readEvery.Store(0)
	owner := e.OwnerID("sk-uses")
	ms := remember(t, e, owner, store.Put{Kind: "note", Key: "n", Content: "The garden gate sticks in the rain."})
	e.Used(owner, ms[0].ID)
	e.Used(owner, ms[0].ID)
	// Due for learning's commit, not yet for a write of their own.
	cfgClock.advance(useFlushEvery + time.Second)
	wc.advance(2 * learnEvery)
	before := e.LearningCommits()
	tell(t, e, wc, owner, "zquses", 0)
	learned(t, e)
	if got := e.LearningCommits() - before; got != 1 {
		t.Fatalf("one turn made %d commits", got)
	}
	if n := pendingUses(e); n != 0 {
		t.Errorf("after learning's commit, %d uses wait to be written", n)
	}
	if got, _ := e.Get(owner, ms[0].ID); got.Uses != 2 {
		t.Errorf("once written: %d uses, want 2", got.Uses)
	}
}
