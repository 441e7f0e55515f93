package memory

import (
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
	dto "github.com/prometheus/client_model/go"
	"go.uber.org/zap"

	"github.com/caddy-memory/memory/app"
	"github.com/caddy-memory/memory/inject"
	"github.com/caddy-memory/memory/internal/api"
	"github.com/caddy-memory/memory/internal/cfile"
	"github.com/caddy-memory/memory/internal/engine"
)

func init() {
	caddy.RegisterModule(APIHandler{})
}

// APIHandler is the management REST surface, http.handlers.memory_api.
// Mount it wherever you want (e.g. handle /memory/*) behind Caddy's own
// auth; it manages a storage of the memory app, the one the memory
// handlers use unless told otherwise.
type APIHandler struct {
	// Storage names the memory app's storage to manage. Default: "default"
	// (as for the memory handler).
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
	// InsecureNoAuth lets admin mode answer requests that no Caddy
	// authentication handler (basic_auth, forward_auth, ...) authenticated.
	// Without it, such requests get 401: an admin API open to anyone serves
	// every owner's memories to anyone.
	InsecureNoAuth bool `json:"insecure_no_auth,omitempty"`

	handler *api.Handler
	storage *app.Storage
}

// CaddyModule returns the Caddy module information.
func (APIHandler) CaddyModule() caddy.ModuleInfo {
	return caddy.ModuleInfo{
		ID:  "http.handlers.memory_api",
		New: func() caddy.Module { return new(APIHandler) },
	}
}

// Provision takes its storage from the memory app and builds the API.
func (a *APIHandler) Provision(ctx caddy.Context) error {
	if err := neverRuns(ctx, "memory_api"); err != nil {
		return err
	}
	if a.Mode == "" {
		a.Mode = string(api.Self)
	}
	if len(a.Owner) == 0 {
		a.Owner = []string{"{" + apiKeyPlaceholder + "}"}
	}
	if err := a.Validate(); err != nil {
		return err
	}
	memApp, err := app.From(ctx)
	if err != nil {
		return err
	}
	st, err := memApp.Storage(a.Storage)
	if err != nil {
		return fmt.Errorf("memory_api: %w", err)
	}
	a.storage = st
	memApp.OnStart(func() { a.announce(ctx, ctx.Logger()) })
	owners := a.Owner
	authenticated := authenticatedByCaddy
	if a.InsecureNoAuth {
		authenticated = nil
		ctx.Logger().Warn("memory_api in admin mode with insecure_no_auth: every owner's memories are served to anyone who can reach it",
			zap.String("storage", st.Name))
	}
	a.handler = api.New(api.Config{
		Engine:        st.Engine(),
		Mode:          api.Mode(a.Mode),
		Caller:        func(r *http.Request) string { return resolveOwner(owners, r) },
		Local:         func(r *http.Request) bool { return isLocalUser(owners, r) },
		Authenticated: authenticated,
		MaxBody:       a.MaxBody,
		MaxImport:     a.MaxImport,
		Logger:        ctx.Logger(),
		Proxy:         api.Proxy{Plan: proxyPlan(st), Outcomes: outcomeCounts},
		Receipts:      st.Receipts(),
		Damaged:       st.Damaged,
		Imports:       st.Imports(),
	})
	return nil
}

// proxyPlan plans recalls as the memory handler on the storage does, so
// the dashboard's preview shows what the proxy would inject. The handler
// is asked for at each preview: by then every handler of the configuration
// is provisioned, whatever the order of the routes. Without one, the
// handler's defaults.
func proxyPlan(st *app.Storage) func(owner, session string, req *inject.Request) engine.RecallRequest {
	defaults := &Handler{engine: st.Engine()}
	_ = defaults.setDefaults() // the defaults are valid
	return func(owner, session string, req *inject.Request) engine.RecallRequest {
		if p := st.Proxy(); p != nil {
			return p.Plan(owner, session, req)
		}
		return defaults.Plan(owner, session, req)
	}
}

// outcomeCounts reads the proxy's request counter, by outcome.
func outcomeCounts() map[string]float64 {
	out := map[string]float64{}
	for _, o := range []string{outcomeInjected, outcomeNothing, outcomePassed, outcomeFailedOpen, outcomeFailedClosed, outcomeOptedOut} {
		var m dto.Metric
		if app.RequestsTotal.WithLabelValues(o).Write(&m) == nil {
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

// Validate checks the configuration: every range the Caddyfile parser
// checks as it reads, again, for a configuration given in JSON.
func (a *APIHandler) Validate() error {
	err := errors.Join(
		cfile.OneOf("mode", a.Mode, string(api.Self), string(api.Admin)),
		cfile.CheckSize("max_body", a.MaxBody),
		cfile.CheckSize("max_import", a.MaxImport),
	)
	if err == nil && a.InsecureNoAuth && a.Mode != string(api.Admin) {
		err = errors.New("insecure_no_auth applies to mode admin only; self mode always resolves the caller from their key")
	}
	if err != nil {
		return fmt.Errorf("memory_api: %w", err)
	}
	return nil
}

// ServeHTTP answers the API's routes, wherever the API is mounted: the path
// is read from its first API segment (/memory/memories/7 is /memories/7).
func (a *APIHandler) ServeHTTP(w http.ResponseWriter, r *http.Request, _ caddyhttp.Handler) error {
	defer a.storage.Use()()
	r2 := r.Clone(r.Context())
	r2.URL.Path = api.Path(r.URL.Path)
	r2.URL.RawPath = ""
	// The API reads where it is mounted from the request's URI (the
	// redirect of /ui, the server of openapi.json): the one the client
	// sent, before a handle_path or a rewrite took the prefix off.
	if orig, ok := r.Context().Value(caddyhttp.OriginalRequestCtxKey).(http.Request); ok && orig.RequestURI != "" {
		r2.RequestURI = orig.RequestURI
	}
	a.handler.ServeHTTP(w, r2)
	return nil
}

// Interface guards
var (
	_ caddy.Provisioner           = (*APIHandler)(nil)
	_ caddy.Validator             = (*APIHandler)(nil)
	_ caddyhttp.MiddlewareHandler = (*APIHandler)(nil)
	_ caddyfile.Unmarshaler       = (*APIHandler)(nil)
)
