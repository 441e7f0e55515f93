// Package memory is a Caddy HTTP handler, http.handlers.memory, that gives
// LLM chat endpoints long-term memory without changing the client: it finds
// what it remembers about the caller, places it in the request on the way to
// the upstream, and learns from each turn after the response has gone out.
//
// This package is the Caddy glue: configuration, the Caddyfile directive,
// provisioning, request orchestration, the response tee, the engine shared
// across reloads, and metrics. The work itself lives in the store, index,
// inject, extract and engine packages.
package memory

import (
	"fmt"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
	"go.uber.org/zap"

	"github.com/caddy-memory/memory/embed"
	"github.com/caddy-memory/memory/engine"
	"github.com/caddy-memory/memory/inject"
	"github.com/caddy-memory/memory/llm"
)

func init() {
	caddy.RegisterModule(Handler{})
}

// Defaults.
const (
	defaultMaxTokens    = 800
	defaultMaxItems     = 10
	defaultMaxBody      = 4 << 20
	defaultMaxCapture   = 2 << 20
	defaultTimeout      = 500 * time.Millisecond
	defaultDrainTimeout = 10 * time.Second
)

// Handler is the memory middleware. Put it in front of reverse_proxy.
type Handler struct {
	// Storage is the directory holding the memory database (a bbolt file and
	// its Bleve index), or the postgres:// URL of a PostgreSQL database that
	// several Caddy instances share (each keeps its replica and index under
	// Caddy's data directory). Handlers with the same storage share one
	// database.
	// Default: "memory" in Caddy's data directory.
	Storage string `json:"storage,omitempty"`

	// Owner names whose memories a request reads and writes: placeholder
	// templates tried in order, the first that is not empty wins, e.g.
	// ["{http.request.header.X-User-Id}"], ["{http.auth.user.id}"], or
	// ["{memory.api_key}", "{http.request.remote.host}"] for clients that
	// send no key. {memory.api_key} is the bearer token of Authorization,
	// else the x-api-key header. Only a keyed hash of the value is stored.
	// Default: ["{memory.api_key}"]. A request whose owner resolves empty
	// passes through untouched.
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
	// SearchCache is the memory the search postings of large owners (more
	// memories than are searched from their records) may take; -1: none,
	// those owners are searched through the index alone. Default: 256 MiB.
	SearchCache int64 `json:"search_cache,omitempty"`
	// Timeout bounds retrieval on the request path. Default: 500ms.
	Timeout caddy.Duration `json:"timeout,omitempty"`
	// FailClosed answers 503 when memory retrieval fails, instead of passing
	// the request on without memories (the default).
	FailClosed bool `json:"fail_closed,omitempty"`
	// Embed turns on embedding recall (optional): memories are embedded in
	// the background through an OpenAI-compatible embeddings endpoint and
	// found by meaning as well as by words.
	Embed *EmbedConfig `json:"embed,omitempty"`
	// LLM turns on learning with a model (optional): each session's turns,
	// once it has been quiet for a while, are distilled by one call to an
	// OpenAI-compatible chat endpoint into an episode and standalone facts.
	LLM *LLMConfig `json:"llm,omitempty"`

	// Retention is how long memories of a class are kept, by class: "turn"
	// (transcripts; default 90 days), "episode" (session digests; default
	// 365 days), "fact" (default 0: for ever, evicted only as they fade).
	// 0 keeps them for ever. Pinned memories, and those saved through the
	// API or by the model's tools, are never pruned.
	Retention map[string]caddy.Duration `json:"retention,omitempty"`
	// ConsolidateEvery is the time between consolidation passes (decay,
	// merge, promote, evict, prune). Default: 24h; 0 runs none.
	ConsolidateEvery *caddy.Duration `json:"consolidate_every,omitempty"`
	// SalienceFloor: a fact whose salience (0 to 1) falls below it, idle
	// for 30 days, is evicted (deleted, recoverable). Default: 0.2.
	SalienceFloor *float64 `json:"salience_floor,omitempty"`
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

	// Diagnostics adds response headers saying what memory did:
	// X-Memory-Status (the outcome), X-Memory-Injected (how many memories)
	// and X-Memory-Time (time spent searching). For debugging a deployment.
	Diagnostics bool `json:"diagnostics,omitempty"`

	// IndexShards is the number of index shards for a new database (fixed
	// at creation). Default: 64.
	IndexShards int `json:"index_shards,omitempty"`
	// QueueSize bounds the turns waiting in memory to be saved; beyond it
	// turns are dropped and counted, never waited for. Default: 1024.
	QueueSize int `json:"queue_size,omitempty"`
	// DrainTimeout bounds the wait for pending work when the database is
	// closed (at shutdown, or when no configuration uses it any more).
	// Default: 10s.
	DrainTimeout caddy.Duration `json:"drain_timeout,omitempty"`

	// Encryption encrypts the storage at rest (opt-in). An encrypted
	// storage opens only with its key.
	Encryption *EncryptionConfig `json:"encryption,omitempty"`

	logger      *zap.Logger
	engine      *engine.Engine
	owed        *owedOutputs // outputs of the proxy's calls owed to stored responses
	learner     learner      // where turns go once answered: the engine
	storagePath string       // the pool key, set only once acquired
	placement   inject.Placement
	minScore    float64
	format      inject.Dialect
}

// EmbedConfig configures embedding recall.
type EmbedConfig struct {
	// URL is an OpenAI-compatible embeddings endpoint, e.g.
	// https://api.openai.com/v1/embeddings or http://127.0.0.1:11434/v1/embeddings.
	URL string `json:"url"`
	// Model is the embedding model.
	Model string `json:"model"`
	// Dimensions asks the model for shorter vectors when it can (OpenAI's
	// text-embedding-3); 0 takes the model's own.
	Dimensions int `json:"dimensions,omitempty"`
	// APIKey is sent as a bearer token; use a placeholder such as
	// "{env.OPENAI_API_KEY}".
	APIKey string `json:"api_key,omitempty"`
	// Timeout bounds embedding a question on the request path; after it the
	// request gets lexical recall only. Default: 300ms.
	Timeout caddy.Duration `json:"timeout,omitempty"`
	// MinSimilarity is the cosine similarity at which a memory found by
	// meaning counts as relevant. It depends on the model. Default: 0.45.
	MinSimilarity float64 `json:"min_similarity,omitempty"`
	// BatchSize is how many memories are embedded per call. Default: 64.
	BatchSize int `json:"batch_size,omitempty"`
}

// learner takes a proxied turn to learn from, without waiting.
type learner interface {
	Enqueue(*engine.Job) bool
}

// LLMConfig configures learning with a model.
type LLMConfig struct {
	// URL is an OpenAI-compatible chat completions endpoint, e.g.
	// http://127.0.0.1:11434/v1/chat/completions.
	URL string `json:"url"`
	// Model is the chat model, e.g. qwen2.5:7b-instruct.
	Model string `json:"model"`
	// APIKey is sent as a bearer token; use a placeholder such as
	// "{env.MEMORY_LLM_KEY}".
	APIKey string `json:"api_key,omitempty"`
	// Debounce is the quiet time after a session's latest turn before it is
	// distilled. Default: 60s.
	Debounce caddy.Duration `json:"debounce,omitempty"`
	// Timeout bounds one call. Default: 60s.
	Timeout caddy.Duration `json:"timeout,omitempty"`
	// CallsPerMinute caps the calls made, retries included; sessions wait
	// their turn, nothing is lost. Default: 30.
	CallsPerMinute int `json:"calls_per_minute,omitempty"`
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

// Provision sets defaults and acquires the shared engine for the storage path.
func (h *Handler) Provision(ctx caddy.Context) error {
	h.logger = ctx.Logger()
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
	if h.DrainTimeout == 0 {
		h.DrainTimeout = caddy.Duration(defaultDrainTimeout)
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
	h.owed = new(owedOutputs)
	if h.MaxToolRounds == 0 {
		h.MaxToolRounds = defaultMaxToolRounds
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
	if h.NoSystemRole == nil {
		h.NoSystemRole = defaultNoSystemRole
	}
	var err error
	if h.placement, err = inject.ParsePlacement(h.Placement); err != nil {
		return err
	}
	if h.Format != "" {
		if h.format = inject.ByName(h.Format); h.format == nil {
			return fmt.Errorf("memory: unknown format %q: use openai_chat, anthropic, ollama or openai_responses", h.Format)
		}
	}
	if err := registerMetrics(ctx.GetMetricsRegistry()); err != nil {
		return err
	}

	dir, err := storageDir(h.Storage)
	if err != nil {
		return err
	}
	keys, err := h.Encryption.ring()
	if err != nil {
		return fmt.Errorf("memory: %w", err)
	}
	keys, waiting, err := claimKeys(ctx, dir, "memory", keys)
	if err != nil {
		return err
	}
	h.engine, err = acquireEngine(dir, engine.Config{
		Dir:       dir,
		Database:  databaseOf(dir),
		Shards:    h.IndexShards,
		QueueSize: h.QueueSize,
		Logger:    func() *zap.Logger { return caddy.Log().Named("http.handlers.memory") },
		Observer:  observer{},
		Keys:      keys,
	}, time.Duration(h.DrainTimeout), h.logger, false)
	if err != nil {
		return fmt.Errorf("opening memory storage %s: %w", dir, err)
	}
	h.storagePath = dir
	if err := attachWaiting(dir, keys, waiting); err != nil {
		return err
	}
	h.learner = h.engine
	if h.Embed != nil {
		cfg := h.Embed
		client := &embed.Client{URL: cfg.URL, Model: cfg.Model, Dimensions: cfg.Dimensions,
			APIKey: caddy.NewReplacer().ReplaceKnown(cfg.APIKey, "")}
		logFixed(h.logger, dir, h.engine.UseEmbedding(engine.EmbedConfig{Client: client, QueryTimeout: time.Duration(cfg.Timeout),
			MinSimilarity: cfg.MinSimilarity, Batch: cfg.BatchSize}))
	}
	h.engine.UseLifecycle(h.lifecycle())
	h.engine.UseSearchCache(int(h.SearchCache))
	if c := h.LLM; c != nil {
		client := &llm.Client{URL: c.URL, Model: c.Model, APIKey: caddy.NewReplacer().ReplaceKnown(c.APIKey, "")}
		logFixed(h.logger, dir, h.engine.UseLLM(engine.LLMConfig{Client: client, Debounce: time.Duration(c.Debounce),
			Timeout: time.Duration(c.Timeout), CallsPerMinute: c.CallsPerMinute}))
	}
	return nil
}

// lifecycle is the configured lifecycle, defaults filled in.
func (h *Handler) lifecycle() engine.LifecycleConfig {
	cfg := engine.DefaultLifecycle
	for class, d := range h.Retention {
		switch class {
		case "turn":
			cfg.TurnRetention = time.Duration(d)
		case "episode":
			cfg.EpisodeRetention = time.Duration(d)
		case "fact":
			cfg.FactRetention = time.Duration(d)
		}
	}
	if h.ConsolidateEvery != nil {
		cfg.Every = time.Duration(*h.ConsolidateEvery)
	}
	if h.SalienceFloor != nil {
		cfg.SalienceFloor = *h.SalienceFloor
	}
	return cfg
}

// Validate checks the configuration.
func (h *Handler) Validate() error {
	if h.Scope != "owner" && h.Scope != "session" {
		return fmt.Errorf("memory: unknown scope %q: use owner or session", h.Scope)
	}
	if h.MaxTokens < 0 || h.MaxItems < 0 || h.MaxBody < 0 || h.MaxCapture < 0 || h.IndexShards < 0 || h.QueueSize < 0 {
		return fmt.Errorf("memory: sizes and counts must not be negative")
	}
	if h.Timeout < 0 || h.DrainTimeout < 0 || (h.ConsolidateEvery != nil && *h.ConsolidateEvery < 0) {
		return fmt.Errorf("memory: durations must not be negative")
	}
	for class, d := range h.Retention {
		if class != "turn" && class != "episode" && class != "fact" {
			return fmt.Errorf("memory: retention is for turn, episode or fact, not %q", class)
		}
		if d < 0 {
			return fmt.Errorf("memory: retention %s must not be negative (0 keeps them for ever)", class)
		}
	}
	if f := h.SalienceFloor; f != nil && (*f < 0 || *f > 1) {
		return fmt.Errorf("memory: salience_floor must be from 0 to 1")
	}
	if h.Gate != "heuristic" && h.Gate != "off" {
		return fmt.Errorf("memory: unknown gate %q: use heuristic or off", h.Gate)
	}
	if h.Profile != "on" && h.Profile != "off" {
		return fmt.Errorf("memory: profile must be on or off, not %q", h.Profile)
	}
	if h.ProfileTokens < 0 {
		return fmt.Errorf("memory: profile_tokens must not be negative")
	}
	for _, t := range h.Tools {
		if _, ok := toolDefs[t]; !ok {
			return fmt.Errorf("memory: unknown tool %q: the tools are save_memory and recall_memory", t)
		}
	}
	if h.MaxToolRounds < 0 {
		return fmt.Errorf("memory: max_tool_rounds must not be negative")
	}
	if l := h.LLM; l != nil {
		if l.URL == "" || l.Model == "" {
			return fmt.Errorf("memory: llm needs url and model (an OpenAI-compatible chat completions endpoint and its model)")
		}
		if l.Debounce < 0 || l.Timeout < 0 || l.CallsPerMinute < 0 {
			return fmt.Errorf("memory: llm: debounce, timeout and calls_per_minute must not be negative")
		}
	}
	if e := h.Embed; e != nil {
		if e.URL == "" || e.Model == "" {
			return fmt.Errorf("memory: embed needs url and model (an OpenAI-compatible embeddings endpoint and its model)")
		}
		if e.Dimensions < 0 || e.BatchSize < 0 || e.Timeout < 0 || e.MinSimilarity < 0 || e.MinSimilarity > 1 {
			return fmt.Errorf("memory: embed: dimensions, batch_size and timeout must not be negative, min_similarity from 0 to 1")
		}
	}
	return nil
}

// Cleanup releases the engine; the last handler using it closes it.
// h.engine is left set: after a reload's grace period, requests of the old
// config may still be running, and a closed engine fails their searches
// open and counts their turns as dropped, where a nil one would panic.
func (h *Handler) Cleanup() error {
	if h.storagePath == "" {
		return nil // Provision failed before acquiring it
	}
	path := h.storagePath
	h.storagePath = ""
	return releaseEngine(path)
}

// Interface guards
var (
	_ caddy.Provisioner           = (*Handler)(nil)
	_ caddy.Validator             = (*Handler)(nil)
	_ caddy.CleanerUpper          = (*Handler)(nil)
	_ caddyhttp.MiddlewareHandler = (*Handler)(nil)
	_ caddyfile.Unmarshaler       = (*Handler)(nil)
)
