// Package api owns the management REST surface over an engine: listing,
// reading, creating, editing, deleting and searching memories, ingesting
// transcripts, export and import, forgetting owners, stats and health. It
// serves every owner (admin mode) or only the caller's own memories (self
// mode), and knows nothing about Caddy.
package api

import (
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"go.uber.org/zap"

	"github.com/caddy-memory/memory/internal/engine"
	"github.com/caddy-memory/memory/internal/receipts"
	"github.com/caddy-memory/memory/store"
)

// Mode says whose memories the API serves.
type Mode string

// Modes.
const (
	// Admin serves every owner; protect it with Caddy's own auth.
	Admin Mode = "admin"
	// Self serves only the caller's memories, the owner resolved from the
	// request exactly as the proxy resolves it.
	Self Mode = "self"
)

// Config configures a Handler.
type Config struct {
	Engine *engine.Engine
	Mode   Mode
	// Caller returns the raw owner value of a request ("" when it has none);
	// used in self mode.
	Caller func(*http.Request) string
	// Local reports whether the caller of a request is the person at this
	// machine with no key ({memory.local_user}), for the dashboard to say
	// who it shows; nil: never.
	Local func(*http.Request) bool
	// Authenticated reports whether the server authenticated the request
	// (an operator, in admin mode); admin mode answers 401 to the others.
	// Nil accepts every request.
	Authenticated func(*http.Request) bool
	// MaxBody bounds JSON request bodies; MaxImport bounds JSONL imports.
	MaxBody   int64
	MaxImport int64
	Logger    *zap.Logger
	// Proxy tells the preview and the dashboard how the memory handlers on
	// the same storage recall, and what they did.
	Proxy Proxy
	// Receipts are what the proxy's recent requests were given, by owner
	// (GET /injections); nil keeps none.
	Receipts *receipts.Book
	// Damaged says what is damaged in the storage (nil: nothing). A
	// storage found damaged at start has no Engine: every route but the
	// dashboard's files answers 503 with it. One found damaged while
	// running refuses writes; what it holds can still be read and exported.
	Damaged func() error
	// Imports bounds the imports running at once; share one between the
	// handlers of a storage. Nil: the handler's own.
	Imports *Imports
}

// Handler serves the API. Paths are relative to where it is mounted.
type Handler struct {
	cfg Config
	mux *http.ServeMux
	mcp *mcpService
	// origins refuses state-changing requests from other origins' pages
	// (see guard.go).
	origins *http.CrossOriginProtection
}

// route is one route of the API: its pattern (method and path, as
// http.ServeMux reads them), what serves it, and the content types its
// body may have (see guard.go).
type route struct {
	pattern string
	serve   func(*Handler, http.ResponseWriter, *http.Request)
	// body are the content types the route's body may have; nil for a
	// route that takes no body (GET, DELETE) or checks its own (/mcp: the
	// SDK answers 415 to anything but JSON).
	body []string
	// bodyOptional: the route reads no body, and a request without a
	// content type is fine (curl -X POST); one that has one must be body's.
	bodyOptional bool
}

// routes are the API's routes: the one list that the mux, the browser
// guard, the mount's path roots (see Path) and the OpenAPI document's test
// are built from.
var routes = []route{
	{pattern: "GET /memories", serve: (*Handler).list},
	{pattern: "POST /memories", serve: (*Handler).create, body: jsonTypes},
	{pattern: "GET /memories/{id}", serve: (*Handler).get},
	{pattern: "PATCH /memories/{id}", serve: (*Handler).patch, body: jsonTypes},
	{pattern: "DELETE /memories/{id}", serve: (*Handler).remove},
	{pattern: "POST /search", serve: (*Handler).search, body: jsonTypes},
	{pattern: "POST /ingest", serve: (*Handler).ingest, body: jsonTypes},
	{pattern: "GET /export", serve: (*Handler).export},
	{pattern: "POST /import", serve: (*Handler).importJSONL, body: jsonlTypes},
	{pattern: "DELETE /owners/{owner}", serve: (*Handler).forget},
	{pattern: "GET /stats", serve: (*Handler).stats},
	{pattern: "GET /health", serve: (*Handler).health},
	{pattern: "POST /consolidate", serve: (*Handler).consolidate, body: jsonTypes, bodyOptional: true},
	{pattern: "POST /preview", serve: (*Handler).preview, body: jsonTypes},
	{pattern: "GET /stats/owners", serve: (*Handler).owners},
	{pattern: "GET /stats/activity", serve: (*Handler).activity},
	{pattern: "GET /injections", serve: (*Handler).injections},
	{pattern: "GET /profile", serve: (*Handler).profile},
	{pattern: "GET /sessions", serve: (*Handler).sessions},
	{pattern: "GET /{$}", serve: (*Handler).mountRoot},
	{pattern: "GET /ui", serve: (*Handler).uiRoot},
	{pattern: "GET /ui/", serve: (*Handler).ui},
	{pattern: "/mcp", serve: (*Handler).serveMCP},
	{pattern: "GET /openapi.json", serve: (*Handler).openAPI},
}

// New returns a Handler. cfg.Proxy.Plan is required.
func New(cfg Config) *Handler {
	if cfg.Proxy.Plan == nil {
		// A preview planned otherwise than the proxy would show what no
		// chat request gets.
		panic("api: Config.Proxy.Plan is nil: give the API the recall planning of the memory handler on its storage")
	}
	if cfg.MaxBody <= 0 {
		cfg.MaxBody = 1 << 20
	}
	if cfg.MaxImport <= 0 {
		cfg.MaxImport = 64 << 20
	}
	if cfg.Logger == nil {
		cfg.Logger = zap.NewNop()
	}
	if cfg.Receipts == nil {
		cfg.Receipts = new(receipts.Book)
	}
	if cfg.Imports == nil {
		cfg.Imports = new(Imports)
	}
	h := &Handler{cfg: cfg, mux: http.NewServeMux(), origins: http.NewCrossOriginProtection()}
	h.mcp = newMCP(h)
	for _, rt := range routes {
		h.mux.HandleFunc(rt.pattern, func(w http.ResponseWriter, r *http.Request) { rt.serve(h, w, r) })
	}
	return h
}

// Routes are the patterns of the API's routes, as http.ServeMux reads
// them ("GET /memories/{id}"; "/mcp" takes every method).
func Routes() []string {
	out := make([]string, len(routes))
	for i, rt := range routes {
		out[i] = rt.pattern
	}
	return out
}

// Path is the API's path of a request path under any mount: from the
// first segment that starts one of its routes (/memory/memories/7 is
// /memories/7, /memory/ui/ is /ui/), so memory_api needs no prefix
// configured. A path with no such segment that ends in a slash is the
// mount's root (/memory/), where the dashboard opens.
func Path(p string) string {
	segs := strings.Split(strings.Trim(p, "/"), "/")
	for i, s := range segs {
		if slices.Contains(roots, s) {
			return "/" + strings.Join(segs[i:], "/")
		}
	}
	if strings.HasSuffix(p, "/") {
		return "/"
	}
	return p
}

// roots are the first path segments of the API's routes, read from the
// route table: what Path finds the API's path by.
var roots = func() []string {
	var out []string
	for _, rt := range routes {
		_, p, _ := strings.Cut(rt.pattern, " ")
		if p == "" {
			p = rt.pattern
		}
		first, _, _ := strings.Cut(strings.TrimPrefix(p, "/"), "/")
		if first != "" && !slices.Contains(out, first) {
			out = append(out, first)
		}
	}
	return out
}()

// routeOf is the route of a mux pattern.
func routeOf(pattern string) (route, bool) {
	for _, rt := range routes {
		if rt.pattern == pattern {
			return rt, true
		}
	}
	return route{}, false
}

func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	// Every answer is what its Content-Type says: a browser must never
	// guess HTML or script from a memory's text.
	w.Header().Set("X-Content-Type-Options", "nosniff")
	if h.cfg.Mode == Admin && h.cfg.Authenticated != nil && !h.cfg.Authenticated(r) {
		writeError(w, errorf(http.StatusUnauthorized, "unauthorized",
			"the admin API serves every owner and answers only authenticated requests: put basic_auth or forward_auth in front of memory_api (or, on a trusted network, set insecure_no_auth)"))
		return
	}
	_, pattern := h.mux.Handler(r)
	if pattern == "" {
		// Tell a wrong method from a wrong path, in JSON.
		for _, m := range []string{"GET", "POST", "PATCH", "DELETE"} {
			probe := r.Clone(r.Context())
			probe.Method = m
			if _, p := h.mux.Handler(probe); p != "" {
				writeError(w, errorf(http.StatusMethodNotAllowed, "method_not_allowed", "%s is not allowed on %s", r.Method, r.URL.Path))
				return
			}
		}
		writeError(w, errorf(http.StatusNotFound, "not_found", "no such endpoint: %s %s", r.Method, r.URL.Path))
		return
	}
	if e := h.refuseForeign(r, pattern); e != nil {
		writeError(w, e)
		return
	}
	// The dashboard (its root, its files) still opens: it shows the damage
	// and what to run.
	if err := h.damaged(); err != nil && h.cfg.Engine == nil && pattern != "GET /health" && pattern != "GET /{$}" && !strings.HasPrefix(pattern, "GET /ui") {
		writeError(w, damagedError(err))
		return
	}
	h.mux.ServeHTTP(w, r)
}

// damaged is what is damaged in the storage, or nil.
func (h *Handler) damaged() error {
	if h.cfg.Damaged == nil {
		return nil
	}
	return h.cfg.Damaged()
}

// damagedError answers a request a damaged storage cannot serve.
func damagedError(err error) *apiError {
	return errorf(http.StatusServiceUnavailable, "damaged", "%v", err)
}

// apiError is an error with its HTTP status and a machine-readable code.
type apiError struct {
	status  int
	code    string
	message string
}

func (e *apiError) Error() string { return e.message }

func errorf(status int, code, format string, args ...any) *apiError {
	return &apiError{status: status, code: code, message: fmt.Sprintf(format, args...)}
}

func badRequest(format string, args ...any) *apiError {
	return errorf(http.StatusBadRequest, "bad_request", format, args...)
}

func notFound(format string, args ...any) *apiError {
	return errorf(http.StatusNotFound, "not_found", format, args...)
}

// fail writes err: an apiError as is, anything else as a 500 (logged).
func (h *Handler) fail(w http.ResponseWriter, err error) {
	writeError(w, h.errorOf(w, err))
}

// errorOf is the answer to err: an apiError as is, the shared database's
// refusal as 503 (with Retry-After), anything else as a 500 (logged).
func (h *Handler) errorOf(w http.ResponseWriter, err error) *apiError {
	var ae *apiError
	if errors.Is(err, store.ErrUnavailable) {
		// The cause names the database's host and user: logged, not told.
		h.cfg.Logger.Warn("memory API write refused: the shared database does not answer", zap.Error(err))
		w.Header().Set("Retry-After", "5")
		ae = errorf(http.StatusServiceUnavailable, "unavailable", "the memory database is unavailable and nothing was changed; try again shortly")
	}
	if errors.Is(err, store.ErrDamaged) {
		ae = damagedError(err)
	}
	if ae == nil && !errors.As(err, &ae) {
		h.cfg.Logger.Error("memory API request failed", zap.Error(err))
		ae = errorf(http.StatusInternalServerError, "internal", "%v", err)
	}
	return ae
}

func writeError(w http.ResponseWriter, e *apiError) {
	writeJSON(w, e.status, map[string]any{"error": map[string]string{"code": e.code, "message": e.message}})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
}

// decode reads a JSON body strictly: one object, known fields only, within
// the size limit.
func (h *Handler) decode(w http.ResponseWriter, r *http.Request, v any) error {
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, h.cfg.MaxBody))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return bodyError(err)
	}
	if dec.More() {
		return badRequest("the body holds more than one JSON value")
	}
	if _, err := dec.Token(); err != io.EOF {
		return badRequest("the body holds more than one JSON value")
	}
	return nil
}

// bodyError explains a decoding failure.
func bodyError(err error) error {
	var ae *apiError // a field's own decoder said what is wrong
	var tooLarge *http.MaxBytesError
	var syntax *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &ae):
		return ae
	case errors.As(err, &tooLarge):
		return errorf(http.StatusRequestEntityTooLarge, "too_large", "the body is larger than %d bytes", tooLarge.Limit)
	case errors.Is(err, io.EOF):
		return badRequest("the body is empty; send a JSON object")
	case errors.Is(err, io.ErrUnexpectedEOF):
		return badRequest("the body is not valid JSON: it ends in the middle of a value")
	case errors.As(err, &syntax):
		return badRequest("the body is not valid JSON (at byte %d): %v", syntax.Offset, err)
	case errors.As(err, &typ):
		return badRequest("field %q must be %s, not %s", typ.Field, typ.Type, typ.Value)
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		return badRequest("unknown field %s", strings.TrimPrefix(err.Error(), "json: unknown field "))
	}
	return badRequest("the body could not be read: %v", err)
}

// ownerRef names an owner in a request: by the raw value the proxy would
// see (hashed the same way), or by the stored owner id.
type ownerRef struct {
	Owner   string `json:"owner,omitempty"`
	OwnerID string `json:"owner_id,omitempty"`
}

func (o ownerRef) given() bool { return o.Owner != "" || o.OwnerID != "" }

// ownerOf resolves the owner a request acts on. In self mode it is always
// the caller, and naming anyone (even oneself) is refused, so a client
// never mistakes the scope it acts in. In admin mode required says whether
// an owner must be named; "" means all owners.
func (h *Handler) ownerOf(r *http.Request, ref ownerRef, required bool) (string, error) {
	if h.cfg.Mode == Self {
		if ref.given() {
			return "", errorf(http.StatusForbidden, "forbidden", "this API serves only your own memories; do not name an owner")
		}
		caller := ""
		if h.cfg.Caller != nil {
			caller = h.cfg.Caller(r)
		}
		if caller == "" {
			return "", errorf(http.StatusUnauthorized, "unauthorized", "send the API key (or other identity) the proxy knows you by")
		}
		return h.cfg.Engine.OwnerID(caller), nil
	}
	// The proxy trims the value it resolves, so a raw owner with spaces
	// around it (a key pasted with them) names the owner without them.
	ref.Owner = strings.TrimSpace(ref.Owner)
	switch {
	case ref.Owner != "" && ref.OwnerID != "":
		return "", badRequest("name the owner by owner or by owner_id, not both")
	case ref.OwnerID != "":
		if !validOwnerID(ref.OwnerID) {
			return "", badRequest("owner_id %q is not an owner id (32 hex characters)", ref.OwnerID)
		}
		return ref.OwnerID, nil
	case ref.Owner != "":
		return h.cfg.Engine.OwnerID(ref.Owner), nil
	case required:
		return "", badRequest("name the owner: owner (the value the proxy sees, e.g. the API key) or owner_id")
	}
	return "", nil
}

// queryOwner is ownerRef from query parameters.
func queryOwner(r *http.Request) ownerRef {
	q := r.URL.Query()
	return ownerRef{Owner: q.Get("owner"), OwnerID: q.Get("owner_id")}
}

func validOwnerID(s string) bool {
	if len(s) != 32 {
		return false
	}
	_, err := hex.DecodeString(s)
	return err == nil && strings.ToLower(s) == s
}

// memoryID parses the {id} of a path.
func memoryID(r *http.Request) (uint64, error) {
	s := r.PathValue("id")
	id, err := strconv.ParseUint(s, 10, 64)
	if err != nil || id == 0 {
		return 0, badRequest("%q is not a memory id (a positive integer)", s)
	}
	return id, nil
}

// boolParam reads a boolean query parameter.
func boolParam(r *http.Request, name string) (bool, error) {
	v := r.URL.Query().Get(name)
	if v == "" {
		return false, nil
	}
	b, err := strconv.ParseBool(v)
	if err != nil {
		return false, badRequest("%s must be true or false, not %q", name, v)
	}
	return b, nil
}
