package index

import (
	"time"

	"github.com/blevesearch/bleve/v2"
)

// Parking. While the postings answer searches, a shard's Bleve index is
// read and written only for the owners it holds, by the indexer, and for
// the few searches the postings cannot answer; yet an open one keeps its
// segment files mapped (every page read once counts in the process's
// resident memory from then on), its caches and its goroutines. A shard
// no read or write has used for a while is parked: its Bleve index is
// closed, which unmaps its files. The next use reopens it, under the
// shard's lock, so its callers never see it parked; its files are as it
// left them, so the reopening checks nothing that Open checked.

// ParkAfter is how long a shard may go unused before Park's caller may
// park it while the process serves (an engine at rest parks sooner).
const ParkAfter = 30 * time.Second

// UseClock makes now the index's clock, by which shards are used and
// parked (default time.Now). Call it before the index is shared.
func (x *Index) UseClock(now func() time.Time) {
	x.now = now
	for _, s := range x.shards {
		s.used.Store(now().UnixNano())
	}
}

// acquire read-locks s with its Bleve index open (reopening a parked
// shard), and marks it used now.
func (x *Index) acquire(s *shard) {
	s.used.Store(x.now().UnixNano())
	s.mu.RLock()
	for s.parked {
		s.mu.RUnlock()
		x.unpark(s)
		s.mu.RLock()
	}
}

// unpark reopens a parked shard. A shard that no longer opens is Damaged:
// the engine rebuilds it from the store, as after any damage.
func (x *Index) unpark(s *shard) {
	s.mu.Lock()
	if !s.parked {
		s.mu.Unlock()
		return
	}
	s.parked = false
	idx, err := bleve.OpenUsing(s.path, x.runtimeConfig())
	if err == nil {
		s.idx = idx
		s.mu.Unlock()
		return
	}
	s.state = Damaged
	s.mu.Unlock()
	if fn := x.onDamaged.Load(); fn != nil {
		go (*fn)(s.i, err)
	}
}

// Park closes the Bleve index of every ready shard that no read or write
// has used for idle, and returns how many it closed. Their next use
// reopens them.
func (x *Index) Park(idle time.Duration) int {
	x.closeMu.RLock()
	defer x.closeMu.RUnlock()
	if x.closed {
		return 0
	}
	before := x.now().Add(-idle).UnixNano()
	n := 0
	for _, s := range x.shards {
		if s.used.Load() > before {
			continue
		}
		s.mu.Lock()
		// Checked again under the lock: acquire marks the use before it
		// waits for the lock.
		if !s.parked && s.state == Ready && s.idx != nil && s.used.Load() <= before {
			s.docs, _ = s.idx.DocCount()
			// A close that fails leaves nothing to do but reopen later:
			// if the files are damaged, that reopening says so.
			_ = s.idx.Close()
			s.idx, s.parked = nil, true
			n++
		}
		s.mu.Unlock()
	}
	return n
}

// Parked is how many shards are parked.
func (x *Index) Parked() int {
	n := 0
	for _, s := range x.shards {
		s.mu.RLock()
		if s.parked {
			n++
		}
		s.mu.RUnlock()
	}
	return n
}
