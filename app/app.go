// Package app is the Caddy app `memory`: it owns every memory storage (its
// database or file, index, workers, learners and key) across routes and
// reloads. Storages are configured once, in the global option
// `memory { storage <name> { ... } }` (JSON apps.memory.storages); the
// handlers (memory, memory_api) name one and keep only per-route settings,
// so which handler Caddy provisions first never changes what a storage is.
package app

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"

	"github.com/caddyserver/caddy/v2"
	"go.uber.org/zap"
)

func init() {
	caddy.RegisterModule(App{})
}

// DefaultName is the storage a handler uses when it names none.
const DefaultName = "default"

// App is the memory app: the storages, by name.
type App struct {
	// Storages are the memory storages, by name. Handlers name one with
	// storage (default: "default"). Without any, "default" is a file
	// storage in Caddy's data directory.
	Storages map[string]*StorageConfig `json:"storages,omitempty"`

	ctx    caddy.Context
	logger *zap.Logger

	mu      *sync.Mutex         // guards open and started; set at provisioning
	open    map[string]*Storage // acquired by this configuration, by name
	started []func()            // run when the configuration starts
}

// CaddyModule returns the Caddy module information.
func (App) CaddyModule() caddy.ModuleInfo {
	return caddy.ModuleInfo{
		ID:  "memory",
		New: func() caddy.Module { return new(App) },
	}
}

// Provision checks the storages and opens them, or takes them over from
// the configuration being replaced (applying what changed, or refusing the
// configuration with the reason).
func (a *App) Provision(ctx caddy.Context) error {
	a.ctx, a.logger = ctx, ctx.Logger()
	a.mu, a.open = new(sync.Mutex), map[string]*Storage{}
	if err := registerMetrics(ctx.GetMetricsRegistry()); err != nil {
		return err
	}
	if err := a.Validate(); err != nil {
		return err
	}
	locations := map[string]string{}
	for _, name := range slices.Sorted(maps.Keys(a.Storages)) {
		loc, err := a.Storages[name].location(name)
		if err != nil {
			return fmt.Errorf("memory storage %q: %w", name, err)
		}
		for _, k := range []string{loc.key, "dir\x00" + loc.dir} {
			if other, ok := locations[k]; ok && k != "dir\x00" {
				return fmt.Errorf("memory storages %q and %q are the same %s: give each its own, or use one name", other, name, loc)
			}
		}
		locations[loc.key], locations["dir\x00"+loc.dir] = name, name
	}
	for _, name := range slices.Sorted(maps.Keys(a.Storages)) {
		if _, err := a.acquire(name, a.Storages[name]); err != nil {
			return err
		}
	}
	return nil
}

// Validate checks every storage's settings.
func (a *App) Validate() error {
	var errs []error
	for _, name := range slices.Sorted(maps.Keys(a.Storages)) {
		sc := a.Storages[name]
		if sc == nil {
			errs = append(errs, fmt.Errorf("memory storage %q has no settings", name))
			continue
		}
		if err := validName(name); err != nil {
			errs = append(errs, err)
		}
		if err := sc.Validate(); err != nil {
			errs = append(errs, fmt.Errorf("memory storage %q: %w", name, err))
		}
	}
	return errors.Join(errs...)
}

func validName(name string) error {
	if name == "" || strings.ContainsAny(name, "/\\:{} \t") {
		return fmt.Errorf("memory storage name %q: use letters, digits, '-' or '_' (a path or URL goes in the storage's path or url)", name)
	}
	return nil
}

// Start runs what handlers asked to run once the configuration starts
// (OnStart). Storages open at provisioning, when the handlers that use
// them need them.
func (a *App) Start() error {
	a.mu.Lock()
	started := a.started
	a.mu.Unlock()
	for _, fn := range started {
		fn()
	}
	return nil
}

// OnStart has fn run when the configuration starts, every module of it
// provisioned (a configuration only validated never starts): a handler can
// then see the routes around it.
func (a *App) OnStart(fn func()) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.started = append(a.started, fn)
}

// Stop hands the storages this configuration shares with the one that
// replaces it over to that one's settings (Caddy stops the running
// configuration only once its successor started). The storages are
// released at cleanup, which at a reload does not wait for the old
// servers' requests: those keep their storage (Storage.Use) until they
// end; the last configuration or request that uses a storage closes it
// (bounded by its drain_timeout).
func (a *App) Stop() error {
	for _, s := range a.Open() {
		s.p.replaced(s)
	}
	return nil
}

// Cleanup releases the storages this configuration acquired.
func (a *App) Cleanup() error {
	if a.mu == nil {
		return nil // not provisioned
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	var errs []error
	for _, s := range a.open {
		errs = append(errs, s.release())
	}
	a.open = nil
	return errors.Join(errs...)
}

// Storage returns the storage a handler names ("" is the default one). A
// name that no storage has is a configuration error.
func (a *App) Storage(name string) (*Storage, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if name == "" {
		var err error
		if name, err = a.defaultName(); err != nil {
			return nil, err
		}
	}
	if s, ok := a.open[name]; ok {
		return s, nil
	}
	_, ok := a.Storages[name]
	switch {
	case ok:
		// Configured but not open: Provision failed for it.
		return nil, fmt.Errorf("memory storage %q could not be opened (see the error above)", name)
	case name == DefaultName && len(a.Storages) == 0:
		return a.acquireLocked(name, &StorageConfig{})
	}
	return nil, a.unknown(name)
}

// defaultName is the storage handlers use when they name none: "default",
// else the only one configured.
func (a *App) defaultName() (string, error) {
	if _, ok := a.Storages[DefaultName]; ok || len(a.Storages) == 0 {
		return DefaultName, nil
	}
	if len(a.Storages) == 1 {
		for name := range a.Storages {
			return name, nil
		}
	}
	return "", fmt.Errorf("this handler names no memory storage and the memory app has several (%s), none named %q: add storage <name> to the handler",
		strings.Join(slices.Sorted(maps.Keys(a.Storages)), ", "), DefaultName)
}

// unknown is the error for a storage name that does not exist.
func (a *App) unknown(name string) error {
	hint := ""
	if strings.ContainsAny(name, "/\\:") {
		hint = fmt.Sprintf("; storages are configured in the global options now: { memory { storage %s { path %s } } } (or url for PostgreSQL), and handlers name them", DefaultName, name)
	}
	if len(a.Storages) == 0 {
		return fmt.Errorf("no memory storage is named %q: the only one is %q (the global option memory { storage <name> { ... } } adds others)%s", name, DefaultName, hint)
	}
	return fmt.Errorf("no memory storage is named %q: the storages are %s%s", name, strings.Join(slices.Sorted(maps.Keys(a.Storages)), ", "), hint)
}

// acquire opens (or takes over) a storage for this configuration.
func (a *App) acquire(name string, sc *StorageConfig) (*Storage, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.acquireLocked(name, sc)
}

func (a *App) acquireLocked(name string, sc *StorageConfig) (*Storage, error) {
	s, err := acquireStorage(name, sc, a.logger)
	if err != nil {
		return nil, fmt.Errorf("memory storage %q: %w", name, err)
	}
	a.open[name] = s
	return s, nil
}

// Open returns this configuration's open storages, by name.
func (a *App) Open() map[string]*Storage {
	a.mu.Lock()
	defer a.mu.Unlock()
	return maps.Clone(a.open)
}

// From returns the memory app of ctx's configuration, loading it (with the
// default storage alone) when the configuration has none.
func From(ctx caddy.Context) (*App, error) {
	v, err := ctx.App("memory")
	if err != nil {
		return nil, err
	}
	return v.(*App), nil
}

// Interface guards
var (
	_ caddy.App          = (*App)(nil)
	_ caddy.Provisioner  = (*App)(nil)
	_ caddy.Validator    = (*App)(nil)
	_ caddy.CleanerUpper = (*App)(nil)
)
