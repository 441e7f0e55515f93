// Package receipts owns the in-memory record of what recent requests were
// given: per owner, the last few requests' outcome, the ids of the
// memories injected, the block's size and the search time, never the
// question. It is bounded in bytes (a receipt's ids, receipts per owner,
// the book as a whole) and lost at a restart.
package receipts

import (
	"container/list"
	"sync"
	"time"
)

// Bounds: an owner keeps its last PerOwner requests, each with the ids of
// its first MaxIDs memories (a max_items in the hundreds would otherwise
// make a receipt kilobytes); past Owners owners, or past Budget bytes in
// all, the least recently seen owners are let go.
const (
	PerOwner = 32
	MaxIDs   = 64
	Owners   = 4096
	Budget   = 4 << 20
)

// What the book counts against Budget: about what Go holds for an owner
// (its entry in the map and the list, the ring, its id) and for a
// receipt (the struct and its ids).
const (
	ownerBytes   = 256
	receiptBytes = 96
)

// Receipt is what one request was given.
type Receipt struct {
	Time    time.Time `json:"time"`
	Outcome string    `json:"outcome"`
	// MemoryIDs are the first MaxIDs memories injected, in block order;
	// Injected counts them all.
	MemoryIDs []uint64 `json:"memory_ids"`
	Injected  int      `json:"injected"`
	Tokens    int      `json:"tokens"`
	SearchMS  float64  `json:"search_ms"`
}

func (r *Receipt) bytes() int { return receiptBytes + 8*cap(r.MemoryIDs) }

// Book holds the receipts of a storage's owners. The zero value is ready.
type Book struct {
	mu     sync.Mutex
	owners map[string]*list.Element // of *ring
	lru    list.List                // least recently seen first
	bytes  int                      // counted as ownerBytes and Receipt.bytes
}

type ring struct {
	owner string
	items []Receipt // up to PerOwner; items[next] is the oldest once full
	next  int       // where the next receipt goes
	bytes int
}

// Record keeps r as owner's most recent receipt. It keeps a copy of the
// first MaxIDs of r.MemoryIDs.
func (b *Book) Record(owner string, r Receipt) {
	if owner == "" {
		return
	}
	r.Injected = len(r.MemoryIDs)
	r.MemoryIDs = append(make([]uint64, 0, min(len(r.MemoryIDs), MaxIDs)), r.MemoryIDs[:min(len(r.MemoryIDs), MaxIDs)]...)
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.owners == nil {
		b.owners = map[string]*list.Element{}
	}
	el, ok := b.owners[owner]
	if ok {
		b.lru.MoveToBack(el)
	} else {
		el = b.lru.PushBack(&ring{owner: owner, bytes: ownerBytes})
		b.owners[owner] = el
		b.bytes += ownerBytes
	}
	rg := el.Value.(*ring)
	was := rg.bytes
	if len(rg.items) < PerOwner {
		rg.items = append(rg.items, r)
	} else {
		rg.bytes -= rg.items[rg.next].bytes()
		rg.items[rg.next] = r
	}
	rg.next = (rg.next + 1) % PerOwner
	rg.bytes += r.bytes()
	b.bytes += rg.bytes - was
	// The owner just recorded stays, whatever it holds (at most PerOwner
	// receipts of MaxIDs ids: far below Budget).
	for b.lru.Len() > 1 && (b.lru.Len() > Owners || b.bytes > Budget) {
		b.drop(b.lru.Front())
	}
}

// drop lets the owner of el go.
func (b *Book) drop(el *list.Element) {
	rg := el.Value.(*ring)
	b.lru.Remove(el)
	delete(b.owners, rg.owner)
	b.bytes -= rg.bytes
}

// Recent returns owner's receipts, newest first.
func (b *Book) Recent(owner string) []Receipt {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := []Receipt{}
	el, ok := b.owners[owner]
	if !ok {
		return out
	}
	rg := el.Value.(*ring)
	for i := 1; i <= len(rg.items); i++ {
		out = append(out, rg.items[(rg.next-i+len(rg.items))%len(rg.items)])
	}
	return out
}

// Forget drops owner's receipts (the owner was forgotten).
func (b *Book) Forget(owner string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if el, ok := b.owners[owner]; ok {
		b.drop(el)
	}
}
