package engine

import (
	"github.com/caddy-memory/memory/index"
	"github.com/caddy-memory/memory/store"
)

// withDigest is p with the digest of a plaintext storage, for tests that
// write to a store directly.
func withDigest(p store.Put) store.Put {
	p.Digest = index.Digest(p.Content, p.Context)
	return p
}
