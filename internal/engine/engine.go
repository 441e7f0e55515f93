// Package engine owns one open memory database and its workers: the store,
// the Bleve index kept in step with it through the store's change log, and
// the background work (learning from proxied turns, indexing changes,
// rebuilding shards, renewing digests, distilling sessions, embedding,
// consolidating). It knows nothing about Caddy or HTTP, so tools and tests
// can open a database directly.
//
// Engine's methods are thin entry points (Search, Recall, Enqueue, Ingest,
// and the management calls): how to rank is the index's policy, what a turn
// teaches is extract's, and the read path (planning a search, the profile,
// the block a recall injects) is internal/recall's, which the engine hands
// its store, index, postings and embedding recall (read.go). Each concern
// that writes or works in the background is a type of its own that holds
// its state, and all point to a small shared core (core.go: the store, the
// index, the configuration, the workers' wake-ups and Close's signals):
//
//   - learner: the turn queue's writer and processor, turns held while a
//     shared database does not answer, Ingest (learner.go, jobs.go,
//     held.go, ingest.go);
//   - indexer: index passes, shard positions, rebuilds, repairs of damaged
//     shards, re-digests, which owners the index holds (indexer.go,
//     progress.go, rebuild.go, repair.go, redigest.go);
//   - postings: every owner's postings in memory (index.Postings), built
//     at start and kept in step with the store's change log, which
//     searches read (follower.go);
//   - distiller: learning with a model (distill.go, distill_session.go);
//   - embedder: embedding recall: memories' vectors, and the question's
//     (embedder.go);
//   - consolidator and usage: how memories age, and their uses
//     (consolidate.go, usage.go);
//   - sealer: changes of encryption, the keys in effect, the rotation
//     (encryption.go);
//   - manager: the management surface: memories one by one, listing,
//     an owner's conversations, export and import, forgetting an owner,
//     health (memories.go, sessions.go, manage.go);
//   - rest: what only traffic needed, given back when the engine rests
//     (the store file's pages, index shards, the heap's free pages;
//     rest.go).
//
// engine.go opens the database, assembles the concerns and closes them in
// order; tools.go holds the model's memory tools, which combine them.
package engine

import (
	"context"
	"errors"
	"path/filepath"
	"time"

	"go.uber.org/zap"

	"github.com/caddy-memory/memory/index"
	"github.com/caddy-memory/memory/internal/recall"
	"github.com/caddy-memory/memory/internal/seal"
	"github.com/caddy-memory/memory/store"
)

// Defaults for Config.
const (
	DefaultShards      = 64
	DefaultQueueSize   = 1024
	DefaultLockTimeout = 5 * time.Second
)

// Observer hears about background work, for metrics. Methods are called from
// the engine's goroutines and must not block.
type Observer interface {
	JobDropped()
	JobDone(stored int)
	JobFailed()
	// EmbeddingFailed: a call to the embeddings endpoint failed (recall
	// stays lexical meanwhile).
	EmbeddingFailed()
	// LLMCall: a call to the model that distils sessions ended with result
	// (LLMOK, LLMBadJSON, LLMError) after took.
	LLMCall(result string, took time.Duration)
}

// Config configures Open.
type Config struct {
	// Dir holds the store file and the index directory.
	Dir string
	// Shared, when set, is a database that several instances share as the
	// source of truth (store/postgres opens one); the store file in Dir is
	// then this instance's replica of it (see store.Shared). The engine
	// closes it, or Open does when it fails.
	Shared store.Shared
	// Shards is the number of index shards for a new database; an existing
	// one keeps the number it was created with.
	Shards int
	// QueueSize bounds the turns waiting in memory to be made durable; when it
	// is full, new turns are dropped (and counted), never waited for.
	QueueSize int
	// LockTimeout bounds the wait for the store and index file locks.
	LockTimeout time.Duration
	// LocalSearchMax is the most memories an owner may have to be searched
	// by scoring its records rather than by querying the index (see
	// searchLocal), and so to be kept out of the index (see enrolment): 0
	// means DefaultLocalSearchMax, a negative value never.
	LocalSearchMax int
	// PostingsBudget is the memory the in-memory postings of owners
	// searched through the index may take (see follower.go): 0 means
	// DefaultPostingsBudget, a negative value none (Bleve alone). It can
	// change while open (UseSearchCache).
	PostingsBudget int
	// Logger returns the logger to use; it is called at each use because the
	// engine outlives the configuration that opened it.
	Logger   func() *zap.Logger
	Observer Observer

	// Clock tells the time (default time.Now): tests age memories with it.
	Clock func() time.Time

	// Keys encrypt the storage (nil: none). An encrypted storage opens only
	// with its key (old keys open what they sealed, during a rotation); a
	// plaintext one opened with keys is encrypted at start. See
	// encryption.go.
	Keys *seal.Ring

	// trimAfter is how many applied entries of the change log are trimmed
	// at once; tests lower it so as not to write fifty thousand memories.
	trimAfter uint64
}

// Engine is an open memory database. It is safe for concurrent use. Its
// methods are the entry points; the work is its concerns' (see the package
// documentation).
type Engine struct {
	*core

	learner      *learner
	indexer      *indexer
	recall       *recall.Searcher // the read path (read.go)
	postings     *postings        // every owner's postings in memory
	distiller    *distiller
	embedder     *embedder
	consolidator *consolidator
	usage        *usage
	sealer       *sealer
	manager      *manager
	rest         *rest // what is given back at rest (rest.go)
}

// Open opens (creating if needed) the database in cfg.Dir and starts its
// background work. Shards whose index is missing, damaged, or out of step
// with the store are rebuilt from the store in the background (and shards
// found damaged later, see repair.go); their owners are searched from their
// records until then.
func Open(cfg Config) (*Engine, error) {
	if cfg.Dir == "" {
		if cfg.Shared != nil {
			cfg.Shared.Close()
		}
		return nil, errors.New("engine: no storage directory")
	}
	if cfg.Shards <= 0 {
		cfg.Shards = DefaultShards
	}
	if cfg.QueueSize <= 0 {
		cfg.QueueSize = DefaultQueueSize
	}
	if cfg.LockTimeout <= 0 {
		cfg.LockTimeout = DefaultLockTimeout
	}
	if cfg.Logger == nil {
		cfg.Logger = zap.NewNop
	}
	if cfg.Observer == nil {
		cfg.Observer = nopObserver{}
	}
	if cfg.trimAfter == 0 {
		cfg.trimAfter = defaultTrimAfter
	}
	if cfg.Clock == nil {
		cfg.Clock = time.Now
	}

	st, err := openStore(cfg)
	if err != nil {
		return nil, err
	}
	st.UseClock(cfg.Clock)
	k, err := st.Shards(cfg.Shards)
	if err != nil {
		st.Close()
		return nil, err
	}
	if k != cfg.Shards {
		cfg.Logger().Warn("memory storage keeps the index shard count it was created with",
			zap.Int("configured", cfg.Shards), zap.Int("used", k), zap.String("storage", cfg.Dir))
	}
	idx, err := index.Open(filepath.Join(cfg.Dir, "index"), k, cfg.LockTimeout)
	if err != nil {
		st.Close()
		return nil, err
	}
	idx.UseDigestKey(st.DigestKey())
	idx.UseClock(cfg.Clock)

	e := assemble(newCore(cfg, st, idx))
	idx.OnDamaged(e.indexer.repair)
	rebuild, err := e.indexer.plan()
	if err != nil {
		idx.Close()
		st.Close()
		return nil, err
	}
	if len(rebuild) > 0 {
		cfg.Logger().Info("rebuilding memory index shards from the store",
			zap.Ints("shards", rebuild), zap.String("storage", cfg.Dir))
	}
	// What other instances commit arrives in the store's change log: the
	// index (and the queue of turns, and sessions due) follow it.
	st.OnReplicated(func(forgot []string) {
		if len(forgot) > 0 {
			e.manager.purgeForgotten(forgot)
		}
		e.wake(e.wakeIndexer)
		e.wake(e.wakePostings)
		e.wake(e.wakeProcessor)
		e.distiller.wakeUp()
	})
	go e.learner.writer()
	go e.learner.processor()
	go e.indexer.run()
	go e.indexer.rebuilder(rebuild)
	go e.indexer.redigester()
	go e.postings.run()
	go e.usage.run()
	go e.rest.run()
	e.sealer.startResealer()
	e.learner.heldAtStart()
	e.wake(e.wakeProcessor) // turns left from the last run, or held
	e.wake(e.wakeIndexer)
	return e, nil
}

// assemble makes the concerns of an engine around c, each pointing to
// those it asks something of.
func assemble(c *core) *Engine {
	e := &Engine{core: c, learner: newLearner(c), embedder: &embedder{core: c}, usage: newUsage(c)}
	e.postings = newPostings(c)
	e.recall = recall.New(recall.Config{Store: c.store, Index: c.index, Postings: e.postings,
		Embedding: e.embedder.query, LocalSearchMax: c.localSearchMax, Clock: c.cfg.Clock})
	e.postings.warm = func(tx *store.Tx, owner string, memories int) {
		if err := e.recall.WarmProfile(tx, owner, memories); err != nil {
			if ce := c.log().Check(zap.DebugLevel, "reading a profile while building the search postings failed; it is read when asked for"); ce != nil {
				ce.Write(zap.Error(err))
			}
		}
	}
	e.distiller = &distiller{core: c, recall: e.recall, learned: e.learner.processorDone}
	e.indexer = newIndexer(c, e.embedder, e.distiller, e.learner.processorDone)
	e.indexer.postings = e.postings
	e.learner.distiller, e.learner.indexer = e.distiller, e.indexer
	e.consolidator = &consolidator{core: c, indexer: e.indexer, changed: make(chan struct{}, 1), done: make(chan struct{})}
	e.sealer = &sealer{core: c, indexer: e.indexer, keys: c.cfg.Keys}
	e.manager = &manager{core: c, learner: e.learner, indexer: e.indexer, postings: e.postings}
	// Work that is not a request but reads or writes the store: a rest
	// begins once it is done.
	e.rest = newRest(c, func(seq uint64) bool {
		lag, rebuilding := e.indexer.lag(seq)
		return e.postings.building() || e.postings.through() < seq || lag > 0 || len(rebuilding) > 0 ||
			e.learner.pending.Load() > 0 || c.uses.waiting()
	})
	return e
}

// DamageObserver is an Observer that hears when a storage is found
// damaged while open (the store refuses writes from then on).
type DamageObserver interface {
	Damaged(dir string)
}

// Damaged returns what is damaged in the storage's store (a
// *store.DamageError), or nil. A damaged storage learns nothing and
// recalls nothing: its requests pass through; what it holds can still be
// read, and salvaged.
func (e *Engine) Damaged() error { return e.store.Damaged() }

// OwnerID is the stored id of a raw owner value.
func (e *Engine) OwnerID(raw string) string { return e.store.OwnerID(raw) }

// Close stops accepting turns, finishes the pending work until ctx is done,
// and closes the index and the store. Turns already durable but not yet
// extracted when ctx ends are extracted at the next start.
func (e *Engine) Close(ctx context.Context) error {
	e.closeMu.Lock()
	if e.closing {
		e.closeMu.Unlock()
		return nil
	}
	e.closing = true
	e.closeMu.Unlock()

	close(e.drain)
	stages := []chan struct{}{e.learner.writerDone, e.learner.processorDone}
	if d := e.distiller.running(); d != nil {
		stages = append(stages, d.done)
	}
	// The uses counted last are written before the shared database's calls
	// are cut below.
	stages = append(stages, e.indexer.indexerDone, e.usage.done)
	var timedOut bool
	for _, done := range stages {
		select {
		case <-done:
		case <-ctx.Done():
			timedOut = true
		}
		if timedOut {
			break
		}
	}
	close(e.abort)
	e.cancelStop()
	// What still calls the shared database ends now: a database that does
	// not answer must not hold the stop (turns go to the local file).
	e.store.Interrupt()
	for _, done := range append(stages, e.indexer.rebuilderDone, e.indexer.redigestDone, e.postings.done, e.rest.done) {
		<-done
	}
	e.indexer.stopRepairs()
	e.sealer.resealWG.Wait()
	e.manager.purgeWG.Wait()
	if e.consolidator.started.Load() {
		<-e.consolidator.done
	}
	if em := e.embedder.running(); em != nil {
		<-em.done
	}
	if n := len(e.learner.queue); n > 0 {
		for range n {
			e.cfg.Observer.JobDropped()
		}
		e.log().Warn("memory engine closed before these turns were saved", zap.Int("turns", n))
	}
	if n := e.store.HeldCount(); n > 0 {
		e.log().Warn("the shared memory database did not answer before the shutdown deadline; "+
			"the turns held in this instance's storage are learned at its next start",
			zap.Int("held_turns", n), zap.String("storage", e.cfg.Dir))
	}
	e.learner.forgetHeld()
	err := errors.Join(e.index.Close(), e.store.Close())
	// Its index files are not read or written any more: the hooks forget
	// the storage's keys.
	_ = index.UseKeys(filepath.Join(e.cfg.Dir, "index"), nil, false)
	if timedOut {
		e.log().Warn("memory engine shutdown deadline passed; pending extraction resumes at next start",
			zap.Int("pending_jobs", e.store.PendingJobs()))
	}
	return err
}

type nopObserver struct{}

func (nopObserver) JobDropped()                   {}
func (nopObserver) JobDone(int)                   {}
func (nopObserver) JobFailed()                    {}
func (nopObserver) EmbeddingFailed()              {}
func (nopObserver) LLMCall(string, time.Duration) {}

// Fixed is a setting an open engine keeps whatever a later configuration
// says, until it is closed.
type Fixed struct {
	Name, Configured, InEffect string
}

// Shards is the number of index shards (fixed when the storage was
// created).
func (e *Engine) Shards() int { return e.index.K() }

// QueueSize is the bound of the queue of turns waiting to be saved (fixed
// while the engine is open).
func (e *Engine) QueueSize() int { return cap(e.learner.queue) }
