package engine

import (
	"context"
	"errors"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"go.uber.org/zap"
	"golang.org/x/time/rate"

	"github.com/caddy-memory/memory/internal/llm"
	"github.com/caddy-memory/memory/internal/recall"
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

// distiller is learning with a model: while a configuration turns it on,
// sessions are distilled in the background once they have gone quiet.
type distiller struct {
	*core
	recall *recall.Searcher // what the owner knows, shown to the model
	// learned is closed once, at Close, the turns are all learned: the
	// sessions waiting then are all there are.
	learned <-chan struct{}
	mu      sync.Mutex                 // orders turning it on and off
	run     atomic.Pointer[distilling] // set while it is on
}

// distilling is learning with a model while it is on with one
// configuration.
type distilling struct {
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

func (d *distilling) config() *LLMConfig { return d.settings.Load() }

// UseLLM turns on learning with a model with cfg. When it is on already,
// cfg replaces the settings in effect (endpoint, model and rate cap
// included: the memories it learned stay what they are).
func (e *Engine) UseLLM(cfg LLMConfig) { e.distiller.use(cfg) }

func (lm *distiller) use(cfg LLMConfig) {
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
	lm.mu.Lock()
	defer lm.mu.Unlock()
	if d := lm.running(); d != nil {
		if d.config().CallsPerMinute != cfg.CallsPerMinute {
			d.limit.SetLimit(perMinute(cfg.CallsPerMinute))
			d.limit.SetBurst(cfg.CallsPerMinute)
		}
		d.settings.Store(&cfg)
		return
	}
	d := &distilling{
		limit:    rate.NewLimiter(perMinute(cfg.CallsPerMinute), cfg.CallsPerMinute),
		wake:     make(chan struct{}, 1),
		done:     make(chan struct{}),
		failures: map[string]retryAt{},
	}
	d.ctx, d.cancel = context.WithCancel(lm.stopCtx)
	d.settings.Store(&cfg)
	lm.run.Store(d)
	go lm.loop(d)
}

// StopLLM turns learning with a model off, for a configuration without
// llm: a call in flight is cancelled and the distiller stops. Sessions
// waiting to be distilled stay marked in the store, for a later
// configuration that turns it on again.
func (e *Engine) StopLLM() { e.distiller.stop() }

func (lm *distiller) stop() {
	lm.mu.Lock()
	defer lm.mu.Unlock()
	d := lm.run.Swap(nil)
	if d == nil {
		return
	}
	d.cancel()
	<-d.done
}

func perMinute(n int) rate.Limit { return rate.Every(time.Minute / time.Duration(n)) }

// wakeUp wakes the distiller, if learning with a model is on.
func (lm *distiller) wakeUp() {
	if d := lm.running(); d != nil {
		lm.wake(d.wake)
	}
}

// running is learning with a model as it is on, nil while it is off.
func (lm *distiller) running() *distilling { return lm.run.Load() }

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

// loop distils sessions as they become due, off the request path. At
// Close it distils every waiting session while the drain allows; what it
// does not reach waits, durably, for the next start.
func (lm *distiller) loop(d *distilling) {
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
		case <-lm.drain:
			// Learning stops first, so what waits now is all.
			select {
			case <-lm.learned:
			case <-lm.abort:
				return
			}
			lm.due(d, true)
			return
		}
		lm.due(d, false)
	}
}

// due distils the sessions that are due; on a shared database, on one
// instance at a time, so no session is distilled twice.
func (lm *distiller) due(d *distilling, stopping bool) {
	_, err := lm.store.Once(d.ctx, "distill", func() error {
		lm.dueHere(d, stopping)
		return nil
	})
	if err != nil && !errors.Is(err, context.Canceled) {
		lm.log().Warn("distilling sessions: the shared database did not answer; trying again later", zap.Error(err))
	}
}

// dueHere distils the sessions that are due, oldest first, as far as the
// rate cap allows: all of them when stopping.
func (lm *distiller) dueHere(d *distilling, stopping bool) {
	cfg := d.config()
	now := time.Now()
	var due []store.SessionState
	err := lm.store.View(func(tx *store.Tx) error {
		return tx.Sessions("", func(s store.SessionState) error {
			if stopping || s.Due || now.Sub(s.Last) >= cfg.Debounce {
				due = append(due, s)
			}
			return nil
		})
	})
	if err != nil {
		lm.log().Error("reading the sessions waiting to be distilled", zap.Error(err))
		return
	}
	slices.SortFunc(due, func(a, b store.SessionState) int { return a.Last.Compare(b.Last) })
	for _, s := range due {
		if lm.stopping() || d.ctx.Err() != nil {
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
		lm.session(d, cfg, s)
	}
}

// ready reports whether a session's last failure's backoff is over.
func (d *distilling) ready(s store.SessionState, now time.Time) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	r, failed := d.failures[s.Owner+"\x00"+s.Session]
	return !failed || !now.Before(r.next)
}

// failed records a failed flush of a session and when to try again.
func (d *distilling) failed(s store.SessionState, cfg *LLMConfig) time.Duration {
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

func (d *distilling) succeeded(s store.SessionState) {
	d.mu.Lock()
	delete(d.failures, s.Owner+"\x00"+s.Session)
	d.mu.Unlock()
}

// WaitDistilled waits until no session waits to be distilled, or ctx is
// done. It returns at once when learning with a model is off. Sessions
// still within their debounce are waited for.
func (e *Engine) WaitDistilled(ctx context.Context) error { return e.distiller.wait(ctx) }

func (lm *distiller) wait(ctx context.Context) error {
	if lm.running() == nil {
		return nil
	}
	for {
		waiting := 0
		if err := lm.store.View(func(tx *store.Tx) error {
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
