package index

import (
	"sync/atomic"
)

// termTable numbers the terms of every owner's postings: a digest hash
// (see Digest) gets a small number the first time any memory holds it.
// Numbers, unlike hashes, are dense: the frequent words, seen first, get
// the smallest, and a memory's sorted numbers differ by little, so they
// take a byte or two each where a hash takes four.
//
// One writer adds terms (under Postings.wmu); searches read without a
// lock: a slot is one 64-bit word (hash << 32 | number+1) written and read
// atomically, and a grown table is swapped in whole.
type termTable struct {
	slots atomic.Pointer[[]uint64]
	n     int // terms numbered (writer only)
}

// termSlots is a new table's size: a power of two.
const termSlots = 1 << 12

// lookup returns the number of hash, or false when no memory has held it.
func (t *termTable) lookup(hash uint32) (uint32, bool) {
	p := t.slots.Load()
	if p == nil {
		return 0, false
	}
	slots := *p
	mask := uint32(len(slots) - 1)
	for i := mix(hash) & mask; ; i = (i + 1) & mask {
		v := atomic.LoadUint64(&slots[i])
		switch {
		case v == 0:
			return 0, false
		case uint32(v>>32) == hash:
			return uint32(v) - 1, true
		}
	}
}

// number returns the number of hash, numbering it if new. Writer only.
func (t *termTable) number(hash uint32) uint32 {
	if id, ok := t.lookup(hash); ok {
		return id
	}
	p := t.slots.Load()
	if p == nil || 2*(t.n+1) > len(*p) {
		p = t.grow()
	}
	slots := *p
	mask := uint32(len(slots) - 1)
	i := mix(hash) & mask
	for atomic.LoadUint64(&slots[i]) != 0 {
		i = (i + 1) & mask
	}
	id := uint32(t.n)
	t.n++
	atomic.StoreUint64(&slots[i], uint64(hash)<<32|uint64(id+1))
	return id
}

// grow doubles the table (or makes the first) and swaps it in.
func (t *termTable) grow() *[]uint64 {
	size := termSlots
	old := t.slots.Load()
	if old != nil {
		size = 2 * len(*old)
	}
	slots := make([]uint64, size)
	mask := uint32(size - 1)
	if old != nil {
		for _, v := range *old {
			if v == 0 {
				continue
			}
			i := mix(uint32(v>>32)) & mask
			for slots[i] != 0 {
				i = (i + 1) & mask
			}
			slots[i] = v
		}
	}
	t.slots.Store(&slots)
	return &slots
}

// bytes is the table's size.
func (t *termTable) bytes() int {
	if p := t.slots.Load(); p != nil {
		return 8 * len(*p)
	}
	return 0
}

// mix spreads a hash's bits: keyed digest hashes are uniform already, but
// plain ones are cut from xxhash and a probe uses the low bits.
func mix(h uint32) uint32 {
	h ^= h >> 16
	h *= 0x45d9f3b
	h ^= h >> 16
	return h
}
