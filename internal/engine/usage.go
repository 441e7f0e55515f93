package engine

import (
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/caddy-memory/memory/store"
)

// Uses are counted in memory and written every useFlushEvery, never on the
// request path, or sooner when maxPendingUses memories wait: in learning's
// commit when it makes one then (jobs.go), else, half as late again, in a
// transaction of their own. A write rewrites the usage pages of every owner it counts for, so
// its cost follows the owners, not the uses: under load, writing seldom
// shares each owner's pages among many more uses. A crash loses the uses
// of the last useFlushEvery, which only nudge the ranking. Past twice
// maxPendingUses (the write cannot keep up), uses are not counted until
// the next write.
const (
	useFlushEvery  = 10 * time.Second
	maxPendingUses = 100_000
)

// usage writes the uses of memories counted in the core's buffer (they
// make a memory salient, see package consolidate).
type usage struct {
	*core
	done chan struct{}
	// full asks run for a write before useFlushEvery has passed.
	full chan struct{}
	// limit is maxPendingUses, or a test's.
	limit int
	// writerDone is closed when learning's writer has made its last commit.
	writerDone <-chan struct{}
}

func newUsage(c *core) *usage {
	c.uses.taken = c.now()
	return &usage{core: c, done: make(chan struct{}), full: make(chan struct{}, 1), limit: maxPendingUses}
}

// useBuffer holds the uses not yet written: owner → memory id → times,
// and when each owner's last was. Reads of a memory add them (pending), so
// a use shows at once though it is written later.
type useBuffer struct {
	mu   sync.Mutex
	uses map[string]*ownerUses
	n    int
	// writing are the uses being written: still pending until committed.
	writing map[string]*ownerUses
	// taken is when uses were last taken to be written; full, that enough
	// wait for a write before useFlushEvery.
	taken time.Time
	full  bool
}

type ownerUses struct {
	ids  map[uint64]int
	last time.Time
}

// waiting reports whether uses wait to be written, or are being written.
func (b *useBuffer) waiting() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.n > 0 || b.writing != nil
}

// pending is how often memory id of owner was used since the last write,
// and when the owner's last use was.
func (b *useBuffer) pending(owner string, id uint64) (n int, last time.Time) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, m := range [2]map[string]*ownerUses{b.writing, b.uses} {
		if o := m[owner]; o != nil && o.ids[id] > 0 {
			n += o.ids[id]
			last = o.last
		}
	}
	return n, last
}

// Used records that memories of owner were used: injected into a request,
// or returned by a recall. The counts are written in the background.
func (e *Engine) Used(owner string, ids ...uint64) { e.usage.used(owner, ids...) }

func (u *usage) used(owner string, ids ...uint64) {
	now := u.now()
	b := &u.uses
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.uses == nil {
		b.uses = map[string]*ownerUses{}
	}
	for _, id := range ids {
		if b.n >= 2*u.limit {
			return
		}
		o := b.uses[owner]
		if o == nil {
			o = &ownerUses{ids: map[uint64]int{}}
			b.uses[owner] = o
		}
		o.last = now
		m := o.ids
		if m[id] == 0 {
			b.n++
			if b.n == u.limit {
				b.full = true
				select {
				case u.full <- struct{}{}:
				default:
				}
			}
		}
		m[id]++
	}
}

// take hands the uses counted so far to a write, when one is due (after
// at least every since the last, or when enough wait) or force; nil when
// none is or another write is under way. The writer calls written once
// its transaction has ended.
func (b *useBuffer) take(now time.Time, every time.Duration, force bool) map[string]*ownerUses {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.writing != nil || len(b.uses) == 0 || !force && !b.full && now.Sub(b.taken) < every {
		return nil
	}
	pending := b.uses
	b.uses, b.n, b.writing, b.taken, b.full = nil, 0, pending, now, false
	return pending
}

// written ends the write of the uses take handed over.
func (b *useBuffer) written() {
	b.mu.Lock()
	b.writing = nil
	b.mu.Unlock()
}

// writeUses writes uses taken from the buffer in tx.
func writeUses(tx *store.Tx, uses map[string]*ownerUses) error {
	for owner, o := range uses {
		if err := tx.Used(owner, o.ids, o.last); err != nil {
			return err
		}
	}
	return nil
}

// run writes the counted uses that learning's commits have not taken: when
// they are due, when enough wait, and at Close.
func (u *usage) run() {
	defer close(u.done)
	tick := time.NewTicker(useFlushEvery / 4)
	defer tick.Stop()
	for {
		select {
		case <-tick.C:
			u.write(false)
		case <-u.full:
			u.write(false)
		case <-u.drain:
			// After the writer's last commit, which may hold some.
			<-u.writerDone
			u.flush()
			return
		}
	}
}

// flush writes the counted uses now.
func (u *usage) flush() { u.write(true) }

// write writes the counted uses, if due or force.
func (u *usage) write(force bool) {
	// Learning's commits take them every useFlushEvery while it commits;
	// this write is for when it has not for a while.
	pending := u.uses.take(u.now(), useFlushEvery*3/2, force)
	if pending == nil {
		return
	}
	defer u.uses.written()
	err := u.store.Update(func(tx *store.Tx) error { return writeUses(tx, pending) })
	if err != nil {
		u.log().Warn("counting memories' uses; these are not counted", zap.Error(err))
	}
}
