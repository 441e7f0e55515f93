package app

import (
	"slices"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
	"github.com/caddyserver/caddy/v2/caddyconfig/httpcaddyfile"

	"github.com/caddy-memory/memory/internal/cfile"
)

func init() {
	httpcaddyfile.RegisterGlobalOption("memory", parseGlobal)
}

// StorageSettings are the settings of a storage block, in the order the
// README lists them. Given on a handler, each is an error that says where
// it goes.
var StorageSettings = []string{"path", "url", "replica", "encryption", "llm", "embed", "retention",
	"consolidate_every", "salience_floor", "index_shards", "search_cache", "queue_size", "drain_timeout"}

// The settings of a storage's blocks.
var (
	encryptionSettings = []string{"key", "old_keys"}
	llmSettings        = []string{"url", "model", "api_key", "debounce", "timeout", "calls_per_minute"}
	embedSettings      = []string{"url", "model", "dimensions", "api_key", "timeout", "min_similarity", "batch_size"}
)

// parseGlobal reads the global option that configures the memory app.
// Syntax:
//
//	memory {
//	    storage <name> {
//	        path    <directory>          # or:
//	        url     <postgres:// URL>
//	        replica <directory>          # with url: this instance's replica and index
//	        encryption {
//	            key      <key or placeholder>
//	            old_keys <key or placeholder>...
//	        }
//	        llm {
//	            url              <chat completions endpoint>
//	            model            <model>
//	            api_key          <key or placeholder>
//	            debounce         <duration>
//	            timeout          <duration>
//	            calls_per_minute <n>
//	        }
//	        embed {
//	            url            <embeddings endpoint>
//	            model          <model>
//	            dimensions     <n>
//	            api_key        <key or placeholder>
//	            timeout        <duration>
//	            min_similarity <0..1>
//	            batch_size     <n>
//	        }
//	        retention         turn|episode|fact <duration>
//	        consolidate_every <duration>|off
//	        salience_floor    <0..1>
//	        index_shards      <n>
//	        search_cache      <size>|off
//	        queue_size        <n>
//	        drain_timeout     <duration>
//	    }
//	}
//
// The option may be given more than once; a storage name only once.
func parseGlobal(d *caddyfile.Dispenser, existing any) (any, error) {
	a := new(App)
	if prev, ok := existing.(httpcaddyfile.App); ok {
		if err := caddy.StrictUnmarshalJSON(prev.Value, a); err != nil {
			return nil, err
		}
	}
	if a.Storages == nil {
		a.Storages = map[string]*StorageConfig{}
	}
	d.Next() // the option's name
	if d.NextArg() {
		return nil, d.ArgErr()
	}
	for d.NextBlock(0) {
		if d.Val() != "storage" {
			if slices.Contains(StorageSettings, d.Val()) {
				return nil, d.Errf("%s is a setting of a storage: put it in one, memory { storage default { %s ... } }", d.Val(), d.Val())
			}
			return nil, d.Errf("unrecognized memory option '%s': the memory app takes storage <name> { ... }", d.Val())
		}
		if !d.NextArg() {
			return nil, d.Err("storage needs a name, e.g. storage default { path /var/lib/caddy/memory }")
		}
		name := d.Val()
		if err := validName(name); err != nil {
			return nil, d.Err(err.Error())
		}
		if _, ok := a.Storages[name]; ok {
			return nil, d.Errf("memory storage %q is configured twice", name)
		}
		if d.NextArg() {
			return nil, d.Errf("storage %s: its settings go in a block: storage %s { path ... }", name, name)
		}
		sc := new(StorageConfig)
		if err := sc.unmarshal(d); err != nil {
			return nil, err
		}
		a.Storages[name] = sc
	}
	return httpcaddyfile.App{Name: "memory", Value: caddyconfig.JSON(a, nil)}, nil
}

// unmarshal reads a storage's block.
func (c *StorageConfig) unmarshal(d *caddyfile.Dispenser) error {
	seen := map[string]bool{}
	for nesting := d.Nesting(); d.NextBlock(nesting); {
		sub := d.Val()
		if sub == "retention" {
			if err := c.parseRetention(d, seen); err != nil {
				return err
			}
			continue
		}
		if err := cfile.Once(d, seen, sub); err != nil {
			return err
		}
		var err error
		switch sub {
		case "encryption":
			c.Encryption, err = parseEncryption(d)
			if err != nil {
				return err
			}
			continue
		case "llm":
			c.LLM, err = parseLLM(d)
			if err != nil {
				return err
			}
			continue
		case "embed":
			c.Embed, err = parseEmbed(d)
			if err != nil {
				return err
			}
			continue
		}
		arg, err := cfile.OneArg(d, sub)
		if err != nil {
			return err
		}
		switch sub {
		case "path":
			c.Path = arg
		case "url":
			c.URL = arg
		case "replica":
			c.Replica = arg
		case "consolidate_every":
			var every caddy.Duration
			if arg != "off" {
				every, err = cfile.Duration(arg)
			}
			c.ConsolidateEvery = &every
		case "salience_floor":
			var f float64
			f, err = cfile.Fraction(arg)
			c.SalienceFloor = &f
		case "index_shards":
			c.IndexShards, err = cfile.Positive(arg)
		case "search_cache":
			if arg == "off" {
				c.SearchCache = -1
			} else {
				c.SearchCache, err = cfile.Size(arg)
			}
		case "queue_size":
			c.QueueSize, err = cfile.Positive(arg)
		case "drain_timeout":
			c.DrainTimeout, err = cfile.Duration(arg)
		default:
			return cfile.Unknown(d, "storage setting", sub, StorageSettings)
		}
		if err != nil {
			return d.Errf("%s: %v", sub, err)
		}
	}
	if err := c.validateShape(); err != nil {
		return d.Err(err.Error())
	}
	return nil
}

// parseRetention reads "retention <turn|episode|fact> <duration>", given
// at most once per class; 0 keeps them for ever.
func (c *StorageConfig) parseRetention(d *caddyfile.Dispenser, seen map[string]bool) error {
	var class, arg string
	if !d.Args(&class, &arg) {
		return d.ArgErr()
	}
	if d.NextArg() {
		return d.Errf("retention takes a class and a duration, e.g. retention turn 90d")
	}
	if err := cfile.OneOf("retention", class, "turn", "episode", "fact"); err != nil {
		return d.Err(err.Error())
	}
	if err := cfile.Once(d, seen, "retention "+class); err != nil {
		return err
	}
	var dur caddy.Duration
	if arg != "0" {
		var err error
		if dur, err = cfile.Duration(arg); err != nil {
			return d.Errf("retention %s: %v (0 keeps them for ever)", class, err)
		}
	}
	if c.Retention == nil {
		c.Retention = map[string]caddy.Duration{}
	}
	c.Retention[class] = dur
	return nil
}

// parseEncryption reads an encryption block.
func parseEncryption(d *caddyfile.Dispenser) (*EncryptionConfig, error) {
	if d.NextArg() {
		return nil, d.ArgErr()
	}
	c := new(EncryptionConfig)
	for nesting := d.Nesting(); d.NextBlock(nesting); {
		switch sub := d.Val(); sub {
		case "key":
			if c.Key != "" || !d.NextArg() {
				return nil, d.Errf("encryption: key takes one value, once")
			}
			c.Key = d.Val()
			if d.NextArg() {
				return nil, d.ArgErr()
			}
		case "old_keys":
			c.OldKeys = append(c.OldKeys, d.RemainingArgs()...)
			if len(c.OldKeys) == 0 {
				return nil, d.ArgErr()
			}
		default:
			return nil, cfile.Unknown(d, "encryption subdirective", sub, encryptionSettings)
		}
	}
	if c.Key == "" {
		return nil, d.Errf("encryption needs a key (e.g. key {env.MEMORY_KEY}); generate one with: head -c32 /dev/urandom | base64")
	}
	return c, nil
}

// parseEmbed reads the embed block.
func parseEmbed(d *caddyfile.Dispenser) (*EmbedConfig, error) {
	cfg := new(EmbedConfig)
	err := cfile.Block(d, "embed", embedSettings, func(sub, arg string) (err error) {
		switch sub {
		case "url":
			cfg.URL = arg
		case "model":
			cfg.Model = arg
		case "dimensions":
			cfg.Dimensions, err = cfile.Positive(arg)
		case "api_key":
			cfg.APIKey = arg
		case "timeout":
			cfg.Timeout, err = cfile.Duration(arg)
		case "min_similarity":
			cfg.MinSimilarity, err = cfile.Fraction(arg)
		case "batch_size":
			cfg.BatchSize, err = cfile.Positive(arg)
		default:
			return cfile.ErrUnknown
		}
		return err
	})
	if err == nil && (cfg.URL == "" || cfg.Model == "") {
		err = d.Err("embed needs url and model")
	}
	return cfg, err
}

// parseLLM reads the llm block.
func parseLLM(d *caddyfile.Dispenser) (*LLMConfig, error) {
	cfg := new(LLMConfig)
	err := cfile.Block(d, "llm", llmSettings, func(sub, arg string) (err error) {
		switch sub {
		case "url":
			cfg.URL = arg
		case "model":
			cfg.Model = arg
		case "api_key":
			cfg.APIKey = arg
		case "debounce":
			cfg.Debounce, err = cfile.Duration(arg)
		case "timeout":
			cfg.Timeout, err = cfile.Duration(arg)
		case "calls_per_minute":
			cfg.CallsPerMinute, err = cfile.Positive(arg)
		default:
			return cfile.ErrUnknown
		}
		return err
	})
	if err == nil && (cfg.URL == "" || cfg.Model == "") {
		err = d.Err("llm needs url and model")
	}
	return cfg, err
}
