package engine

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"go.uber.org/zap"

	"github.com/caddy-memory/memory/index"
	"github.com/caddy-memory/memory/store"
)

// Every owner is searched from an index of its memories in memory
// (index.Postings), made from their records' digests when the engine
// opens and kept in step with the store by following its change log, as
// the Bleve index is: a search reads what the question's terms hold in the
// owner's memories, instead of the owner's records (a small owner) or the
// postings of its words in its whole Bleve shard (a large one). Until the
// postings hold an owner (while they are built, or when it did not fit in
// their budget), and when a search's snapshot has changes of its owner the
// postings have not applied yet, the search reads the records or Bleve as
// before: the postings are derived data, and Bleve stays the durable
// index, rebuilt from the store after a crash.

// DefaultPostingsBudget is the memory the postings may take by default:
// about 110 to 170 bytes a memory, so a million and a half of them.
const DefaultPostingsBudget = 256 << 20

const (
	// postingsBatch is the most changes the follower applies at once.
	postingsBatch = 4096
	// postingsPending is the most changes a search reads to see whether
	// its owner is among those the postings have not applied yet; further
	// behind, it searches otherwise.
	postingsPending = 1024
	// postingsBuildTx is about how many memories the build reads in one
	// transaction: a long read transaction keeps bbolt from reusing the
	// pages writes free meanwhile.
	postingsBuildTx = 50_000
)

// postings keeps the postings of every owner they have room for, and
// follows the store into them.
type postings struct {
	*core
	cur    atomic.Pointer[built] // nil: off, or not made yet
	budget atomic.Int64
	done   chan struct{}
	// again are owners whose postings want settling though nothing
	// changed (index.Owner.Settle). Follower only.
	again map[string]*index.Owner
	// warm, when set, is given each owner the build admits with how many
	// memories it read: the read path reads a large owner's profile while
	// its records are at hand, not at its first request.
	warm func(tx *store.Tx, owner string, memories int)
}

// built is one making of the postings and how far it has followed.
type built struct {
	p *index.Postings
	// applied is the change log position every owner p holds is
	// consistent with.
	applied atomic.Uint64
	budget  int // made within
	// ready: every owner was admitted or refused for want of room.
	ready atomic.Bool
}

// minPostingBytes is the least a memory takes in the postings: an owner
// with more memories than the room left, over this, is not admitted.
const minPostingBytes = 100

func newPostings(c *core) *postings {
	ps := &postings{core: c, done: make(chan struct{}), again: map[string]*index.Owner{}}
	ps.budget.Store(int64(budgetOf(c.cfg.PostingsBudget)))
	return ps
}

// budgetOf is the bytes a configured budget allows.
func budgetOf(budget int) int {
	switch {
	case budget < 0:
		return 0
	case budget == 0:
		return DefaultPostingsBudget
	}
	return budget
}

// UseSearchCache sets the memory the postings may take (see
// Config.PostingsBudget): off lets them go, and a budget much smaller than
// what they take makes them anew within it.
func (e *Engine) UseSearchCache(budget int) {
	e.postings.budget.Store(int64(budgetOf(budget)))
	e.wake(e.wakePostings)
}

// run builds the postings and follows the change log into them, until
// Close begins.
func (ps *postings) run() {
	defer close(ps.done)
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		budget := int(ps.budget.Load())
		b := ps.cur.Load()
		switch {
		case budget == 0 && b != nil:
			ps.cur.Store(nil)
		case budget > 0 && (b == nil || b.p.Version() != ps.index.Digester().Version() || budget < b.budget && b.p.Bytes() > budget):
			// None yet; made with the digests of before an encryption or
			// decryption; or over a smaller budget.
			ps.build()
		case b != nil:
			if !ps.follow(b) {
				ps.build() // the log was trimmed past them
			}
			ps.settleAgain()
		}
		select {
		case <-ps.wakePostings:
		case <-tick.C:
		case <-ps.drain:
			return
		}
	}
}

// building reports whether the postings are being made (at start, or
// anew): work that is not a request, which reads the whole store.
func (ps *postings) building() bool {
	b := ps.cur.Load()
	return ps.budget.Load() > 0 && (b == nil || !b.ready.Load())
}

// build makes the postings anew from every owner's records, admitting
// owners while they fit in the budget. Owners are searched from them as
// soon as they are made; the changes made meanwhile are followed into
// them between transactions.
func (ps *postings) build() {
	ps.cur.Store(nil)
	clear(ps.again)
	b := &built{p: ps.index.NewPostings(), budget: int(ps.budget.Load())}
	var owners []string
	err := ps.store.View(func(tx *store.Tx) error {
		b.applied.Store(tx.LastSeq())
		return tx.Owners(func(o string) error { owners = append(owners, o); return nil })
	})
	if err != nil {
		ps.log().Warn("listing owners to build the search postings failed; searches read the records and the index", zap.Error(err))
		return
	}
	ps.cur.Store(b)
	start := time.Now()
	for i := 0; i < len(owners) && !ps.draining() && b.p.Bytes() < b.budget; {
		read := 0
		err := ps.store.View(func(tx *store.Tx) error {
			for ; i < len(owners) && read < postingsBuildTx; i++ {
				if b.p.Owner(owners[i]) != nil {
					continue // a change admitted it already
				}
				n, err := ps.admit(tx, b, owners[i])
				if err != nil {
					return err
				}
				read += n
			}
			return nil
		})
		if err != nil {
			ps.log().Warn("building the search postings failed; searches read the records and the index", zap.Error(err))
			ps.cur.Store(nil)
			return
		}
		if !ps.follow(b) {
			ps.cur.Store(nil)
			return // the next round builds them again
		}
	}
	b.ready.Store(true)
	// Building read the whole store file: its pages go back (searches
	// read a few records each).
	ps.store.ReleaseMapped()
	if c := ps.log().Check(zap.InfoLevel, "built the search postings"); c != nil {
		c.Write(zap.Int("owners", b.p.Owners()), zap.Int("of_owners", len(owners)), zap.Int("bytes", b.p.Bytes()),
			zap.Int("budget", b.budget), zap.Duration("took", time.Since(start)))
	}
}

// admit puts owner's active memories in b's postings, as tx has them, if
// they fit, and returns how many it read.
func (ps *postings) admit(tx *store.Tx, b *built, owner string) (int, error) {
	room := (b.budget - b.p.Bytes()) / minPostingBytes
	if n, err := tx.CountAtMost(owner, room); err != nil || n > room {
		return 0, err
	}
	o := b.p.Hold(owner)
	now := ps.now()
	n := 0
	err := tx.PeekAll(owner, func(pk *store.Peek) error {
		n++
		if !pk.Active(now) {
			return nil
		}
		return ps.put(o, pk)
	})
	if err != nil {
		b.p.Drop(owner)
		return n, err
	}
	if o.Settle(now) {
		ps.again[owner] = o
	}
	o.Trim()
	if o.Live() == 0 {
		b.p.Drop(owner)
	} else if ps.warm != nil {
		ps.warm(tx, owner, n)
	}
	return n, nil
}

// put puts a peeked active memory in o.
func (ps *postings) put(o *index.Owner, pk *store.Peek) error {
	b, err := pk.Brief()
	if err != nil {
		return err
	}
	content, framed, err := pk.Shown()
	if err != nil {
		return err
	}
	attrs := index.Attrs{Kind: b.Kind, Session: pk.Session(), Expires: pk.Expires(), Updated: b.Updated,
		Mentions: b.Mentions, Importance: b.Importance, Turn: b.Turn(), Content: content, Framed: framed}
	if o.Put(pk.ID, pk.Terms(), attrs) {
		return nil
	}
	m, err := pk.Memory() // a record without a current digest
	if err != nil {
		return err
	}
	o.Put(pk.ID, ps.index.Digester().Digest(m.Content, m.Context), attrs)
	return nil
}

// follow applies the change log, from applied on, to the owners p holds,
// and admits the owners it does not hold while they fit. false when the
// log no longer reaches back to applied: p is to be made anew.
func (ps *postings) follow(b *built) bool {
	p := b.p
	for {
		n, ok := 0, true
		err := ps.store.View(func(tx *store.Tx) error {
			after, last := b.applied.Load(), tx.LastSeq()
			if last <= after {
				return nil
			}
			changes, oldest := tx.Changes(after, postingsBatch)
			if oldest > after+1 || len(changes) == 0 {
				ok = false
				return nil
			}
			now := ps.now()
			touched := map[string]*index.Owner{}
			admitted := map[string]bool{}
			for _, c := range changes {
				if admitted[c.Owner] {
					continue
				}
				o := touched[c.Owner]
				if o == nil {
					if o = p.Owner(c.Owner); o == nil {
						// A new owner, or one that did not fit: all it has,
						// as of tx.
						admitted[c.Owner] = true
						if _, err := ps.admit(tx, b, c.Owner); err != nil {
							return err
						}
						continue
					}
					touched[c.Owner] = o
				}
				if err := ps.apply(tx, o, c.Owner, c.ID, now); err != nil {
					return err
				}
			}
			for owner, o := range touched {
				if o.Settle(now) {
					ps.again[owner] = o
				}
			}
			n = len(changes)
			if n < postingsBatch {
				b.applied.Store(last)
			} else {
				b.applied.Store(changes[n-1].Seq)
			}
			return nil
		})
		if err != nil {
			// A record that does not read: the next round tries again, and
			// searches meanwhile read the records and the index.
			ps.log().Warn("following the store into the search postings failed", zap.Error(err))
			return true
		}
		if !ok {
			return false
		}
		if n < postingsBatch || ps.draining() {
			return true
		}
	}
}

// apply brings memory id of o's owner in line with tx.
func (ps *postings) apply(tx *store.Tx, o *index.Owner, owner string, id uint64, now time.Time) error {
	pk, err := tx.Peek(owner, id)
	switch {
	case errors.Is(err, store.ErrNotFound):
		o.Delete(id, nil)
		return nil
	case err != nil:
		return err
	case !pk.Active(now):
		o.Delete(id, pk.Terms())
		return nil
	}
	return ps.put(o, pk)
}

// settleAgain settles the owners that asked to be (see index.Owner.Settle).
func (ps *postings) settleAgain() {
	now := ps.now()
	for owner, o := range ps.again {
		if !o.Settle(now) {
			delete(ps.again, owner)
		}
	}
}

// wait waits until the postings have applied the changes up to seq, once
// they are built; with built, until they are built too. Nothing while off.
func (ps *postings) wait(ctx context.Context, seq uint64, built bool) error {
	for {
		b := ps.cur.Load()
		switch {
		case ps.budget.Load() == 0,
			b != nil && b.ready.Load() && b.applied.Load() >= seq,
			!built && (b == nil || !b.ready.Load()):
			return nil
		}
		ps.wake(ps.wakePostings)
		select {
		case <-ctx.Done():
			return fmt.Errorf("memory search postings did not catch up: %w", ctx.Err())
		case <-time.After(time.Millisecond):
		}
	}
}

// forget lets go of owner's postings (its memories are gone).
func (ps *postings) forget(owner string) {
	if b := ps.cur.Load(); b != nil {
		b.p.Drop(owner)
	}
}

// through is the change log position the postings need kept: what they
// have applied, or all of it while off.
func (ps *postings) through() uint64 {
	if b := ps.cur.Load(); b != nil {
		return b.applied.Load()
	}
	return ^uint64(0)
}

// Current returns owner's postings when they hold it and have applied
// every change of its that the search's snapshot tx has; nil otherwise:
// the search reads the records or the index then (see recall.Postings).
func (ps *postings) Current(tx *store.Tx, owner string) *index.Owner {
	b := ps.cur.Load()
	if b == nil || ps.budget.Load() == 0 || b.p.Version() != ps.index.Digester().Version() {
		return nil
	}
	o := b.p.Owner(owner)
	if o == nil {
		return nil
	}
	if after, last := b.applied.Load(), tx.LastSeq(); after < last {
		if last-after > postingsPending {
			return nil
		}
		if changed, ok := tx.ChangedSince(after, owner, postingsPending); changed || !ok {
			return nil
		}
	}
	return o
}
