// Package receipts owns the in-memory record of what recent requests were
// given: per owner, the last few requests' outcome, the ids of the
// memories injected, the block's size and the search time, never the
// question. It is bounded (requests per owner, owners in all) and lost at
// a restart.
package receipts

import (
	"container/list"
	"sync"
	"time"
)

// Bounds: an owner keeps its last PerOwner requests; past Owners owners,
// the least recently seen is forgotten.
const (
	PerOwner = 32
	Owners   = 4096
)

// Receipt is what one request was given.
type Receipt struct {
	Time      time.Time `json:"time"`
	Outcome   string    `json:"outcome"`
	MemoryIDs []uint64  `json:"memory_ids"`
	Tokens    int       `json:"tokens"`
	SearchMS  float64   `json:"search_ms"`
}

// Book holds the receipts of a storage's owners. The zero value is ready.
type Book struct {
	mu     sync.Mutex
	owners map[string]*list.Element // of *ring
	lru    list.List                // least recently seen first
}

type ring struct {
	owner string
	items [PerOwner]Receipt
	next  int // where the next receipt goes
	n     int
}

// Record keeps r as owner's most recent receipt.
func (b *Book) Record(owner string, r Receipt) {
	if owner == "" {
		return
	}
	if r.MemoryIDs == nil {
		r.MemoryIDs = []uint64{}
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.owners == nil {
		b.owners = map[string]*list.Element{}
	}
	el, ok := b.owners[owner]
	if ok {
		b.lru.MoveToBack(el)
	} else {
		if b.lru.Len() >= Owners {
			oldest := b.lru.Front()
			delete(b.owners, oldest.Value.(*ring).owner)
			b.lru.Remove(oldest)
		}
		el = b.lru.PushBack(&ring{owner: owner})
		b.owners[owner] = el
	}
	rg := el.Value.(*ring)
	rg.items[rg.next] = r
	rg.next = (rg.next + 1) % PerOwner
	rg.n = min(rg.n+1, PerOwner)
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
	for i := 1; i <= rg.n; i++ {
		out = append(out, rg.items[(rg.next-i+PerOwner)%PerOwner])
	}
	return out
}

// Forget drops owner's receipts (the owner was forgotten).
func (b *Book) Forget(owner string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if el, ok := b.owners[owner]; ok {
		b.lru.Remove(el)
		delete(b.owners, owner)
	}
}
