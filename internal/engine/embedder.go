package engine

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"go.uber.org/zap"

	"github.com/caddy-memory/memory/internal/embed"
	"github.com/caddy-memory/memory/internal/ownercache"
	"github.com/caddy-memory/memory/internal/recall"
	"github.com/caddy-memory/memory/store"
)

// EmbedConfig turns on embedding recall.
type EmbedConfig struct {
	Client *embed.Client
	// QueryTimeout bounds embedding the question on the request path; past
	// it the request gets lexical recall only. Default 300ms.
	QueryTimeout time.Duration
	// MinSimilarity is the cosine similarity at which a memory found by
	// meaning counts as relevant (model dependent). Default 0.45.
	MinSimilarity float64
	// Batch is how many memories are embedded per call. Default 64.
	Batch int
	// CacheBytes bounds the owners' vectors kept in memory. Default 256 MiB.
	CacheBytes int
}

// embedCursor is the store cursor naming the last change embedded.
const embedCursor = "embedded_seq"

// embedder is embedding recall: memories get vectors in the background
// while a configuration turns it on, and searches find memories by meaning
// too.
type embedder struct {
	*core
	mu  sync.Mutex                // orders turning it on and off
	run atomic.Pointer[embedding] // set while it is on
}

// embedding is embedding recall while it is on with one configuration.
type embedding struct {
	core     *core // the engine's, for the question's failures
	settings atomic.Pointer[EmbedConfig]
	wake     chan struct{}
	cache    *ownercache.Cache[*recall.Vectors]
	done     chan struct{}
	// ctx ends the embedder's calls: when the engine's deadline passes, or
	// when a configuration without embed stops it (StopEmbedding).
	ctx    context.Context
	cancel context.CancelFunc
}

func (em *embedding) config() *EmbedConfig { return em.settings.Load() }

// UseEmbedding turns on embedding recall with cfg: memories get vectors in
// the background, and searches fuse vector and lexical recall. When it is
// on already, cfg replaces the settings in effect, except the endpoint, the
// model and the dimensions, which the stored vectors were made with: those
// are returned, unchanged, while the engine is open.
func (e *Engine) UseEmbedding(cfg EmbedConfig) []Fixed { return e.embedder.use(cfg) }

func (eb *embedder) use(cfg EmbedConfig) []Fixed {
	if cfg.QueryTimeout <= 0 {
		cfg.QueryTimeout = 300 * time.Millisecond
	}
	if cfg.MinSimilarity <= 0 {
		cfg.MinSimilarity = 0.45
	}
	if cfg.Batch <= 0 {
		cfg.Batch = 64
	}
	if cfg.CacheBytes <= 0 {
		cfg.CacheBytes = 256 << 20
	}
	eb.mu.Lock()
	defer eb.mu.Unlock()
	em := eb.running()
	if em == nil {
		em = &embedding{core: eb.core, wake: make(chan struct{}, 1), cache: newVectorCache(cfg.CacheBytes), done: make(chan struct{})}
		em.ctx, em.cancel = context.WithCancel(eb.stopCtx)
		em.settings.Store(&cfg)
		eb.run.Store(em)
		go eb.loop(em)
		return nil
	}
	old := em.config().Client
	var fixed []Fixed
	for _, f := range []Fixed{
		{"embed url", cfg.Client.URL, old.URL},
		{"embed model", cfg.Client.Model, old.Model},
		{"embed dimensions", strconv.Itoa(cfg.Client.Dimensions), strconv.Itoa(old.Dimensions)},
	} {
		if f.Configured != f.InEffect {
			fixed = append(fixed, f)
		}
	}
	if fixed == nil {
		em.settings.Store(&cfg)
	}
	return fixed
}

// running is embedding recall as it is on, nil while it is off.
func (eb *embedder) running() *embedding { return eb.run.Load() }

// StopEmbedding turns embedding recall off, for a configuration without
// embed: the embedder stops (a call in flight is cancelled) and searches
// are lexical. The stored vectors stay; a later configuration that turns
// it on again with the same model embeds only what changed meanwhile.
func (e *Engine) StopEmbedding() { e.embedder.stop() }

func (eb *embedder) stop() {
	eb.mu.Lock()
	defer eb.mu.Unlock()
	em := eb.run.Swap(nil)
	if em == nil {
		return
	}
	em.cancel()
	<-em.done
}

// loop gives memories vectors, following the change log from its own
// durable position, in batches, off the request path. Failures wait and retry.
func (eb *embedder) loop(em *embedding) {
	defer close(em.done)
	backoff := time.Second
	tick := time.NewTicker(2 * time.Second)
	defer tick.Stop()
	for {
		select {
		case <-em.wake:
		case <-tick.C:
		case <-em.ctx.Done():
			return
		case <-eb.drain:
			return
		}
		for !eb.stopping() && em.ctx.Err() == nil {
			more, err := eb.pass(em)
			if err != nil {
				eb.cfg.Observer.EmbeddingFailed()
				eb.log().Warn("embedding memories failed; retrying, recall stays lexical meanwhile",
					zap.Error(err), zap.Duration("retry_in", backoff))
				select {
				case <-time.After(backoff):
				case <-em.ctx.Done():
					return
				case <-eb.drain:
					return
				}
				backoff = min(2*backoff, time.Minute)
				continue
			}
			backoff = time.Second
			if !more {
				break
			}
		}
	}
}

// pass embeds up to one batch of changed memories; more reports that the
// log holds more.
func (eb *embedder) pass(em *embedding) (more bool, err error) {
	pos := eb.store.LocalCursor(embedCursor)
	upTo := eb.store.LastSeq()
	changes, oldest, err := eb.store.Changes(pos, em.config().Batch*4)
	if err != nil {
		return false, err
	}
	var todo []*store.Memory
	if oldest > pos+1 {
		// The log was trimmed past this position (embedding was off, or
		// failing for long): look at every memory instead.
		err = eb.store.View(func(tx *store.Tx) error {
			return tx.Owners(func(owner string) error {
				return tx.ForEach(owner, func(m *store.Memory) error {
					if needsVector(tx, m) {
						todo = append(todo, m)
					}
					return nil
				})
			})
		})
		changes = nil
	} else {
		if len(changes) == 0 {
			return false, nil
		}
		upTo = changes[len(changes)-1].Seq
		seen := map[uint64]bool{}
		err = eb.store.View(func(tx *store.Tx) error {
			for _, c := range changes {
				if seen[c.ID] {
					continue
				}
				seen[c.ID] = true
				if m, err := tx.Get(c.Owner, c.ID); err == nil && needsVector(tx, m) {
					todo = append(todo, m)
				}
			}
			return nil
		})
	}
	if err != nil {
		return false, err
	}
	for start := 0; start < len(todo); start += em.config().Batch {
		if err := eb.embed(em, todo[start:min(start+em.config().Batch, len(todo))]); err != nil {
			return false, err
		}
	}
	// Vectors first, then the position: a crash between re-embeds a batch.
	return len(changes) > 0, eb.store.SetLocalCursor(embedCursor, upTo)
}

// needsVector reports whether an active memory lacks a vector of its text.
func needsVector(tx *store.Tx, m *store.Memory) bool {
	if !m.Active(tx.Now()) {
		return false
	}
	raw := tx.Vector(m.Owner, m.ID)
	if raw == nil {
		return true
	}
	hash, _, err := embed.Decode(raw)
	return err != nil || hash != embed.TextHash(m.Content)
}

// embed embeds memories and stores their vectors.
func (eb *embedder) embed(em *embedding, batch []*store.Memory) error {
	texts := make([]string, len(batch))
	for i, m := range batch {
		texts[i] = m.Content
	}
	ctx, cancel := context.WithTimeout(em.ctx, time.Minute)
	vecs, err := em.config().Client.Embed(ctx, texts)
	cancel()
	if err != nil {
		return err
	}
	owners := map[string]bool{}
	err = eb.store.Update(func(tx *store.Tx) error {
		for i, m := range batch {
			if err := tx.PutVector(m.Owner, m.ID, embed.Encode(embed.TextHash(m.Content), vecs[i])); err != nil {
				return err
			}
			owners[m.Owner] = true
		}
		return nil
	})
	for o := range owners {
		em.cache.Drop(o)
	}
	return err
}

// The read path's side of embedding recall (recall.Embedding): the
// question's vector, the owner's vectors, and the similarity that counts.

// query returns recall by meaning as it is on now, nil while it is off.
func (eb *embedder) query() recall.Embedding {
	if em := eb.running(); em != nil {
		return em
	}
	return nil
}

// Embed returns the question's vector, within the query timeout; nil when
// the call failed or was late, counted and logged: the search is lexical.
func (em *embedding) Embed(ctx context.Context, question string) []float32 {
	ctx, cancel := context.WithTimeout(ctx, em.config().QueryTimeout)
	defer cancel()
	v, err := em.config().Client.Embed(ctx, []string{question})
	if err != nil || len(v) != 1 {
		em.core.cfg.Observer.EmbeddingFailed()
		if c := em.core.log().Check(zap.DebugLevel, "embedding the question failed; lexical recall only"); c != nil {
			c.Write(zap.Error(err))
		}
		return nil
	}
	return v[0]
}

// MinSimilarity is the similarity at which a memory found by meaning
// counts as relevant.
func (em *embedding) MinSimilarity() float64 { return em.config().MinSimilarity }

// Vectors returns an owner's vectors, from the cache or, through tx, the
// store.
func (em *embedding) Vectors(tx *store.Tx, owner string) (*recall.Vectors, error) {
	if s := em.cache.Get(owner); s != nil {
		return s, nil
	}
	s := &recall.Vectors{Hashes: map[uint64]uint64{}}
	err := tx.Vectors(owner, func(id uint64, raw []byte) error {
		hash, v, err := embed.Decode(raw)
		if err == nil {
			s.Add(id, v)
			s.Hashes[id] = hash
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	em.cache.Put(owner, s)
	return s, nil
}

// newVectorCache keeps recently searched owners' vectors within max bytes.
func newVectorCache(max int) *ownercache.Cache[*recall.Vectors] {
	return ownercache.New(max, func(_ string, s *recall.Vectors) int { return s.Bytes() })
}

// WaitEmbedded waits until every memory written so far has its vector, or
// ctx is done. It returns at once when embedding recall is off.
func (e *Engine) WaitEmbedded(ctx context.Context) error { return e.embedder.wait(ctx) }

func (eb *embedder) wait(ctx context.Context) error {
	if eb.running() == nil {
		return nil
	}
	for eb.store.LocalCursor(embedCursor) < eb.store.LastSeq() {
		select {
		case <-ctx.Done():
			return fmt.Errorf("memories are not all embedded: %w", ctx.Err())
		case <-time.After(50 * time.Millisecond):
		}
	}
	return nil
}
