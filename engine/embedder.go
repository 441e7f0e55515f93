package engine

import (
	"container/list"
	"context"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"go.uber.org/zap"

	"github.com/caddy-memory/memory/embed"
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

// embedder is the engine's optional embedding state.
type embedder struct {
	settings atomic.Pointer[EmbedConfig]
	wake     chan struct{}
	cache    *vectorCache
	done     chan struct{}
	// ctx ends the embedder's calls: when the engine's deadline passes, or
	// when a configuration without embed stops it (StopEmbedding).
	ctx    context.Context
	cancel context.CancelFunc
}

func (em *embedder) config() *EmbedConfig { return em.settings.Load() }

// UseEmbedding turns on embedding recall with cfg: memories get vectors in
// the background, and searches fuse vector and lexical recall. When it is
// on already, cfg replaces the settings in effect, except the endpoint, the
// model and the dimensions, which the stored vectors were made with: those
// are returned, unchanged, while the engine is open.
func (e *Engine) UseEmbedding(cfg EmbedConfig) []Fixed {
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
	e.learnersMu.Lock()
	defer e.learnersMu.Unlock()
	em := e.embedding()
	if em == nil {
		em = &embedder{wake: make(chan struct{}, 1), cache: newVectorCache(cfg.CacheBytes), done: make(chan struct{})}
		em.ctx, em.cancel = context.WithCancel(e.stopCtx)
		em.settings.Store(&cfg)
		e.emb.Store(em)
		go e.embedLoop(em)
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

func (e *Engine) embedding() *embedder { return e.emb.Load() }

// StopEmbedding turns embedding recall off, for a configuration without
// embed: the embedder stops (a call in flight is cancelled) and searches
// are lexical. The stored vectors stay; a later configuration that turns
// it on again with the same model embeds only what changed meanwhile.
func (e *Engine) StopEmbedding() {
	e.learnersMu.Lock()
	defer e.learnersMu.Unlock()
	em := e.emb.Swap(nil)
	if em == nil {
		return
	}
	em.cancel()
	<-em.done
}

// embedLoop gives memories vectors, following the change log from its own
// durable position, in batches, off the request path. Failures wait and retry.
func (e *Engine) embedLoop(em *embedder) {
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
		case <-e.drain:
			return
		}
		for !e.stopping() && em.ctx.Err() == nil {
			more, err := e.embedPass(em)
			if err != nil {
				e.cfg.Observer.EmbeddingFailed()
				e.log().Warn("embedding memories failed; retrying, recall stays lexical meanwhile",
					zap.Error(err), zap.Duration("retry_in", backoff))
				select {
				case <-time.After(backoff):
				case <-em.ctx.Done():
					return
				case <-e.drain:
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

// embedPass embeds up to one batch of changed memories; more reports that
// the log holds more.
func (e *Engine) embedPass(em *embedder) (more bool, err error) {
	pos := e.store.LocalCursor(embedCursor)
	upTo := e.store.LastSeq()
	changes, oldest, err := e.store.Changes(pos, em.config().Batch*4)
	if err != nil {
		return false, err
	}
	var todo []*store.Memory
	if oldest > pos+1 {
		// The log was trimmed past this position (embedding was off, or
		// failing for long): look at every memory instead.
		err = e.store.View(func(tx *store.Tx) error {
			return tx.Owners(func(owner string) error {
				return tx.ForEach(owner, func(m *store.Memory) error {
					if e.needsVector(tx, m) {
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
		err = e.store.View(func(tx *store.Tx) error {
			for _, c := range changes {
				if seen[c.ID] {
					continue
				}
				seen[c.ID] = true
				if m, err := tx.Get(c.Owner, c.ID); err == nil && e.needsVector(tx, m) {
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
		if err := e.embedBatch(em, todo[start:min(start+em.config().Batch, len(todo))]); err != nil {
			return false, err
		}
	}
	// Vectors first, then the position: a crash between re-embeds a batch.
	return len(changes) > 0, e.store.SetLocalCursor(embedCursor, upTo)
}

// needsVector reports whether an active memory lacks a vector of its text.
func (e *Engine) needsVector(tx *store.Tx, m *store.Memory) bool {
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

// embedBatch embeds memories and stores their vectors.
func (e *Engine) embedBatch(em *embedder, batch []*store.Memory) error {
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
	err = e.store.Update(func(tx *store.Tx) error {
		for i, m := range batch {
			if err := tx.PutVector(m.Owner, m.ID, embed.Encode(embed.TextHash(m.Content), vecs[i])); err != nil {
				return err
			}
			owners[m.Owner] = true
		}
		return nil
	})
	for o := range owners {
		em.cache.drop(o)
	}
	return err
}

// vectorsOf returns an owner's vectors, from the cache or, through tx, the
// store.
func (e *Engine) vectorsOf(tx *store.Tx, em *embedder, owner string) (*vectorSet, error) {
	if s := em.cache.get(owner); s != nil {
		return s, nil
	}
	s := &vectorSet{hashes: map[uint64]uint64{}}
	err := tx.Vectors(owner, func(id uint64, raw []byte) error {
		hash, v, err := embed.Decode(raw)
		if err == nil {
			s.Add(id, v)
			s.hashes[id] = hash
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	em.cache.put(owner, s)
	return s, nil
}

// vectorSet is an owner's vectors with the text hash each was made from.
type vectorSet struct {
	embed.Set
	hashes map[uint64]uint64
}

// vectorCache keeps recently searched owners' vectors, within a byte budget.
type vectorCache struct {
	mu    sync.Mutex
	max   int
	size  int
	order *list.List // front: most recent; values are owner ids
	sets  map[string]*list.Element
	data  map[string]*vectorSet
}

func newVectorCache(max int) *vectorCache {
	return &vectorCache{max: max, order: list.New(), sets: map[string]*list.Element{}, data: map[string]*vectorSet{}}
}

func (c *vectorCache) get(owner string) *vectorSet {
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.sets[owner]; ok {
		c.order.MoveToFront(el)
		return c.data[owner]
	}
	return nil
}

func (c *vectorCache) put(owner string, s *vectorSet) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.dropLocked(owner)
	c.sets[owner] = c.order.PushFront(owner)
	c.data[owner] = s
	c.size += s.Bytes()
	for c.size > c.max && c.order.Len() > 1 {
		c.dropLocked(c.order.Back().Value.(string))
	}
}

func (c *vectorCache) drop(owner string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.dropLocked(owner)
}

func (c *vectorCache) dropLocked(owner string) {
	if el, ok := c.sets[owner]; ok {
		c.order.Remove(el)
		c.size -= c.data[owner].Bytes()
		delete(c.sets, owner)
		delete(c.data, owner)
	}
}

// WaitEmbedded waits until every memory written so far has its vector, or
// ctx is done. It returns at once when embedding recall is off.
func (e *Engine) WaitEmbedded(ctx context.Context) error {
	if e.embedding() == nil {
		return nil
	}
	for e.store.LocalCursor(embedCursor) < e.store.LastSeq() {
		select {
		case <-ctx.Done():
			return fmt.Errorf("memories are not all embedded: %w", ctx.Err())
		case <-time.After(50 * time.Millisecond):
		}
	}
	return nil
}
