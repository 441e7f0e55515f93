package memory

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"sync"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
	dto "github.com/prometheus/client_model/go"
	"go.uber.org/zap"

	"github.com/caddy-memory/memory/api"
	"github.com/caddy-memory/memory/engine"
	"github.com/caddy-memory/memory/internal/seal"
	"github.com/caddy-memory/memory/store"
	"github.com/caddy-memory/memory/store/postgres"
)

func init() {
	caddy.RegisterModule(APIHandler{})
}

// APIHandler is the management REST surface, http.handlers.memory_api.
// Mount it wherever you want (e.g. handle /memory/*) behind Caddy's own
// auth; it shares the database of the memory handlers with the same
// storage.
type APIHandler struct {
	// Storage is the memory database to manage. Default: that of the
	// memory handler of the same configuration, when there is one (else
	// the memory handler's default).
	Storage string `json:"storage,omitempty"`
	// Mode is "self" (default: callers manage only their own memories, the
	// owner resolved as the proxy resolves it) or "admin" (every owner).
	Mode string `json:"mode,omitempty"`
	// Owner are the templates naming the caller in self mode; use the memory
	// handler's. Default: ["{memory.api_key}"].
	Owner []string `json:"owner,omitempty"`
	// MaxBody bounds JSON request bodies. Default: 1 MiB.
	MaxBody int64 `json:"max_body,omitempty"`
	// MaxImport bounds a JSONL import. Default: 64 MiB.
	MaxImport int64 `json:"max_import,omitempty"`
	// IndexShards is used if this handler is the first to open the storage.
	IndexShards int `json:"index_shards,omitempty"`
	// InsecureNoAuth lets admin mode answer requests that no Caddy
	// authentication handler (basic_auth, forward_auth, ...) authenticated.
	// Without it, such requests get 401: an admin API open to anyone serves
	// every owner's memories to anyone.
	InsecureNoAuth bool `json:"insecure_no_auth,omitempty"`
	// Encryption gives the storage's keys, as the memory handler's does. Not
	// needed when a memory handler of the same configuration and storage
	// has them; if both have, they must be the same.
	Encryption *EncryptionConfig `json:"encryption,omitempty"`

	handler     *api.Handler
	storagePath string
	// waitingFor is the storage whose keys this handler waits for from a
	// memory handler of its configuration (see Provision); "" once it has
	// them.
	waitingFor string
}

// CaddyModule returns the Caddy module information.
func (APIHandler) CaddyModule() caddy.ModuleInfo {
	return caddy.ModuleInfo{
		ID:  "http.handlers.memory_api",
		New: func() caddy.Module { return new(APIHandler) },
	}
}

// Provision acquires the shared engine and builds the API.
func (a *APIHandler) Provision(ctx caddy.Context) error {
	if a.Mode == "" {
		a.Mode = string(api.Self)
	}
	if len(a.Owner) == 0 {
		a.Owner = []string{"{" + apiKeyPlaceholder + "}"}
	}
	if err := a.Validate(); err != nil {
		return err
	}
	dir, err := storageDir(a.Storage)
	if err != nil {
		return err
	}
	if a.Storage == "" {
		// The API is for the proxy's memories: without a storage of its
		// own, it takes the memory handler's (provisioned before it, as
		// the Caddyfile orders memory before handle and route).
		switch dirs := proxiedStorages(ctx); {
		case len(dirs) == 1:
			dir = dirs[0]
		case len(dirs) > 1:
			ctx.Logger().Warn("memory_api has no storage and this configuration's memory handlers use several; it serves the default one: give it a storage",
				zap.Strings("memory_storages", dirs), zap.String("storage", dir))
		}
	}
	keys, err := a.Encryption.ring()
	if err != nil {
		return fmt.Errorf("memory_api: %w", err)
	}
	keys, waiting, err := claimKeys(ctx, dir, "memory_api", keys)
	if err != nil {
		return err
	}
	attach := func(keys *seal.Ring) error { return a.attach(ctx, dir, keys) }
	err = attach(keys)
	if keys == nil && errors.Is(err, store.ErrKeyRequired) {
		// A memory handler of this configuration, provisioned later, may
		// bring the key: it attaches this handler then.
		a.waitingFor = dir
		waitForKeys(ctx, dir, func(keys *seal.Ring) error {
			a.waitingFor = ""
			return attach(keys)
		})
		ctx.Logger().Info("memory_api: the storage is encrypted; waiting for a memory handler of this configuration to bring its key",
			zap.String("storage", dir))
		return nil
	}
	if err != nil {
		return err
	}
	return attachWaiting(dir, keys, waiting)
}

// attach acquires the engine of the storage in dir and builds the API.
func (a *APIHandler) attach(ctx caddy.Context, dir string, keys *seal.Ring) error {
	e, err := acquireEngine(dir, engine.Config{
		Dir:      dir,
		Database: databaseOf(dir),
		Shards:   a.IndexShards,
		Logger:   func() *zap.Logger { return caddy.Log().Named("http.handlers.memory") },
		Observer: observer{},
		Keys:     keys,
	}, 0, ctx.Logger(), true)
	if err != nil {
		return fmt.Errorf("opening memory storage %s: %w", dir, err)
	}
	a.storagePath = dir
	owners := a.Owner
	authenticated := authenticatedByCaddy
	if a.InsecureNoAuth {
		authenticated = nil
		ctx.Logger().Warn("memory_api in admin mode with insecure_no_auth: every owner's memories are served to anyone who can reach it",
			zap.String("storage", dir))
	}
	a.handler = api.New(api.Config{
		Engine:        e,
		Mode:          api.Mode(a.Mode),
		Caller:        func(r *http.Request) string { return resolveOwner(owners, r) },
		Authenticated: authenticated,
		MaxBody:       a.MaxBody,
		MaxImport:     a.MaxImport,
		Logger:        ctx.Logger(),
		Proxy:         api.Proxy{Recall: proxyRecall(ctx, e), Outcomes: outcomeCounts},
	})
	return nil
}

// proxyRecall builds recalls as the memory handler on engine e does, so the
// dashboard's preview shows what the proxy would inject. The handler is
// looked up in the loaded configuration on first use: by then every handler
// is provisioned, whatever the order of the routes. Without one, the
// handler's defaults.
func proxyRecall(ctx caddy.Context, e *engine.Engine) func(owner, session, query string) engine.RecallRequest {
	find := sync.OnceValue(func() *Handler {
		if app, err := ctx.AppIfConfigured("http"); err == nil {
			for _, srv := range app.(*caddyhttp.App).Servers {
				if h := memoryHandlerIn(srv.Routes, e); h != nil {
					return h
				}
			}
		}
		return &Handler{MaxTokens: defaultMaxTokens, MaxItems: defaultMaxItems, Scope: "owner", Gate: "heuristic", minScore: engine.DefaultMinScore}
	})
	return func(owner, session, query string) engine.RecallRequest {
		return find().recallRequest(owner, session, query, "")
	}
}

// memoryHandlerIn finds the memory handler on engine e in routes and their
// subroutes (handle, route, ...).
func memoryHandlerIn(routes caddyhttp.RouteList, e *engine.Engine) *Handler {
	for _, rt := range routes {
		for _, mh := range rt.Handlers {
			switch h := mh.(type) {
			case *Handler:
				if h.engine == e {
					return h
				}
			case *caddyhttp.Subroute:
				if found := memoryHandlerIn(h.Routes, e); found != nil {
					return found
				}
			}
		}
	}
	return nil
}

// outcomeCounts reads the proxy's request counter, by outcome.
func outcomeCounts() map[string]float64 {
	out := map[string]float64{}
	for _, o := range []string{outcomeInjected, outcomeNothing, outcomePassed, outcomeFailedOpen, outcomeFailedClosed} {
		var m dto.Metric
		if requestsTotal.WithLabelValues(o).Write(&m) == nil {
			out[o] = m.GetCounter().GetValue()
		}
	}
	return out
}

// authenticatedByCaddy reports whether a Caddy authentication handler
// authenticated the request: it sets {http.auth.user.id}.
func authenticatedByCaddy(r *http.Request) bool {
	repl, _ := r.Context().Value(caddy.ReplacerCtxKey).(*caddy.Replacer)
	if repl == nil {
		return false
	}
	id, _ := repl.GetString("http.auth.user.id")
	return strings.TrimSpace(id) != ""
}

// Validate checks the configuration.
func (a *APIHandler) Validate() error {
	if a.Mode != string(api.Self) && a.Mode != string(api.Admin) {
		return fmt.Errorf("memory_api: mode must be self or admin, not %q", a.Mode)
	}
	if a.MaxBody < 0 || a.MaxImport < 0 || a.IndexShards < 0 {
		return fmt.Errorf("memory_api: sizes must not be negative")
	}
	if a.InsecureNoAuth && a.Mode != string(api.Admin) {
		return fmt.Errorf("memory_api: insecure_no_auth applies to mode admin only; self mode always resolves the caller from their key")
	}
	return nil
}

// Cleanup releases the engine. a.handler is left set, for requests still
// running after a reload's grace period (see Handler.Cleanup).
func (a *APIHandler) Cleanup() error {
	if a.storagePath == "" {
		return nil
	}
	path := a.storagePath
	a.storagePath = ""
	return releaseEngine(path)
}

// ServeHTTP answers the API's routes, wherever the API is mounted: the path
// is read from its first API segment (/memory/memories/7 is /memories/7).
func (a *APIHandler) ServeHTTP(w http.ResponseWriter, r *http.Request, _ caddyhttp.Handler) error {
	if a.handler == nil {
		return caddyhttp.Error(http.StatusServiceUnavailable, fmt.Errorf("memory storage %s is encrypted and no handler of this configuration has its key: "+
			"add encryption { key ... } to memory_api, or to a memory handler with the same storage", a.waitingFor))
	}
	r2 := r.Clone(r.Context())
	r2.URL.Path = apiPath(r.URL.Path)
	r2.URL.RawPath = ""
	a.handler.ServeHTTP(w, r2)
	return nil
}

// apiPath drops the mount prefix: everything before the first segment that
// starts an API route.
func apiPath(p string) string {
	segs := strings.Split(strings.Trim(p, "/"), "/")
	for i, s := range segs {
		for _, root := range api.Roots {
			if s == root {
				return "/" + strings.Join(segs[i:], "/")
			}
		}
	}
	return p
}

// storageDir resolves a storage setting to the absolute pool key: the
// directory of the database, or, for a PostgreSQL URL, of this instance's
// replica of it and its index (named after the URL without its password).
func storageDir(storage string) (string, error) {
	if db := storageDatabase(storage); db != "" {
		dir := ReplicaDir(db)
		replicaOf.Store(dir, db)
		return dir, nil
	}
	dir := storage
	if dir == "" {
		dir = filepath.Join(caddy.AppDataDir(), "memory")
	}
	dir, err := filepath.Abs(caddy.NewReplacer().ReplaceKnown(dir, ""))
	if err != nil {
		return "", fmt.Errorf("memory storage path: %w", err)
	}
	return dir, nil
}

// ReplicaDir is the directory where this instance keeps its replica of the
// PostgreSQL database at url, and its index: under Caddy's data directory,
// named after the URL without its password.
func ReplicaDir(url string) string {
	sum := sha256.Sum256([]byte(postgres.Redact(url)))
	return filepath.Join(caddy.AppDataDir(), "memory", "replicas", hex.EncodeToString(sum[:8]))
}

// replicaOf maps the directory of a replica to the URL of its database,
// for a memory_api that takes a memory handler's storage by directory.
var replicaOf sync.Map

// databaseOf returns the URL of the database whose replica dir is, or "".
func databaseOf(dir string) string {
	if v, ok := replicaOf.Load(dir); ok {
		return v.(string)
	}
	return ""
}

// storageDatabase returns the PostgreSQL URL a storage setting names (with
// its placeholders replaced), or "" for a directory.
func storageDatabase(storage string) string {
	s := caddy.NewReplacer().ReplaceKnown(storage, "")
	if postgres.IsURL(s) {
		return s
	}
	return ""
}

// Interface guards
var (
	_ caddy.Provisioner           = (*APIHandler)(nil)
	_ caddy.Validator             = (*APIHandler)(nil)
	_ caddy.CleanerUpper          = (*APIHandler)(nil)
	_ caddyhttp.MiddlewareHandler = (*APIHandler)(nil)
	_ caddyfile.Unmarshaler       = (*APIHandler)(nil)
)
