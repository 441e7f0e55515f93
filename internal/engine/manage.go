package engine

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"time"

	"go.uber.org/zap"

	"github.com/caddy-memory/memory/index"
	"github.com/caddy-memory/memory/internal/stats"
	"github.com/caddy-memory/memory/store"
)

// Forgotten reports what Forget removed.
type Forgotten struct {
	store.Forgotten
	IndexShard int   `json:"index_shard"`
	FileBefore int64 `json:"file_bytes_before"`
	FileAfter  int64 `json:"file_bytes_after"`
}

// Forget removes an owner completely: memories, transcripts, history,
// pending turns, and their index entries. When it returns, no byte of the
// owner's content is left in the store file (it is compacted) or in the
// index (the owner's shard is rebuilt without them). Turns of the owner
// already handed over are finished first, so none lands after the forget.
// Compaction pauses every other use of the store (about 1 s per 100 MB).
func (e *Engine) Forget(ctx context.Context, owner string) (Forgotten, error) {
	return e.manager.forget(ctx, owner)
}

func (mg *manager) forget(ctx context.Context, owner string) (Forgotten, error) {
	var f Forgotten
	if err := mg.learner.sync(ctx); err != nil {
		return f, err
	}
	seq, err := mg.write(func(tx *store.Tx) error {
		var err error
		f.Forgotten, err = tx.ForgetOwner(owner)
		return err
	})
	if err != nil {
		return f, err
	}
	mg.postings.forget(owner)
	f.IndexShard = mg.index.ShardOf(owner)
	f.FileBefore, f.FileAfter, err = mg.scrub(ctx, seq, owner)
	return f, err
}

// scrub removes what deleting owners left behind, once the index has
// applied the change log up to seq: their bytes in the store file's free
// pages (compacted away) and in their shards' segments (rebuilt). It
// returns the file's size before and after.
func (mg *manager) scrub(ctx context.Context, seq uint64, owners ...string) (before, after int64, err error) {
	if err := mg.indexer.waitIndexed(ctx, seq); err != nil {
		return 0, 0, err
	}
	if before, after, err = mg.store.Compact(); err != nil {
		return before, after, err
	}
	shards := map[int]bool{}
	for _, o := range owners {
		shards[mg.index.ShardOf(o)] = true
	}
	for i := range shards {
		if err := mg.indexer.rebuildShard(i); err != nil {
			return before, after, err
		}
	}
	return before, after, nil
}

// purgeForgotten does on this instance, in the background, what Forget
// does after deleting: owners another instance sharing the database
// forgot are gone from this replica, but their bytes remain in its free
// pages and in the index's segments until the file is compacted and their
// shards rebuilt.
func (mg *manager) purgeForgotten(owners []string) {
	mg.closeMu.RLock()
	defer mg.closeMu.RUnlock()
	if mg.closing {
		mg.log().Warn("owners another instance forgot were replayed while this one closes; "+
			"their bytes stay in its free pages until POST /memory/compact on its admin endpoint", zap.Int("owners", len(owners)))
		return
	}
	for _, o := range owners {
		mg.postings.forget(o)
	}
	mg.purgeWG.Add(1)
	go func() {
		defer mg.purgeWG.Done()
		_, _, err := mg.scrub(mg.stopCtx, mg.store.LastSeq(), owners...)
		if err != nil {
			mg.log().Warn("purging owners another instance forgot from this instance's replica and index; "+
				"POST /memory/compact and /memory/reindex on its admin endpoint finish it", zap.Int("owners", len(owners)), zap.Error(err))
		}
	}()
}

// Compact rewrites the store file without its free pages (see store.Compact).
func (e *Engine) Compact() (before, after int64, err error) { return e.store.Compact() }

// Stats describes the database.
type Stats struct {
	store.Stats
	IndexedDocs uint64 `json:"indexed_docs"`
	IndexShards int    `json:"index_shards"`
	IndexLag    uint64 `json:"index_lag"` // changes not yet searchable
	Rebuilding  []int  `json:"rebuilding_shards,omitempty"`
	QueuedTurns int    `json:"queued_turns"` // in memory, not yet durable
	IndexBytes  int64  `json:"index_bytes"`
	Storage     string `json:"storage"`
	// Encryption says how the storage is sealed.
	Encryption Encryption `json:"encryption"`
}

// Stats counts what the database holds.
func (e *Engine) Stats() (Stats, error) {
	st, err := e.store.Stats()
	if err != nil {
		return Stats{}, err
	}
	s := Stats{Stats: st, IndexedDocs: e.index.DocCount(), IndexShards: e.index.K(),
		QueuedTurns: len(e.learner.queue), Storage: e.cfg.Dir, IndexBytes: stats.DirSize(filepath.Join(e.cfg.Dir, "index")),
		Encryption: e.Encryption()}
	s.IndexLag, s.Rebuilding = e.indexer.lag(st.LastSeq)
	return s, nil
}

// healthOwners bounds the owners Health looks at for a memory to read:
// owners whose memories are all purged keep an empty partition.
const healthOwners = 16

// readOne reads one memory: the first of the first owner that has one.
func readOne(tx *store.Tx) error {
	owners := 0
	return tx.OwnersFrom("", func(owner string) (bool, error) {
		owners++
		read := false
		err := tx.Scan(owner, 0, func(*store.Memory) (bool, error) { read = true; return false, nil })
		return !read && owners < healthOwners, err
	})
}

// Health is a round trip through the store and the index.
type Health struct {
	StoreLatency time.Duration
	IndexLatency time.Duration
	// DamagedRecords counts the reads that passed over a damaged record
	// since the storage opened (one record read twice counts twice): each
	// is lost alone, the rest is served.
	DamagedRecords uint64
}

// Health reads from the store and searches the index, and times both.
// The store's part reads a memory whole (decoded, and opened when the store
// is sealed), not only the file's metadata, so a store that opens but whose
// records cannot be read is unhealthy. It reads the first memory of the
// first owners, not the whole store: a damaged record elsewhere shows to
// the read that meets it (an export then fails).
func (e *Engine) Health(ctx context.Context) (Health, error) { return e.manager.health(ctx) }

func (mg *manager) health(ctx context.Context) (Health, error) {
	var h Health
	start := time.Now()
	if err := mg.store.View(readOne); err != nil {
		return h, fmt.Errorf("store: %w", err)
	}
	h.StoreLatency = time.Since(start)
	start = time.Now()
	// A damaged shard is being rebuilt, its owners searched from their
	// records meanwhile (repair.go): searches still answer.
	if _, err := mg.index.Search(ctx, index.Query{Owner: "health-check", Text: "health check"}); err != nil && !errors.Is(err, index.ErrDamaged) {
		return h, fmt.Errorf("index: %w", err)
	}
	h.IndexLatency = time.Since(start)
	h.DamagedRecords = mg.store.SkippedRecords()
	return h, nil
}
