package engine

import (
	"time"

	"go.uber.org/zap"

	"github.com/caddy-memory/memory/store"
)

// digestCursor records the digest version every record has been brought
// to (see redigester).
const digestCursor = "digest_version"

// redigestBatch is how many records one transaction of the re-digest pass
// rewrites; the pass pauses redigestPause between them, so learning and
// the API, which need the store's one writer, wait little.
const (
	redigestBatch = 500
	redigestPause = 10 * time.Millisecond
)

// redigester gives every record whose search digest is missing or was made
// by another analyzer, or unkeyed in an encrypted storage
// (index.Digester.Current), the current one. Searches read
// such records' text meanwhile, slower but finding the same memories. It
// runs once per digest version: an interrupted pass starts again at the
// next open, and skips what it already did.
func (ix *indexer) redigester() {
	defer close(ix.redigestDone)
	g := ix.index.Digester()
	if ix.store.LocalCursor(digestCursor) == uint64(g.Version()) {
		return
	}
	start := time.Now()
	var owners []string
	if err := ix.store.View(func(tx *store.Tx) error {
		return tx.Owners(func(o string) error { owners = append(owners, o); return nil })
	}); err != nil {
		ix.log().Error("listing owners to renew search digests", zap.Error(err))
		return
	}
	renewed := 0
	for _, owner := range owners {
		for {
			if ix.draining() {
				return
			}
			n, err := ix.redigestOwner(owner)
			if err != nil {
				ix.log().Error("renewing search digests; the pass resumes at the next start", zap.Error(err))
				return
			}
			renewed += n
			if n < redigestBatch {
				break
			}
			ix.pace(time.Now(), redigestPause)
		}
	}
	if err := ix.store.SetLocalCursor(digestCursor, uint64(g.Version())); err != nil {
		ix.log().Error("recording the search digest version", zap.Error(err))
		return
	}
	if renewed > 0 {
		ix.log().Info("renewed search digests", zap.Int("memories", renewed), zap.Duration("took", time.Since(start)))
	}
}

// redigestOwner renews up to redigestBatch stale digests of owner and says
// how many it renewed.
func (ix *indexer) redigestOwner(owner string) (int, error) {
	var stale []uint64
	err := ix.store.View(func(tx *store.Tx) error {
		return tx.PeekAll(owner, func(p *store.Peek) error {
			if len(stale) < redigestBatch && !ix.index.Digester().Current(p.Terms()) {
				stale = append(stale, p.ID)
			}
			return nil
		})
	})
	if err != nil || len(stale) == 0 {
		return 0, err
	}
	return len(stale), ix.store.Update(func(tx *store.Tx) error {
		for _, id := range stale {
			m, err := tx.Get(owner, id)
			if err != nil {
				continue // gone since it was read
			}
			if err := tx.SetDigest(owner, id, ix.index.Digester().Digest(m.Content, m.Context)); err != nil {
				return err
			}
		}
		return nil
	})
}
