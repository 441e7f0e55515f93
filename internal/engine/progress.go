package engine

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"time"

	"go.uber.org/zap"

	"github.com/caddy-memory/memory/index"
)

// How far each shard is consistent with the store: what a write waits for
// to be searchable, and what the change log must keep.

// advance records that every ready shard is consistent up to seq, except
// shards rebuilt since the pass began (epochs) and deferred ones.
func (ix *indexer) advance(seq uint64, epochs []uint64, deferred map[int]bool) {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	moved := false
	for i := range ix.through {
		if !ix.rebuilding[i] && !deferred[i] && ix.epoch[i] == epochs[i] && ix.through[i] < seq {
			ix.through[i] = seq
			moved = true
		}
	}
	if moved {
		close(ix.indexedCh)
		ix.indexedCh = make(chan struct{})
	}
}

// minThrough is the lowest position of the ready shards. Call with ix.mu held.
func (ix *indexer) minThrough() uint64 {
	first := true
	var m uint64
	for i, t := range ix.through {
		if ix.rebuilding[i] {
			continue
		}
		if first || t < m {
			m, first = t, false
		}
	}
	return m
}

// lag is how many changes up to last are not yet searchable, and the
// shards being rebuilt.
func (ix *indexer) lag(last uint64) (lag uint64, rebuilding []int) {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	if m := ix.minThrough(); last > m {
		lag = last - m
	}
	for i := range ix.rebuilding {
		rebuilding = append(rebuilding, i)
	}
	return lag, rebuilding
}

// oldestThrough is the lowest position of all shards, rebuilding included:
// the change log must keep everything after it.
func (ix *indexer) oldestThrough() uint64 {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	if len(ix.rebuilding) > 0 {
		return 0
	}
	return ix.minThrough()
}

// trim drops applied entries from the change log. Each shard must first
// record the position durably, or a restart could not tell whether it
// missed a trimmed change.
func (ix *indexer) trim() {
	upTo := ix.oldestThrough()
	if ix.embedder.running() != nil {
		upTo = min(upTo, ix.store.LocalCursor(embedCursor)) // the embedder follows the log too
	}
	upTo = min(upTo, ix.postings.through())
	if upTo == 0 {
		return
	}
	if err := ix.recordProgress(); err != nil {
		ix.log().Warn("recording index progress before trimming the change log", zap.Error(err))
		return
	}
	n, err := ix.store.TrimChanges(upTo)
	if err != nil {
		ix.log().Warn("trimming the memory change log", zap.Error(err))
		return
	}
	if c := ix.log().Check(zap.DebugLevel, "trimmed the memory change log"); c != nil {
		c.Write(zap.Int("entries", n), zap.Uint64("up_to", upTo))
	}
}

// recordProgress writes into each ready shard how far it is consistent. A
// pass writes only to the shards it has documents for, and most changes
// (of owners the index does not hold) give none: a restart would otherwise
// replay them all, which grows with the store.
func (ix *indexer) recordProgress() error {
	ix.mu.Lock()
	through := slices.Clone(ix.through)
	rebuilding := maps.Clone(ix.rebuilding)
	ix.mu.Unlock()
	for i, seq := range through {
		if applied, st := ix.index.Applied(i); !rebuilding[i] && st == index.Ready && applied < seq {
			if err := ix.index.MarkApplied(i, seq); err != nil {
				return err
			}
		}
	}
	return nil
}

// WaitIndexed waits until every change up to seq is searchable.
func (e *Engine) WaitIndexed(ctx context.Context, seq uint64) error {
	return e.indexer.waitIndexed(ctx, seq)
}

func (ix *indexer) waitIndexed(ctx context.Context, seq uint64) error {
	if err := ix.waitBleve(ctx, seq); err != nil {
		return err
	}
	return ix.postings.wait(ctx, seq, false)
}

// waitBleve waits until the Bleve index has every change up to seq.
func (ix *indexer) waitBleve(ctx context.Context, seq uint64) error {
	for {
		ix.mu.Lock()
		ok := len(ix.rebuilding) == 0 && ix.minThrough() >= seq
		ch := ix.indexedCh
		ix.mu.Unlock()
		if ok {
			return nil
		}
		ix.wake(ix.wakeIndexer)
		select {
		case <-ctx.Done():
			return fmt.Errorf("memory index did not catch up: %w", ctx.Err())
		case <-ch:
		case <-time.After(50 * time.Millisecond):
		}
	}
}
