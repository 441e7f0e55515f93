package engine

import (
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/caddy-memory/memory/store"
)

// Held turns. With a shared database, a turn the client already has its
// answer for is learned in a transaction the database must take. While it
// does not answer, the turn must not wait in memory, where a stop or a
// crash would lose it: it is held in this instance's file, never replicated
// (store.HoldJobs), and the processor tries it again every second, and at
// Close until the drain deadline passes; what is still held then is
// learned at the next start. While turns are held, new ones are held after
// them, so they are learned in the order they were said (a later fact
// supersedes an earlier one, never the reverse). Stats counts them
// (held_turns), and a HeldObserver hears of them.

// HeldObserver is an Observer that also hears how many turns are held.
type HeldObserver interface {
	// TurnsHeld: the number of held turns changed by delta (negative once
	// they are learned, and at Close).
	TurnsHeld(delta int)
}

// maxHeldQueues bounds the held turns at this many queues (QueueSize
// each): a long outage under traffic must not fill the disk. Past it, new
// turns are dropped and counted, as when the queue is full.
const maxHeldQueues = 64

// heldRetry is how often Close tries the held turns again while the
// database does not answer.
const heldRetry = 250 * time.Millisecond

// heldTurns is the engine's count of the turns held in its file.
type heldTurns struct {
	mu     sync.Mutex
	n      int  // as last counted
	warned bool // the outage was logged
}

// heldFirst reports whether turns are held for the shared database: new
// ones are held after them.
func (lr *learner) heldFirst() bool {
	lr.held.mu.Lock()
	defer lr.held.mu.Unlock()
	return lr.held.n > 0 && lr.store.Shared()
}

// hold keeps jobs the shared database did not take in this instance's
// file, for the processor.
func (lr *learner) hold(jobs []store.Job) error {
	lr.held.mu.Lock()
	room := max(maxHeldQueues*lr.cfg.QueueSize-lr.held.n, 0)
	lr.held.mu.Unlock()
	if over := len(jobs) - room; over > 0 {
		jobs = jobs[:room]
		for range over {
			lr.cfg.Observer.JobDropped()
		}
		lr.log().Error("too many turns are held for the shared memory database; new ones are dropped until it answers",
			zap.Int("dropped", over), zap.Int("held", maxHeldQueues*lr.cfg.QueueSize))
	}
	if len(jobs) == 0 {
		return nil
	}
	err := lr.store.HoldJobs(jobs)
	lr.countHeld()
	return err
}

// countHeld counts the held turns again, tells the observer, and logs an
// outage once when it begins and once when it ends. The writer and the
// processor count: the lock keeps an older count from landing last.
func (lr *learner) countHeld() {
	lr.held.mu.Lock()
	n := lr.store.HeldCount()
	delta := n - lr.held.n
	lr.held.n = n
	began := n > 0 && !lr.held.warned
	ended := n == 0 && lr.held.warned
	lr.held.warned = n > 0
	lr.held.mu.Unlock()
	lr.heldChanged(delta)
	switch {
	case began:
		lr.log().Warn("the shared memory database does not answer; turns are held in this instance's storage and learned once it answers",
			zap.Int("held_turns", n), zap.String("storage", lr.cfg.Dir))
	case ended:
		lr.log().Info("the turns held for the shared memory database are learned", zap.String("storage", lr.cfg.Dir))
	}
}

// heldAtStart counts the turns an earlier run held, to be learned first.
func (lr *learner) heldAtStart() {
	n := lr.store.HeldCount()
	if n == 0 {
		return
	}
	lr.held.mu.Lock()
	lr.held.n, lr.held.warned = n, true
	lr.held.mu.Unlock()
	lr.heldChanged(n)
	lr.log().Info("turns held for the shared memory database when this storage was last open are learned first",
		zap.Int("held_turns", n), zap.String("storage", lr.cfg.Dir))
}

func (lr *learner) heldChanged(delta int) {
	if o, ok := lr.cfg.Observer.(HeldObserver); ok && delta != 0 {
		o.TurnsHeld(delta)
	}
}

// drainHeld tries the held turns again until they are learned or Close's
// deadline passes; what is left is learned at the next start.
func (lr *learner) drainHeld() {
	for !lr.processQueue(true) {
		select {
		case <-lr.abort:
			return
		case <-time.After(heldRetry):
		}
	}
}

// forgetHeld takes the held turns out of the observer's count, at Close:
// this engine no longer learns them.
func (lr *learner) forgetHeld() {
	lr.held.mu.Lock()
	n := lr.held.n
	lr.held.n = 0
	lr.held.mu.Unlock()
	lr.heldChanged(-n)
}

// hasJob reports whether the durable job seq (held: the held turn) is
// still to learn: another instance may have learned a durable one since it
// was read, and forgetting its owner drops either.
func hasJob(tx *store.Tx, seq uint64, held bool) bool {
	if held {
		return tx.HasHeld(seq)
	}
	return tx.HasJob(seq)
}

// finishJob deletes the durable job seq (held: the held turn; 0: none), in
// the transaction that stores what it taught.
func finishJob(tx *store.Tx, seq uint64, held bool) error {
	switch {
	case seq == 0:
		return nil
	case held:
		return tx.DeleteHeld(seq)
	default:
		return tx.DeleteJob(seq)
	}
}
