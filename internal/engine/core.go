package engine

import (
	"context"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/caddy-memory/memory/extract"
	"github.com/caddy-memory/memory/index"
	"github.com/caddy-memory/memory/internal/recall"
	"github.com/caddy-memory/memory/store"
)

// core is what every concern of an open engine shares: the store, the
// index, the configuration, and the signals of its life (the wake-ups of
// the workers that follow the store, and Close's). Each concern type
// points to it.
type core struct {
	// cfg is as Open completed it; its Keys are those the storage opened
	// with (the sealer holds the keys in effect).
	cfg   Config
	store *store.DB
	index *index.Index

	// Enqueue holds closeMu for reading while it sends, so Close can be sure
	// that no job arrives after the writer's final drain.
	closeMu sync.RWMutex
	closing bool

	wakeProcessor chan struct{}
	wakeIndexer   chan struct{}
	// wakePostings wakes the follower of the search postings after a
	// write, so they are current at once (see follower.go).
	wakePostings chan struct{}

	// uses are the uses of memories counted and not yet written (usage.go).
	uses useBuffer

	drain chan struct{} // closed by Close: finish what is pending, then stop
	abort chan struct{} // closed when Close's deadline passes: stop now

	// stopCtx is cancelled when Close's deadline passes: calls to other
	// services made in the background end with it.
	stopCtx    context.Context
	cancelStop context.CancelFunc
}

func newCore(cfg Config, st *store.DB, idx *index.Index) *core {
	stopCtx, cancelStop := context.WithCancel(context.Background())
	return &core{
		cfg:           cfg,
		store:         st,
		index:         idx,
		wakeProcessor: make(chan struct{}, 1),
		wakeIndexer:   make(chan struct{}, 1),
		wakePostings:  make(chan struct{}, 1),
		drain:         make(chan struct{}),
		abort:         make(chan struct{}),
		stopCtx:       stopCtx,
		cancelStop:    cancelStop,
	}
}

func (c *core) log() *zap.Logger { return c.cfg.Logger() }

func (c *core) now() time.Time { return c.cfg.Clock() }

// write runs fn in one store transaction and returns once it is durable;
// the index follows shortly (see WaitIndexed). Whatever fn writes carries
// its search digest (see withDigest).
func (c *core) write(fn func(*store.Tx) error) (seq uint64, err error) {
	err = c.store.Update(func(tx *store.Tx) error {
		if err := fn(tx); err != nil {
			return err
		}
		seq = tx.LastSeq()
		return nil
	})
	if err == nil {
		c.wake(c.wakeIndexer)
		c.wake(c.wakePostings)
	}
	return seq, err
}

// withDigest is p with the search digest of its text (keyed in an
// encrypted storage).
func (c *core) withDigest(p store.Put) store.Put {
	p.Digest = c.index.Digester().Digest(p.Content, p.Context)
	return p
}

// putOf is a learned memory as the store writes it, with its digest and
// the learner it came from.
func (c *core) putOf(m extract.Memory, source string) store.Put {
	return c.withDigest(store.Put{Session: m.Session, Kind: m.Kind, Key: m.Key, Content: m.Content,
		Context: m.Context, Ref: m.Ref, Meta: m.Meta, Time: m.Time, Source: source, Importance: m.Importance})
}

func (c *core) wake(ch chan struct{}) {
	select {
	case ch <- struct{}{}:
	default:
	}
}

// stopping reports whether Close asked background work to stop at once,
// or the store is damaged (it refuses every write; its reads are for the
// management API to save what it can, not for the workers).
func (c *core) stopping() bool {
	select {
	case <-c.abort:
		return true
	default:
		return c.store.Damaged() != nil
	}
}

// draining reports whether Close has begun.
func (c *core) draining() bool {
	select {
	case <-c.drain:
		return true
	default:
		return false
	}
}

// pace waits until every has passed since last, or Close starts draining.
func (c *core) pace(last time.Time, every time.Duration) {
	wait := every - time.Since(last)
	if wait <= 0 {
		return
	}
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case <-t.C:
	case <-c.drain:
	}
}

func (c *core) localSearchMax() int {
	switch n := c.cfg.LocalSearchMax; {
	case n == 0:
		return DefaultLocalSearchMax
	case n < 0:
		return 0
	default:
		return n
	}
}

// outgrown reports whether owner has more memories than a search reads
// from its records: the owners the index holds, and searches through (see
// enrolment).
func (c *core) outgrown(tx *store.Tx, owner string) (bool, error) {
	return recall.Outgrown(tx, owner, c.localSearchMax())
}
