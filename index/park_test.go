package index_test

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/caddy-memory/memory/index"
)

// fakeClock is a clock tests move by hand.
type fakeClock struct{ ns atomic.Int64 }

func newFakeClock() *fakeClock {
	c := &fakeClock{}
	c.ns.Store(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).UnixNano())
	return c
}

func (c *fakeClock) now() time.Time          { return time.Unix(0, c.ns.Load()) }
func (c *fakeClock) advance(d time.Duration) { c.ns.Add(int64(d)) }

// mappedUnder is how many of the process's mappings are files under dir
// (Linux; -1 elsewhere).
func mappedUnder(t *testing.T, dir string) int {
	t.Helper()
	if runtime.GOOS != "linux" {
		return -1
	}
	b, err := os.ReadFile("/proc/self/maps")
	if err != nil {
		t.Fatal(err)
	}
	return strings.Count(string(b), dir+"/")
}

// TestUnusedShardIsParkedAndReopened: a shard no search or write used for
// ParkAfter is closed (its segment files unmapped) and, to its callers,
// still there: a search, Holds, a write and DocCount answer as before.
func TestUnusedShardIsParkedAndReopened(t *testing.T) {
	dir := t.TempDir()
	x := openIndex(t, dir, 2)
	clock := newFakeClock()
	x.UseClock(clock.now)
	o := ownersInShards(t, x, 2)
	a, b := o[0], o[1]
	apply(t, x, 1, index.Doc{Owner: a, Enrol: true}, index.Doc{ID: 1, Owner: a, Content: "kayak on the lake"},
		index.Doc{ID: 2, Owner: b, Content: "kayak in the bay"})
	if got := find(t, x, index.Query{Owner: a, Text: "kayak"}); !sameSet(got, 1) {
		t.Fatalf("before parking: %v, want [1]", got)
	}
	docs := x.DocCount()
	if n := mappedUnder(t, dir); n == 0 {
		t.Fatal("no segment of the index is mapped while it is open: the check below would prove nothing")
	}

	clock.advance(index.ParkAfter - time.Second)
	if n := x.Park(index.ParkAfter); n != 0 {
		t.Fatalf("Park parked %d shards used %s ago, want none", n, index.ParkAfter-time.Second)
	}
	clock.advance(time.Second)
	if n := x.Park(index.ParkAfter); n != 2 {
		t.Fatalf("Park parked %d shards unused for %s, want 2", n, index.ParkAfter)
	}
	if n := mappedUnder(t, dir); n > 0 {
		t.Errorf("%d of the parked shards' files are still mapped", n)
	}
	if got := x.DocCount(); got != docs {
		t.Errorf("DocCount with every shard parked: %d, want %d", got, docs)
	}

	if got := find(t, x, index.Query{Owner: a, Text: "kayak"}); !sameSet(got, 1) {
		t.Errorf("a search of a parked shard: %v, want [1]", got)
	}
	if x.Parked() != 1 {
		t.Errorf("%d shards parked after a search of one of two, want 1", x.Parked())
	}
	if held, err := x.Holds(a); err != nil || !held {
		t.Errorf("Holds(a) after the park: %v, %v; want true", held, err)
	}
	apply(t, x, 2, index.Doc{ID: 4, Owner: b, Content: "kayak rental"})
	if got := find(t, x, index.Query{Owner: b, Text: "kayak"}); !sameSet(got, 2, 4) {
		t.Errorf("b after a write to its parked shard: %v, want [2 4]", got)
	}
	if applied, st := x.Applied(x.ShardOf(b)); applied != 2 || st != index.Ready {
		t.Errorf("b's shard: applied %d, state %v; want 2, Ready", applied, st)
	}
}

// TestHoldsOfAnOwnerNotHeldDoesNotReopen: learning asks whether the index
// holds the owner of every change; once a shard has answered no for an
// owner, asking again leaves it parked.
func TestHoldsOfAnOwnerNotHeldDoesNotReopen(t *testing.T) {
	x := openIndex(t, t.TempDir(), 1)
	clock := newFakeClock()
	x.UseClock(clock.now)
	if held, err := x.Holds("small"); err != nil || held {
		t.Fatalf("Holds(small): %v, %v; want false", held, err)
	}
	clock.advance(index.ParkAfter)
	x.Park(index.ParkAfter)
	if held, err := x.Holds("small"); err != nil || held {
		t.Fatalf("Holds(small) parked: %v, %v; want false", held, err)
	}
	if x.Parked() != 1 {
		t.Error("asking again whether it holds an owner it does not reopened the shard")
	}
	// Enrolled since: the shard says so, parked or not.
	apply(t, x, 1, index.Doc{Owner: "small", Enrol: true}, index.Doc{ID: 1, Owner: "small", Content: "grown"})
	clock.advance(index.ParkAfter)
	x.Park(index.ParkAfter)
	if held, err := x.Holds("small"); err != nil || !held {
		t.Errorf("Holds(small) once enrolled: %v, %v; want true", held, err)
	}
}

// TestParkRacesSearchesAndWrites: shards parked as often as they can be,
// while searches and writes go on, lose nothing and fail nothing (run
// with -race).
func TestParkRacesSearchesAndWrites(t *testing.T) {
	x := openIndex(t, t.TempDir(), 3)
	clock := newFakeClock()
	x.UseClock(clock.now)
	owners := ownersInShards(t, x, 3)
	var docs []index.Doc
	for i, o := range owners {
		docs = append(docs, index.Doc{Owner: o, Enrol: true}, index.Doc{ID: uint64(100 + i), Owner: o, Content: "base apple"})
	}
	apply(t, x, 1, docs...)

	race := newRacers()
	for _, o := range owners {
		race.run(func() error {
			hits, err := x.Search(context.Background(), index.Query{Owner: o, Text: "apple", Size: 100})
			if err == nil && len(hits) == 0 {
				err = fmt.Errorf("%s: no hits", o)
			}
			if err == nil {
				_, err = x.Holds(o)
			}
			return err
		})
	}
	parks := 0
	race.run(func() error {
		clock.advance(time.Second)
		parks += x.Park(0)
		_ = x.DocCount()
		return nil
	})
	seq := uint64(1)
	for i := range 30 {
		seq++
		o := owners[i%len(owners)]
		if err := x.Apply([]index.Doc{{ID: uint64(1000 + i), Owner: o, Content: "more apple"}}, seq); err != nil {
			t.Fatal(err)
		}
	}
	race.finish(t)
	if parks == 0 {
		t.Error("no shard was parked during the run: it raced nothing")
	}
	for i, o := range owners {
		want := 1 + (30-i+len(owners)-1)/len(owners)
		if got := find(t, x, index.Query{Owner: o, Text: "apple", Size: 100}); len(got) != want {
			t.Errorf("%s: %d hits after the run, want %d", o, len(got), want)
		}
	}
}

// racers run functions on goroutines of their own, each again and again,
// until finish.
type racers struct {
	wg   sync.WaitGroup
	stop chan struct{}
	errs chan error
}

func newRacers() *racers { return &racers{stop: make(chan struct{}), errs: make(chan error, 16)} }

// run runs fn again and again until finish, or until it fails.
func (r *racers) run(fn func() error) {
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		for {
			select {
			case <-r.stop:
				return
			default:
			}
			if err := fn(); err != nil {
				r.errs <- err
				return
			}
		}
	}()
}

// finish stops them and reports what failed.
func (r *racers) finish(t *testing.T) {
	t.Helper()
	close(r.stop)
	r.wg.Wait()
	close(r.errs)
	for err := range r.errs {
		t.Error(err)
	}
}
