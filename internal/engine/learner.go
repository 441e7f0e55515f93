package engine

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/caddy-memory/memory/extract"
)

// Job is one proxied turn waiting to be learned from, for its owner. It is
// saved as JSON in the durable queue when it cannot be learned at once.
type Job struct {
	Owner string `json:"owner"` // the stored owner id, never the raw value
	extract.Turn
}

// learner learns from the proxied turns: the writer stores what a group of
// turns taught in one commit as they arrive, and the processor learns the
// turns of the durable queue, those the writer could not store and those
// held in this instance's file while a shared database does not answer
// (jobs.go, held.go). Ingest learns a whole transcript at once.
type learner struct {
	*core
	distiller *distiller // a turn's session waits for it (touchSession)
	indexer   *indexer   // Ingest and Sync wait for the index

	queue   chan *Job
	pending atomic.Int64 // turns accepted but not yet learned or saved
	held    heldTurns    // turns the shared database did not take (held.go)

	writerDone, processorDone chan struct{}
	// every is learnEvery in nanoseconds, how the writer and the processor
	// space their commits (a test's may differ).
	every atomic.Int64
}

func newLearner(c *core) *learner {
	lr := &learner{
		core:          c,
		queue:         make(chan *Job, c.cfg.QueueSize),
		writerDone:    make(chan struct{}),
		processorDone: make(chan struct{}),
	}
	lr.every.Store(int64(learnEvery))
	return lr
}

// Group sizes: turns learned in one commit, and read back from the durable
// queue at a time.
const (
	writeBatch   = 256
	processBatch = 64
)

// Enqueue hands a turn to the background writer without waiting. It returns
// false, and counts the turn as dropped, when the queue is full or the engine
// is closing.
func (e *Engine) Enqueue(j *Job) bool {
	e.rest.touch()
	return e.learner.enqueue(j)
}

func (lr *learner) enqueue(j *Job) bool {
	lr.closeMu.RLock()
	defer lr.closeMu.RUnlock()
	if lr.closing {
		lr.cfg.Observer.JobDropped()
		return false
	}
	lr.pending.Add(1)
	select {
	case lr.queue <- j:
		return true
	default:
		lr.pending.Add(-1)
		lr.cfg.Observer.JobDropped()
		return false
	}
}

// Sync waits until every accepted turn is extracted (held ones included)
// and every change is indexed (and no shard is being rebuilt), or ctx is
// done.
func (e *Engine) Sync(ctx context.Context) error { return e.learner.sync(ctx) }

func (lr *learner) sync(ctx context.Context) error {
	learned := func() bool {
		return lr.pending.Load() == 0 && lr.store.PendingJobs() == 0 && lr.store.HeldCount() == 0
	}
	for {
		if learned() {
			seq := lr.store.LastSeq()
			if err := lr.indexer.waitBleve(ctx, seq); err != nil {
				return err
			}
			if err := lr.indexer.postings.wait(ctx, seq, true); err != nil {
				return err
			}
			if learned() {
				return nil
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("memory engine did not settle: %w", ctx.Err())
		case <-time.After(2 * time.Millisecond):
		}
	}
}
