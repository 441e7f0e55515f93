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

// writer learns queued turns. It reads them as they arrive (under load, a
// batch every readEvery) and stores what a group of them taught in one
// transaction, made by the committer while the next group is read: under
// load, one commit every learnEvery (and the counted uses of memories with
// it, usage.go), so the group grows with the load instead of the commits.
// A turn after a quiet spell is learned at once, and when the load stops,
// the group is committed learnQuiet after the last read. A crash loses the group being read and the commit in
// flight. A group the store refuses is saved to the durable job queue
// instead, for the processor to retry (or, when the shared database does
// not answer, held in this instance's file: held.go); at Close, the group
// read so far is committed and what is still queued is saved (a quick
// write, local once Close's deadline passed), for the processor to learn
// while the drain allows, or at the next start.
func (lr *learner) writer() {
	defer close(lr.writerDone)
	groups, freed := make(chan *group), make(chan struct{})
	go func() {
		defer close(freed)
		for g := range groups {
			lr.commitGroup(g)
			lr.committed.Add(1)
			freed <- struct{}{}
		}
	}()
	clock := lr.timing()
	g := &group{}
	busy := false                // the committer has a group
	var last, lastRead time.Time // when it was handed the last; when turns were last read
	hand := func(now time.Time) {
		groups <- g
		lr.handed.Add(1)
		busy, last, g = true, now, &group{}
	}
	for {
		now := clock.now()
		var due <-chan time.Time
		if len(g.jobs) > 0 {
			every := time.Duration(lr.every.Load())
			at := g.due(last, every)
			// Turns waiting in the queue mean the load goes on, however
			// long since the last was read (the writer waits for a core
			// too): they are read before the group goes, unless it is due
			// by learnEvery or full.
			waiting := len(lr.queue) > 0 && now.Before(last.Add(every)) && len(g.jobs) < maxGroup
			if !now.Before(at) && !busy && !waiting {
				hand(now)
				continue
			}
			if now.Before(at) {
				due = clock.until(at)
			}
		}
		in := lr.queue
		var readAt <-chan time.Time
		backlog := len(lr.queue) >= cap(lr.queue)/4
		switch next := lastRead.Add(time.Duration(lr.readEvery.Load())); {
		case len(g.jobs) >= maxGroup:
			in = nil // the committer is behind: the queue holds what comes
		case now.Before(next) && !backlog:
			// Under load, turns are read a batch at a time: read one by
			// one as they come, each would find the rules' patterns and
			// tables out of the cache (other work ran since the last), and
			// cost half as much again.
			in, readAt = nil, clock.until(next)
		}
		clock.idle()
		select {
		case first := <-in:
			// The hand-off comes as the answer's end goes out, and reading
			// the turn at once would compete with the client receiving it.
			clock.sleep(learnAfter)
			lastRead = clock.now()
			lr.readInto(g, lr.gather(first, maxGroup-len(g.jobs)), lastRead, backlog)
		case <-readAt:
		case <-freed:
			busy = false
		case <-due:
		case <-lr.drain:
			// Close holds off new turns: commit what was read, save what is
			// queued, then stop.
			if busy {
				<-freed
			}
			if len(g.jobs) > 0 {
				hand(now)
				<-freed
			}
			close(groups)
			for len(lr.queue) > 0 {
				lr.save(lr.gather(<-lr.queue, writeBatch))
			}
			return
		}
	}
}

// group is the turns the writer has read and not yet handed to the
// committer, with what they taught.
type group struct {
	jobs  []*Job
	work  []taught
	first time.Time // when its first turn was read
	last  time.Time // and its latest
}

// due is when g goes to the committer, the last group having gone at last:
// once learnEvery has passed since, or the turns stopped coming for
// learnQuiet (the load fell; a backlog was read), or g is as large as a
// group gets.
func (g *group) due(last time.Time, every time.Duration) time.Time {
	if len(g.jobs) >= maxGroup {
		return g.first
	}
	return minTime(last.Add(every), g.last.Add(learnQuiet))
}

func minTime(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}

// readInto reads what jobs teach into g: on every core for a backlog, else
// on one, letting requests ahead between turns.
func (lr *learner) readInto(g *group, jobs []*Job, now time.Time, backlog bool) {
	items := make([]queued, len(jobs))
	for i, j := range jobs {
		items[i].job = j
	}
	if len(g.jobs) == 0 {
		g.first = now
	}
	g.jobs = append(g.jobs, jobs...)
	g.work = append(g.work, lr.read(items, backlog)...)
	g.last = now
}

// commitGroup stores what g taught in one commit; if the store refuses it,
// its turns go to the durable queue to be retried. While turns are held,
// they go after those (held.go).
func (lr *learner) commitGroup(g *group) {
	if !lr.heldFirst() && lr.commit(g.work) {
		lr.pending.Add(-int64(len(g.jobs)))
		return
	}
	lr.save(g.jobs)
}

// learnEvery spaces the writer's commits under load. A commit rewrites the
// pages it touches (its owners' records and digests, the change log, the
// sequence) and costs two fsyncs: with a turn every few milliseconds, a
// commit for each would take the CPU of the requests being proxied. Once a
// second, a busy owner's pages are rewritten once for all its turns of that
// second, and the commit's fixed cost is shared by a second's turns. A
// turn that arrives after a quiet spell is still learned at once; under
// load, a crash can lose the turns of the last learnEvery, and what a turn
// taught is searchable up to learnEvery later (a user's next message comes
// seconds after the last). BenchmarkTurnCost measures the CPU a turn costs.
const learnEvery = time.Second

// readEvery spaces the writer's reads of queued turns under load; a turn
// after a quiet spell is read at once.
const readEvery = 50 * time.Millisecond

// learnQuiet is how long after the last read, the queue empty, the group
// read so far is committed before learnEvery: the load stopped, or a burst
// was read. Longer than the gaps between turns of a steady load (a few
// milliseconds), far shorter than a person's pause: with readEvery, a
// burst's last turn is stored about as soon as when each group was
// committed at once (docs/performance.md).
const learnQuiet = 20 * time.Millisecond

// maxGroup bounds the turns of a group: a commit's size, and what the
// writer holds while the committer is behind.
const maxGroup = 8 * writeBatch

// learnAfter is the least a turn waits to be read. The hand-off comes as
// the answer's end goes out, and reading at once competes with the client
// receiving that answer (the bench's "way back" shows it). A turn read a
// little later lands in the time the client's next request waits on its
// model.
const learnAfter = 3 * time.Millisecond

// gather is first and what else is queued, up to n turns.
func (lr *learner) gather(first *Job, n int) []*Job {
	batch := []*Job{first}
	for len(batch) < n {
		select {
		case j := <-lr.queue:
			batch = append(batch, j)
		default:
			return batch
		}
	}
	return batch
}

// timing is how the writer tells and waits for time (a test's may be
// fake).
func (lr *learner) timing() writerClock {
	if lr.clock != nil {
		return lr.clock
	}
	return realClock{}
}

// writerClock is the writer's time.
type writerClock interface {
	now() time.Time
	until(time.Time) <-chan time.Time
	sleep(time.Duration)
	// idle: the writer has done what it could and waits (for a turn, the
	// committer, or the time a group is due).
	idle()
}

type realClock struct{}

func (realClock) now() time.Time                     { return time.Now() }
func (realClock) until(t time.Time) <-chan time.Time { return time.After(time.Until(t)) }
func (realClock) sleep(d time.Duration)              { time.Sleep(d) }
func (realClock) idle()                              {}

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
	return lr.commit(lr.read(items, len(items) >= parallelFrom))
}

// taught is what one turn taught, ready to store.
type taught struct {
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

// read extracts what each turn teaches, on every core when parallel.
func (lr *learner) read(items []queued, parallel bool) []taught {
	distil := lr.distiller.running() != nil
	ws := make([]taught, len(items))
	learned := learnAll(items, parallel)
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
	return ws
}

// commit stores what turns taught in one transaction, with the counted
// uses of memories when they are due (usage.go). It reports false when the
// store refused the write.
func (lr *learner) commit(ws []taught) bool {
	uses := lr.uses.take(lr.now(), useFlushEvery, false)
	if uses != nil {
		defer lr.uses.written()
	}
	stored := make([]int, len(ws))
	done := make([]bool, len(ws)) // by another instance sharing the database
	wakeDistiller := false
	err := lr.store.Update(func(tx *store.Tx) error {
		wakeDistiller = false
		if err := writeUses(tx, uses); err != nil {
			return err
		}
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

// parallelFrom is the group size from which the durable queue's turns are
// read on every core: a backlog (a burst, a restart) is caught up before
// the queue fills and turns are dropped. The writer reads on every core
// when its queue is a quarter full; under a steady load it reads on one
// and leaves the other to the requests.
const parallelFrom = 32

// learnAll reads what each turn teaches (extract.Learn): on every core
// when parallel, else on one, letting requests waiting for a core go
// first between turns.
func learnAll(items []queued, parallel bool) []learnt {
	out := make([]learnt, len(items))
	one := func(i int) {
		if j := items[i].job; j != nil {
			out[i].mems, out[i].responseID, out[i].err = extract.Learn(&j.Turn)
		}
	}
	workers := runtime.GOMAXPROCS(0)
	if !parallel || workers <= 1 || len(items) < 2 {
		for i := range items {
			one(i)
			// A request's answer should not wait for learning.
			runtime.Gosched()
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
