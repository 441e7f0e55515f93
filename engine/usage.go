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

// usage counts the uses of memories (they make a memory salient, see
// package consolidate).
type usage struct {
	*core
	buf  useBuffer
	done chan struct{}
	// full asks run for a write before useFlushEvery has passed.
	full chan struct{}
	// limit is maxPendingUses, or a test's.
	limit int
}

func newUsage(c *core) *usage {
	return &usage{core: c, done: make(chan struct{}), full: make(chan struct{}, 1), limit: maxPendingUses}
}

// useBuffer holds the uses not yet written: owner → memory id → times.
type useBuffer struct {
	mu   sync.Mutex
	uses map[string]map[uint64]int
	n    int
}

// Used records that memories of owner were used: injected into a request,
// or returned by a recall. The counts are written in the background.
func (e *Engine) Used(owner string, ids ...uint64) { e.usage.used(owner, ids...) }

func (u *usage) used(owner string, ids ...uint64) {
	b := &u.buf
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.uses == nil {
		b.uses = map[string]map[uint64]int{}
	}
	for _, id := range ids {
		if b.n >= 2*u.limit {
			return
		}
		m := b.uses[owner]
		if m == nil {
			m = map[uint64]int{}
			b.uses[owner] = m
		}
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
	b := &u.buf
	b.mu.Lock()
	pending := b.uses
	b.uses, b.n = nil, 0
	b.mu.Unlock()
	if len(pending) == 0 {
		return
	}
	at := u.now()
	err := u.store.Update(func(tx *store.Tx) error {
		for owner, uses := range pending {
			if err := tx.Used(owner, uses, at); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		u.log().Warn("counting memories' uses; these are not counted", zap.Error(err))
	}
}
