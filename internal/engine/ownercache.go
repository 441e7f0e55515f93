package engine

import (
	"container/list"
	"sync"
)

// ownerCache keeps what was read of recently used owners (their profiles,
// their vectors) within a byte budget, letting the least recently used go
// first; the newest entry stays whatever its size.
type ownerCache[V any] struct {
	mu    sync.Mutex
	max   int
	size  func(owner string, v V) int // about how much memory an entry takes
	order list.List                   // front: most recent; of *ownerEntry[V]
	items map[string]*list.Element
	bytes int
}

type ownerEntry[V any] struct {
	owner string
	v     V
	bytes int
}

func newOwnerCache[V any](max int, size func(owner string, v V) int) *ownerCache[V] {
	return &ownerCache[V]{max: max, size: size, items: map[string]*list.Element{}}
}

// get returns owner's entry, or the zero V when none is held.
func (c *ownerCache[V]) get(owner string) V {
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.items[owner]; ok {
		c.order.MoveToFront(el)
		return el.Value.(*ownerEntry[V]).v
	}
	var zero V
	return zero
}

// put holds v as owner's entry, replacing any, and lets the least recently
// used go while the cache is over its budget.
func (c *ownerCache[V]) put(owner string, v V) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.dropLocked(owner)
	e := &ownerEntry[V]{owner: owner, v: v, bytes: c.size(owner, v)}
	c.items[owner] = c.order.PushFront(e)
	c.bytes += e.bytes
	for c.bytes > c.max && c.order.Len() > 1 {
		c.dropLocked(c.order.Back().Value.(*ownerEntry[V]).owner)
	}
}

// drop lets owner's entry go.
func (c *ownerCache[V]) drop(owner string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.dropLocked(owner)
}

func (c *ownerCache[V]) dropLocked(owner string) {
	if el, ok := c.items[owner]; ok {
		c.order.Remove(el)
		c.bytes -= el.Value.(*ownerEntry[V]).bytes
		delete(c.items, owner)
	}
}
