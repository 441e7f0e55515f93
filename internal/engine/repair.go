package engine

import (
	"errors"

	"go.uber.org/zap"
)

// errStopping ends a rebuild when Close's deadline passes; the shard is
// rebuilt at the next start.
var errStopping = errors.New("the memory engine is stopping")

// An index shard whose files fail as they are read or written is damaged
// (index.ErrDamaged): the store still holds every memory, so it is rebuilt
// from the store in the background, as a missing shard is at start, and
// its owners are searched from their records meanwhile (searchRecords: a
// damaged shard holds no owner). A search that finds the damage is answered
// from the records too (Search). No one has to run a reindex.

// repair rebuilds shard i, found damaged by err, in the background: once
// at a time, and not after Close began.
func (ix *indexer) repair(i int, err error) {
	ix.mu.Lock()
	if ix.repairsOver || ix.repairing[i] {
		ix.mu.Unlock()
		return
	}
	ix.repairing[i] = true
	ix.repairWG.Add(1)
	ix.mu.Unlock()
	ix.log().Error("a memory index shard is damaged; rebuilding it from the store, its owners are searched from their records meanwhile",
		zap.Int("shard", i), zap.String("storage", ix.cfg.Dir), zap.Error(err))
	go func() {
		defer ix.repairWG.Done()
		err := ix.rebuildShard(i)
		ix.mu.Lock()
		delete(ix.repairing, i)
		ix.mu.Unlock()
		if err != nil && !errors.Is(err, errStopping) {
			ix.log().Error("rebuilding a damaged memory index shard failed; its owners are searched from their records "+
				"until POST /memory/reindex or the next start rebuilds it",
				zap.Int("shard", i), zap.String("storage", ix.cfg.Dir), zap.Error(err))
		}
	}()
}

// stopRepairs waits for the repairs running, and starts no more.
func (ix *indexer) stopRepairs() {
	ix.mu.Lock()
	ix.repairsOver = true
	ix.mu.Unlock()
	ix.repairWG.Wait()
}
