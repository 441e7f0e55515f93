package api

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"runtime/debug"
	"slices"
	"strings"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/zap"
	"go.uber.org/zap/exp/zapslog"

	"github.com/caddy-memory/memory/engine"
	"github.com/caddy-memory/memory/store"
)

// The MCP surface: the same memories as the REST routes, as tools a model
// calls, served at /mcp with the official SDK's streamable HTTP transport.
//
// It is stateless: every request builds a server bound to its owner (self
// mode) or to the operator (admin mode) and forgets it when it is answered,
// so a Caddy reload or a second instance behind a load balancer loses no
// session. Tools are registered per request for that reason; their schemas
// are built once (see newMCP) and the SDK's schema cache does the rest.

// Limits of the MCP tools. A model reads every row it asks for, so pages
// are smaller than the REST API's.
const (
	defaultRecall = 5
	maxRecall     = 50
	defaultPage   = 20
	maxPage       = 100
	// maxSaved is what engine.SaveMemory accepts of a model; checked here
	// too, so the model hears it as its own mistake, and for keyed memories
	// and edits, which do not go through SaveMemory.
	maxSaved = 4000
)

const mcpInstructions = `Long-term memory of the user, kept across conversations and shared with the proxy that feeds it to the model.
Call search_memory before answering anything that may depend on the user's preferences, history or earlier conversations.
Call add_memory for durable facts the user states or wants kept, one standalone sentence each.
search_memory and list_memories give the ids that update_memory and delete_memory take.`

const mcpAdminInstructions = mcpInstructions + `
Admin mode: this server serves every owner. Name the owner of each call by owner (the value the proxy sees, e.g. the API key) or owner_id.`

// mcpService serves /mcp for a Handler.
type mcpService struct {
	h       *Handler
	http    *mcp.StreamableHTTPHandler
	schemas *mcp.SchemaCache
	// tools register this mode's tools on a request's server, for its scope.
	tools []func(*mcp.Server, mcpScope)
}

// mcpServerKey carries a request's server from ServeHTTP to the SDK's
// getServer.
type mcpServerKey struct{}

func newMCP(h *Handler) *mcpService {
	m := &mcpService{h: h, schemas: mcp.NewSchemaCache()}
	admin := h.cfg.Mode == Admin
	m.http = mcp.NewStreamableHTTPHandler(func(r *http.Request) *mcp.Server {
		s, _ := r.Context().Value(mcpServerKey{}).(*mcp.Server)
		return s
	}, &mcp.StreamableHTTPOptions{
		// No session state: see the top of this file.
		Stateless: true,
		// Every tool answers with one result and sends nothing while it
		// works, so SSE framing would add nothing; plain JSON also passes
		// unchanged through any encode or buffering in front of us.
		JSONResponse: true,
		// The SDK refuses requests that arrive on a loopback address with a
		// non-loopback Host (DNS rebinding against a local, unauthenticated
		// server). Here Caddy decides which hosts reach memory_api (site
		// address, host matchers) and authenticates callers in front of it
		// (self mode: the caller's own key, which a rebinding page cannot
		// send; admin mode: Caddy auth, required). The REST routes beside
		// this one serve the same memories without such a check, so it would
		// protect nothing, and it would break the common deployments where
		// Caddy listens on 127.0.0.1 behind a tunnel or a load balancer.
		DisableLocalhostProtection: true,
		MaxRequestBodyBytes:        h.cfg.MaxBody,
		Logger:                     slogOf(h.cfg.Logger),
	})

	m.tools = []func(*mcp.Server, mcpScope){
		mcpTool(m, "search_memory",
			"Search the user's long-term memory for what is relevant to query, best first: facts, episodes (summaries of past sessions) and transcript (past conversation turns). Search before answering anything that may depend on the user's preferences, history or earlier conversations.",
			&mcp.ToolAnnotations{ReadOnlyHint: true, IdempotentHint: true, OpenWorldHint: new(false)},
			func(p map[string]*jsonschema.Schema) {
				bound(p["limit"], 1, maxRecall, defaultRecall)
				p["scope"].Enum = []any{engine.ScopeAll, engine.ScopeFacts, engine.ScopeEpisodes, engine.ScopeTranscript}
			},
			mcpScope.search),
		mcpTool(m, "add_memory",
			"Remember something for later conversations: a fact about the user, a preference, a decision or a plan, as one sentence that makes sense on its own. Saving the same text again counts as another mention. With key, a new content replaces the memory stored under that key, the old text kept as its history: use it for facts that change (key \"home_city\").",
			&mcp.ToolAnnotations{OpenWorldHint: new(false), DestructiveHint: new(false)},
			nil, mcpScope.add),
		mcpTool(m, "list_memories",
			"List the user's memories, oldest first, a page at a time: pass next_cursor as cursor for the next page. To find memories about something, use search_memory instead.",
			&mcp.ToolAnnotations{ReadOnlyHint: true, IdempotentHint: true, OpenWorldHint: new(false)},
			func(p map[string]*jsonschema.Schema) { bound(p["limit"], 1, maxPage, defaultPage) },
			mcpScope.list),
		mcpTool(m, "update_memory",
			"Replace the text of a memory that is wrong or out of date, by its id (from search_memory or list_memories). The old text is kept as the memory's history.",
			&mcp.ToolAnnotations{IdempotentHint: true, OpenWorldHint: new(false), DestructiveHint: new(false)},
			func(p map[string]*jsonschema.Schema) { p["id"].Minimum = new(1.0) },
			mcpScope.update),
		mcpTool(m, "delete_memory",
			"Delete a memory that is wrong or that the user wants forgotten, by its id (from search_memory or list_memories). It is never recalled again.",
			&mcp.ToolAnnotations{IdempotentHint: true, OpenWorldHint: new(false)},
			func(p map[string]*jsonschema.Schema) { p["id"].Minimum = new(1.0) },
			mcpScope.remove),
	}
	if admin {
		m.tools = append(m.tools, mcpTool(m, "forget_owner",
			"Forget an owner completely: every memory, transcript and history entry, removed for good. This cannot be undone.",
			&mcp.ToolAnnotations{IdempotentHint: true, OpenWorldHint: new(false)},
			nil, mcpScope.forget))
	}
	return m
}

// ServeHTTP answers MCP requests at /mcp. Admin mode has already refused
// requests Caddy did not authenticate (Handler.ServeHTTP).
func (m *mcpService) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	scope := mcpScope{h: m.h}
	if m.h.cfg.Mode == Self {
		caller := ""
		if m.h.cfg.Caller != nil {
			caller = m.h.cfg.Caller(r)
		}
		if caller == "" {
			m.unauthorized(w, r)
			return
		}
		scope.self = m.h.cfg.Engine.OwnerID(caller)
	}
	instructions := mcpInstructions
	if m.h.cfg.Mode == Admin {
		instructions = mcpAdminInstructions
	}
	s := mcp.NewServer(&mcp.Implementation{Name: "caddy-memory", Version: version}, &mcp.ServerOptions{
		Instructions: instructions,
		SchemaCache:  m.schemas,
		// Tools only; the list never changes within a (one-request) session.
		Capabilities: &mcp.ServerCapabilities{Tools: &mcp.ToolCapabilities{}},
	})
	s.AddReceivingMiddleware(m.recovering)
	for _, add := range m.tools {
		add(s, scope)
	}
	m.http.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), mcpServerKey{}, s)))
}

// recovering turns a panic while handling a request into that request's
// failure. The SDK handles requests on goroutines of its own, beyond the
// recovery of Caddy's HTTP server: a panic there, in our tools or in the
// SDK's argument handling, would end the whole process.
func (m *mcpService) recovering(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (res mcp.Result, err error) {
		defer func() {
			if v := recover(); v != nil {
				m.h.cfg.Logger.Error("memory MCP request panicked", zap.String("method", method),
					zap.Any("panic", v), zap.StackSkip("stack", 1))
				res, err = nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError,
					Message: "the server failed on this request; the failure is logged there: tell the operator"}
			}
		}()
		return next(ctx, method, req)
	}
}

// unauthorized answers a self-mode request without an identity with 401,
// not with a server whose every tool fails: the identity belongs to the
// connection (a header the client is configured with), so the mistake shows
// when the client connects, where the user configuring it looks, as MCP's
// authorization rules have it. The body is a JSON-RPC error answering the
// request's id, so MCP clients show its message rather than a bare status.
func (m *mcpService) unauthorized(w http.ResponseWriter, r *http.Request) {
	var req struct {
		ID any `json:"id"`
	}
	dec := json.NewDecoder(io.LimitReader(r.Body, m.h.cfg.MaxBody))
	dec.UseNumber()
	if dec.Decode(&req) != nil {
		req.ID = nil
	}
	switch req.ID.(type) {
	case string, json.Number:
	default:
		req.ID = nil // a notification, a batch or no JSON at all
	}
	writeJSON(w, http.StatusUnauthorized, map[string]any{"jsonrpc": "2.0", "id": req.ID, "error": map[string]any{
		"code":    jsonrpc.CodeInvalidRequest,
		"message": "this MCP server serves your own memories and needs to know who you are: configure your MCP client to send the API key (or other identity) the proxy knows you by, e.g. the header Authorization: Bearer <key>",
	}})
}

// mcpTool is one tool: its definition, built once for the handler's mode,
// and how to register it on a request's server. patch adds what struct
// tags cannot say (bounds, defaults, choices) to the argument schema.
func mcpTool[In, Out any](m *mcpService, name, description string, ann *mcp.ToolAnnotations,
	patch func(map[string]*jsonschema.Schema), run func(mcpScope, context.Context, In) (Out, error)) func(*mcp.Server, mcpScope) {
	in, err := jsonschema.For[In](nil)
	if err != nil {
		panic(fmt.Sprintf("api: MCP tool %s: no JSON schema for its arguments: %v", name, err))
	}
	if m.h.cfg.Mode == Admin {
		description += " Admin mode: name the owner by owner or owner_id."
	} else {
		// Callers act as themselves; a tool that cannot name an owner does
		// not invite a model to try (and the schema refuses it if it does).
		for _, p := range []string{"owner", "owner_id"} {
			delete(in.Properties, p)
			in.PropertyOrder = slices.DeleteFunc(in.PropertyOrder, func(s string) bool { return s == p })
		}
	}
	if patch != nil {
		patch(in.Properties)
	}
	t := &mcp.Tool{Name: name, Description: description, Annotations: ann, InputSchema: in}
	return func(s *mcp.Server, sc mcpScope) {
		mcp.AddTool(s, t, func(ctx context.Context, _ *mcp.CallToolRequest, args In) (*mcp.CallToolResult, Out, error) {
			out, err := run(sc, ctx, args)
			return nil, out, sc.toolError(name, err)
		})
	}
}

// bound sets an integer argument's range, and says its default. Not as a
// schema default: the SDK (v1.8.0) applies defaults by writing into the
// arguments, and panics when a client sends "arguments": null.
func bound(s *jsonschema.Schema, lo, hi, def int) {
	s.Minimum, s.Maximum = new(float64(lo)), new(float64(hi))
	s.Description += fmt.Sprintf(" (%d to %d; default %d)", lo, hi, def)
}

// mcpScope is whose memories one request's tools act on: the caller's own
// (self, an owner id) or, in admin mode (self ""), those of the owner each
// call names.
type mcpScope struct {
	h    *Handler
	self string
}

// ownerArgs name the owner of a call, in admin mode only.
type ownerArgs struct {
	Owner   string `json:"owner,omitempty" jsonschema:"the owner, by the value the proxy sees (e.g. the API key); or give owner_id"`
	OwnerID string `json:"owner_id,omitempty" jsonschema:"the owner, by the owner id the API returns (32 hex characters); or give owner"`
}

// owner resolves the owner a call acts on, as Handler.ownerOf does for a
// REST request: in self mode always the caller, and naming anyone is
// refused; in admin mode required says whether an owner must be named.
func (sc mcpScope) owner(a ownerArgs, required bool) (string, error) {
	ref := ownerRef(a)
	if sc.self != "" {
		if ref.given() {
			return "", errorf(http.StatusForbidden, "forbidden", "this server serves only your own memories; call the tool without owner or owner_id")
		}
		return sc.self, nil
	}
	// In admin mode ownerOf reads nothing of the request.
	return sc.h.ownerOf(nil, ref, required)
}

// toolError is what a tool's caller reads of err: the message of a mistake
// it can fix as is; an internal failure logged, and said to be.
func (sc mcpScope) toolError(tool string, err error) error {
	var ae *apiError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &ae), errors.Is(err, engine.ErrBadScope):
		return err
	}
	sc.h.cfg.Logger.Error("memory MCP tool failed", zap.String("tool", tool), zap.Error(err))
	return fmt.Errorf("%s failed on the server (%v); the error is logged there: try again later, or tell the operator if it persists", tool, err)
}

// mcpMemory is a memory as the tools show it: what a model needs to read
// and refer to it, not the whole record (history, usage, digests).
type mcpMemory struct {
	ID uint64 `json:"id"`
	// OwnerID is set in admin mode only.
	OwnerID   string    `json:"owner_id,omitempty"`
	Kind      string    `json:"kind"`
	Key       string    `json:"key,omitempty"`
	Content   string    `json:"content"`
	Session   string    `json:"session,omitempty"`
	Source    string    `json:"source,omitempty"`
	Version   int       `json:"version"`
	CreatedAt time.Time `json:"created_at"`
	UpdatedAt time.Time `json:"updated_at"`
}

func (sc mcpScope) view(m *store.Memory) mcpMemory {
	v := mcpMemory{ID: m.ID, Kind: m.Kind, Key: m.Key, Content: m.Content, Session: m.Session, Source: m.Source,
		Version: m.Version, CreatedAt: m.CreatedAt, UpdatedAt: m.UpdatedAt}
	if sc.self == "" {
		v.OwnerID = m.Owner
	}
	return v
}

// noMemory is the answer for an id the owner has no memory under, whether
// it is missing or another owner's.
func noMemory(err error, id uint64) error {
	if errors.Is(err, store.ErrNotFound) {
		return notFound("no memory %d: search_memory and list_memories give the ids of the memories", id)
	}
	return err
}

type searchArgs struct {
	Query string `json:"query" jsonschema:"what to recall, in words"`
	Limit int    `json:"limit,omitempty" jsonschema:"how many memories at most"`
	Scope string `json:"scope,omitempty" jsonschema:"where to look: facts, episodes (session summaries), transcript (past turns) or all (the default)"`
	ownerArgs
}

type searchOut struct {
	Results []engine.Recollection `json:"results"`
}

func (sc mcpScope) search(ctx context.Context, a searchArgs) (searchOut, error) {
	owner, err := sc.owner(a.ownerArgs, true)
	if err != nil {
		return searchOut{}, err
	}
	if strings.TrimSpace(a.Query) == "" {
		return searchOut{}, badRequest("query is empty: say what to recall")
	}
	// RecallMemory counts what it returns as used, as the proxy's own
	// recall tool does: the model asked for it.
	res, err := sc.h.cfg.Engine.RecallMemory(ctx, owner, a.Query, a.Scope, orDefault(a.Limit, defaultRecall))
	if err != nil {
		return searchOut{}, err
	}
	return searchOut{Results: res}, nil
}

// orDefault is n, or def for an argument left out.
func orDefault(n, def int) int {
	if n == 0 {
		return def
	}
	return n
}

type addArgs struct {
	Content string `json:"content" jsonschema:"the memory: one standalone sentence"`
	Kind    string `json:"kind,omitempty" jsonschema:"what it is: preference, decision, identity, habit, plan, note (the default) or another lowercase word"`
	Key     string `json:"key,omitempty" jsonschema:"a stable name for a fact that changes (home_city); a new content under the same key replaces the old"`
	ownerArgs
}

type addOut struct {
	Memory mcpMemory `json:"memory"`
	// Op is created, updated (the same again) or superseded (a new content
	// under the key).
	Op store.Op `json:"op"`
}

func (sc mcpScope) add(ctx context.Context, a addArgs) (addOut, error) {
	owner, err := sc.owner(a.ownerArgs, true)
	if err != nil {
		return addOut{}, err
	}
	content := strings.TrimSpace(a.Content)
	if len(content) > maxSaved {
		return addOut{}, badRequest("content is %d bytes; keep a memory under %d, one fact each", len(content), maxSaved)
	}
	if err := checkMemoryFields(a.Kind, content, a.Key, "", nil); err != nil {
		return addOut{}, err
	}
	if a.Key == "" {
		m, op, err := sc.h.cfg.Engine.SaveMemory(ctx, owner, content, a.Kind, store.SourceTool)
		if err != nil {
			return addOut{}, err
		}
		return addOut{Memory: sc.view(m), Op: op}, nil
	}
	kind := a.Kind
	if kind == "" {
		kind = "note" // as SaveMemory does
	}
	res, err := sc.h.cfg.Engine.Remember(ctx, engine.OwnedPut{Owner: owner,
		Put: store.Put{Kind: kind, Key: a.Key, Content: content, Source: store.SourceTool}})
	if err != nil {
		return addOut{}, err
	}
	return addOut{Memory: sc.view(res[0].Memory), Op: res[0].Op}, nil
}

type listArgs struct {
	Limit  int    `json:"limit,omitempty" jsonschema:"how many memories at most"`
	Cursor string `json:"cursor,omitempty" jsonschema:"next_cursor of the previous page"`
	Kind   string `json:"kind,omitempty" jsonschema:"only memories of this kind (preference, note, episode, turn, ...)"`
	ownerArgs
}

type listOut struct {
	Memories   []mcpMemory `json:"memories"`
	NextCursor string      `json:"next_cursor,omitempty"`
}

// list lists live memories (not deleted, not expired), as GET /memories
// does by default; in admin mode without an owner, every owner's.
func (sc mcpScope) list(_ context.Context, a listArgs) (listOut, error) {
	owner, err := sc.owner(a.ownerArgs, false)
	if err != nil {
		return listOut{}, err
	}
	cur, err := parseCursor(a.Cursor)
	if err != nil {
		return listOut{}, err
	}
	if owner != "" && cur.owner != "" && cur.owner != owner {
		return listOut{}, badRequest("the cursor belongs to another listing: pass the next_cursor this tool returned, or none")
	}
	page, next, err := sc.h.scan(owner, cur, orDefault(a.Limit, defaultPage), func(m *store.Memory, now time.Time) bool {
		return m.Active(now) && (a.Kind == "" || m.Kind == a.Kind)
	})
	if err != nil {
		return listOut{}, err
	}
	out := listOut{Memories: make([]mcpMemory, len(page)), NextCursor: next}
	for i, m := range page {
		out.Memories[i] = sc.view(m)
	}
	return out, nil
}

type updateArgs struct {
	ID      uint64 `json:"id" jsonschema:"the memory's id"`
	Content string `json:"content" jsonschema:"the new text: one standalone sentence"`
	ownerArgs
}

type memoryOut struct {
	Memory mcpMemory `json:"memory"`
}

// update gives a memory a new text, as PATCH /memories/{id} does: a new
// version, the old text kept as history.
func (sc mcpScope) update(ctx context.Context, a updateArgs) (memoryOut, error) {
	owner, err := sc.owning(a.ownerArgs, a.ID)
	if err != nil {
		return memoryOut{}, noMemory(err, a.ID)
	}
	content := strings.TrimSpace(a.Content)
	if len(content) > maxSaved {
		return memoryOut{}, badRequest("content is %d bytes; keep a memory under %d, one fact each", len(content), maxSaved)
	}
	m, err := sc.h.cfg.Engine.Edit(ctx, owner, a.ID, func(m *store.Memory) error {
		if m.DeletedAt != nil {
			return badRequest("memory %d is deleted; save it again with add_memory", a.ID)
		}
		if err := checkMemoryFields(m.Kind, content, m.Key, m.Session, m.Meta); err != nil {
			return err
		}
		if content != m.Content {
			m.History = append(m.History, store.Version{Content: m.Content, Ref: m.Ref, Session: m.Session, At: m.UpdatedAt})
			if len(m.History) > store.MaxHistory {
				m.History = m.History[len(m.History)-store.MaxHistory:]
			}
			m.Content, m.Version = content, m.Version+1
		}
		m.UpdatedAt = time.Now().UTC()
		return nil
	})
	if err != nil {
		return memoryOut{}, noMemory(err, a.ID)
	}
	return memoryOut{Memory: sc.view(m)}, nil
}

type deleteArgs struct {
	ID uint64 `json:"id" jsonschema:"the memory's id"`
	ownerArgs
}

type deleteOut struct {
	Deleted uint64 `json:"deleted"`
}

// remove soft-deletes a memory, as DELETE /memories/{id} does: never
// recalled again, still there for an operator to restore.
func (sc mcpScope) remove(ctx context.Context, a deleteArgs) (deleteOut, error) {
	owner, err := sc.owning(a.ownerArgs, a.ID)
	if err == nil {
		err = sc.h.cfg.Engine.Delete(ctx, owner, a.ID, false)
	}
	if err != nil {
		return deleteOut{}, noMemory(err, a.ID)
	}
	return deleteOut{Deleted: a.ID}, nil
}

// owning is whose memory id is for a call: the caller's in self mode (so
// another owner's id is not found, as a missing one is); in admin mode the
// named owner's, or whoever has it.
func (sc mcpScope) owning(a ownerArgs, id uint64) (string, error) {
	owner, err := sc.owner(a, false)
	if err != nil || owner != "" {
		return owner, err
	}
	return sc.h.cfg.Engine.OwnerOf(id)
}

type forgetArgs struct {
	ownerArgs
}

type forgetOut struct {
	OwnerID   string           `json:"owner_id"`
	Forgotten engine.Forgotten `json:"forgotten"`
}

// forget removes an owner completely, as DELETE /owners/{owner} does.
func (sc mcpScope) forget(ctx context.Context, a forgetArgs) (forgetOut, error) {
	owner, err := sc.owner(a.ownerArgs, true)
	if err != nil {
		return forgetOut{}, err
	}
	f, err := sc.h.cfg.Engine.Forget(ctx, owner)
	return forgetOut{OwnerID: owner, Forgotten: f}, err
}

// slogOf is l for the SDK, which logs with log/slog.
func slogOf(l *zap.Logger) *slog.Logger {
	return slog.New(zapslog.NewHandler(l.Core(), zapslog.WithName(l.Name())))
}

// version is this module's version as built, for clients' diagnostics.
var version = func() string {
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, m := range append([]*debug.Module{&bi.Main}, bi.Deps...) {
			if m.Path == "github.com/caddy-memory/memory" && m.Version != "" && m.Version != "(devel)" {
				return m.Version
			}
		}
	}
	return "devel"
}()
