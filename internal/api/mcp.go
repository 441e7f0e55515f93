package api

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"runtime/debug"
	"slices"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/zap"
	"go.uber.org/zap/exp/zapslog"

	"github.com/caddy-memory/memory/internal/engine"
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
	if m.refuseBatch(w, r) {
		return
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

// refuseBatch answers a JSON-RPC batch (a body that is a JSON array) with
// an error, and reports whether it did. The SDK answers every call of a
// batch from a client that announces a revision before 2025-06-18 (or
// none), so one small request of 10,000 calls bought tens of megabytes of
// answers. MCP dropped batches in 2025-06-18 and no client we know sends
// them, so they are refused whatever the revision rather than capped. The
// leading whitespace read here is dropped: it means nothing in JSON.
func (m *mcpService) refuseBatch(w http.ResponseWriter, r *http.Request) bool {
	if r.Method != http.MethodPost || r.Body == nil {
		return false
	}
	br := bufio.NewReader(http.MaxBytesReader(w, r.Body, m.h.cfg.MaxBody))
	b, err := br.ReadByte()
	for err == nil && isJSONSpace(b) {
		b, err = br.ReadByte()
	}
	if err == nil && b == '[' {
		writeJSON(w, http.StatusBadRequest, map[string]any{"jsonrpc": "2.0", "id": nil, "error": map[string]any{
			"code":    jsonrpc.CodeInvalidRequest,
			"message": "JSON-RPC batches are not supported (MCP removed them in revision 2025-06-18): send one request per HTTP POST",
		}})
		return true
	}
	if err == nil {
		_ = br.UnreadByte()
	}
	r.Body = struct {
		io.Reader
		io.Closer
	}{br, r.Body}
	return false
}

func isJSONSpace(b byte) bool { return b == ' ' || b == '\t' || b == '\n' || b == '\r' }

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

// serveMCP serves /mcp.
func (h *Handler) serveMCP(w http.ResponseWriter, r *http.Request) { h.mcp.ServeHTTP(w, r) }
