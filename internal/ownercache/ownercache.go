// Package ownercache keeps what was read of recently used owners (their
// profiles, their vectors) within a byte budget, the least recently used
// let go first.
package ownercache

import (
	"container/list"
	"sync"
)

// Cache keeps what was read of recently used owners within a byte budget,
// letting the least recently used go first; the newest entry stays
// whatever its size. It is safe for concurrent use.
type Cache[V any] struct {
	mu    sync.Mutex
	max   int
	size  func(owner string, v V) int // about how much memory an entry takes
	order list.List                   // front: most recent; of *entry[V]
	items map[string]*list.Element
	bytes int
}

type entry[V any] struct {
	owner string
	v     V
	bytes int
}

// New makes a cache of at most max bytes, as size measures each entry.
func New[V any](max int, size func(owner string, v V) int) *Cache[V] {
	return &Cache[V]{max: max, size: size, items: map[string]*list.Element{}}
}

// Get returns owner's entry, or the zero V when none is held.
func (c *Cache[V]) Get(owner string) V {
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.items[owner]; ok {
		c.order.MoveToFront(el)
		return el.Value.(*entry[V]).v
	}
	var zero V
	return zero
}

// Put holds v as owner's entry, replacing any, and lets the least recently
// used go while the cache is over its budget.
func (c *Cache[V]) Put(owner string, v V) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.dropLocked(owner)
	e := &entry[V]{owner: owner, v: v, bytes: c.size(owner, v)}
	c.items[owner] = c.order.PushFront(e)
	c.bytes += e.bytes
	for c.bytes > c.max && c.order.Len() > 1 {
		c.dropLocked(c.order.Back().Value.(*entry[V]).owner)
	}
}

// Bytes is about how much memory the entries held take.
func (c *Cache[V]) Bytes() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.bytes
}

// Drop lets owner's entry go.
func (c *Cache[V]) Drop(owner string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.dropLocked(owner)
}

func (c *Cache[V]) dropLocked(owner string) {
	if el, ok := c.items[owner]; ok {
		c.order.Remove(el)
		c.bytes -= el.Value.(*entry[V]).bytes
		delete(c.items, owner)
	}
}
