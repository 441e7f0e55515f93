package engine

import (
	"errors"
	"maps"
	"runtime"
	"slices"
	"sort"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/caddy-memory/memory/index"
	"github.com/caddy-memory/memory/store"
)

const (
	// indexEvery is how often the indexer looks at what was stored when no
	// one waits for it. Indexing a shard makes a new Bleve segment in it, and
	// each segment costs about the same to build, persist and merge however
	// small it is; a tick that touches every shard at once takes both cores
	// of a small machine away from requests. So a tick indexes at most
	// segmentsPerTick shards, those that have waited longest, and any shard
	// that has waited indexAtMost ticks. Under light load every pending shard
	// fits and a turn is searchable within a second; under sustained writes
	// each shard is indexed every few seconds, in a steady rotation instead
	// of a burst, and fewer, larger segments cost less to persist and merge
	// than many small ones. Owners with up to DefaultLocalSearchMax memories
	// are searched from their records and see a turn at once; only larger
	// ones wait for the index. (docs/performance.md has the measurements.)
	indexEvery      = time.Second
	segmentsPerTick = 8
	indexAtMost     = 10 // ticks: the longest a proxied turn waits to be searchable
	// indexBatch is the most changes one pass reads. During a bulk load a
	// pass spreads them over every shard, and each shard's share becomes a
	// segment that merges then rewrite: the larger the share, the fewer
	// rewrites, up to a point where larger passes were no faster.
	indexBatch = 20000
	trimEvery  = 10 * time.Minute
)

// defaultTrimAfter is how many applied entries of the change log are
// trimmed at once (Config.trimAfter), unless trimEvery passes first.
const defaultTrimAfter = 50_000

// indexer follows the store's change log into the index. Every write to the
// store, whoever makes it, reaches the index this way.
func (e *Engine) indexer() {
	defer close(e.indexerDone)
	tick := time.NewTicker(indexEvery)
	defer tick.Stop()
	lastTrim := time.Now()
	var trimmed uint64      // the index's position at the last trim
	waited := map[int]int{} // pending shard -> ticks it has waited
	for {
		select {
		case <-e.wakeIndexer:
			e.indexPending()
			clear(waited)
		case <-tick.C:
			e.indexPaced(waited)
		case <-e.drain:
			learned := []chan struct{}{e.processorDone}
			if d := e.distiller.running(); d != nil {
				learned = append(learned, d.done)
			}
			for _, done := range learned {
				select {
				case <-done:
				case <-e.abort:
					return
				}
			}
			e.indexPending()
			e.recordProgress()
			return
		}
		// Applied entries, not pending ones: counting those, a caught-up
		// index would keep the log for trimEvery, and a bulk load's entries
		// would all still be in memory.db when it ended.
		if through := e.oldestThrough(); through > trimmed+e.cfg.trimAfter || time.Since(lastTrim) > trimEvery {
			e.trim()
			trimmed, lastTrim = through, time.Now()
		}
	}
}

// indexPaced is one tick's pass: it indexes the shards dueShards picks
// from those with pending changes, and counts a tick for the others. A
// backlog (a full batch of changes) is caught up at once.
func (e *Engine) indexPaced(waited map[int]int) {
	e.mu.Lock()
	through := e.minThrough()
	e.mu.Unlock()
	if e.store.LastSeq() <= through {
		clear(waited)
		return
	}
	var due []int
	backlog := false
	_, err := e.indexPass(func(pending map[int]bool, full bool) map[int]bool {
		if full {
			backlog = true
			return pending
		}
		for i := range waited {
			if !pending[i] {
				delete(waited, i)
			}
		}
		for i := range pending {
			waited[i]++
		}
		due = dueShards(waited)
		only := make(map[int]bool, len(due))
		for _, i := range due {
			only[i] = true
		}
		return only
	})
	if err != nil {
		return
	}
	if backlog {
		e.indexPending()
		clear(waited)
		return
	}
	for _, i := range due {
		delete(waited, i)
	}
}

// dueShards picks the shards a paced pass indexes, given the ticks each
// pending shard has waited: all that waited indexAtMost ticks, and the
// longest waiting of the others up to segmentsPerTick in all.
func dueShards(waited map[int]int) []int {
	shards := make([]int, 0, len(waited))
	for i := range waited {
		shards = append(shards, i)
	}
	sort.Slice(shards, func(a, b int) bool {
		if waited[shards[a]] != waited[shards[b]] {
			return waited[shards[a]] > waited[shards[b]]
		}
		return shards[a] < shards[b]
	})
	n := min(len(shards), segmentsPerTick)
	for n < len(shards) && waited[shards[n]] >= indexAtMost {
		n++
	}
	return shards[:n]
}

// indexPending applies every change not yet in the index.
func (e *Engine) indexPending() {
	for !e.stopping() {
		if more, _ := e.indexPass(nil); !more {
			return
		}
	}
}

// indexPass applies one batch of changes. choose, when given, is told
// which shards have changes in the batch to apply, and whether the batch is
// full, and picks those to index now; the others are deferred to a later
// pass. more is false when there is nothing left (or an error to retry
// later). A rebuild cannot start while a pass holds applyMu, so no pass
// applies documents read before a rebuild's snapshot to the rebuilt shard.
func (e *Engine) indexPass(choose func(pending map[int]bool, full bool) map[int]bool) (more bool, err error) {
	e.applyMu.RLock()
	defer e.applyMu.RUnlock()
	e.mu.Lock()
	from := e.minThrough()
	epochs := append([]uint64(nil), e.epoch...)
	through := append([]uint64(nil), e.through...)
	rebuilding := maps.Clone(e.rebuilding)
	e.mu.Unlock()
	// Read how far the log goes before reading it: a change committed
	// after this read is not claimed as indexed below.
	upTo := e.store.LastSeq()
	changes, _, err := e.store.Changes(from, indexBatch)
	if err != nil {
		e.log().Error("reading the memory change log", zap.Error(err))
		return false, err
	}
	if len(changes) == 0 {
		e.advance(upTo, epochs, nil)
		return false, nil
	}
	last := changes[len(changes)-1].Seq
	// Shards a rebuild will fill, or that already hold a change, skip it.
	pending := map[int]bool{}
	for _, c := range changes {
		if i := e.index.ShardOf(c.Owner); !rebuilding[i] && c.Seq > through[i] {
			pending[i] = true
		}
	}
	only := pending
	if choose != nil {
		only = choose(pending, len(changes) == indexBatch)
	}
	docs, err := e.docs(changes, only, through)
	if err != nil {
		e.log().Error("loading changed memories for the index", zap.Error(err))
		return false, err
	}
	if err := e.index.Apply(docs, last); err != nil {
		if !errors.Is(err, index.ErrClosed) {
			e.log().Error("updating the memory index failed; will retry", zap.Error(err))
		}
		return false, err
	}
	deferred := maps.Clone(pending)
	maps.DeleteFunc(deferred, func(i int, _ bool) bool { return only[i] })
	e.advance(last, epochs, deferred)
	return true, nil
}

// docs loads the current state of the memories that changes name, for the
// shards in only, skipping changes a shard already holds (up to through). A
// memory that is gone or inactive becomes a delete, so replaying a change
// is always safe.
//
// Only owners the index holds are indexed (see enrolment); the changes of
// others are passed over, and an owner that has outgrown searching its
// records is enrolled with all of its memories.
func (e *Engine) docs(changes []store.Change, only map[int]bool, through []uint64) ([]index.Doc, error) {
	seen := make(map[uint64]bool, len(changes))
	held := make(map[string]bool) // owner -> index it (after enrolling it in this pass)
	var docs []index.Doc
	err := e.store.View(func(tx *store.Tx) error {
		now := time.Now()
		// Newest first, so each memory is indexed once, as it is now.
		for i := len(changes) - 1; i >= 0; i-- {
			c := changes[i]
			shard := e.index.ShardOf(c.Owner)
			if seen[c.ID] || !only[shard] || c.Seq <= through[shard] {
				continue
			}
			h, known := held[c.Owner]
			if !known {
				var enrol bool
				var err error
				if h, enrol, err = e.enrolment(tx, c.Owner); err != nil {
					return err
				}
				if enrol {
					if docs, err = enrolDocs(tx, c.Owner, now, docs); err != nil {
						return err
					}
					// All its memories are in: its other changes add nothing.
				}
				held[c.Owner] = h
			}
			if !h {
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
// shards rebuilt since the pass began (epochs) and deferred ones.
func (e *Engine) advance(seq uint64, epochs []uint64, deferred map[int]bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	moved := false
	for i := range e.through {
		if !e.rebuilding[i] && !deferred[i] && e.epoch[i] == epochs[i] && e.through[i] < seq {
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
	if e.embedder.running() != nil {
		upTo = min(upTo, e.store.LocalCursor(embedCursor)) // the embedder follows the log too
	}
	if upTo == 0 {
		return
	}
	if err := e.recordProgress(); err != nil {
		e.log().Warn("recording index progress before trimming the change log", zap.Error(err))
		return
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

// recordProgress writes into each ready shard how far it is consistent. A
// pass writes only to the shards it has documents for, and most changes
// (of owners the index does not hold) give none: a restart would otherwise
// replay them all, which grows with the store.
func (e *Engine) recordProgress() error {
	e.mu.Lock()
	through := slices.Clone(e.through)
	rebuilding := maps.Clone(e.rebuilding)
	e.mu.Unlock()
	for i, seq := range through {
		if applied, st := e.index.Applied(i); !rebuilding[i] && st == index.Ready && applied < seq {
			if err := e.index.MarkApplied(i, seq); err != nil {
				return err
			}
		}
	}
	return nil
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
				if e.stopping() {
					return errStopping // Close's deadline passed; the next start rebuilds it
				}
				if big, err := e.outgrown(tx, owner); err != nil || !big {
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
