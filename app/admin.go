package app

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sort"
	"strings"

	"github.com/caddyserver/caddy/v2"

	"github.com/caddy-memory/memory/internal/engine"
	"github.com/caddy-memory/memory/store"
)

func init() {
	caddy.RegisterModule(adminAPI{})
}

// adminAPI adds /memory/ routes to Caddy's admin endpoint (localhost:2019 by
// default) for local operations: stats, reindex, compact. It holds nothing of
// its own (Caddy never cleans up admin modules) and finds the running
// configuration's storages at request time; ?storage=<name> picks one.
type adminAPI struct{}

// CaddyModule returns the Caddy module information.
func (adminAPI) CaddyModule() caddy.ModuleInfo {
	return caddy.ModuleInfo{
		ID:  "admin.api.memory",
		New: func() caddy.Module { return new(adminAPI) },
	}
}

// Routes returns the admin routes.
func (a adminAPI) Routes() []caddy.AdminRoute {
	return []caddy.AdminRoute{
		{Pattern: "/memory/stats", Handler: caddy.AdminHandlerFunc(a.stats)},
		{Pattern: "/memory/reindex", Handler: caddy.AdminHandlerFunc(a.reindex)},
		{Pattern: "/memory/compact", Handler: caddy.AdminHandlerFunc(a.compact)},
		{Pattern: "/memory/consolidate", Handler: caddy.AdminHandlerFunc(a.consolidate)},
		{Pattern: "/memory/encrypt", Handler: caddy.AdminHandlerFunc(a.encrypt)},
		{Pattern: "/memory/decrypt", Handler: caddy.AdminHandlerFunc(a.decrypt)},
	}
}

// open returns the running configuration's storages, by name.
func (adminAPI) open(r *http.Request) (map[string]*Storage, error) {
	var app *App
	if v, err := caddy.ActiveContext().AppIfConfigured("memory"); err == nil {
		app = v.(*App)
	}
	return storagesOf(app, r.URL.Query().Get("storage"))
}

// storagesOf returns app's storages named want, or all of them.
func storagesOf(app *App, want string) (map[string]*Storage, error) {
	out := map[string]*Storage{}
	var names []string
	if app != nil {
		for name, s := range app.Open() {
			names = append(names, name)
			if want == "" || want == name {
				out[name] = s
			}
		}
	}
	if len(out) == 0 {
		msg := "no memory storage is open: the running configuration uses none"
		if want != "" && len(names) > 0 {
			sort.Strings(names)
			msg = fmt.Sprintf("the running configuration has no memory storage named %q; it has %s", want, strings.Join(names, ", "))
		} else if want != "" {
			msg = fmt.Sprintf("the running configuration has no memory storage named %q", want)
		}
		return nil, caddy.APIError{HTTPStatus: http.StatusNotFound, Message: msg}
	}
	return out, nil
}

func (a adminAPI) stats(w http.ResponseWriter, r *http.Request) error {
	if r.Method != http.MethodGet {
		return caddy.APIError{HTTPStatus: http.StatusMethodNotAllowed, Message: "use GET"}
	}
	return a.each(w, r, func(_ context.Context, e *engine.Engine) (any, error) { return e.Stats() })
}

func (a adminAPI) reindex(w http.ResponseWriter, r *http.Request) error {
	if r.Method != http.MethodPost {
		return caddy.APIError{HTTPStatus: http.StatusMethodNotAllowed, Message: "use POST"}
	}
	return a.each(w, r, func(ctx context.Context, e *engine.Engine) (any, error) {
		if err := e.Reindex(ctx); err != nil {
			return nil, err
		}
		return e.Stats()
	})
}

func (a adminAPI) compact(w http.ResponseWriter, r *http.Request) error {
	if r.Method != http.MethodPost {
		return caddy.APIError{HTTPStatus: http.StatusMethodNotAllowed, Message: "use POST"}
	}
	return a.each(w, r, func(_ context.Context, e *engine.Engine) (any, error) {
		before, after, err := e.Compact()
		return map[string]int64{"file_bytes_before": before, "file_bytes_after": after}, err
	})
}

// consolidate runs a consolidation pass over every owner of each open
// storage (?dry_run=true: what it would do).
func (a adminAPI) consolidate(w http.ResponseWriter, r *http.Request) error {
	if r.Method != http.MethodPost {
		return caddy.APIError{HTTPStatus: http.StatusMethodNotAllowed, Message: "use POST"}
	}
	dry := r.URL.Query().Get("dry_run") == "true"
	return a.each(w, r, func(ctx context.Context, e *engine.Engine) (any, error) {
		return e.Consolidate(ctx, "", dry)
	})
}

// encrypt converts plaintext storages to the key their configuration gives
// them (see engine.Encrypt); without ?storage=, every open storage that has
// a key and is not yet encrypted.
func (a adminAPI) encrypt(w http.ResponseWriter, r *http.Request) error {
	if r.Method != http.MethodPost {
		return caddy.APIError{HTTPStatus: http.StatusMethodNotAllowed, Message: "use POST"}
	}
	all := r.URL.Query().Get("storage") == ""
	return a.each(w, r, func(ctx context.Context, e *engine.Engine) (any, error) {
		keys := e.Keys()
		switch {
		case e.Encryption().Encrypted && all:
			return e.Encryption(), nil
		case keys == nil && all:
			return map[string]string{"skipped": "no encryption key is configured for this storage"}, nil
		case keys == nil:
			return nil, caddy.APIError{HTTPStatus: http.StatusConflict,
				Message: "no encryption key is configured for this storage: add encryption { key ... } to the storage in the global memory option and reload first"}
		}
		n, err := e.Encrypt(ctx, keys)
		return map[string]any{"converted": n, "encryption": e.Encryption()}, err
	})
}

// decrypt converts encrypted storages back to plaintext (see
// engine.Decrypt). The configuration must then lose its encryption block,
// or the next start encrypts the storage again.
func (a adminAPI) decrypt(w http.ResponseWriter, r *http.Request) error {
	if r.Method != http.MethodPost {
		return caddy.APIError{HTTPStatus: http.StatusMethodNotAllowed, Message: "use POST"}
	}
	return a.each(w, r, func(ctx context.Context, e *engine.Engine) (any, error) {
		if !e.Encryption().Encrypted {
			return e.Encryption(), nil
		}
		n, err := e.Decrypt(ctx)
		return map[string]any{"converted": n, "encryption": e.Encryption(),
			"next": "remove the encryption block from the configuration before the next start, or the storage is encrypted again"}, err
	})
}

// each runs fn on every selected storage and answers with the results by
// storage name.
func (a adminAPI) each(w http.ResponseWriter, r *http.Request, fn func(context.Context, *engine.Engine) (any, error)) error {
	open, err := a.open(r)
	if err != nil {
		return err
	}
	return runOn(w, r, open, fn)
}

// runOn runs fn on each storage of open, holding them open (see
// Storage.Use) so a reload that removes one does not close it under a
// reindex or a compaction.
func runOn(w http.ResponseWriter, r *http.Request, open map[string]*Storage, fn func(context.Context, *engine.Engine) (any, error)) error {
	for _, s := range open {
		defer s.Use()()
	}
	dirs := make([]string, 0, len(open))
	for d := range open {
		dirs = append(dirs, d)
	}
	sort.Strings(dirs)
	out := map[string]any{}
	for _, d := range dirs {
		var v any
		err := open[d].Damaged()
		if e := open[d].Engine(); e != nil {
			v, err = fn(r.Context(), e) // a store damaged while open still reads
		}
		if errors.Is(err, store.ErrDamaged) {
			return caddy.APIError{HTTPStatus: http.StatusServiceUnavailable, Err: err, Message: fmt.Sprintf("%s: %v", d, err)}
		}
		var apiErr caddy.APIError
		if errors.As(err, &apiErr) {
			apiErr.Message = d + ": " + apiErr.Message
			return apiErr
		}
		if err != nil {
			return caddy.APIError{HTTPStatus: http.StatusInternalServerError, Err: err, Message: fmt.Sprintf("%s: %v", d, err)}
		}
		out[d] = v
	}
	w.Header().Set("Content-Type", "application/json")
	return json.NewEncoder(w).Encode(out)
}

// Interface guards
var _ caddy.AdminRouter = (*adminAPI)(nil)
