package engine

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"go.uber.org/zap"

	"github.com/caddy-memory/memory/index"
	"github.com/caddy-memory/memory/internal/seal"
	"github.com/caddy-memory/memory/store"
)

// Encryption at rest: the store seals its values (store/crypt.go), the
// index is sealed through Bleve's hooks (index/hooks.go), and search
// digests are keyed. The engine decides what the storage's keys mean when
// it opens it:
//
//   - an encrypted store opens only with its key (store.ErrKeyRequired,
//     store.ErrWrongKey), before anything is written;
//   - a plaintext store opened with a key is converted at start (a whole
//     new file renamed over the old one), and its index rebuilt sealed;
//   - keys whose current key is not the one the store is sealed with start
//     a rotation: every value and index shard is sealed again in the
//     background (resealer), after which the previous key is not needed.

// resealBatch is how many values one transaction of the rotation pass
// seals again; it pauses resealPause between them, like the re-digest pass.
const (
	resealBatch = 500
	resealPause = 10 * time.Millisecond
)

// openStore opens the store with cfg.Keys, converting a plaintext one to
// them, and points the index hooks and digests at what it is.
func openStore(cfg Config) (*store.DB, error) {
	o := store.Options{LockTimeout: cfg.LockTimeout, Keys: cfg.Keys, Shared: cfg.Shared}
	if cfg.Shared != nil {
		o.SharedError = func(err error) {
			if err == nil {
				cfg.Logger().Info("following the shared memory database again", zap.String("storage", cfg.Dir))
				return
			}
			cfg.Logger().Warn("following the shared memory database failed; this instance's replica lags until it answers (retried every second)",
				zap.String("storage", cfg.Dir), zap.Error(err))
		}
	}
	st, err := store.OpenWith(filepath.Join(cfg.Dir, "memory.db"), o)
	if err != nil {
		return nil, err
	}
	if r := st.Checked(); r != nil && r.Incomplete {
		// The file opens: damage in what the check did not reach is still
		// contained as it is read (the storage marked damaged, requests
		// passed through), not found before.
		cfg.Logger().Warn("the check of the memory store stopped at its time bound before reading the whole file; it opens, "+
			"and damage in the rest is found only when it is read. To check it all, stop Caddy and run 'caddy memory check'",
			zap.String("storage", cfg.Dir), zap.Int64("pages_checked", r.Pages), zap.Duration("bound", store.CheckTimeout), zap.Duration("took", r.Took))
	} else if r != nil {
		cfg.Logger().Info("memory store checked", zap.String("storage", cfg.Dir), zap.Int64("pages", r.Pages),
			zap.Int64("owners_and_buckets", r.Buckets), zap.Duration("took", r.Took), zap.Bool("incomplete", r.Incomplete))
	}
	st.OnDamaged(func(err error) {
		cfg.Logger().Error("the memory store is damaged: memory is off for this storage until it is salvaged (requests pass through without it)",
			zap.String("storage", cfg.Dir), zap.Error(err))
		if o, ok := cfg.Observer.(DamageObserver); ok {
			o.Damaged(cfg.Dir)
		}
	})
	if cfg.Keys != nil && !st.Encrypted() {
		start := time.Now()
		cfg.Logger().Info("encrypting the memory storage at start: the store is rewritten sealed, then its index rebuilt sealed",
			zap.String("storage", cfg.Dir), zap.String("key_id", cfg.Keys.Current().ID()))
		n, err := convertStore(st, cfg.Keys)
		if err != nil {
			st.Close()
			return nil, fmt.Errorf("encrypting memory storage %s: %w", cfg.Dir, err)
		}
		cfg.Logger().Info("memory storage encrypted", zap.String("storage", cfg.Dir), zap.Int("memories", n.Memories),
			zap.Duration("took", time.Since(start)))
	}
	var keys *seal.Ring
	if st.Encrypted() {
		keys = cfg.Keys
	}
	if err := index.UseKeys(filepath.Join(cfg.Dir, "index"), keys, false); err != nil {
		st.Close()
		return nil, err
	}
	return st, nil
}

// sealer makes the changes of encryption of the open storage: Encrypt,
// Decrypt, and keys configured anew, with the rotation pass they start.
type sealer struct {
	*core
	indexer *indexer // the index is rebuilt sealed, or in the clear

	// mu runs one change of encryption at a time, and guards keys.
	mu       sync.Mutex
	keys     *seal.Ring  // as configured (nil: none); Config.Keys at open
	rotating atomic.Bool // the rotation pass (resealer) runs
	resealWG sync.WaitGroup
}

// convertStore converts st to keys (nil: to plaintext), with the digests
// of what it becomes.
func convertStore(st *store.DB, keys *seal.Ring) (store.Converted, error) {
	g := index.NewDigester(st.DigestKeyFor(keys))
	return st.Convert(keys, func(m *store.Memory) []byte { return g.Digest(m.Content, m.Context) })
}

// Encryption describes how the storage is sealed.
type Encryption struct {
	Encrypted bool   `json:"encrypted"`
	KeyID     string `json:"key_id,omitempty"`
	// Rotating: values or index shards sealed with a previous key remain;
	// keep it in old_keys until this is false.
	Rotating bool `json:"rotating,omitempty"`
}

// Encryption says how the storage is sealed.
func (e *Engine) Encryption() Encryption { return e.sealer.state() }

func (sl *sealer) state() Encryption {
	return Encryption{Encrypted: sl.store.Encrypted(), KeyID: sl.store.KeyID(), Rotating: sl.rotating.Load()}
}

// Encrypt converts the open plaintext storage to keys: the store is
// rewritten sealed (every other use of it waits meanwhile), then each index
// shard is rebuilt sealed, while the old one serves searches.
func (e *Engine) Encrypt(ctx context.Context, keys *seal.Ring) (store.Converted, error) {
	return e.sealer.encrypt(ctx, keys)
}

func (sl *sealer) encrypt(ctx context.Context, keys *seal.Ring) (store.Converted, error) {
	if keys == nil {
		return store.Converted{}, errors.New("no key: configure encryption { key ... } for this storage first")
	}
	sl.mu.Lock()
	defer sl.mu.Unlock()
	if sl.store.Encrypted() {
		return store.Converted{}, fmt.Errorf("memory storage %s is already encrypted (key id %s)", sl.cfg.Dir, sl.store.KeyID())
	}
	dir := filepath.Join(sl.cfg.Dir, "index")
	// New index files are sealed from now on; those in the clear still open.
	if err := index.UseKeys(dir, keys, false); err != nil {
		return store.Converted{}, err
	}
	n, err := convertStore(sl.store, keys)
	if err != nil {
		_ = index.UseKeys(dir, nil, false)
		return n, err
	}
	sl.keys = keys
	sl.index.UseDigestKey(sl.store.DigestKey())
	sl.log().Info("memory storage encrypted; rebuilding its index sealed", zap.String("storage", sl.cfg.Dir),
		zap.Int("memories", n.Memories), zap.String("key_id", keys.Current().ID()))
	return n, sl.indexer.reindex(ctx)
}

// Decrypt converts the open encrypted storage to plaintext, the reverse of
// Encrypt. Its keys are still needed until it returns: the index shards
// sealed with them are read while they are rebuilt in the clear.
func (e *Engine) Decrypt(ctx context.Context) (store.Converted, error) { return e.sealer.decrypt(ctx) }

func (sl *sealer) decrypt(ctx context.Context) (store.Converted, error) {
	sl.mu.Lock()
	defer sl.mu.Unlock()
	if !sl.store.Encrypted() {
		return store.Converted{}, fmt.Errorf("memory storage %s is not encrypted", sl.cfg.Dir)
	}
	if sl.rotating.Load() {
		return store.Converted{}, fmt.Errorf("memory storage %s is being re-encrypted to a new key; decrypt once that has finished", sl.cfg.Dir)
	}
	dir := filepath.Join(sl.cfg.Dir, "index")
	keys := sl.keys
	n, err := convertStore(sl.store, nil)
	if err != nil {
		return n, err
	}
	if err := index.UseKeys(dir, keys, true); err != nil { // read sealed, write in the clear
		return n, err
	}
	sl.index.UseDigestKey(nil)
	sl.log().Info("memory storage decrypted; rebuilding its index in the clear", zap.String("storage", sl.cfg.Dir),
		zap.Int("memories", n.Memories))
	if err := sl.indexer.reindex(ctx); err != nil {
		return n, err
	}
	sl.keys = nil
	return n, index.UseKeys(dir, nil, false)
}

// UseKeys applies keys configured anew for the open storage (a reload): an
// encrypted store takes them if they open it, and a rotation starts when
// the current key changed. A plaintext store only remembers them for
// Encrypt (and is converted at the next start).
func (e *Engine) UseKeys(keys *seal.Ring) error { return e.sealer.useKeys(keys) }

func (sl *sealer) useKeys(keys *seal.Ring) error {
	sl.mu.Lock()
	defer sl.mu.Unlock()
	if !sl.store.Encrypted() {
		sl.keys = keys
		return nil
	}
	if keys == nil {
		return sl.keyRequired()
	}
	if err := sl.store.UseKeys(keys); err != nil {
		return err
	}
	sl.keys = keys
	if err := index.UseKeys(filepath.Join(sl.cfg.Dir, "index"), keys, false); err != nil {
		return err
	}
	sl.startResealer()
	return nil
}

// CheckKeys says whether UseKeys would take keys, changing nothing.
func (e *Engine) CheckKeys(keys *seal.Ring) error { return e.sealer.checkKeys(keys) }

func (sl *sealer) checkKeys(keys *seal.Ring) error {
	sl.mu.Lock()
	defer sl.mu.Unlock()
	switch {
	case !sl.store.Encrypted():
		return nil
	case keys == nil:
		return sl.keyRequired()
	}
	return sl.store.CheckKeys(keys)
}

// keyRequired is the error for an encrypted storage given no key.
func (sl *sealer) keyRequired() error {
	return fmt.Errorf("%w: %s is open, sealed with key id %s; keep its encryption block (to leave encryption, POST /memory/decrypt on the admin endpoint first)",
		store.ErrKeyRequired, sl.cfg.Dir, sl.store.KeyID())
}

// Keys are the keys the engine was configured with (nil: none).
func (e *Engine) Keys() *seal.Ring { return e.sealer.ring() }

func (sl *sealer) ring() *seal.Ring {
	sl.mu.Lock()
	defer sl.mu.Unlock()
	return sl.keys
}

// startResealer starts the rotation pass if values or shards sealed with a
// previous key remain and it is not running.
func (sl *sealer) startResealer() {
	if !sl.store.Encrypted() || (!sl.store.Resealing() && len(sl.index.SealedWithOldKeys()) == 0) {
		return
	}
	if !sl.rotating.CompareAndSwap(false, true) {
		return
	}
	sl.resealWG.Add(1)
	go func() {
		// On a shared database one instance re-encrypts it; another's
		// index shards are rebuilt at its next start.
		ran, err := sl.store.Once(sl.stopCtx, "reseal", func() error { sl.resealer(); return nil })
		if err == nil && !ran {
			sl.log().Info("another instance is re-encrypting the shared memory database", zap.String("storage", sl.cfg.Dir))
		}
		if err != nil {
			sl.log().Error("re-encrypting the memory storage: the shared database did not answer; it resumes at the next start", zap.Error(err))
		}
		sl.rotating.Store(false)
		sl.resealWG.Done()
	}()
}

// resealer seals everything sealed with a previous key again with the
// current one: the store's values, owner by owner and a batch at a time,
// then the index shards that hold files sealed with a previous key
// (rebuilt). Only then is the store's check value sealed with the current
// key, so an interrupted pass runs again at the next start, which still
// needs the previous key.
func (sl *sealer) resealer() {
	start := time.Now()
	id := sl.store.KeyID()
	sl.log().Info("re-encrypting the memory storage with its current key; keep the previous key in old_keys until this finishes",
		zap.String("storage", sl.cfg.Dir), zap.String("key_id", id))
	fail := func(err error) {
		sl.log().Error("re-encrypting the memory storage stopped; it resumes at the next start (keep old_keys until it finishes)",
			zap.String("storage", sl.cfg.Dir), zap.Error(err))
	}
	if err := sl.store.BeginReseal(); err != nil {
		fail(err)
		return
	}
	var owners []string
	if err := sl.store.View(func(tx *store.Tx) error {
		return tx.Owners(func(o string) error { owners = append(owners, o); return nil })
	}); err != nil {
		fail(err)
		return
	}
	values := 0
	step := func(fn func() (int, error)) error {
		for {
			if sl.draining() {
				return errors.New("the engine is closing")
			}
			n, err := fn()
			values += n
			if err != nil || n < resealBatch {
				return err
			}
			sl.pace(time.Now(), resealPause)
		}
	}
	for _, owner := range owners {
		if err := step(func() (int, error) { return sl.store.ResealOwner(owner, resealBatch) }); err != nil {
			fail(err)
			return
		}
	}
	if err := step(func() (int, error) { return sl.store.ResealShared(resealBatch) }); err != nil {
		fail(err)
		return
	}
	for _, i := range sl.index.SealedWithOldKeys() {
		if sl.draining() {
			return
		}
		if err := sl.indexer.rebuildShard(i); err != nil {
			fail(fmt.Errorf("rebuilding index shard %d: %w", i, err))
			return
		}
	}
	if err := sl.store.FinishReseal(); err != nil {
		fail(err)
		return
	}
	sl.log().Info("memory storage re-encrypted with its current key: the previous key is no longer needed, remove it from old_keys",
		zap.String("storage", sl.cfg.Dir), zap.String("key_id", id), zap.Int("values", values),
		zap.Duration("took", time.Since(start)))
}
