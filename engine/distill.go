package engine

import (
	"cmp"
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"go.uber.org/zap"
	"golang.org/x/time/rate"

	"github.com/caddy-memory/memory/extract"
	"github.com/caddy-memory/memory/llm"
	"github.com/caddy-memory/memory/store"
)

// LLMConfig turns on learning with a model: each session's turns, once
// the session has been quiet for Debounce, are distilled by one call into
// an episode and standalone facts (see extract.DistillPrompt).
type LLMConfig struct {
	Client *llm.Client
	// Debounce is the quiet time after a session's latest turn before it is
	// distilled. Default 60s.
	Debounce time.Duration
	// Timeout bounds one call. Default 60s.
	Timeout time.Duration
	// CallsPerMinute caps the calls made (retries included); sessions wait
	// for their turn, nothing is lost. Default 30.
	CallsPerMinute int

	// retry is the wait after a session's first failed flush, growing
	// threefold with each further failure up to maxRetry. Default 10s;
	// tests shorten it.
	retry time.Duration
}

// Defaults of LLMConfig.
const (
	DefaultDebounce       = 60 * time.Second
	DefaultLLMTimeout     = 60 * time.Second
	DefaultCallsPerMinute = 30
	defaultRetry          = 10 * time.Second
	maxRetry              = 5 * time.Minute
	// maxKnown is how many of the owner's existing memories a call shows.
	maxKnown = 12
)

// Results of a call to the model, for the metrics.
const (
	LLMOK      = "ok"       // answered, and the answer was read
	LLMBadJSON = "bad_json" // answered with something that could not be read
	LLMError   = "error"    // the endpoint failed, refused or timed out
)

// distiller is the engine's optional learning with a model.
type distiller struct {
	settings atomic.Pointer[LLMConfig]
	limit    *rate.Limiter
	wake     chan struct{}
	done     chan struct{}
	// ctx ends the distiller's calls: when the engine's deadline passes,
	// or when a configuration without llm stops it (StopLLM).
	ctx    context.Context
	cancel context.CancelFunc

	mu       sync.Mutex
	failures map[string]retryAt // owner + 0 + session
}

type retryAt struct {
	failures int
	next     time.Time
}

func (d *distiller) config() *LLMConfig { return d.settings.Load() }

// UseLLM turns on learning with a model with cfg. When it is on already,
// cfg replaces the settings in effect (endpoint, model and rate cap
// included: the memories it learned stay what they are).
func (e *Engine) UseLLM(cfg LLMConfig) {
	if cfg.Debounce <= 0 {
		cfg.Debounce = DefaultDebounce
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultLLMTimeout
	}
	if cfg.CallsPerMinute <= 0 {
		cfg.CallsPerMinute = DefaultCallsPerMinute
	}
	if cfg.retry <= 0 {
		cfg.retry = defaultRetry
	}
	e.learnersMu.Lock()
	defer e.learnersMu.Unlock()
	if d := e.distilling(); d != nil {
		if d.config().CallsPerMinute != cfg.CallsPerMinute {
			d.limit.SetLimit(perMinute(cfg.CallsPerMinute))
			d.limit.SetBurst(cfg.CallsPerMinute)
		}
		d.settings.Store(&cfg)
		return
	}
	d := &distiller{
		limit:    rate.NewLimiter(perMinute(cfg.CallsPerMinute), cfg.CallsPerMinute),
		wake:     make(chan struct{}, 1),
		done:     make(chan struct{}),
		failures: map[string]retryAt{},
	}
	d.ctx, d.cancel = context.WithCancel(e.stopCtx)
	d.settings.Store(&cfg)
	e.llm.Store(d)
	go e.distillLoop(d)
}

// StopLLM turns learning with a model off, for a configuration without
// llm: a call in flight is cancelled and the distiller stops. Sessions
// waiting to be distilled stay marked in the store, for a later
// configuration that turns it on again.
func (e *Engine) StopLLM() {
	e.learnersMu.Lock()
	defer e.learnersMu.Unlock()
	d := e.llm.Swap(nil)
	if d == nil {
		return
	}
	d.cancel()
	<-d.done
}

func perMinute(n int) rate.Limit { return rate.Every(time.Minute / time.Duration(n)) }

// wakeDistiller wakes the distiller, if learning with a model is on.
func (e *Engine) wakeDistiller() {
	if d := e.distilling(); d != nil {
		e.wake(d.wake)
	}
}

func (e *Engine) distilling() *distiller { return e.llm.Load() }

// touchSession records, in tx, that a turn of session was learned for
// owner at at: the session waits to be distilled until it has been quiet
// for the debounce (or at once, with due), and the owner's other waiting
// sessions are due at once (a new session began). It reports whether any
// session became due.
func touchSession(tx *store.Tx, owner, session string, at time.Time, due bool) (bool, error) {
	var others []store.SessionState
	err := tx.Sessions(owner, func(s store.SessionState) error {
		if s.Session != session && !s.Due {
			others = append(others, s)
		}
		return nil
	})
	if err != nil {
		return false, err
	}
	for _, s := range others {
		s.Due = true
		if err := tx.PutSession(s); err != nil {
			return false, err
		}
	}
	s, ok := tx.Session(owner, session)
	if !ok {
		s = store.SessionState{Owner: owner, Session: session}
	}
	if at.After(s.Last) {
		s.Last = at
	}
	s.Due = s.Due || due
	return due || len(others) > 0, tx.PutSession(s)
}

// distillLoop distils sessions as they become due, off the request path.
// At Close it distils every waiting session while the drain allows; what
// it does not reach waits, durably, for the next start.
func (e *Engine) distillLoop(d *distiller) {
	defer close(d.done)
	every := min(time.Second, max(d.config().Debounce/4, 10*time.Millisecond))
	tick := time.NewTicker(every)
	defer tick.Stop()
	for {
		select {
		case <-d.wake:
		case <-tick.C:
		case <-d.ctx.Done():
			return // stopped (StopLLM), or the engine's deadline passed
		case <-e.drain:
			// Learning stops first, so what waits now is all.
			select {
			case <-e.processorDone:
			case <-e.abort:
				return
			}
			e.distillDue(d, true)
			return
		}
		e.distillDue(d, false)
	}
}

// distillDue distils the sessions that are due; on a shared database, on
// one instance at a time, so no session is distilled twice.
func (e *Engine) distillDue(d *distiller, stopping bool) {
	_, err := e.store.Once(d.ctx, "distill", func() error {
		e.distillDueHere(d, stopping)
		return nil
	})
	if err != nil && !errors.Is(err, context.Canceled) {
		e.log().Warn("distilling sessions: the shared database did not answer; trying again later", zap.Error(err))
	}
}

// distillDueHere distils the sessions that are due, oldest first, as far
// as the rate cap allows: all of them when stopping.
func (e *Engine) distillDueHere(d *distiller, stopping bool) {
	cfg := d.config()
	now := time.Now()
	var due []store.SessionState
	err := e.store.View(func(tx *store.Tx) error {
		return tx.Sessions("", func(s store.SessionState) error {
			if stopping || s.Due || now.Sub(s.Last) >= cfg.Debounce {
				due = append(due, s)
			}
			return nil
		})
	})
	if err != nil {
		e.log().Error("reading the sessions waiting to be distilled", zap.Error(err))
		return
	}
	slices.SortFunc(due, func(a, b store.SessionState) int { return a.Last.Compare(b.Last) })
	for _, s := range due {
		if e.stopping() || d.ctx.Err() != nil {
			return
		}
		if !stopping && !d.ready(s, now) {
			continue
		}
		if !d.limit.Allow() {
			if !stopping {
				return // the rest wait for their turn under the cap
			}
			if err := d.limit.Wait(d.ctx); err != nil {
				return
			}
		}
		e.distillSession(d, cfg, s)
	}
}

// ready reports whether a session's last failure's backoff is over.
func (d *distiller) ready(s store.SessionState, now time.Time) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	r, failed := d.failures[s.Owner+"\x00"+s.Session]
	return !failed || !now.Before(r.next)
}

// failed records a failed flush of a session and when to try again.
func (d *distiller) failed(s store.SessionState, cfg *LLMConfig) time.Duration {
	d.mu.Lock()
	defer d.mu.Unlock()
	key := s.Owner + "\x00" + s.Session
	r := d.failures[key]
	wait := cfg.retry
	for range r.failures {
		wait = min(3*wait, maxRetry)
	}
	d.failures[key] = retryAt{r.failures + 1, time.Now().Add(wait)}
	return wait
}

func (d *distiller) succeeded(s store.SessionState) {
	d.mu.Lock()
	delete(d.failures, s.Owner+"\x00"+s.Session)
	d.mu.Unlock()
}

// sessionTurn is a transcript turn of a session.
type sessionTurn struct {
	seq          uint64
	created      time.Time
	updated      time.Time
	id           uint64
	content, ref string
}

// distillSession makes one call for a session's turns not yet distilled,
// and stores what it teaches. A failed call, or an answer that cannot be
// read even when asked again, leaves the turns waiting for the next flush.
func (e *Engine) distillSession(d *distiller, cfg *LLMConfig, s store.SessionState) {
	turns, err := e.sessionTurns(s)
	if err != nil {
		e.log().Error("reading a session to distil", zap.Error(err))
		return
	}
	if len(turns) == 0 {
		_, _ = e.write(func(tx *store.Tx) error { return tx.DeleteSession(s.Owner, s.Session) })
		return
	}
	texts, refs := make([]string, len(turns)), make([]string, len(turns))
	for i, t := range turns {
		texts[i], refs[i] = t.content, t.ref
	}
	known, err := e.similarTo(d.ctx, s.Owner, texts)
	if err != nil {
		e.log().Error("finding what a session's owner already remembers", zap.Error(err))
		return
	}
	// The prompt holds the oldest turns that fit; its date is the newest
	// of those.
	_, _, n := extract.DistillPrompt(extract.Session{Turns: texts})
	var date time.Time
	through := s.Through
	for _, t := range turns[:n] {
		through = max(through, t.seq)
		if t.updated.After(date) {
			date = t.updated
		}
	}
	system, user, _ := extract.DistillPrompt(extract.Session{Date: date, Turns: texts[:n], Known: known})

	distilled, err := e.ask(d.ctx, cfg, system, user, len(known))
	if err != nil {
		wait := d.failed(s, cfg)
		e.log().Warn("distilling a session failed; its turns wait for the next try",
			zap.Error(err), zap.Duration("retry_in", wait))
		return
	}
	d.succeeded(s)
	mems := distilled.Memories(s.Session, date, known, refs[:n])
	_, err = e.write(func(tx *store.Tx) error {
		for _, m := range mems {
			if _, _, err := tx.Upsert(s.Owner, e.putOf(m, store.SourceLLM)); err != nil && !errors.Is(err, store.ErrInvalid) {
				return err
			}
		}
		cur, ok := tx.Session(s.Owner, s.Session)
		switch {
		case !ok: // forgotten meanwhile
			return nil
		case n < len(turns) || cur.Last.After(s.Last):
			// More turns wait: the rest of a long session at once, or
			// turns learned during the call after the debounce.
			cur.Through, cur.Due = through, n < len(turns)
			return tx.PutSession(cur)
		}
		return tx.DeleteSession(s.Owner, s.Session)
	})
	if err != nil {
		e.log().Error("storing what a session taught; it is distilled again", zap.Error(err))
		return
	}
	if n < len(turns) {
		e.wake(d.wake)
	}
}

// ask makes the call, and asks once more, saying why, when the answer
// cannot be read.
func (e *Engine) ask(stop context.Context, cfg *LLMConfig, system, user string, known int) (extract.Distilled, error) {
	msgs := []llm.Message{{Role: "system", Content: system}, {Role: "user", Content: user}}
	for attempt := 0; ; attempt++ {
		ctx, cancel := context.WithTimeout(stop, cfg.Timeout)
		start := time.Now()
		answer, err := cfg.Client.Complete(ctx, msgs, true)
		cancel()
		if err != nil {
			e.cfg.Observer.LLMCall(LLMError, time.Since(start))
			return extract.Distilled{}, err
		}
		d, err := extract.ParseDistilled(answer, known)
		if err == nil {
			e.cfg.Observer.LLMCall(LLMOK, time.Since(start))
			return d, nil
		}
		e.cfg.Observer.LLMCall(LLMBadJSON, time.Since(start))
		if attempt == 1 {
			return extract.Distilled{}, err
		}
		msgs = append(msgs, llm.Message{Role: "assistant", Content: answer}, llm.Message{Role: "user", Content: extract.RetryPrompt(err)})
	}
}

// sessionTurns are a session's transcript turns changed since it was last
// distilled, in the order they were said.
func (e *Engine) sessionTurns(s store.SessionState) ([]sessionTurn, error) {
	var turns []sessionTurn
	err := e.store.View(func(tx *store.Tx) error {
		now := tx.Now()
		return tx.PeekAll(s.Owner, func(p *store.Peek) error {
			if !p.Active(now) || !p.InSession(s.Session) {
				return nil
			}
			m, err := p.Memory()
			if err != nil {
				return err
			}
			if m.Kind == "turn" && m.Seq > s.Through {
				turns = append(turns, sessionTurn{seq: m.Seq, created: m.CreatedAt, updated: m.UpdatedAt, id: m.ID, content: m.Content, ref: m.Ref})
			}
			return nil
		})
	})
	slices.SortFunc(turns, func(a, b sessionTurn) int {
		if c := a.created.Compare(b.created); c != 0 {
			return c
		}
		return cmp.Compare(a.id, b.id)
	})
	return turns, err
}

// similarTo is what the owner already remembers that is most like the
// turns: facts, not transcripts or episodes, for the model to update or
// leave alone.
func (e *Engine) similarTo(ctx context.Context, owner string, turns []string) ([]extract.Known, error) {
	var query strings.Builder
	for _, t := range turns {
		query.WriteString(t)
		query.WriteByte('\n')
	}
	res, err := e.Search(ctx, SearchRequest{Owner: owner, Query: query.String(), Limit: 3 * maxKnown})
	if err != nil {
		return nil, err
	}
	// The profile first: the model keeps it current, and a session that
	// changes a standing fact often shares no word with it ("I moved to
	// Porto" / "User lives in Lisbon.").
	known, err := e.searcher.profileKnown(owner)
	if err != nil {
		return nil, err
	}
	shown := map[string]bool{}
	for _, k := range known {
		shown[k.Key] = true
	}
	similar := 0
	for _, r := range res {
		if m := r.Memory; m.Kind != "turn" && m.Kind != "episode" && !shown[m.Key] && similar < maxKnown {
			known = append(known, extract.Known{Key: m.Key, Kind: m.Kind, Content: m.Content})
			similar++
		}
	}
	return known, nil
}

// WaitDistilled waits until no session waits to be distilled, or ctx is
// done. It returns at once when learning with a model is off. Sessions
// still within their debounce are waited for.
func (e *Engine) WaitDistilled(ctx context.Context) error {
	if e.distilling() == nil {
		return nil
	}
	for {
		waiting := 0
		if err := e.store.View(func(tx *store.Tx) error {
			return tx.Sessions("", func(store.SessionState) error { waiting++; return nil })
		}); err != nil {
			return err
		}
		if waiting == 0 {
			return nil
		}
		select {
		case <-ctx.Done():
			return errors.Join(errors.New("sessions still wait to be distilled"), ctx.Err())
		case <-time.After(20 * time.Millisecond):
		}
	}
}
