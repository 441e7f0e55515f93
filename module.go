// Package memory is a Caddy HTTP handler, http.handlers.memory, that gives
// LLM chat endpoints long-term memory without changing the client: it finds
// what it remembers about the caller, places it in the request on the way to
// the upstream, and learns from each turn after the response has gone out.
//
// This package is the Caddy glue of the HTTP side: the memory and
// memory_api handlers (their per-route configuration, Caddyfile directives
// and provisioning), request orchestration, owners, the response tee and
// the request metrics. Storages belong to the memory app (package app);
// the work itself lives in the store, index, inject, extract and engine
// packages.
package memory

import (
	"errors"
	"fmt"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
	"go.uber.org/zap"

	"github.com/caddy-memory/memory/app"
	"github.com/caddy-memory/memory/inject"
	"github.com/caddy-memory/memory/internal/cfile"
	"github.com/caddy-memory/memory/internal/engine"
	"github.com/caddy-memory/memory/internal/memtools"
	"github.com/caddy-memory/memory/internal/overflow"
	"github.com/caddy-memory/memory/internal/receipts"
)

func init() {
	caddy.RegisterModule(Handler{})
}

// Defaults.
const (
	defaultMaxTokens  = 800
	defaultMaxItems   = 10
	defaultMaxBody    = 4 << 20
	defaultMaxCapture = 2 << 20
	defaultTimeout    = 500 * time.Millisecond
)

// Handler is the memory middleware. Put it in front of reverse_proxy.
type Handler struct {
	// Storage names the memory app's storage this handler reads and writes
	// (see the app package: the global option memory { storage <name> {
	// ... } }). Default: "default", a file storage in Caddy's data
	// directory unless the app configures it.
	Storage string `json:"storage,omitempty"`

	// Owner names whose memories a request reads and writes: placeholder
	// templates tried in order, the first that is not empty wins, e.g.
	// ["{http.auth.user.id}"], or ["{memory.api_key}",
	// "{memory.local_user}"] for clients on this machine that send no key.
	// {memory.api_key} is the bearer token of Authorization, else the
	// x-api-key header; {memory.local_user} is one owner, the person at
	// this machine, for a request from a loopback connection to a loopback
	// host name, neither relayed by a proxy nor sent by another site's page.
	// Never the client's address: everyone behind one NAT would share it.
	// Only a keyed hash of the value is stored. Default:
	// ["{memory.api_key}"]. A request whose owner resolves empty passes
	// through untouched, and the log says why (once a minute for each
	// cause).
	Owner []string `json:"owner,omitempty"`

	// Session is a placeholder template naming the conversation. Default: an
	// id derived from the conversation's first messages.
	Session string `json:"session,omitempty"`

	// Scope is what a request can recall: "owner" (everything of the owner,
	// the default) or "session" (only the current session).
	Scope string `json:"scope,omitempty"`

	// Placement is where the memory block goes: "cache_safe" (default; just
	// before the latest user turn, keeping the prompt cache prefix intact),
	// "system" (the system prompt) or "user" (prepended to the latest user
	// turn). Each wire format places it its own way; see the README.
	Placement string `json:"placement,omitempty"`

	// NoSystemRole lists models that reject system messages; requests for
	// them use the "user" placement whatever Placement says. A name matches
	// the model exactly or as a prefix followed by "-" (so "o1-mini" matches
	// "o1-mini-2024-09-12"), after any "provider/" prefix. Default: o1-mini,
	// o1-preview.
	NoSystemRole []string `json:"no_system_role,omitempty"`

	// Format makes every POST this handler sees be read as one wire format:
	// openai_chat, anthropic, ollama or openai_responses. Default: detected
	// from the path (…/chat/completions, …/v1/messages, …/api/chat,
	// …/responses). Use it with a matcher for routes on other paths.
	Format string `json:"format,omitempty"`

	// MaxTokens bounds the memory block (estimated tokens). Default: 800.
	MaxTokens int `json:"max_tokens,omitempty"`
	// MaxItems bounds the memories in the block. Default: 10.
	MaxItems int `json:"max_items,omitempty"`
	// MinScore is the relevance floor, from 0 to 1: the share of the
	// question (its words weighted by how rare they are; names the owner
	// never mentioned weigh most) that a memory must cover for the request to
	// get memories at all. Memories covering less than half of it are never
	// injected. 0 injects anything sharing a topic word. Default: 0.35.
	MinScore *float64 `json:"min_score,omitempty"`

	// MaxBody is the largest request body read for rewriting; larger bodies
	// pass through untouched. Default: 4 MiB.
	MaxBody int64 `json:"max_body,omitempty"`
	// MaxCapture bounds the copy of a response kept for extraction (the
	// client always gets all of it). Default: 2 MiB.
	MaxCapture int64 `json:"max_capture,omitempty"`
	// Timeout bounds retrieval on the request path. Default: 500ms.
	Timeout caddy.Duration `json:"timeout,omitempty"`
	// FailClosed answers 503 when memory retrieval fails, instead of passing
	// the request on without memories (the default).
	FailClosed bool `json:"fail_closed,omitempty"`

	// Gate is "heuristic" (the default: judge each question before
	// searching; small talk gets no memories) or "off".
	Gate string `json:"gate,omitempty"`
	// Profile is "on" (the default) or "off". On, the owner's standing
	// facts (who they are, the people in their life, work and home, health
	// and diet, standing preferences and instructions; current values only)
	// lead every block, so a question that never names an allergy still
	// meets it. Small talk the gate lets through no search gets no block,
	// profile included; with scope session there is no profile.
	Profile string `json:"profile,omitempty"`
	// ProfileTokens is the profile's share of max_tokens: the facts that do
	// not fit are left out, preferences before health and diet
	// constraints. Default: 200.
	ProfileTokens int `json:"profile_tokens,omitempty"`
	// Tools are the memory tools the model is offered and the proxy runs
	// for the request's owner: save_memory, recall_memory. Default: none.
	Tools []string `json:"tools,omitempty"`
	// MaxToolRounds is how many times, at most, the proxy asks the
	// upstream again after running the model's calls of its tools.
	// Default: 3.
	MaxToolRounds int `json:"max_tool_rounds,omitempty"`

	// Overflow is what happens when the upstream refuses a request for its
	// length (its conversation is longer than the model takes): "trim"
	// asks once more with the oldest turns cut, and what they said, as far
	// as recall finds it in this conversation, in the memory block; "off"
	// (the default) gives the client the refusal. Ollama never refuses:
	// with trim, a request over its context is cut before it is sent.
	Overflow string `json:"overflow,omitempty"`
	// OverflowOllamaCtx is the context, in tokens, of Ollama models whose
	// requests do not set options.num_ctx. Default: 2048.
	OverflowOllamaCtx int `json:"overflow_ollama_ctx,omitempty"`

	// Diagnostics adds response headers saying what memory did:
	// X-Memory-Status (the outcome), X-Memory-Injected (how many memories),
	// X-Memory-Ids (their ids, in block order, the first 64) and
	// X-Memory-Time (time spent searching). For debugging a deployment.
	Diagnostics bool `json:"diagnostics,omitempty"`

	logger    *zap.Logger
	storage   *app.Storage
	engine    *engine.Engine
	tools     *memtools.Runner
	overflow  *overflow.Config // nil: overflow off
	receipts  *receipts.Book   // what recent requests were given, by owner
	noOwner   *noOwnerLog      // why requests had no owner, logged
	learner   learner          // where turns go once answered: the engine
	placement inject.Placement
	minScore  float64
	format    inject.Dialect
}

// learner takes a proxied turn to learn from, without waiting.
type learner interface {
	Enqueue(*engine.Job) bool
}

// defaultNoSystemRole are the models known to reject the system role. The
// later o1 and o3 models accept it (as developer instructions).
var defaultNoSystemRole = []string{"o1-mini", "o1-preview"}

// CaddyModule returns the Caddy module information.
func (Handler) CaddyModule() caddy.ModuleInfo {
	return caddy.ModuleInfo{
		ID:  "http.handlers.memory",
		New: func() caddy.Module { return new(Handler) },
	}
}

// Provision sets defaults and takes its storage from the memory app.
func (h *Handler) Provision(ctx caddy.Context) error {
	h.logger = ctx.Logger()
	if err := neverRuns(ctx, "memory"); err != nil {
		return err
	}
	if err := h.setDefaults(); err != nil {
		return err
	}
	memApp, err := app.From(ctx)
	if err != nil {
		return err
	}
	st, err := memApp.Storage(h.Storage)
	if err != nil {
		return fmt.Errorf("memory: %w", err)
	}
	h.use(st)
	return nil
}

// setDefaults fills in what the configuration leaves out, and reads the
// settings that need it.
func (h *Handler) setDefaults() error {
	if h.MaxTokens == 0 {
		h.MaxTokens = defaultMaxTokens
	}
	if h.MaxItems == 0 {
		h.MaxItems = defaultMaxItems
	}
	if h.MaxBody == 0 {
		h.MaxBody = defaultMaxBody
	}
	if h.MaxCapture == 0 {
		h.MaxCapture = defaultMaxCapture
	}
	if h.Timeout == 0 {
		h.Timeout = caddy.Duration(defaultTimeout)
	}
	if h.Scope == "" {
		h.Scope = "owner"
	}
	if h.Gate == "" {
		h.Gate = "heuristic"
	}
	if h.Profile == "" {
		h.Profile = "on"
	}
	if h.ProfileTokens == 0 {
		h.ProfileTokens = engine.DefaultProfileTokens
	}
	if h.MaxToolRounds == 0 {
		h.MaxToolRounds = memtools.DefaultMaxRounds
	}
	if h.Overflow == "" {
		h.Overflow = "off"
	}
	if h.OverflowOllamaCtx == 0 {
		h.OverflowOllamaCtx = overflow.DefaultOllamaCtx
	}
	if h.Placement == "" {
		h.Placement = string(inject.CacheSafe)
	}
	h.minScore = engine.DefaultMinScore
	if h.MinScore != nil {
		h.minScore = *h.MinScore
	}
	if len(h.Owner) == 0 {
		h.Owner = []string{"{" + apiKeyPlaceholder + "}"}
	}
	h.noOwner = &noOwnerLog{logger: h.logger, owner: h.Owner, now: time.Now}
	if h.NoSystemRole == nil {
		h.NoSystemRole = defaultNoSystemRole
	}
	var err error
	if h.placement, err = inject.ParsePlacement(h.Placement); err != nil {
		return err
	}
	if h.Format != "" {
		if h.format = inject.ByName(h.Format); h.format == nil {
			return fmt.Errorf("memory: unknown format %q: use %s", h.Format, inject.Names())
		}
	}
	return nil
}

// use makes the handler read and write the storage st.
func (h *Handler) use(st *app.Storage) {
	h.storage = st
	st.AddProxy(h)
	h.engine = st.Engine()
	h.learner = h.engine
	h.receipts = st.Receipts()
	h.tools = &memtools.Runner{Tools: h.Tools, MaxRounds: h.MaxToolRounds, MaxCapture: h.MaxCapture, Engine: h.engine,
		Owed: st.Owed(), Logger: h.logger, Called: func(tool string) { app.ToolCallsTotal.WithLabelValues(tool).Inc() }}
	if h.Overflow == "trim" {
		h.overflow = &overflow.Config{Engine: h.engine, MaxTokens: h.MaxTokens, Timeout: time.Duration(h.Timeout),
			DefaultCtx: h.OverflowOllamaCtx, MaxBody: h.MaxBody, Diagnostics: h.Diagnostics, Placement: h.placementFor, Logger: h.logger,
			Count: func(result string) { app.OverflowTotal.WithLabelValues(result).Inc() }}
	}
}

// Validate checks the configuration: every range the Caddyfile parser
// checks as it reads, again, for a configuration given in JSON.
func (h *Handler) Validate() error {
	errs := []error{
		cfile.OneOf("scope", h.Scope, "owner", "session"),
		cfile.OneOf("gate", h.Gate, "heuristic", "off"),
		cfile.OneOf("profile", h.Profile, "on", "off"),
		cfile.OneOf("overflow", h.Overflow, "trim", "off"),
		cfile.CheckCount("max_tokens", h.MaxTokens),
		cfile.CheckCount("max_items", h.MaxItems),
		cfile.CheckCount("profile_tokens", h.ProfileTokens),
		cfile.CheckCount("max_tool_rounds", h.MaxToolRounds),
		cfile.CheckCount("overflow_ollama_ctx", h.OverflowOllamaCtx),
		cfile.CheckSize("max_body", h.MaxBody),
		cfile.CheckSize("max_capture", h.MaxCapture),
		cfile.CheckDuration("timeout", h.Timeout),
	}
	if h.MinScore != nil {
		errs = append(errs, cfile.CheckFraction("min_score", *h.MinScore))
	}
	for _, t := range h.Tools {
		if !memtools.Known(t) {
			errs = append(errs, fmt.Errorf("tools: %q is not a memory tool: use save_memory, recall_memory or both", t))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("memory: %w", err)
	}
	return nil
}

// Interface guards
var (
	_ caddy.Provisioner           = (*Handler)(nil)
	_ caddy.Validator             = (*Handler)(nil)
	_ caddyhttp.MiddlewareHandler = (*Handler)(nil)
	_ caddyfile.Unmarshaler       = (*Handler)(nil)
)
