package api

import (
	"net/http"
	"sync"
)

// Imports bounds the imports that run at once on a storage: one per owner
// and MaxImports in all. Each costs a batch of memory and a writer's share
// of the store and the index for as long as its body takes to arrive, so
// strangers with keys of their own could otherwise run the server short of
// both. One past the bound is refused (429, Retry-After) rather than
// queued: a queued upload would hold its connection and body meanwhile.
// The zero value is ready.
type Imports struct {
	mu      sync.Mutex
	running map[string]bool // by owner ("": an admin import keeping each line's owner)
}

// MaxImports is how many imports of a storage run at once.
const MaxImports = 2

// retryImportAfter is the Retry-After of a refused import, in seconds:
// about what a large import takes.
const retryImportAfter = "10"

// enter starts an import for owner, or says why it cannot start now.
func (g *Imports) enter(owner string) (release func(), busy *apiError) {
	g.mu.Lock()
	defer g.mu.Unlock()
	switch {
	case g.running[owner] && owner == "":
		return nil, errorf(http.StatusTooManyRequests, "import_running",
			"an import of every owner's lines is running: imports run one at a time per owner; send this one again once it has answered")
	case g.running[owner]:
		return nil, errorf(http.StatusTooManyRequests, "import_running",
			"an import for this owner is running: an owner's imports run one at a time; send this one again once it has answered")
	case len(g.running) >= MaxImports:
		return nil, errorf(http.StatusTooManyRequests, "imports_busy",
			"%d imports are running on this storage, the most it runs at once; try again in a few seconds (Retry-After)", MaxImports)
	}
	if g.running == nil {
		g.running = map[string]bool{}
	}
	g.running[owner] = true
	return func() {
		g.mu.Lock()
		defer g.mu.Unlock()
		delete(g.running, owner)
	}, nil
}
