package engine

import (
	"encoding/json"
	"errors"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"go.uber.org/zap"

	"github.com/caddy-memory/memory/extract"
	"github.com/caddy-memory/memory/store"
)

// writer learns queued turns, in one transaction per group: while one
// commit waits for fsync (or, under load, for learnEvery to pass) the next
// group gathers, so a crash loses only the turns of that group and of the
// commit in flight. A group the store refuses is saved to the durable job
// queue instead, for the processor to retry (or, when the shared database
// does not answer, held in this instance's file: held.go); at Close, what
// is queued is saved there too (a quick write, local once Close's deadline
// passed), and the processor learns it while the drain allows, or at the
// next start.
func (lr *learner) writer() {
	defer close(lr.writerDone)
	var last time.Time
	full := false // the last group was as large as a group gets
	for {
		var first *Job
		select {
		case first = <-lr.queue:
		case <-lr.drain:
			// Close holds off new turns; save what is queued, then stop.
			for len(lr.queue) > 0 {
				lr.save(lr.gather(<-lr.queue))
			}
			return
		}
		arrived := time.Now()
		if !full && len(lr.queue)+1 < writeBatch {
			// Not a backlog: a full group waiting (or one just learned)
			// is not spaced out, else the turns learned a second would be
			// capped at writeBatch per learnEvery, and past that the queue
			// fills and drops turns.
			lr.pace(last, time.Duration(lr.every.Load()))
		}
		lr.pace(arrived, learnAfter)
		last = time.Now()
		batch := lr.gather(first)
		full = len(batch) == writeBatch
		lr.learn(batch)
	}
}

// learnEvery spaces the writer's commits under load. Each commit costs two
// fsyncs, which burn CPU, and rewrites the pages it touches; with a turn
// every few milliseconds nearly each would have a commit of its own, and
// the writes would take CPU from the requests being proxied. A turn that
// arrives after a quiet spell is still learned at once; under load, a crash
// can lose the turns of the last learnEvery, and what a turn taught is
// searchable up to learnEvery later. BenchmarkTurnCost measures the CPU a
// turn costs at this spacing. At 100 ms rather than 20, a commit carries
// five times the turns, and a proxy whose CPU is the limit serves half as
// many requests again (docs/performance.md); a user's next message comes
// seconds after the last, long after its turn is searchable.
const learnEvery = 100 * time.Millisecond

// learnAfter is the least a turn waits to be learned. The hand-off comes
// as the answer's end goes out, and learning at once competes with the
// client receiving that answer (the bench's "way back" shows it). A turn
// learned a little later lands in the time the client's next request waits
// on its model.
const learnAfter = 3 * time.Millisecond

func (lr *learner) gather(first *Job) []*Job {
	batch := []*Job{first}
	for len(batch) < writeBatch {
		select {
		case j := <-lr.queue:
			batch = append(batch, j)
		default:
			return batch
		}
	}
	return batch
}

// learn stores what a group of turns taught, in one commit; if the store
// refuses it, the turns go to the durable queue to be retried. While turns
// are held, they go after those (held.go).
func (lr *learner) learn(batch []*Job) {
	if !lr.heldFirst() {
		items := make([]queued, len(batch))
		for i, j := range batch {
			items[i].job = j
		}
		if lr.process(items) {
			lr.pending.Add(-int64(len(batch)))
			return
		}
	}
	lr.save(batch)
}

// save writes turns to the durable job queue, for the processor.
func (lr *learner) save(batch []*Job) {
	jobs := make([]store.Job, 0, len(batch))
	for _, j := range batch {
		data, err := json.Marshal(j)
		if err != nil {
			lr.cfg.Observer.JobFailed()
			continue
		}
		jobs = append(jobs, store.Job{Owner: j.Owner, Data: data})
	}
	var err error
	if lr.heldFirst() {
		err = lr.hold(jobs)
	} else if err = lr.store.PutJobs(jobs); err != nil && lr.store.Shared() {
		// The shared database does not answer: the turns wait in this
		// instance's file.
		err = lr.hold(jobs)
	}
	lr.pending.Add(-int64(len(batch)))
	if err != nil {
		for range jobs {
			lr.cfg.Observer.JobDropped()
		}
		lr.log().Error("saving turns for memory extraction failed; they are dropped",
			zap.Int("turns", len(jobs)), zap.Error(err))
		return
	}
	lr.wake(lr.wakeProcessor)
}

// processor learns the turns of the durable job queue: those the writer
// could not store, those saved at Close, and those left by an earlier run. A
// job is deleted in the same transaction that stores its memories, so each
// is done exactly once.
func (lr *learner) processor() {
	defer close(lr.processorDone)
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	var last time.Time
	for {
		select {
		case <-lr.wakeProcessor:
			lr.pace(last, time.Duration(lr.every.Load()))
			last = time.Now()
		case <-tick.C:
		case <-lr.drain:
			// The writer stops first, so what is in the store now is all.
			select {
			case <-lr.writerDone:
			case <-lr.abort:
				return
			}
			lr.processPending()
			lr.drainHeld()
			return
		}
		lr.processPending()
	}
}

// processPending learns the durable queue's turns, then the held ones. It
// reports false when the store refused a write.
func (lr *learner) processPending() bool {
	return lr.processQueue(false) && lr.processQueue(true)
}

// processQueue learns the turns of the durable job queue, or the held ones
// (held.go). It reports false when the store refused a write; they are
// tried again on the next tick.
func (lr *learner) processQueue(held bool) bool {
	read := lr.store.Jobs
	if held {
		read = lr.store.HeldJobs
		defer lr.countHeld()
	}
	for {
		if lr.stopping() {
			return false
		}
		jobs, err := read(processBatch)
		if err != nil {
			lr.log().Error("reading pending memory jobs", zap.Error(err))
			return false
		}
		if len(jobs) == 0 {
			return true
		}
		items := make([]queued, len(jobs))
		for i, sj := range jobs {
			items[i].seq, items[i].held = sj.Seq, held
			var j Job
			if err := json.Unmarshal(sj.Data, &j); err != nil || j.Owner == "" {
				lr.log().Error("discarding unreadable memory job", zap.Uint64("job", sj.Seq), zap.Bool("held", held), zap.Error(err))
				continue
			}
			items[i].job = &j
		}
		if !lr.process(items) {
			return false
		}
	}
}

// queued is a turn to learn: from the writer's queue, or from the durable
// job queue (seq, deleted with the memories it taught), or held in this
// instance's file (held). A nil job is a durable one that could not be
// read: it is deleted and counted failed.
type queued struct {
	seq  uint64
	held bool
	job  *Job
}

// process extracts the turns' memories and stores them in one transaction.
// It reports false when the store refused the write.
func (lr *learner) process(items []queued) bool {
	type work struct {
		seq               uint64
		held              bool
		owner             string
		puts              []store.Put
		ref, conversation string
		ok                bool
		// session is the turn's, when a model distils it (see
		// touchSession), at the turn's time.
		session string
		at      time.Time
	}
	distil := lr.distiller.running() != nil
	ws := make([]work, len(items))
	learned := learnAll(items)
	for i, it := range items {
		ws[i].seq, ws[i].held = it.seq, it.held
		if it.job == nil {
			continue
		}
		j := it.job
		mems, responseID, err := learned[i].mems, learned[i].responseID, learned[i].err
		if err != nil {
			if c := lr.log().Check(zap.DebugLevel, "could not decode the assistant turn; learning the user's side"); c != nil {
				c.Write(zap.String("content_type", j.ContentType), zap.String("content_encoding", j.ContentEncoding), zap.Error(err))
			}
		}
		ws[i].owner, ws[i].ok = j.Owner, true
		ws[i].ref, ws[i].conversation = responseID, j.Conversation
		for _, m := range mems {
			ws[i].puts = append(ws[i].puts, lr.putOf(m, store.SourceRules))
			if distil && m.Kind == "turn" && j.Session != "" {
				ws[i].session, ws[i].at = j.Session, j.Time
			}
		}
	}
	stored := make([]int, len(ws))
	done := make([]bool, len(ws)) // by another instance sharing the database
	wakeDistiller := false
	err := lr.store.Update(func(tx *store.Tx) error {
		wakeDistiller = false
		for i, w := range ws {
			stored[i] = 0
			if done[i] = w.seq != 0 && !hasJob(tx, w.seq, w.held); done[i] {
				continue // or its owner was forgotten
			}
			for _, p := range w.puts {
				_, _, err := tx.Upsert(w.owner, p)
				if errors.Is(err, store.ErrInvalid) {
					continue // never storable; retrying would not help
				}
				if err != nil {
					return err
				}
				stored[i]++
			}
			if w.ok {
				if err := tx.SetConversation(w.owner, w.ref, w.conversation); err != nil {
					return err
				}
			}
			if w.session != "" {
				due, err := touchSession(tx, w.owner, w.session, w.at, false)
				if err != nil {
					return err
				}
				wakeDistiller = wakeDistiller || due
			}
			if err := finishJob(tx, w.seq, w.held); err != nil {
				return err
			}
		}
		return nil
	})
	if err == nil {
		lr.commits.Add(1)
		lr.wake(lr.wakePostings)
	}
	if err != nil {
		if errors.Is(err, store.ErrUnavailable) {
			// hold says it once per outage, not once per turn.
			lr.log().Debug("storing memories failed; will retry", zap.Error(err))
		} else {
			lr.log().Error("storing memories failed; will retry", zap.Error(err))
		}
		return false
	}
	if wakeDistiller {
		lr.distiller.wakeUp()
	}
	for i, w := range ws {
		if done[i] {
			continue
		}
		if w.ok {
			lr.cfg.Observer.JobDone(stored[i])
		} else {
			lr.cfg.Observer.JobFailed()
		}
	}
	// The indexer is not woken: it takes what extraction stored on its next
	// tick, in one batch per shard. Woken for every job, it would make one
	// tiny Bleve segment per shard per job, and merging them would take the
	// CPU the requests need.
	return true
}

// learnt is what extract.Learn made of one turn.
type learnt struct {
	mems       []extract.Memory
	responseID string
	err        error
}

// parallelFrom is the group size from which a group's turns are read on
// every core: a backlog (a burst, a restart) is caught up before the queue
// fills and turns are dropped, while a few turns at a time, the steady
// case, take one core and leave the others to the requests.
const parallelFrom = 32

// learnAll reads what each turn teaches (extract.Learn), on every core for
// a large group.
func learnAll(items []queued) []learnt {
	out := make([]learnt, len(items))
	one := func(i int) {
		if j := items[i].job; j != nil {
			out[i].mems, out[i].responseID, out[i].err = extract.Learn(&j.Turn)
		}
	}
	workers := min(runtime.GOMAXPROCS(0), len(items)/parallelFrom+1)
	if workers <= 1 {
		for i := range items {
			one(i)
		}
		return out
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := int(next.Add(1) - 1); i < len(items); i = int(next.Add(1) - 1) {
				one(i)
			}
		}()
	}
	wg.Wait()
	return out
}
