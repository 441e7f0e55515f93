package app

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/caddyserver/caddy/v2"
	"go.uber.org/zap"

	"github.com/caddy-memory/memory/inject"
	"github.com/caddy-memory/memory/internal/api"
	"github.com/caddy-memory/memory/internal/engine"
	"github.com/caddy-memory/memory/internal/memtools"
	"github.com/caddy-memory/memory/internal/receipts"
	"github.com/caddy-memory/memory/internal/seal"
	"github.com/caddy-memory/memory/store"
	"github.com/caddy-memory/memory/store/postgres"
)

// Storage is one storage as a configuration sees it: its open engine,
// shared with every other configuration that uses the same storage, and
// the memory handlers of this configuration that proxy with it.
type Storage struct {
	Name string
	p    *pooled
	key  string

	mu      sync.Mutex
	proxies []Proxy

	// Caddy cleans a replaced configuration up without waiting for its
	// requests (a streamed answer can run for minutes), so the
	// configuration's hold on the storage is given back when it is
	// released and no request of it uses the storage any more.
	inUse    atomic.Int64
	released atomic.Bool
	dropped  atomic.Bool
}

// Proxy is a memory handler on a storage, as the management API's preview
// needs it: the recall it makes for a chat request of owner, session being
// what its session template would give ("" for none).
type Proxy interface {
	Plan(owner, session string, req *inject.Request) engine.RecallRequest
}

// Engine is the storage's open engine: nil for a storage found damaged
// at start (see Damaged).
func (s *Storage) Engine() *engine.Engine { return s.p.engine }

// Damaged returns what is damaged in the storage (a *store.DamageError),
// or nil. A storage found damaged at start is not open (Engine is nil);
// one found damaged while running refuses writes. Either way its memory
// handlers pass requests through untouched.
func (s *Storage) Damaged() error {
	if s.p.damaged != nil {
		return s.p.damaged
	}
	return s.p.engine.Damaged()
}

// Dir is the directory of the storage's file (its replica, for a
// PostgreSQL storage) and index.
func (s *Storage) Dir() string { return s.p.dir }

// Receipts are what the recent requests of the storage's owners were
// given (the API's GET /injections), kept across reloads.
func (s *Storage) Receipts() *receipts.Book { return &s.p.receipts }

// Owed are the tool outputs the storage's owners owe to stored OpenAI
// responses (see memtools.Owed), kept across reloads: the request that
// continues a response may come after one.
func (s *Storage) Owed() *memtools.Owed { return &s.p.owed }

// Imports bounds the imports running at once into the storage, whichever
// memory_api handler (self, admin, a reload's) serves them.
func (s *Storage) Imports() *api.Imports { return &s.p.imports }

// AddProxy records a memory handler of this configuration on the storage.
func (s *Storage) AddProxy(p Proxy) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.proxies = append(s.proxies, p)
}

// Proxy is the first memory handler of this configuration on the storage,
// or nil.
func (s *Storage) Proxy() Proxy {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.proxies) == 0 {
		return nil
	}
	return s.proxies[0]
}

// Use marks a request of this configuration as using the storage until
// done is called: the storage stays open for it after the configuration
// is cleaned up.
func (s *Storage) Use() (done func()) {
	s.inUse.Add(1)
	return s.unuse
}

func (s *Storage) unuse() {
	if s.inUse.Add(-1) == 0 && s.released.Load() && s.p.damaged == nil && s.dropped.CompareAndSwap(false, true) {
		// Not on the request: its answer's end goes out as it returns.
		go func() {
			if err := s.drop(); err != nil {
				engineLogger().Error("closing the memory storage", zap.String("storage", s.Name), zap.Error(err))
			}
		}()
	}
}

// release gives back the configuration's hold on the storage, at once or
// when its last request ends.
func (s *Storage) release() error {
	if !s.released.CompareAndSwap(false, true) || s.p.damaged != nil {
		return nil
	}
	s.p.released(s)
	if n := s.inUse.Load(); n > 0 {
		// The last one to end drops it (see unuse).
		engineLogger().Info("memory storage kept open for the requests of the previous configuration still using it",
			zap.String("storage", s.Name), zap.Int64("requests", n))
		return nil
	}
	if s.dropped.CompareAndSwap(false, true) {
		return s.drop()
	}
	return nil
}

// drop closes the storage if no other configuration uses it.
func (s *Storage) drop() error {
	_, err := pool.Delete(s.key)
	return err
}

// pool holds one open storage per location. Caddy provisions a new
// configuration before it cleans up the old one, and bbolt takes an
// exclusive lock, so a reload must share the storage instead of reopening
// it.
var pool = caddy.NewUsagePool()

// pooled is an open storage.
type pooled struct {
	engine *engine.Engine
	dir    string
	unlock func()
	// What the handlers keep per storage, in memory: each configuration's
	// handlers share them with the ones it replaces.
	receipts receipts.Book
	owed     memtools.Owed
	imports  api.Imports
	// damaged, for a storage whose file was found damaged at start: it
	// is not open, and not pooled, so that each configuration loaded
	// tries it again (after a salvage, a reload opens it).
	damaged error

	mu   sync.Mutex
	cfg  *StorageConfig // the settings in effect
	next *pending       // the settings of a configuration being loaded
	live int            // configurations holding it, not yet released
}

// pending are the settings a configuration being loaded gives an open
// storage: checked when it is provisioned, applied only once it replaced
// the running configuration, so a configuration Caddy refuses (for any
// reason, in any app) changes nothing.
type pending struct {
	by   *Storage // the configuration's handle on the storage
	cfg  *StorageConfig
	keys *seal.Ring
}

// Destruct closes the storage when the last configuration using it is
// cleaned up, waiting at most its drain_timeout.
func (p *pooled) Destruct() error {
	p.mu.Lock()
	drain := p.cfg.drain()
	p.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), drain)
	defer cancel()
	err := p.engine.Close(ctx)
	p.unlock()
	return err
}

// location is where a storage is.
type location struct {
	key string // the pool's key
	dir string // the directory; "" for a replica in a slot to be chosen
	url string // the database, placeholders replaced; "" for a file
}

func (l location) String() string {
	if l.url != "" {
		return "database " + postgres.Redact(l.url)
	}
	return "directory " + l.dir
}

// location resolves where the storage named name is.
func (c *StorageConfig) location(name string) (location, error) {
	if c.URL == "" {
		dir := c.Path
		switch {
		case dir != "":
		case name == DefaultName:
			dir = filepath.Join(caddy.AppDataDir(), "memory")
		default:
			dir = filepath.Join(caddy.AppDataDir(), "memory-"+name)
		}
		dir, err := filepath.Abs(expand(dir))
		if err != nil {
			return location{}, fmt.Errorf("path: %w", err)
		}
		return location{key: "dir\x00" + dir, dir: dir}, nil
	}
	url := expand(c.URL)
	loc := location{key: "url\x00" + postgres.Redact(url), url: url}
	if c.Replica != "" {
		dir, err := filepath.Abs(expand(c.Replica))
		if err != nil {
			return location{}, fmt.Errorf("replica: %w", err)
		}
		loc.dir, loc.key = dir, loc.key+"\x00"+dir
	}
	return loc, nil
}

// replicaSlots bounds the instances on one host that replicate one
// database without a replica setting.
const replicaSlots = 16

// replicaSlot takes the default replica directory of the database at url
// for this process: under Caddy's data directory, named after the URL
// without its password; a second process on the host, with the same data
// directory, takes the next slot (the name with -1, -2, ...).
func replicaSlot(url string) (dir string, unlock func(), err error) {
	sum := sha256.Sum256([]byte(postgres.Redact(url)))
	base := filepath.Join(caddy.AppDataDir(), "memory", "replicas", hex.EncodeToString(sum[:8]))
	for slot := range replicaSlots {
		dir := base
		if slot > 0 {
			dir += "-" + strconv.Itoa(slot)
		}
		unlock, ok, err := lockDir(dir)
		if err != nil {
			return "", nil, fmt.Errorf("replica directory %s: %w", dir, err)
		}
		if ok {
			return dir, unlock, nil
		}
	}
	return "", nil, fmt.Errorf("%d processes on this host already replicate %s from %s: give this one a replica directory of its own (replica)",
		replicaSlots, postgres.Redact(url), base)
}

// engineLogger is the storages' logger: an engine outlives the
// configuration that opened it.
func engineLogger() *zap.Logger { return caddy.Log().Named("memory") }

// acquireStorage opens the storage sc describes for a configuration, or
// shares the one already open at its location, applying what the new
// settings change (see apply).
func acquireStorage(name string, sc *StorageConfig, logger *zap.Logger) (*Storage, error) {
	loc, err := sc.location(name)
	if err != nil {
		return nil, err
	}
	keys, err := sc.Encryption.ring()
	if err != nil {
		return nil, err
	}
	opened := false
	v, _, err := pool.LoadOrNew(loc.key, func() (caddy.Destructor, error) {
		p, err := openPooled(loc, sc, keys)
		opened = err == nil
		return p, err
	})
	if errors.Is(err, store.ErrDamaged) {
		// Caddy and its other sites start; this storage's requests pass
		// through until it is salvaged.
		logger.Error("memory storage is damaged: its requests pass through without memory until it is salvaged",
			zap.String("storage", name), zap.Error(err))
		damagedStorages.WithLabelValues(loc.dir).Set(1)
		return &Storage{Name: name, p: &pooled{dir: loc.dir, unlock: func() {}, damaged: err}}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("opening %s: %w", loc, err)
	}
	p := v.(*pooled)
	s := &Storage{Name: name, p: p, key: loc.key}
	if opened {
		where := []zap.Field{zap.String("storage", name)}
		if loc.url != "" {
			where = append(where, zap.String("database", postgres.Redact(loc.url)), zap.String("replica", p.dir))
		} else {
			where = append(where, zap.String("path", p.dir))
		}
		logger.Info("memory storage open", append(where, zap.Bool("encrypted", p.engine.Encryption().Encrypted),
			zap.Int("index_shards", p.engine.Shards()))...)
	}
	if !opened {
		if err := p.check(sc, keys, logger); err != nil {
			_, _ = pool.Delete(loc.key)
			return nil, err
		}
		p.mu.Lock()
		if p.live == 0 {
			// Only requests of configurations gone still use it: no
			// running configuration relies on its settings.
			p.use(sc, keys)
		} else {
			p.next = &pending{by: s, cfg: sc, keys: keys}
		}
		p.mu.Unlock()
	}
	p.mu.Lock()
	p.live++
	p.mu.Unlock()
	return s, nil
}

// openPooled opens a storage and starts what its settings turn on.
func openPooled(loc location, sc *StorageConfig, keys *seal.Ring) (*pooled, error) {
	p := &pooled{dir: loc.dir, unlock: func() {}}
	if loc.url != "" && loc.dir == "" {
		var err error
		if p.dir, p.unlock, err = replicaSlot(loc.url); err != nil {
			return nil, err
		}
	}
	var shared store.Shared
	if loc.url != "" {
		// A database that does not answer within this starts the instance
		// from its replica, if it has one (see store.Shared).
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		db, err := postgres.Open(ctx, loc.url, func(msg string, err error) {
			engineLogger().Warn(msg, zap.String("database", postgres.Redact(loc.url)), zap.Error(err))
		})
		cancel()
		if err != nil {
			p.unlock()
			return nil, err
		}
		shared = db
	}
	e, err := engine.Open(engine.Config{
		Dir:       p.dir,
		Shared:    shared,
		Shards:    sc.IndexShards,
		QueueSize: sc.QueueSize,
		Logger:    engineLogger,
		Observer:  observer{},
		Keys:      keys,
	})
	if err != nil {
		p.unlock()
		return nil, err
	}
	p.engine = e
	p.cfg = sc
	p.run(sc)
	return p, nil
}

// check says why a later configuration's settings cannot apply to the open
// storage, or nil: that configuration is then refused, with the reason.
// Nothing is changed here (see pending).
func (p *pooled) check(sc *StorageConfig, keys *seal.Ring, logger *zap.Logger) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if err := p.refused(sc); err != nil {
		return err
	}
	if err := p.engine.CheckKeys(keys); err != nil {
		return err
	}
	if k := p.engine.Shards(); sc.IndexShards != 0 && sc.IndexShards != k {
		logger.Warn("index_shards applies to a new storage; this one keeps the shards it was created with",
			zap.Int("configured", sc.IndexShards), zap.Int("in_effect", k))
	}
	return nil
}

// replaced applies the settings pending for the storage, when the
// configuration of old (its handle on the storage) has been replaced: the
// configuration that gave them is the running one now.
func (p *pooled) replaced(old *Storage) {
	p.mu.Lock()
	defer p.mu.Unlock()
	next := p.next
	if next == nil || next.by == old {
		return // nothing pending, or old's own: its configuration failed to start
	}
	p.next = nil
	p.use(next.cfg, next.keys)
}

// use applies settings checked before; p.mu held.
func (p *pooled) use(sc *StorageConfig, keys *seal.Ring) {
	if err := p.engine.UseKeys(keys); err != nil {
		// Checked when the configuration was loaded; the storage changed since.
		engineLogger().Error("the reloaded configuration's encryption keys no longer open the memory storage; it keeps the previous ones",
			zap.String("storage", p.dir), zap.Error(err))
	}
	p.cfg = sc
	p.run(sc)
}

// released notes that s's configuration is cleaned up, and drops what it
// left pending: it was refused, or failed to start.
func (p *pooled) released(s *Storage) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.live--
	if p.next != nil && p.next.by == s {
		p.next = nil
	}
}

// refused says why sc cannot apply to the open storage, or nil.
func (p *pooled) refused(sc *StorageConfig) error {
	restart := func(setting, now, want string) error {
		return fmt.Errorf("%s cannot change while the storage is open (it is %s; the new configuration says %s): restart Caddy to change it",
			setting, now, want)
	}
	want := sc.QueueSize
	if want == 0 {
		want = engine.DefaultQueueSize
	}
	if n := p.engine.QueueSize(); want != n {
		return restart("queue_size", strconv.Itoa(n), strconv.Itoa(want))
	}
	if old, now := p.cfg.Embed, sc.Embed; old != nil && now != nil {
		for _, f := range [][3]string{
			{"embed url", old.URL, now.URL},
			{"embed model", old.Model, now.Model},
			{"embed dimensions", strconv.Itoa(old.Dimensions), strconv.Itoa(now.Dimensions)},
		} {
			if f[1] != f[2] {
				// The stored vectors were made with the running model.
				return restart(f[0], f[1], f[2])
			}
		}
	}
	if p.engine.Encryption().Encrypted && sc.Encryption == nil {
		return fmt.Errorf("the storage is encrypted and the new configuration gives it no key: keep its encryption block " +
			"(to leave encryption, POST /memory/decrypt on Caddy's admin endpoint first)")
	}
	return nil
}

// run starts or stops, and sets, what the settings turn on: ageing, the
// search cache, the learners.
func (p *pooled) run(sc *StorageConfig) {
	e := p.engine
	e.UseLifecycle(sc.lifecycle())
	e.UseSearchCache(int(sc.SearchCache))
	if l := sc.llm(); l != nil {
		e.UseLLM(*l)
	} else {
		e.StopLLM()
	}
	if em := sc.embed(); em != nil {
		_ = e.UseEmbedding(*em) // what it would keep as it was is refused above
	} else {
		e.StopEmbedding()
	}
}
