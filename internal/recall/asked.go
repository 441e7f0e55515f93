package recall

import (
	"strings"
	"sync"

	"github.com/cespare/xxhash/v2"

	"github.com/caddy-memory/memory/extract"
	"github.com/caddy-memory/memory/store"
)

// onlyAsked reports whether a transcript turn is one in which the user only
// asked something: it says nothing about them. Reading a turn's sentences
// costs tens of microseconds and the same turns come back request after
// request, so the answers are remembered by memory version.
func (c *askedCache) onlyAsked(m *store.Memory) bool {
	if m.Kind != "turn" {
		return false
	}
	k := askedKey{m.ID, xxhash.Sum64String(m.Content)}
	c.mu.Lock()
	asked, ok := c.m[k]
	c.mu.Unlock()
	if ok {
		return asked
	}
	user := userSaid(m.Content)
	asked = user != "" && extract.OnlyAsksIn(user, m.Meta["framed"] != "")
	c.mu.Lock()
	if c.m == nil || len(c.m) >= maxAsked {
		c.m = map[askedKey]bool{} // forget all at once: cheaper than ageing
	}
	c.m[k] = asked
	c.mu.Unlock()
	return asked
}

// askedCache remembers which turns only asked something.
type askedCache struct {
	mu sync.Mutex
	m  map[askedKey]bool
}

// askedKey is a turn as it reads: its id and its text's hash (a recall's
// memories made from the postings have no version).
type askedKey struct {
	id, text uint64
}

// maxAsked bounds the turns askedCache remembers (about 40 bytes each).
const maxAsked = 1 << 17

// userSaid is what the user said in a transcript turn ("User: ...
// \nAssistant: ..."), "" for another speaker's.
func userSaid(content string) string {
	s, ok := strings.CutPrefix(content, "User: ")
	if !ok {
		return ""
	}
	if i := strings.Index(s, "\nAssistant: "); i >= 0 {
		s = s[:i]
	}
	return s
}
