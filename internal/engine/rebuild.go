package engine

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/caddy-memory/memory/index"
	"github.com/caddy-memory/memory/store"
)

// plan decides, for each shard, whether the change log can bring it up to
// date or it must be rebuilt from the store. A lost or damaged shard was
// recreated empty by index.Open and is handled like any shard that is behind.
func (ix *indexer) plan() ([]int, error) {
	last := ix.store.LastSeq()
	_, oldest, err := ix.store.Changes(last, 0)
	if err != nil {
		return nil, err
	}
	var rebuild []int
	for i := range ix.through {
		applied, _ := ix.index.Applied(i)
		// The log holds every change after applied, or there is none.
		covered := (oldest == 0 && applied == last) || (oldest != 0 && oldest <= applied+1)
		if applied > last || !covered { // a restored older store, or a trimmed log
			rebuild = append(rebuild, i)
			ix.rebuilding[i] = true
			ix.index.SetState(i, index.Rebuilding)
		} else {
			ix.through[i] = applied
		}
	}
	return rebuild, nil
}

// rebuilder refills the given shards from the store, one worker per core.
func (ix *indexer) rebuilder(shards []int) {
	defer close(ix.rebuilderDone)
	work := make(chan int, len(shards))
	for _, i := range shards {
		work <- i
	}
	close(work)
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), len(shards)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range work {
				if ix.stopping() {
					return
				}
				if err := ix.rebuildShard(i); err != nil {
					ix.log().Error("rebuilding a memory index shard failed; its owners get no memories until the next start",
						zap.Int("shard", i), zap.Error(err))
				}
			}
		}()
	}
	wg.Wait()
}

// rebuildShard replaces shard i with a fresh index of the store's active
// memories. Searches keep using the old shard until the swap (or see
// nothing, for a shard that was lost at start); changes made meanwhile are
// replayed into the new one.
func (ix *indexer) rebuildShard(i int) error {
	ix.rebuildMu[i].Lock()
	defer ix.rebuildMu[i].Unlock()
	start := time.Now()
	ix.applyMu.Lock() // let a pass in flight finish; later ones skip shard i
	ix.mu.Lock()
	ix.rebuilding[i] = true
	ix.epoch[i]++
	ix.mu.Unlock()
	ix.applyMu.Unlock()
	var seq uint64
	var docs int
	err := ix.store.View(func(tx *store.Tx) error {
		seq = tx.LastSeq()
		now := time.Now()
		return ix.index.Rebuild(i, seq, func(add func(index.Doc) error) error {
			return tx.Owners(func(owner string) error {
				if ix.index.ShardOf(owner) != i {
					return nil
				}
				if ix.stopping() {
					return errStopping // Close's deadline passed; the next start rebuilds it
				}
				if big, err := ix.outgrown(tx, owner); err != nil || !big {
					return err // searched from its records (see enrolment)
				}
				err := tx.ForEach(owner, func(m *store.Memory) error {
					if !m.Active(now) {
						return nil
					}
					docs++
					return add(docOf(m))
				})
				if err != nil {
					return err
				}
				return add(index.Doc{Owner: owner, Enrol: true})
			})
		})
	})
	if err != nil {
		return err
	}
	ix.mu.Lock()
	delete(ix.rebuilding, i)
	ix.epoch[i]++
	ix.through[i] = seq
	close(ix.indexedCh)
	ix.indexedCh = make(chan struct{})
	ix.mu.Unlock()
	ix.wake(ix.wakeIndexer) // replay what changed since the snapshot
	ix.log().Info("rebuilt memory index shard", zap.Int("shard", i), zap.Int("memories", docs),
		zap.Duration("took", time.Since(start)))
	return nil
}

// Reindex rebuilds every index shard from the store, one at a time, while
// the old shards keep serving searches.
func (e *Engine) Reindex(ctx context.Context) error { return e.indexer.reindex(ctx) }

func (ix *indexer) reindex(ctx context.Context) error {
	for i := 0; i < ix.index.K(); i++ {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := ix.rebuildShard(i); err != nil {
			return fmt.Errorf("rebuilding index shard %d: %w", i, err)
		}
	}
	return nil
}
