package postgres_test

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/caddy-memory/memory/extract"
	"github.com/caddy-memory/memory/internal/engine"
	"github.com/caddy-memory/memory/internal/pgtest"
	"github.com/caddy-memory/memory/store/postgres"
)

// heldObserver counts what an engine reports of its turns.
type heldObserver struct {
	countJobs
	held, dropped atomic.Int64
}

func (o *heldObserver) TurnsHeld(delta int) { o.held.Add(int64(delta)) }
func (o *heldObserver) JobDropped()         { o.dropped.Add(1) }

// answered hands the engine turns the client already got an answer for,
// each teaching a locker number of its own.
func answered(t *testing.T, e *engine.Engine, owner string, from, n int) {
	t.Helper()
	for i := from; i < from+n; i++ {
		j := &engine.Job{Owner: owner, Turn: extract.Turn{Dialect: "openai_chat", NewTurn: true, Turn: i + 1,
			User: fmt.Sprintf("My locker number is zq%d.", 1000+i), Time: time.Now()}}
		if !e.Enqueue(j) {
			t.Fatalf("turn %d dropped at once", i)
		}
	}
}

// lockers lists which of the owner's locker numbers from..from+n the
// engine finds.
func lockers(t *testing.T, e *engine.Engine, owner string, from, n int) (found []int) {
	t.Helper()
	for i := from; i < from+n; i++ {
		w := fmt.Sprintf("zq%d", 1000+i)
		res, err := e.Search(context.Background(), engine.SearchRequest{Owner: owner, Query: "locker " + w, Limit: 5})
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range res {
			if strings.Contains(r.Memory.Content, w) {
				found = append(found, i)
				break
			}
		}
	}
	return found
}

func heldTurns(t *testing.T, e *engine.Engine) int {
	t.Helper()
	st, err := e.Stats()
	if err != nil {
		t.Fatal(err)
	}
	return st.HeldTurns
}

// TestTurnsHeldDuringAnOutageSurviveAStop: turns answered while the shared
// database is down are held in the instance's own storage, counted in the
// stats and the metrics; a graceful stop keeps trying them until its
// deadline, then leaves them in the storage, and the next start learns
// them. None is lost.
func TestTurnsHeldDuringAnOutageSurviveAStop(t *testing.T) {
	var obs heldObserver
	url := pgtest.Database(t)
	cfg := engine.Config{Dir: t.TempDir(), Shards: 2, Observer: &obs}
	e, owner := learning(t, cfg, url)

	pgtest.Stop(t)
	const turns = 5
	answered(t, e, owner, 1, turns)
	deadline := time.Now().Add(15 * time.Second)
	for heldTurns(t, e) != turns || obs.held.Load() != turns {
		if time.Now().After(deadline) {
			t.Fatalf("held turns: stats %d, metrics %d, want %d", heldTurns(t, e), obs.held.Load(), turns)
		}
		time.Sleep(20 * time.Millisecond)
	}

	took := stop(t, e)
	if took < drain-100*time.Millisecond || took > drain+time.Second {
		t.Errorf("the stop took %v; with turns held it should keep trying for drain_timeout (%v), and no more than a second past it", took, drain)
	}
	if n := obs.dropped.Load(); n != 0 {
		t.Errorf("%d turns dropped", n)
	}
	if n := obs.held.Load(); n != 0 {
		t.Errorf("the metrics still count %d held turns of a closed engine", n)
	}

	pgtest.Start(t)
	e = learnedAtRestart(t, cfg, url, owner, turns+1)
	if n := heldTurns(t, e); n != 0 {
		t.Errorf("%d turns still held once learned", n)
	}
}

// TestStopWithTheDatabaseHungIsBounded: with a database that accepts
// connections and never answers, a stop returns within its deadline and a
// second, and the turns already answered are learned at the next start.
func TestStopWithTheDatabaseHungIsBounded(t *testing.T) {
	url := pgtest.Database(t)
	proxy := pgtest.NewProxy(t, url)
	var obs heldObserver
	cfg := engine.Config{Dir: t.TempDir(), Shards: 2, Observer: &obs}
	e, owner := learning(t, cfg, proxy.URL)

	proxy.Hang()
	const turns = 3
	answered(t, e, owner, 1, turns)
	time.Sleep(200 * time.Millisecond) // the writer is in a call that will not be answered

	took := stop(t, e)
	t.Logf("stop took %v", took)
	if took > drain+time.Second {
		t.Errorf("the stop took %v with the database hung, past drain_timeout (%v) and a second", took, drain)
	}
	if n := obs.dropped.Load(); n != 0 {
		t.Errorf("%d turns dropped", n)
	}

	learnedAtRestart(t, cfg, url, owner, turns+1)
}

// learning opens an engine with cfg, and has it learn the first turn of
// an owner it returns.
func learning(t *testing.T, cfg engine.Config, url string) (*engine.Engine, string) {
	t.Helper()
	e, err := engine.Open(onDatabase(t, cfg, url))
	if err != nil {
		t.Fatal(err)
	}
	owner := e.OwnerID("key-ana")
	answered(t, e, owner, 0, 1)
	settleEngine(t, e)
	return e, owner
}

// learnedAtRestart opens the engine again with cfg and checks that it
// learned the owner's turns 0..n-1; it is closed when the test ends.
func learnedAtRestart(t *testing.T, cfg engine.Config, url, owner string, n int) *engine.Engine {
	t.Helper()
	e, err := engine.Open(onDatabase(t, cfg, url))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close(context.Background()) })
	settleEngine(t, e)
	if got := lockers(t, e, owner, 0, n); len(got) != n {
		t.Fatalf("after the restart the engine finds the turns %v of 0..%d", got, n-1)
	}
	return e
}

// drain is the stops' drain_timeout.
const drain = 1500 * time.Millisecond

// stop closes e with drain_timeout drain, and says how long it took.
func stop(t *testing.T, e *engine.Engine) time.Duration {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), drain)
	defer cancel()
	start := time.Now()
	if err := e.Close(ctx); err != nil {
		t.Fatal(err)
	}
	return time.Since(start)
}

func settleEngine(t *testing.T, e *engine.Engine) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := e.Sync(ctx); err != nil {
		t.Fatal(err)
	}
}

// TestHeldTurnsAreLearnedInTheOrderSaid: a turn told once the database is
// back, while one told during the outage is still held, is learned after
// it: the later fact is the current one.
func TestHeldTurnsAreLearnedInTheOrderSaid(t *testing.T) {
	e, owner := learning(t, engine.Config{Dir: t.TempDir(), Shards: 2}, pgtest.Database(t))
	defer e.Close(context.Background())
	live := func(turn int, city string) {
		t.Helper()
		if !e.Enqueue(&engine.Job{Owner: owner, Turn: extract.Turn{Dialect: "openai_chat", Conversation: "c", Turn: turn, NewTurn: true,
			User: "I live in " + city + ".", Time: time.Now()}}) {
			t.Fatal("turn dropped")
		}
	}
	pgtest.Stop(t)
	live(2, "Zqlisbon")
	for deadline := time.Now().Add(15 * time.Second); heldTurns(t, e) != 1; {
		if time.Now().After(deadline) {
			t.Fatalf("%d turns held, want 1", heldTurns(t, e))
		}
		time.Sleep(20 * time.Millisecond)
	}
	pgtest.Start(t)
	live(3, "Zqporto")
	settleEngine(t, e)
	res, err := e.Search(context.Background(), engine.SearchRequest{Owner: owner, Query: "where do I live", Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	var current []string
	for _, r := range res {
		if r.Memory.Key == "identity:location" {
			current = append(current, r.Memory.Content)
		}
	}
	if len(current) != 1 || current[0] != "User lives in Zqporto." {
		t.Fatalf("the current location is %q, want Zqporto: the turn held during the outage was learned after the later one", current)
	}
}

// onDatabase is cfg with the database at url opened as its shared store.
func onDatabase(t testing.TB, cfg engine.Config, url string) engine.Config {
	t.Helper()
	db, err := postgres.Open(context.Background(), url, nil)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Shared = db
	return cfg
}
