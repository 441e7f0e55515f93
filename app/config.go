package app

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/caddyserver/caddy/v2"

	"github.com/caddy-memory/memory/internal/cfile"
	"github.com/caddy-memory/memory/internal/embed"
	"github.com/caddy-memory/memory/internal/engine"
	"github.com/caddy-memory/memory/internal/llm"
	"github.com/caddy-memory/memory/internal/seal"
	"github.com/caddy-memory/memory/store/postgres"
)

// Defaults of a storage.
const defaultDrainTimeout = 10 * time.Second

// StorageConfig is one storage: where it is, and what runs on it.
type StorageConfig struct {
	// Path is the directory of an embedded storage: a bbolt file and its
	// Bleve index. Default (without url): "memory" in Caddy's data
	// directory for the storage named default, "memory-<name>" for others.
	Path string `json:"path,omitempty"`
	// URL is a PostgreSQL database (postgres:// or postgresql://) that
	// several Caddy instances share as the source of truth; each keeps a
	// replica of it and its own index in Replica.
	URL string `json:"url,omitempty"`
	// Replica is this instance's directory for the replica and index of
	// URL's database. Default: under Caddy's data directory, named after
	// the URL, in a slot no other process on this host holds.
	Replica string `json:"replica,omitempty"`

	// Encryption encrypts the storage at rest (opt-in). An encrypted
	// storage opens only with its key.
	Encryption *EncryptionConfig `json:"encryption,omitempty"`
	// LLM turns on learning with a model (optional): each session's turns,
	// once it has been quiet for a while, are distilled by one call to an
	// OpenAI-compatible chat endpoint into an episode and standalone facts.
	LLM *LLMConfig `json:"llm,omitempty"`
	// Embed turns on embedding recall (optional): memories are embedded in
	// the background through an OpenAI-compatible embeddings endpoint and
	// found by meaning as well as by words.
	Embed *EmbedConfig `json:"embed,omitempty"`

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

	// IndexShards is the number of index shards for a new storage (fixed
	// at creation). Default: 64.
	IndexShards int `json:"index_shards,omitempty"`
	// SearchCache is the memory the search postings of large owners (more
	// memories than are searched from their records) may take; -1: none,
	// those owners are searched through the index alone. Default: 256 MiB.
	SearchCache int64 `json:"search_cache,omitempty"`
	// QueueSize bounds the turns waiting in memory to be saved; beyond it
	// turns are dropped and counted, never waited for. Default: 1024.
	QueueSize int `json:"queue_size,omitempty"`
	// DrainTimeout bounds the wait for pending work when the storage is
	// closed (at shutdown, or when no configuration uses it any more),
	// calls to PostgreSQL included. Default: 10s.
	DrainTimeout caddy.Duration `json:"drain_timeout,omitempty"`
}

// EncryptionConfig encrypts a storage at rest: its store's values and its
// index (see docs/encryption.md).
type EncryptionConfig struct {
	// Key is the storage's key: 32 bytes, base64 or hex. Use a placeholder
	// such as "{env.MEMORY_KEY}"; generate one with
	// head -c32 /dev/urandom | base64. A plaintext storage opened with a
	// key is encrypted at start.
	Key string `json:"key"`
	// OldKeys are previous keys, during a rotation: they still open what
	// they sealed while everything is sealed again with Key in the
	// background; the log says when they are no longer needed.
	OldKeys []string `json:"old_keys,omitempty"`
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

// EmbedConfig configures embedding recall.
type EmbedConfig struct {
	// URL is an OpenAI-compatible embeddings endpoint, e.g.
	// https://api.openai.com/v1/embeddings.
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

// Validate checks the settings, the keys included.
func (c *StorageConfig) Validate() error {
	if err := c.validateShape(); err != nil {
		return err
	}
	_, err := c.Encryption.ring()
	return err
}

// validateShape checks the settings that need no placeholder replaced
// (the Caddyfile is adapted where the keys' environment may not be): what
// the Caddyfile parser checks as it reads, again, for a configuration given
// in JSON, and how the settings go together.
func (c *StorageConfig) validateShape() error {
	switch {
	case c.Path != "" && c.URL != "":
		return fmt.Errorf("path and url are two kinds of storage: give one")
	case c.Replica != "" && c.URL == "":
		return fmt.Errorf("replica is the local copy of a PostgreSQL storage: it needs url (an embedded storage lives in path)")
	case c.URL != "" && !strings.Contains(c.URL, "{") && !postgres.IsURL(c.URL):
		return fmt.Errorf("url must be a postgres:// or postgresql:// URL")
	case c.SearchCache < -1:
		return fmt.Errorf("search_cache must be a size in bytes, or -1 for none (off in a Caddyfile), not %d", c.SearchCache)
	case c.LLM != nil && (c.LLM.URL == "" || c.LLM.Model == ""):
		return fmt.Errorf("llm needs url and model (an OpenAI-compatible chat completions endpoint and its model)")
	case c.Embed != nil && (c.Embed.URL == "" || c.Embed.Model == ""):
		return fmt.Errorf("embed needs url and model (an OpenAI-compatible embeddings endpoint and its model)")
	}
	errs := []error{
		cfile.CheckCount("index_shards", c.IndexShards),
		cfile.CheckCount("queue_size", c.QueueSize),
		cfile.CheckDuration("drain_timeout", c.DrainTimeout),
	}
	if c.ConsolidateEvery != nil {
		errs = append(errs, cfile.CheckDuration("consolidate_every", *c.ConsolidateEvery))
	}
	if c.SalienceFloor != nil {
		errs = append(errs, cfile.CheckFraction("salience_floor", *c.SalienceFloor))
	}
	for _, class := range slices.Sorted(maps.Keys(c.Retention)) {
		if err := cfile.OneOf("retention", class, "turn", "episode", "fact"); err != nil {
			errs = append(errs, err)
			continue
		}
		errs = append(errs, cfile.CheckDuration("retention "+class, c.Retention[class]))
	}
	if l := c.LLM; l != nil {
		errs = append(errs, cfile.CheckDuration("llm debounce", l.Debounce), cfile.CheckDuration("llm timeout", l.Timeout),
			cfile.CheckCount("llm calls_per_minute", l.CallsPerMinute))
	}
	if e := c.Embed; e != nil {
		errs = append(errs, cfile.CheckCount("embed dimensions", e.Dimensions), cfile.CheckDuration("embed timeout", e.Timeout),
			cfile.CheckFraction("embed min_similarity", e.MinSimilarity), cfile.CheckCount("embed batch_size", e.BatchSize))
	}
	return errors.Join(errs...)
}

// expand replaces the placeholders Caddy knows at load time ({env.*}).
func expand(s string) string { return caddy.NewReplacer().ReplaceKnown(s, "") }

// ring reads the keys, placeholders expanded.
func (c *EncryptionConfig) ring() (*seal.Ring, error) {
	if c == nil {
		return nil, nil
	}
	old := make([]string, len(c.OldKeys))
	for i, k := range c.OldKeys {
		old[i] = expand(k)
	}
	r, err := seal.NewRing(expand(c.Key), old)
	if err != nil {
		return nil, fmt.Errorf("encryption: %w", err)
	}
	return r, nil
}

// lifecycle is the configured ageing, defaults filled in.
func (c *StorageConfig) lifecycle() engine.LifecycleConfig {
	cfg := engine.DefaultLifecycle
	for class, d := range c.Retention {
		switch class {
		case "turn":
			cfg.TurnRetention = time.Duration(d)
		case "episode":
			cfg.EpisodeRetention = time.Duration(d)
		case "fact":
			cfg.FactRetention = time.Duration(d)
		}
	}
	if c.ConsolidateEvery != nil {
		cfg.Every = time.Duration(*c.ConsolidateEvery)
	}
	if c.SalienceFloor != nil {
		cfg.SalienceFloor = *c.SalienceFloor
	}
	return cfg
}

// llm is the distiller's configuration, or nil.
func (c *StorageConfig) llm() *engine.LLMConfig {
	l := c.LLM
	if l == nil {
		return nil
	}
	return &engine.LLMConfig{
		Client:   &llm.Client{URL: l.URL, Model: l.Model, APIKey: expand(l.APIKey)},
		Debounce: time.Duration(l.Debounce), Timeout: time.Duration(l.Timeout), CallsPerMinute: l.CallsPerMinute,
	}
}

// embed is the embedder's configuration, or nil.
func (c *StorageConfig) embed() *engine.EmbedConfig {
	e := c.Embed
	if e == nil {
		return nil
	}
	return &engine.EmbedConfig{
		Client:       &embed.Client{URL: e.URL, Model: e.Model, Dimensions: e.Dimensions, APIKey: expand(e.APIKey)},
		QueryTimeout: time.Duration(e.Timeout), MinSimilarity: e.MinSimilarity, Batch: e.BatchSize,
	}
}

// drain is the configured drain_timeout, defaulted.
func (c *StorageConfig) drain() time.Duration {
	if c.DrainTimeout > 0 {
		return time.Duration(c.DrainTimeout)
	}
	return defaultDrainTimeout
}
