package engine

import (
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/caddy-memory/memory/store"
)

// Uses are counted in memory and written in one transaction every
// useFlushEvery, never on the request path, or sooner when
// maxPendingUses memories wait. A write rewrites the usage pages of every
// owner it counts for, so its cost follows the owners, not the uses: under
// load, writing seldom shares each owner's pages among many more uses. A
// crash loses the uses of the last useFlushEvery, which only nudge the
// ranking. Past twice maxPendingUses (the write cannot keep up), uses are
// not counted until the next write.
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
}

func newUsage(c *core) *usage {
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
				select {
				case u.full <- struct{}{}:
				default:
				}
			}
		}
		m[id]++
	}
}

// run writes the counted uses every useFlushEvery, when enough wait, and
// at Close.
func (u *usage) run() {
	defer close(u.done)
	tick := time.NewTicker(useFlushEvery)
	defer tick.Stop()
	for {
		select {
		case <-tick.C:
			u.flush()
		case <-u.full:
			u.flush()
		case <-u.drain:
			u.flush()
			return
		}
	}
}

func (u *usage) flush() {
	b := &u.uses
	b.mu.Lock()
	pending := b.uses
	b.uses, b.n, b.writing = nil, 0, pending
	b.mu.Unlock()
	defer func() {
		b.mu.Lock()
		b.writing = nil
		b.mu.Unlock()
	}()
	if len(pending) == 0 {
		return
	}
	err := u.store.Update(func(tx *store.Tx) error {
		for owner, o := range pending {
			if err := tx.Used(owner, o.ids, o.last); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		u.log().Warn("counting memories' uses; these are not counted", zap.Error(err))
	}
}
