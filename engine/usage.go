package engine

import (
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/caddy-memory/memory/store"
)

// Uses are counted in memory and written in one transaction every
// useFlushEvery, never on the request path; at most maxPendingUses
// memories wait, beyond which uses are not counted until the next write.
const (
	useFlushEvery  = 2 * time.Second
	maxPendingUses = 100_000
)

// usage counts the uses of memories (they make a memory salient, see
// package consolidate).
type usage struct {
	*core
	buf  useBuffer
	done chan struct{}
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
		if b.n >= maxPendingUses {
			return
		}
		m := b.uses[owner]
		if m == nil {
			m = map[uint64]int{}
			b.uses[owner] = m
		}
		if m[id] == 0 {
			b.n++
		}
		m[id]++
	}
}

// run writes the counted uses every useFlushEvery, and at Close.
func (u *usage) run() {
	defer close(u.done)
	tick := time.NewTicker(useFlushEvery)
	defer tick.Stop()
	for {
		select {
		case <-tick.C:
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
