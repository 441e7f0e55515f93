package engine

import (
	"errors"
	"maps"
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

// indexer keeps the index in step with the store: it follows the change
// log into the index, rebuilds shards that are behind or damaged
// (rebuild.go, repair.go), renews search digests (redigest.go), and
// decides which owners the index holds (enrolment). It knows how far each
// shard is consistent, so a write can wait until it is searchable.
type indexer struct {
	*core
	embedder  *embedder  // the embedder follows the change log too (see trim)
	postings  *postings  // so do the search postings
	distiller *distiller // at Close, what it learns is indexed before the end
	// learned is closed once, at Close, the turns are all learned.
	learned <-chan struct{}

	indexerDone, rebuilderDone, redigestDone chan struct{}

	// through[i] is the change sequence up to which shard i is known to be
	// consistent (in memory; the shard's own record may lag for shards no
	// recent change touched).
	mu         sync.Mutex
	through    []uint64
	rebuilding map[int]bool
	// epoch[i] changes whenever shard i is rebuilt, so an index pass that
	// began before a rebuild does not move the rebuilt shard's position.
	epoch     []uint64
	indexedCh chan struct{} // closed and replaced whenever progress is made
	// rebuildMu[i] runs one rebuild of shard i at a time.
	rebuildMu []sync.Mutex
	// applyMu is held for reading by each index pass and for writing while
	// a rebuild marks its shard (see indexPass).
	applyMu sync.RWMutex
	// repairing: damaged shards being rebuilt (repair.go); repairsOver once
	// Close waits for them. Both under mu.
	repairing   map[int]bool
	repairsOver bool
	repairWG    sync.WaitGroup
}

func newIndexer(c *core, emb *embedder, lm *distiller, learned <-chan struct{}) *indexer {
	k := c.index.K()
	return &indexer{
		core:          c,
		embedder:      emb,
		distiller:     lm,
		learned:       learned,
		indexerDone:   make(chan struct{}),
		rebuilderDone: make(chan struct{}),
		redigestDone:  make(chan struct{}),
		through:       make([]uint64, k),
		epoch:         make([]uint64, k),
		rebuildMu:     make([]sync.Mutex, k),
		rebuilding:    make(map[int]bool),
		repairing:     make(map[int]bool),
		indexedCh:     make(chan struct{}),
	}
}

// run follows the store's change log into the index. Every write to the
// store, whoever makes it, reaches the index this way.
func (ix *indexer) run() {
	defer close(ix.indexerDone)
	tick := time.NewTicker(indexEvery)
	defer tick.Stop()
	lastTrim := time.Now()
	var trimmed uint64      // the index's position at the last trim
	waited := map[int]int{} // pending shard -> ticks it has waited
	for {
		select {
		case <-ix.wakeIndexer:
			ix.indexPending()
			clear(waited)
		case <-tick.C:
			ix.indexPaced(waited)
		case <-ix.drain:
			learned := []<-chan struct{}{ix.learned}
			if d := ix.distiller.running(); d != nil {
				learned = append(learned, d.done)
			}
			for _, done := range learned {
				select {
				case <-done:
				case <-ix.abort:
					return
				}
			}
			ix.indexPending()
			ix.recordProgress()
			return
		}
		// Applied entries, not pending ones: counting those, a caught-up
		// index would keep the log for trimEvery, and a bulk load's entries
		// would all still be in memory.db when it ended.
		if through := ix.oldestThrough(); through > trimmed+ix.cfg.trimAfter || time.Since(lastTrim) > trimEvery {
			ix.trim()
			trimmed, lastTrim = through, time.Now()
		}
	}
}

// indexPaced is one tick's pass: it indexes the shards dueShards picks
// from those with pending changes, and counts a tick for the others. A
// backlog (a full batch of changes) is caught up at once.
func (ix *indexer) indexPaced(waited map[int]int) {
	ix.mu.Lock()
	through := ix.minThrough()
	ix.mu.Unlock()
	if ix.store.LastSeq() <= through {
		clear(waited)
		return
	}
	var due []int
	backlog := false
	_, err := ix.indexPass(func(pending map[int]bool, full bool) map[int]bool {
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
		ix.indexPending()
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
func (ix *indexer) indexPending() {
	for !ix.stopping() {
		if more, _ := ix.indexPass(nil); !more {
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
func (ix *indexer) indexPass(choose func(pending map[int]bool, full bool) map[int]bool) (more bool, err error) {
	ix.applyMu.RLock()
	defer ix.applyMu.RUnlock()
	ix.mu.Lock()
	from := ix.minThrough()
	epochs := append([]uint64(nil), ix.epoch...)
	through := append([]uint64(nil), ix.through...)
	rebuilding := maps.Clone(ix.rebuilding)
	ix.mu.Unlock()
	// Read how far the log goes before reading it: a change committed
	// after this read is not claimed as indexed below.
	upTo := ix.store.LastSeq()
	changes, _, err := ix.store.Changes(from, indexBatch)
	if err != nil {
		ix.log().Error("reading the memory change log", zap.Error(err))
		return false, err
	}
	if len(changes) == 0 {
		ix.advance(upTo, epochs, nil)
		return false, nil
	}
	last := changes[len(changes)-1].Seq
	// Shards a rebuild will fill, or that already hold a change, skip it.
	pending := map[int]bool{}
	for _, c := range changes {
		if i := ix.index.ShardOf(c.Owner); !rebuilding[i] && c.Seq > through[i] {
			pending[i] = true
		}
	}
	only := pending
	if choose != nil {
		only = choose(pending, len(changes) == indexBatch)
	}
	docs, err := ix.docs(changes, only, through)
	if err != nil {
		ix.log().Error("loading changed memories for the index", zap.Error(err))
		return false, err
	}
	if err := ix.index.Apply(docs, last); err != nil {
		if !errors.Is(err, index.ErrClosed) {
			ix.log().Error("updating the memory index failed; will retry", zap.Error(err))
		}
		return false, err
	}
	deferred := maps.Clone(pending)
	maps.DeleteFunc(deferred, func(i int, _ bool) bool { return only[i] })
	ix.advance(last, epochs, deferred)
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
func (ix *indexer) docs(changes []store.Change, only map[int]bool, through []uint64) ([]index.Doc, error) {
	seen := make(map[uint64]bool, len(changes))
	held := make(map[string]bool) // owner -> index it (after enrolling it in this pass)
	var docs []index.Doc
	err := ix.store.View(func(tx *store.Tx) error {
		now := time.Now()
		// Newest first, so each memory is indexed once, as it is now.
		for i := len(changes) - 1; i >= 0; i-- {
			c := changes[i]
			shard := ix.index.ShardOf(c.Owner)
			if seen[c.ID] || !only[shard] || c.Seq <= through[shard] {
				continue
			}
			h, known := held[c.Owner]
			if !known {
				var enrol bool
				var err error
				if h, enrol, err = ix.enrolment(tx, c.Owner); err != nil {
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

// enrolment says whether the index already holds owner, and, if not,
// whether it should from now on: an owner with more memories than a search
// reads from its records. Smaller owners are never searched in the index,
// so their memories stay out of it: in a store of many small owners,
// indexing them would be most of the CPU of a bulk load (segments, merges,
// analysis) and nearly all of the index's size.
func (ix *indexer) enrolment(tx *store.Tx, owner string) (held, enrol bool, err error) {
	if held, err = ix.index.Holds(owner); err != nil || held {
		return held, false, err
	}
	enrol, err = ix.outgrown(tx, owner)
	return false, enrol, err
}

// enrolDocs appends all of owner's active memories and its enrolment.
func enrolDocs(tx *store.Tx, owner string, now time.Time, docs []index.Doc) ([]index.Doc, error) {
	err := tx.ForEach(owner, func(m *store.Memory) error {
		if m.Active(now) {
			docs = append(docs, docOf(m))
		}
		return nil
	})
	return append(docs, index.Doc{Owner: owner, Enrol: true}), err
}
