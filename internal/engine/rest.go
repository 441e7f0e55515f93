package engine

import (
	"runtime"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"

	"github.com/caddy-memory/memory/index"
)

// Resident memory. Traffic leaves a process holding more than it uses
// once it stops: the collector's headroom (with GOGC at 100 the heap grows
// to twice what is live before it collects, and the runtime gives the rest
// back only slowly), the pages of the store file its reads mapped, and
// the index shards' mapped segments. None of it is needed until the next
// request, and a server that rests between bursts (most do) would show it
// all as its size. So, each second:
//
//   - at rest (for restAfter no request, no write, and no work that
//     reads or writes the store: the postings being built, turns or uses
//     waiting to be written, changes waiting for the index), once per
//     rest: the store file's pages go back, the shards unused since the
//     last request are parked (closed, their files unmapped;
//     index/park.go), and the heap is collected and its free pages
//     returned to the system (when no engine of the process was busy
//     either);
//   - while serving: shards unused for index.ParkAfter are parked, and the
//     store file's pages go back every releaseEvery.
//
// Everything given back is read again on demand: the store's pages from
// the kernel's page cache, a parked shard by reopening it (a write, or a
// search the postings cannot answer), the heap by growing again.

const (
	// restAfter is how long without a request or a write is rest.
	restAfter = 5 * time.Second
	// releaseEvery is how often the store file's pages mapped into the
	// process go back while it serves (store.DB.ReleaseMapped). Searches
	// read a few records each from the postings' hits, but a large
	// owner's first profile or a consolidation reads all its records, and
	// their pages would stay resident for good.
	releaseEvery = time.Minute
)

// rest watches for rest and gives back what it can (see above).
type rest struct {
	*core
	clock func() time.Time
	// busy is when a request or a write was last seen (clock's UnixNano).
	busy atomic.Int64

	mu       sync.Mutex // one look at a time
	seq      uint64     // the store's last change, as last seen
	settled  int64      // busy as of the last release at rest
	released time.Time  // when the store's pages last went back

	// working says the engine has work under way that is not a request
	// (the postings being built, turns queued, uses to write, changes up
	// to seq, the store's last, not yet in the postings or the index).
	working func(seq uint64) bool
	// atRest gives back what a rest may (release, unless a test counts).
	atRest func()
	done   chan struct{}
}

func newRest(c *core, working func(seq uint64) bool) *rest {
	r := &rest{core: c, clock: c.now, working: working, done: make(chan struct{})}
	r.atRest = r.release
	r.released = r.clock()
	r.busy.Store(r.released.UnixNano())
	return r
}

// touch records a request, or work under way.
func (r *rest) touch() {
	r.busy.Store(r.clock().UnixNano())
	lastBusy.Store(time.Now().UnixNano())
}

// run looks every second, until Close begins.
func (r *rest) run() {
	defer close(r.done)
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		select {
		case <-tick.C:
			r.look()
		case <-r.drain:
			return
		}
	}
}

// look is one look: a release at rest, or what is due while serving.
func (r *rest) look() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.stopping() {
		return
	}
	if seq := r.store.LastSeq(); seq != r.seq || r.working(seq) {
		r.seq = seq
		r.touch()
	}
	now := r.clock()
	busy := r.busy.Load()
	if now.UnixNano()-busy >= int64(restAfter) && busy != r.settled {
		r.settled = busy
		r.atRest()
		r.released = now
		return
	}
	r.index.Park(index.ParkAfter)
	if now.Sub(r.released) >= releaseEvery {
		r.store.ReleaseMapped()
		r.released = now
	}
}

// release gives back what a rest may: the store file's pages, the shards
// not used since the last request, and the heap's free pages.
func (r *rest) release() {
	r.store.ReleaseMapped()
	r.index.Park(restAfter)
	freeHeap()
}

// The heap is the process's, and one process may hold several storages,
// each with an engine that rests by its own requests and work: the heap is
// freed only when none of them has been busy for restAfter (lastBusy,
// UnixNano), and by one of them at a time (freeing).
var (
	lastBusy atomic.Int64
	freeing  sync.Mutex
)

// freeHeap collects the heap twice and returns its free pages to the
// system, unless an engine of the process was busy within restAfter;
// it reports whether it did. Twice: what the first collection finds in
// sync.Pools only moves to their victim caches, which the second frees.
// The collections run concurrently with whatever else runs (a request
// arriving meanwhile).
func freeHeap() bool {
	if time.Since(time.Unix(0, lastBusy.Load())) < restAfter || !freeing.TryLock() {
		return false
	}
	defer freeing.Unlock()
	runtime.GC()
	debug.FreeOSMemory()
	return true
}
