package engine

import (
	"errors"
	"runtime"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/caddy-memory/memory/index"
	"github.com/caddy-memory/memory/store"
)

const (
	// indexEvery is how often the indexer looks at what was stored when no
	// one waits for it. A pass makes one new Bleve segment in every shard it
	// touches, and each segment costs about the same to build, persist and
	// merge however small it is. So a pass runs when it would touch at most
	// segmentsPerTick shards per tick waited: every second under light
	// load; under sustained writes, when changes reach every shard, every
	// indexAtMost ticks. At 100k memories and ~300 proxied turns/s, indexing
	// every second took 37% of the CPU and cut proxy throughput to 0.7 of
	// bare reverse_proxy; every 4 s, 15% and 0.89 (bench -cpuprofile).
	indexEvery      = time.Second
	segmentsPerTick = 16
	indexAtMost     = 5    // ticks: the longest a proxied turn waits to be searchable
	indexBatch      = 5000 // changes read per index pass
	// The change log is trimmed once it holds this many applied entries, or
	// every trimEvery, whichever comes first.
	trimAt    = 50_000
	trimEvery = 10 * time.Minute
)

// indexer follows the store's change log into the index. Every write to the
// store, whoever makes it, reaches the index this way.
func (e *Engine) indexer() {
	defer close(e.indexerDone)
	tick := time.NewTicker(indexEvery)
	defer tick.Stop()
	lastTrim := time.Now()
	waited := 0 // ticks since the last pass
	for {
		select {
		case <-e.wakeIndexer:
		case <-tick.C:
			if waited++; !e.indexDue(waited) {
				continue
			}
		case <-e.drain:
			select {
			case <-e.processorDone:
			case <-e.abort:
				return
			}
			e.indexPending()
			return
		}
		e.indexPending()
		waited = 0
		if n := e.store.LastSeq() - e.oldestThrough(); n > trimAt || time.Since(lastTrim) > trimEvery {
			e.trim()
			lastTrim = time.Now()
		}
	}
}

// indexDue reports whether a pass is due after waited ticks.
func (e *Engine) indexDue(waited int) bool {
	e.mu.Lock()
	through := e.minThrough()
	e.mu.Unlock()
	last := e.store.LastSeq()
	return passDue(waited, last-min(through, last), e.index.K())
}

// passDue is the pacing rule of indexEvery: a pass is due when there is
// something to index and the shards it could touch are few enough for the
// ticks waited.
func passDue(waited int, pending uint64, shards int) bool {
	if pending == 0 {
		return false
	}
	touched := min(pending, uint64(shards))
	return waited >= indexAtMost || uint64(waited)*segmentsPerTick >= touched
}

// indexPending applies every change not yet in the index.
func (e *Engine) indexPending() {
	for !e.stopping() {
		if !e.indexPass() {
			return
		}
	}
}

// indexPass applies one batch of changes; false when there is nothing left
// (or an error to retry later). A rebuild cannot start while a pass holds
// applyMu, so no pass applies documents read before a rebuild's snapshot to
// the rebuilt shard.
func (e *Engine) indexPass() bool {
	e.applyMu.RLock()
	defer e.applyMu.RUnlock()
	e.mu.Lock()
	from := e.minThrough()
	epochs := append([]uint64(nil), e.epoch...)
	e.mu.Unlock()
	// Read how far the log goes before reading it: a change committed
	// after this read is not claimed as indexed below.
	upTo := e.store.LastSeq()
	changes, _, err := e.store.Changes(from, indexBatch)
	if err != nil {
		e.log().Error("reading the memory change log", zap.Error(err))
		return false
	}
	if len(changes) == 0 {
		e.advance(upTo, epochs)
		return false
	}
	last := changes[len(changes)-1].Seq
	docs, err := e.docs(changes)
	if err != nil {
		e.log().Error("loading changed memories for the index", zap.Error(err))
		return false
	}
	if err := e.index.Apply(docs, last); err != nil {
		if !errors.Is(err, index.ErrClosed) {
			e.log().Error("updating the memory index failed; will retry", zap.Error(err))
		}
		return false
	}
	e.advance(last, epochs)
	return true
}

// docs loads the current state of the memories that changes name, skipping
// shards that already hold them. A memory that is gone or inactive becomes a
// delete, so replaying a change is always safe.
func (e *Engine) docs(changes []store.Change) ([]index.Doc, error) {
	e.mu.Lock()
	through := append([]uint64(nil), e.through...)
	rebuilding := make(map[int]bool, len(e.rebuilding))
	for i := range e.rebuilding {
		rebuilding[i] = true
	}
	e.mu.Unlock()

	seen := make(map[uint64]bool, len(changes))
	var docs []index.Doc
	err := e.store.View(func(tx *store.Tx) error {
		now := time.Now()
		// Newest first, so each memory is indexed once, as it is now.
		for i := len(changes) - 1; i >= 0; i-- {
			c := changes[i]
			shard := e.index.ShardOf(c.Owner)
			if seen[c.ID] || rebuilding[shard] || c.Seq <= through[shard] {
				continue
			}
			seen[c.ID] = true
			m, err := tx.Get(c.Owner, c.ID)
			switch {
			case errors.Is(err, store.ErrNotFound):
				docs = append(docs, index.Doc{ID: c.ID, Owner: c.Owner, Delete: true})
			case err != nil:
				return err
			case !m.Active(now):
				docs = append(docs, index.Doc{ID: c.ID, Owner: c.Owner, Delete: true})
			default:
				docs = append(docs, docOf(m))
			}
		}
		return nil
	})
	return docs, err
}

func docOf(m *store.Memory) index.Doc {
	return index.Doc{ID: m.ID, Owner: m.Owner, Session: m.Session, Kind: m.Kind, Content: m.Content, Context: m.Context}
}

// advance records that every ready shard is consistent up to seq, except
// shards rebuilt since the pass began (epochs).
func (e *Engine) advance(seq uint64, epochs []uint64) {
	e.mu.Lock()
	defer e.mu.Unlock()
	moved := false
	for i := range e.through {
		if !e.rebuilding[i] && e.epoch[i] == epochs[i] && e.through[i] < seq {
			e.through[i] = seq
			moved = true
		}
	}
	if moved {
		close(e.indexedCh)
		e.indexedCh = make(chan struct{})
	}
}

// minThrough is the lowest position of the ready shards. Call with e.mu held.
func (e *Engine) minThrough() uint64 {
	first := true
	var m uint64
	for i, t := range e.through {
		if e.rebuilding[i] {
			continue
		}
		if first || t < m {
			m, first = t, false
		}
	}
	return m
}

// oldestThrough is the lowest position of all shards, rebuilding included:
// the change log must keep everything after it.
func (e *Engine) oldestThrough() uint64 {
	e.mu.Lock()
	defer e.mu.Unlock()
	if len(e.rebuilding) > 0 {
		return 0
	}
	return e.minThrough()
}

// trim drops applied entries from the change log. Each shard must first
// record the position durably, or a restart could not tell whether it
// missed a trimmed change.
func (e *Engine) trim() {
	upTo := e.oldestThrough()
	if e.embedding() != nil {
		upTo = min(upTo, e.store.Cursor(embedCursor)) // the embedder follows the log too
	}
	if upTo == 0 {
		return
	}
	for i := 0; i < e.index.K(); i++ {
		if applied, st := e.index.Applied(i); st == index.Ready && applied < upTo {
			if err := e.index.MarkApplied(i, upTo); err != nil {
				e.log().Warn("recording index progress before trimming the change log", zap.Error(err))
				return
			}
		}
	}
	n, err := e.store.TrimChanges(upTo)
	if err != nil {
		e.log().Warn("trimming the memory change log", zap.Error(err))
		return
	}
	if c := e.log().Check(zap.DebugLevel, "trimmed the memory change log"); c != nil {
		c.Write(zap.Int("entries", n), zap.Uint64("up_to", upTo))
	}
}

// rebuilder refills the given shards from the store, one worker per core.
func (e *Engine) rebuilder(shards []int) {
	defer close(e.rebuilderDone)
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
				if e.stopping() {
					return
				}
				if err := e.rebuildShard(i); err != nil {
					e.log().Error("rebuilding a memory index shard failed; its owners get no memories until the next start",
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
func (e *Engine) rebuildShard(i int) error {
	e.rebuildMu[i].Lock()
	defer e.rebuildMu[i].Unlock()
	start := time.Now()
	e.applyMu.Lock() // let a pass in flight finish; later ones skip shard i
	e.mu.Lock()
	e.rebuilding[i] = true
	e.epoch[i]++
	e.mu.Unlock()
	e.applyMu.Unlock()
	var seq uint64
	var docs int
	err := e.store.View(func(tx *store.Tx) error {
		seq = tx.LastSeq()
		now := time.Now()
		return e.index.Rebuild(i, seq, func(add func(index.Doc) error) error {
			return tx.Owners(func(owner string) error {
				if e.index.ShardOf(owner) != i {
					return nil
				}
				return tx.ForEach(owner, func(m *store.Memory) error {
					if !m.Active(now) {
						return nil
					}
					docs++
					return add(docOf(m))
				})
			})
		})
	})
	if err != nil {
		return err
	}
	e.mu.Lock()
	delete(e.rebuilding, i)
	e.epoch[i]++
	e.through[i] = seq
	close(e.indexedCh)
	e.indexedCh = make(chan struct{})
	e.mu.Unlock()
	e.wake(e.wakeIndexer) // replay what changed since the snapshot
	e.log().Info("rebuilt memory index shard", zap.Int("shard", i), zap.Int("memories", docs),
		zap.Duration("took", time.Since(start)))
	return nil
}
