package recall

import (
	"strings"
	"sync"

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
	k := askedKey{m.ID, m.Version}
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

type askedKey struct {
	id      uint64
	version int
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
