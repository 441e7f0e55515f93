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
func (e *Engine) repair(i int, err error) {
	e.mu.Lock()
	if e.repairsOver || e.repairing[i] {
		e.mu.Unlock()
		return
	}
	e.repairing[i] = true
	e.repairWG.Add(1)
	e.mu.Unlock()
	e.log().Error("a memory index shard is damaged; rebuilding it from the store, its owners are searched from their records meanwhile",
		zap.Int("shard", i), zap.String("storage", e.cfg.Dir), zap.Error(err))
	go func() {
		defer e.repairWG.Done()
		err := e.rebuildShard(i)
		e.mu.Lock()
		delete(e.repairing, i)
		e.mu.Unlock()
		if err != nil && !errors.Is(err, errStopping) {
			e.log().Error("rebuilding a damaged memory index shard failed; its owners are searched from their records "+
				"until POST /memory/reindex or the next start rebuilds it",
				zap.Int("shard", i), zap.String("storage", e.cfg.Dir), zap.Error(err))
		}
	}()
}

// stopRepairs waits for the repairs running, and starts no more.
func (e *Engine) stopRepairs() {
	e.mu.Lock()
	e.repairsOver = true
	e.mu.Unlock()
	e.repairWG.Wait()
}
