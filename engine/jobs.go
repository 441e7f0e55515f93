package engine

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"time"

	"go.uber.org/zap"

	"github.com/caddy-memory/memory/contentenc"
	"github.com/caddy-memory/memory/extract"
	"github.com/caddy-memory/memory/inject"
	"github.com/caddy-memory/memory/store"
)

// Job is one proxied turn waiting to be remembered.
type Job struct {
	Owner   string `json:"owner"` // the stored owner id, never the raw value
	Session string `json:"session,omitempty"`
	// Conversation groups the turns of one conversation (see
	// inject.Request.Conversation).
	Conversation string `json:"conversation,omitempty"`
	Dialect      string `json:"dialect"`
	// User is the latest user message; NewTurn says it was new in this
	// request (facts are taken only from new turns), Turn its position.
	User    string `json:"user"`
	NewTurn bool   `json:"new_turn"`
	Turn    int    `json:"turn"`
	// Before are the messages before the user's, indexed as the turn's
	// context (see store.Memory.Context).
	Before []string `json:"before,omitempty"`
	// Response is the (possibly truncated) copy of the upstream response,
	// in its Content-Encoding.
	Response        []byte `json:"response,omitempty"`
	ContentType     string `json:"content_type,omitempty"`
	ContentEncoding string `json:"content_encoding,omitempty"`
	Truncated       bool   `json:"truncated,omitempty"`
	// Injected are the memories the request carried, as the model saw them:
	// lines of the answer that repeat them are not learned again.
	Injected []string  `json:"injected,omitempty"`
	Ref      string    `json:"ref,omitempty"`
	Time     time.Time `json:"time"`
}

// Limits on a transcript memory: enough of a turn to find it and recall it,
// not a whole pasted document.
const (
	maxTurnUser      = 4000
	maxTurnAssistant = 4000
	persistBatch     = 256
	processBatch     = 64
	// maxDecoded caps a compressed response copy once decoded.
	maxDecoded = 8 << 20
)

// TurnKey is the stable key of a conversation turn's transcript memory; the
// facts learned from that turn point to it. The proxy uses it to leave the
// turn being answered out of its own recall.
func TurnKey(conversation string, turn int, user string) string {
	return "turn:" + conversation + ":" + strconv.Itoa(turn) + ":" + shortHash(inject.Strip(user))
}

// Enqueue hands a turn to the background writer without waiting. It returns
// false, and counts the turn as dropped, when the queue is full or the engine
// is closing.
func (e *Engine) Enqueue(j *Job) bool {
	// Counted once the turn is queued (or refused), so that a Sync after
	// Enqueued reached n waits for all n: the client now has its answer
	// before the handler gets here.
	defer e.enqueued.Add(1)
	data, err := json.Marshal(j)
	if err != nil {
		e.cfg.Observer.JobFailed()
		return false
	}
	e.closeMu.RLock()
	defer e.closeMu.RUnlock()
	if e.closing {
		e.cfg.Observer.JobDropped()
		return false
	}
	e.pending.Add(1)
	select {
	case e.queue <- store.Job{Owner: j.Owner, Data: data}:
		return true
	default:
		e.pending.Add(-1)
		e.cfg.Observer.JobDropped()
		return false
	}
}

// persister makes queued turns durable, in one transaction per group: while
// one commit waits for fsync (or, under load, for persistEvery to pass) the
// next group gathers, so a crash loses only the turns of that group and of
// the commit in flight.
func (e *Engine) persister() {
	defer close(e.persisterDone)
	var last time.Time
	for {
		var first store.Job
		select {
		case first = <-e.queue:
		case <-e.drain:
			// Close holds off new turns; save what is queued, then stop.
			for len(e.queue) > 0 && !e.stopping() {
				e.persist(e.gather(<-e.queue))
			}
			return
		}
		e.pace(last, persistEvery)
		last = time.Now()
		e.persist(e.gather(first))
	}
}

// persistEvery and processEvery space the background writers' commits
// under load. Each commit costs two fsyncs, which on this project's test
// machines burn CPU, and rewrites the pages it touches; with turns arriving
// every 3 ms, nearly each had two commits of its own, and the writes took
// CPU from the requests being proxied (bench, 8 clients at 100k memories:
// with learning switched off, JSON p50 +0.5 ms over bare instead of +1.4
// ms). Spaced, a turn costs 390 µs of CPU instead of 1,040 (BenchmarkTurnCost).
// A turn that arrives after a quiet spell is still committed at once; under
// load, a crash can lose the turns of the last persistEvery, and what a
// turn taught is searchable up to processEvery later.
const (
	persistEvery = 10 * time.Millisecond
	processEvery = 50 * time.Millisecond
)

// pace waits until every has passed since last, or Close starts draining.
func (e *Engine) pace(last time.Time, every time.Duration) {
	wait := every - time.Since(last)
	if wait <= 0 {
		return
	}
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case <-t.C:
	case <-e.drain:
	}
}

// persisted is told the size of each group committed; tests count them.
var persisted = func(turns int) {}

func (e *Engine) gather(first store.Job) []store.Job {
	batch := []store.Job{first}
	for len(batch) < persistBatch {
		select {
		case j := <-e.queue:
			batch = append(batch, j)
		default:
			return batch
		}
	}
	return batch
}

func (e *Engine) persist(batch []store.Job) {
	err := e.store.PutJobs(batch)
	persisted(len(batch))
	e.pending.Add(-int64(len(batch)))
	if err != nil {
		for range batch {
			e.cfg.Observer.JobDropped()
		}
		e.log().Error("saving turns for memory extraction failed; they are dropped",
			zap.Int("turns", len(batch)), zap.Error(err))
		return
	}
	e.wake(e.wakeProcessor)
}

// processor turns durable jobs into memories. A job is deleted in the same
// transaction that stores its memories, so each is done exactly once.
func (e *Engine) processor() {
	defer close(e.processorDone)
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	var last time.Time
	for {
		select {
		case <-e.wakeProcessor:
			e.pace(last, processEvery)
			last = time.Now()
		case <-tick.C:
		case <-e.drain:
			// The persister stops first, so what is in the store now is all.
			select {
			case <-e.persisterDone:
			case <-e.abort:
				return
			}
			e.processPending()
			return
		}
		e.processPending()
	}
}

func (e *Engine) processPending() {
	for !e.stopping() {
		jobs, err := e.store.Jobs(processBatch)
		if err != nil {
			e.log().Error("reading pending memory jobs", zap.Error(err))
			return
		}
		if len(jobs) == 0 {
			return
		}
		if !e.process(jobs) {
			return // the store refused the write; try again on the next tick
		}
	}
}

func (e *Engine) process(jobs []store.Job) bool {
	type work struct {
		seq               uint64
		owner             string
		puts              []store.Put
		ref, conversation string
		ok                bool
	}
	ws := make([]work, len(jobs))
	for i, sj := range jobs {
		ws[i].seq = sj.Seq
		var j Job
		if err := json.Unmarshal(sj.Data, &j); err != nil || j.Owner == "" {
			e.log().Error("discarding unreadable memory job", zap.Uint64("job", sj.Seq), zap.Error(err))
			continue
		}
		ws[i].owner, ws[i].ok = j.Owner, true
		ws[i].puts, ws[i].ref = e.memoriesOf(&j)
		ws[i].conversation = j.Conversation
	}
	stored := make([]int, len(ws))
	err := e.store.Update(func(tx *store.Tx) error {
		for i, w := range ws {
			stored[i] = 0
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
			if err := tx.DeleteJob(w.seq); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		e.log().Error("storing memories failed; will retry", zap.Error(err))
		return false
	}
	for i, w := range ws {
		if w.ok {
			e.cfg.Observer.JobDone(stored[i])
		} else {
			e.cfg.Observer.JobFailed()
		}
	}
	// The indexer is not woken: it takes what extraction stored on its next
	// tick, in one batch per shard. Waking it for every job made one tiny
	// Bleve segment per shard per job, and merging them took 40% of the CPU
	// under load (bench -cpuprofile).
	return true
}

// memoriesOf is the extraction of one turn: the transcript of the turn (so
// anything said can be found again) and the facts the user stated in it.
func (e *Engine) memoriesOf(j *Job) (puts []store.Put, responseID string) {
	user := extract.StripQuoted(inject.Strip(j.User), j.Injected)
	a := e.assistantOf(j)
	a.Text = extract.StripQuoted(a.Text, j.Injected)
	ref := a.ID
	if ref == "" {
		ref = j.Ref
	}
	turnKey := TurnKey(j.Conversation, j.Turn, j.User)
	meta := map[string]string{"position": strconv.Itoa(j.Turn)}
	if j.Conversation != "" {
		meta["conversation"] = j.Conversation
	}

	// A response that is only tool calls is not the turn's answer; the
	// request that carries the tool results gets the answer and stores the
	// turn under the same key.
	if user != "" && (a.Text != "" || a.ToolCalls == 0) {
		content := "User: " + inject.Truncate(user, maxTurnUser/4)
		if a.Text != "" {
			content += "\nAssistant: " + inject.Truncate(a.Text, maxTurnAssistant/4)
		}
		var before []string
		for _, b := range j.Before {
			before = append(before, inject.Truncate(b, maxContextTokens))
		}
		puts = append(puts, store.Put{
			Session: j.Session, Kind: "turn", Key: turnKey, Content: content,
			Context: strings.Join(before, "\n") + dateWords(j.Time),
			Ref:     ref, Time: j.Time, Meta: meta,
		})
	}
	if j.NewTurn {
		for _, f := range extract.Facts(user) {
			puts = append(puts, store.Put{
				Session: j.Session, Kind: f.Kind, Key: f.Key, Content: f.Content,
				Ref: ref, Time: j.Time, Meta: map[string]string{"turn": turnKey},
			})
		}
	}
	return puts, a.ID
}

// assistantOf decodes the answer from the job's copy of the response.
func (e *Engine) assistantOf(j *Job) extract.Assistant {
	if len(j.Response) == 0 {
		return extract.Assistant{}
	}
	body, err := contentenc.Decode(j.ContentEncoding, j.Response, maxDecoded, j.Truncated)
	if err == nil {
		var a extract.Assistant
		if a, err = extract.Decode(j.Dialect, j.ContentType, body); err == nil || j.Truncated {
			return a
		}
	}
	if c := e.log().Check(zap.DebugLevel, "could not decode the assistant turn"); c != nil {
		c.Write(zap.String("content_type", j.ContentType), zap.String("content_encoding", j.ContentEncoding), zap.Error(err))
	}
	return extract.Assistant{}
}

func shortHash(s string) string {
	h := sha256.Sum256([]byte(store.Normalize(s)))
	return hex.EncodeToString(h[:6])
}
