package engine

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"go.uber.org/zap"

	"github.com/caddy-memory/memory/internal/consolidate"
	"github.com/caddy-memory/memory/store"
)

// LifecycleConfig is how memories age (see package consolidate) and how
// often a consolidation pass runs.
type LifecycleConfig struct {
	consolidate.Config
	// Every is the time between passes; 0 runs none (POST /consolidate
	// still does).
	Every time.Duration
}

// DefaultConsolidateEvery is the time between consolidation passes.
const DefaultConsolidateEvery = 24 * time.Hour

// DefaultLifecycle is the lifecycle when nothing is configured.
var DefaultLifecycle = LifecycleConfig{
	Config: consolidate.Config{
		TurnRetention:    consolidate.DefaultTurnRetention,
		EpisodeRetention: consolidate.DefaultEpisodeRetention,
		SalienceFloor:    consolidate.DefaultSalienceFloor,
	},
	Every: DefaultConsolidateEvery,
}

// Store cursors of the consolidation pass: when the last one ended, and
// the owner a pass in progress has reached (so a pass cut short by a
// crash or a stop resumes there).
const (
	consolidatedCursor = "consolidated_at"
	consolidateMark    = "consolidate_from"
)

// Consolidated counts what a pass did (or, dry, would do).
type Consolidated struct {
	Decayed  int `json:"decayed"`
	Merged   int `json:"merged"`
	Promoted int `json:"promoted"`
	Evicted  int `json:"evicted"`
	Pruned   int `json:"pruned"`
	Owners   int `json:"owners"`
}

func (c *Consolidated) add(p consolidate.Plan) {
	c.Decayed += p.Decayed
	for _, m := range p.Merges {
		c.Merged += len(m.Others)
	}
	c.Promoted += len(p.Promotions)
	c.Evicted += len(p.Evict)
	c.Pruned += len(p.Prune) + len(p.PruneFacts)
}

// consolidator runs the consolidation passes that age memories (package
// consolidate decides what each does): in the background, every Every,
// and when asked.
type consolidator struct {
	*core
	indexer *indexer // a pass returns once searches see it

	settings atomic.Pointer[LifecycleConfig]
	// running serialises passes: the background one and those asked for.
	running   sync.Mutex
	changed   chan struct{} // the settings changed
	done      chan struct{}
	started   atomic.Bool
	startOnce sync.Once
}

func (cs *consolidator) config() *LifecycleConfig { return cs.settings.Load() }

// UseLifecycle sets how memories age. The first call starts the background
// pass; later ones replace the settings.
func (e *Engine) UseLifecycle(cfg LifecycleConfig) { e.consolidator.use(cfg) }

func (cs *consolidator) use(cfg LifecycleConfig) {
	cs.settings.Store(&cfg)
	cs.startOnce.Do(func() {
		cs.started.Store(true)
		go cs.run()
	})
	cs.wake(cs.changed)
}

// run runs a pass every Every, resuming after a restart: one that was cut
// short, or due while the server was down, starts soon after.
func (cs *consolidator) run() {
	defer close(cs.done)
	for {
		cfg := cs.config()
		wait := time.Hour
		if cfg.Every > 0 {
			last := time.Unix(0, int64(cs.store.Cursor(consolidatedCursor)))
			wait = min(max(cfg.Every-cs.now().Sub(last), time.Minute), cfg.Every)
			if cs.store.Mark(consolidateMark) != "" {
				wait = time.Minute // a pass was cut short
			}
		}
		t := time.NewTimer(wait)
		select {
		case <-t.C:
			if cs.config().Every > 0 {
				// On a shared database one instance runs the pass; the
				// others see it done in its cursor.
				_, err := cs.store.Once(cs.stopCtx, "consolidate", func() error {
					_, err := cs.consolidate(cs.stopCtx, "", false)
					return err
				})
				if err != nil && !errors.Is(err, context.Canceled) {
					cs.log().Error("consolidating memories; the pass resumes later", zap.Error(err))
				}
			}
		case <-cs.changed:
		case <-cs.drain:
			t.Stop()
			return
		}
		t.Stop()
	}
}

// Consolidate runs a pass over owner's memories, or every owner's for "",
// and reports what it did; with dry, what it would do, changing nothing.
// It is bounded: one owner at a time, in small transactions, pausing
// between owners for requests, and a pass over every owner that is cut
// short resumes at the owner it reached.
func (e *Engine) Consolidate(ctx context.Context, owner string, dry bool) (Consolidated, error) {
	return e.consolidator.consolidate(ctx, owner, dry)
}

func (cs *consolidator) consolidate(ctx context.Context, owner string, dry bool) (Consolidated, error) {
	cs.running.Lock()
	defer cs.running.Unlock()
	cfg := cs.config()
	if cfg == nil {
		cfg = &DefaultLifecycle
	}
	var owners []string
	from := ""
	if owner != "" {
		owners = []string{owner}
	} else {
		if !dry {
			from = cs.store.Mark(consolidateMark)
		}
		if err := cs.store.View(func(tx *store.Tx) error {
			return tx.OwnersFrom(from, func(o string) (bool, error) { owners = append(owners, o); return true, nil })
		}); err != nil {
			return Consolidated{}, err
		}
	}
	var res Consolidated
	for i, o := range owners {
		if err := ctx.Err(); err != nil {
			return res, err
		}
		plan, err := cs.planFor(o, cfg)
		if err != nil {
			return res, fmt.Errorf("consolidating an owner's memories: %w", err)
		}
		res.add(plan)
		res.Owners++
		if !dry && !plan.Empty() {
			if err := cs.apply(ctx, o, plan); err != nil {
				return res, err
			}
		}
		if owner == "" && !dry {
			next := ""
			if i+1 < len(owners) {
				next = owners[i+1]
			}
			if err := cs.store.Update(func(tx *store.Tx) error { return tx.SetMark(consolidateMark, next) }); err != nil {
				return res, err
			}
			cs.pace(time.Now(), consolidatePause)
		}
	}
	if owner == "" && !dry {
		at := uint64(cs.now().UnixNano())
		if err := cs.store.Update(func(tx *store.Tx) error { return tx.SetCursor(consolidatedCursor, at) }); err != nil {
			return res, err
		}
		cs.log().Info("consolidated memories", zap.Int("owners", res.Owners), zap.Int("merged", res.Merged),
			zap.Int("promoted", res.Promoted), zap.Int("evicted", res.Evicted), zap.Int("pruned", res.Pruned))
	}
	return res, nil
}

// consolidatePause is how long a pass waits between owners, so learning
// and the API, which need the store's one writer, wait little.
const consolidatePause = 5 * time.Millisecond

// planFor reads an owner's active memories and decides the pass's steps.
func (cs *consolidator) planFor(owner string, cfg *LifecycleConfig) (consolidate.Plan, error) {
	var ms []consolidate.Memory
	now := cs.now()
	err := cs.store.View(func(tx *store.Tx) error {
		return tx.ForEach(owner, func(m *store.Memory) error {
			if m.Active(now) {
				ms = append(ms, policyView(m, tx.Usage(owner, m.ID)))
			}
			return nil
		})
	})
	if err != nil {
		return consolidate.Plan{}, err
	}
	return consolidate.PlanFor(ms, now, cfg.Config), nil
}

// policyView is what the lifecycle policy sees of a memory.
func policyView(m *store.Memory, u store.Usage) consolidate.Memory {
	return consolidate.Memory{ID: m.ID, Kind: m.Kind, Content: m.Content, Source: m.Source, Importance: m.Importance,
		Mentions: m.Mentions, Pinned: m.Pinned, Updated: m.UpdatedAt, Uses: u.Uses, LastUsed: u.LastUsed, Boost: u.Boost}
}

// apply carries out an owner's plan in one transaction, and returns once
// searches see it.
func (cs *consolidator) apply(ctx context.Context, owner string, p consolidate.Plan) error {
	now := cs.now().UTC()
	seq, err := cs.write(func(tx *store.Tx) error {
		for _, g := range p.Merges {
			var texts []store.Version
			mentions := 0
			for _, id := range g.Others {
				m, err := tx.Get(owner, id)
				if err != nil {
					continue // gone since it was read
				}
				texts = append(texts, store.Version{Content: m.Content, Ref: m.Ref, Session: m.Session, At: m.UpdatedAt, Until: now})
				mentions += m.Mentions
				if _, err := tx.Edit(owner, id, func(m *store.Memory) error {
					m.DeletedAt, m.DeleteReason = &now, fmt.Sprintf("merged into %d", g.Into)
					return nil
				}); err != nil {
					return err
				}
			}
			if _, err := tx.Edit(owner, g.Into, func(m *store.Memory) error {
				m.History = append(m.History, texts...)
				if len(m.History) > store.MaxHistory {
					m.History = m.History[len(m.History)-store.MaxHistory:]
				}
				m.Mentions += mentions
				return nil
			}); err != nil && !errors.Is(err, store.ErrNotFound) {
				return err
			}
		}
		for _, pr := range p.Promotions {
			if err := tx.SetBoost(owner, pr.ID, pr.Boost, now); err != nil && !errors.Is(err, store.ErrNotFound) {
				return err
			}
		}
		for _, group := range []struct {
			ids    []uint64
			reason string
		}{{p.Evict, "salience"}, {p.PruneFacts, "retention"}} {
			for _, id := range group.ids {
				if _, err := tx.Edit(owner, id, func(m *store.Memory) error {
					m.DeletedAt, m.DeleteReason = &now, group.reason
					return nil
				}); err != nil && !errors.Is(err, store.ErrNotFound) {
					return err
				}
			}
		}
		for _, id := range p.Prune {
			if err := tx.Purge(owner, id); err != nil && !errors.Is(err, store.ErrNotFound) {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	return cs.indexer.waitIndexed(ctx, seq)
}
