package engine

import (
	"go.uber.org/zap"

	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/caddy-memory/memory/internal/consolidate"
	"github.com/caddy-memory/memory/store"
)

// The entry points below are how the management surface reads and changes
// memories. Every write goes through the engine, which gives each record
// the search digest of its text (see store.Memory.Digest) and answers once
// the change is searchable.

// manager does the management surface's work: memories read, listed,
// changed, exported and imported one by one (this file), and owners
// forgotten, with what they left in the file and the index (manage.go).
type manager struct {
	*core
	learner  *learner       // an owner's turns are learned before it is forgotten
	indexer  *indexer       // writes return once searchable; a forget rebuilds shards
	postings *postings      // an owner forgotten leaves them
	purgeWG  sync.WaitGroup // purges of owners another instance forgot
	// imported counts the bytes imported since the store file's mapped
	// pages were last given back (imports.go).
	imported atomic.Int64
}

// OwnedPut is a memory to store for one owner.
type OwnedPut struct {
	Owner string
	store.Put
}

// Stored is what Remember did with one memory.
type Stored struct {
	Memory *store.Memory
	Op     store.Op
}

// Remember stores memories in one transaction, each an upsert by key as
// learning does (the same content again is another mention; new content
// supersedes the old, kept as history), and returns once they are durable
// and searchable. A put that can never be stored (store.ErrInvalid) fails
// the whole call.
func (e *Engine) Remember(ctx context.Context, puts ...OwnedPut) ([]Stored, error) {
	return e.manager.remember(ctx, puts...)
}

func (mg *manager) remember(ctx context.Context, puts ...OwnedPut) ([]Stored, error) {
	out := make([]Stored, len(puts))
	seq, err := mg.write(func(tx *store.Tx) error {
		for i, p := range puts {
			m, op, err := tx.Upsert(p.Owner, mg.withDigest(p.Put))
			if err != nil {
				return err
			}
			out[i] = Stored{m, op}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, mg.indexer.waitIndexed(ctx, seq)
}

// Get returns one memory of owner (store.ErrNotFound when the owner has no
// such memory), with its use and salience.
func (e *Engine) Get(owner string, id uint64) (*store.Memory, error) { return e.manager.get(owner, id) }

func (mg *manager) get(owner string, id uint64) (*store.Memory, error) {
	var m *store.Memory
	err := mg.store.View(func(tx *store.Tx) error {
		var err error
		if m, err = tx.Get(owner, id); err == nil {
			mg.withUsage(tx, m)
		}
		return err
	})
	return m, err
}

// withUsage fills in how m has been used, counting the uses not yet
// written, and how much it still matters.
func (c *core) withUsage(tx *store.Tx, m *store.Memory) {
	u := tx.Usage(m.Owner, m.ID)
	if n, last := c.uses.pending(m.Owner, m.ID); n > 0 {
		u.Uses += n
		if last.After(u.LastUsed) {
			u.LastUsed = last
		}
	}
	m.Uses = u.Uses
	if !u.LastUsed.IsZero() {
		last := u.LastUsed
		m.LastUsed = &last
	}
	m.Salience = consolidate.Salience(policyView(m, u), tx.Now())
}

// OwnerOf returns the owner a memory id belongs to (store.ErrNotFound for
// none). Only an operator may ask: an id names one owner's memory.
func (e *Engine) OwnerOf(id uint64) (string, error) { return e.manager.ownerOf(id) }

func (mg *manager) ownerOf(id uint64) (string, error) {
	var owner string
	err := mg.store.View(func(tx *store.Tx) error {
		var err error
		owner, err = tx.OwnerOf(id)
		return err
	})
	return owner, err
}

// Edit changes one memory of owner with fn, which sees the current record,
// and returns once the change is searchable. A changed text gets a new
// digest.
func (e *Engine) Edit(ctx context.Context, owner string, id uint64, fn func(*store.Memory) error) (*store.Memory, error) {
	return e.manager.edit(ctx, owner, id, fn)
}

func (mg *manager) edit(ctx context.Context, owner string, id uint64, fn func(*store.Memory) error) (*store.Memory, error) {
	var m *store.Memory
	seq, err := mg.write(func(tx *store.Tx) error {
		var err error
		m, err = tx.Edit(owner, id, func(m *store.Memory) error {
			content, context := m.Content, m.Context
			if err := fn(m); err != nil {
				return err
			}
			if m.Content != content || m.Context != context || m.Digest == nil {
				m.Digest = mg.index.Digester().Digest(m.Content, m.Context)
			}
			return nil
		})
		return err
	})
	if err != nil {
		return nil, err
	}
	return m, mg.indexer.waitIndexed(ctx, seq)
}

// Delete soft-deletes one memory of owner (never recalled again, still
// listed and exported), or with purge removes it and its history for good.
// It returns once searches no longer find it.
func (e *Engine) Delete(ctx context.Context, owner string, id uint64, purge bool) error {
	return e.manager.delete(ctx, owner, id, purge)
}

func (mg *manager) delete(ctx context.Context, owner string, id uint64, purge bool) error {
	seq, err := mg.write(func(tx *store.Tx) error {
		if purge {
			return tx.Purge(owner, id)
		}
		_, err := tx.Delete(owner, id)
		return err
	})
	if err != nil {
		return err
	}
	return mg.indexer.waitIndexed(ctx, seq)
}

// Cursor is where a listing continues: after memory ID of Owner.
type Cursor struct {
	Owner string
	ID    uint64
}

// ListQuery selects memories to list.
type ListQuery struct {
	// Owner lists one owner's memories; "" lists every owner's, in owner
	// id order.
	Owner string
	After Cursor
	Limit int
	// Keep, when set, says which memories to list (the others are passed
	// over without counting towards Limit); now is the listing's clock.
	Keep func(m *store.Memory, now time.Time) bool
}

// List returns up to q.Limit memories in (owner, id) order after q.After,
// whether more follow, and how many damaged records it passed over.
func (e *Engine) List(q ListQuery) (page []*store.Memory, more bool, skipped int, err error) {
	return e.manager.list(q)
}

func (mg *manager) list(q ListQuery) (page []*store.Memory, more bool, skipped int, err error) {
	page = []*store.Memory{}
	full := func() bool { return len(page) > q.Limit }
	err = mg.store.View(func(tx *store.Tx) error {
		defer func() { skipped = tx.Skipped() }()
		visit := func(owner string, after uint64) (bool, error) {
			err := tx.Scan(owner, after, func(m *store.Memory) (bool, error) {
				mg.withUsage(tx, m)
				if q.Keep == nil || q.Keep(m, tx.Now()) {
					page = append(page, m)
				}
				return !full(), nil
			})
			return !full(), err
		}
		if q.Owner != "" {
			_, err := visit(q.Owner, q.After.ID)
			return err
		}
		return tx.OwnersFrom(q.After.Owner, func(o string) (bool, error) {
			after := uint64(0)
			if o == q.After.Owner {
				after = q.After.ID
			}
			return visit(o, after)
		})
	})
	if full() {
		page, more = page[:q.Limit], true
	}
	mg.skipped("listing", q.Owner, skipped)
	return page, more, skipped, err
}

// skipped logs the damaged records a read of owner passed over.
func (mg *manager) skipped(what, owner string, n int) {
	if n > 0 {
		mg.log().Warn("damaged memory records were passed over; the others are served ('caddy memory check' counts them, 'caddy memory salvage' drops them)",
			zap.String("while", what), zap.String("owner_id", owner), zap.Int("records", n), zap.String("storage", mg.cfg.Dir))
	}
}

// Counts summarises an owner's memories, or, for "", everyone's.
func (e *Engine) Counts(owner string) (store.Counts, error) { return e.manager.counts(owner) }

func (mg *manager) counts(owner string) (store.Counts, error) {
	var total store.Counts
	err := mg.store.View(func(tx *store.Tx) error {
		if owner != "" {
			var err error
			total, err = tx.Count(owner)
			return err
		}
		total.ByKind = map[string]int{}
		return tx.Owners(func(o string) error {
			c, err := tx.Count(o)
			total.Total += c.Total
			total.Deleted += c.Deleted
			total.Expired += c.Expired
			for k, n := range c.ByKind {
				total.ByKind[k] += n
			}
			return err
		})
	})
	return total, err
}

// Export calls fn with every memory of owner, or, for "", of every owner,
// history included, in order of owner and id. fn runs outside any read
// transaction: it writes to a client that may stop reading, and a read
// transaction held meanwhile would block bbolt's remap when the file grows,
// and with it every write and then every read of every owner. The memories
// are read a bounded page at a time instead, each page one snapshot.
// skipped counts the records that could not be read and were passed over.
func (e *Engine) Export(owner string, fn func(*store.Memory) error) (skipped int, err error) {
	return e.manager.export(owner, fn)
}

// Bounds of one page of an export: what one short read transaction
// gathers, and what an export holds at once.
const (
	exportPage      = 256
	exportPageBytes = 1 << 20
)

func (mg *manager) export(owner string, fn func(*store.Memory) error) (skipped int, err error) {
	owners := []string{owner}
	if owner == "" {
		owners = nil
		if err := mg.store.View(func(tx *store.Tx) error {
			return tx.Owners(func(o string) error { owners = append(owners, o); return nil })
		}); err != nil {
			return 0, err
		}
	}
	page := make([]*store.Memory, 0, exportPage)
	defer func() { mg.skipped("exporting", owner, skipped) }()
	for _, o := range owners {
		for after := uint64(0); ; {
			page = page[:0]
			size := 0
			err := mg.store.View(func(tx *store.Tx) error {
				defer func() { skipped += tx.Skipped() }()
				return tx.Scan(o, after, func(m *store.Memory) (bool, error) {
					mg.withUsage(tx, m)
					page = append(page, m)
					size += memorySize(m)
					return len(page) < exportPage && size < exportPageBytes, nil
				})
			})
			if err != nil {
				return skipped, err
			}
			for _, m := range page {
				if err := fn(m); err != nil {
					return skipped, err
				}
			}
			if len(page) < exportPage && size < exportPageBytes {
				break // the owner's last page
			}
			after = page[len(page)-1].ID
		}
	}
	return skipped, nil
}

// memorySize is about what a memory's texts weigh, for an export's pages.
func memorySize(m *store.Memory) int {
	n := len(m.Content) + len(m.Context)
	for _, v := range m.History {
		n += len(v.Content)
	}
	return n
}
