package memory

import (
	"errors"
	"fmt"
	"strconv"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
	"github.com/caddyserver/caddy/v2/caddyconfig/httpcaddyfile"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
	"github.com/dustin/go-humanize"

	"github.com/caddy-memory/memory/api"
	"github.com/caddy-memory/memory/inject"
)

func init() {
	httpcaddyfile.RegisterHandlerDirective("memory", parseCaddyfile)
	// After encode: the tee sees the upstream's bytes before encode
	// compresses them for the client. After basic_auth and forward_auth:
	// {http.auth.user.id} can name the owner.
	httpcaddyfile.RegisterDirectiveOrder("memory", httpcaddyfile.After, "encode")

	httpcaddyfile.RegisterHandlerDirective("memory_api", parseAPICaddyfile)
	// It answers requests itself; before reverse_proxy, so a matcher such as
	// memory_api /memory/* keeps those paths from the upstream.
	httpcaddyfile.RegisterDirectiveOrder("memory_api", httpcaddyfile.Before, "reverse_proxy")
}

func parseCaddyfile(h httpcaddyfile.Helper) (caddyhttp.MiddlewareHandler, error) {
	m := new(Handler)
	err := m.UnmarshalCaddyfile(h.Dispenser)
	return m, err
}

func parseAPICaddyfile(h httpcaddyfile.Helper) (caddyhttp.MiddlewareHandler, error) {
	a := new(APIHandler)
	err := a.UnmarshalCaddyfile(h.Dispenser)
	return a, err
}

// UnmarshalCaddyfile sets up the handler from Caddyfile tokens. Syntax:
//
//	memory [<matcher>] {
//	    storage       <directory>|postgres://...
//	    owner         <placeholder template>...
//	    session       <placeholder template>
//	    scope         owner|session
//	    placement     cache_safe|system|user
//	    no_system_role <model>...
//	    format        openai_chat|anthropic|ollama|openai_responses
//	    max_tokens    <n>
//	    max_items     <n>
//	    min_score     <float>
//	    max_body      <size>
//	    max_capture   <size>
//	    search_cache  <size>|off
//	    timeout       <duration>
//	    fail          open|closed
//	    diagnostics
//	    llm {
//	        url              <chat completions endpoint>
//	        model            <model>
//	        api_key          <key or placeholder>
//	        debounce         <duration>
//	        timeout          <duration>
//	        calls_per_minute <n>
//	    }
//	    embed {
//	        url            <embeddings endpoint>
//	        model          <model>
//	        dimensions     <n>
//	        api_key        <key or placeholder>
//	        timeout        <duration>
//	        min_similarity <0..1>
//	        batch_size     <n>
//	    }
//	    retention     turn|episode|fact <duration>
//	    consolidate_every <duration>|off
//	    salience_floor <0..1>
//	    gate          heuristic|off
//	    profile       on|off
//	    profile_tokens <n>
//	    tools         [save_memory] [recall_memory]
//	    max_tool_rounds <n>
//	    index_shards  <n>
//	    queue_size    <n>
//	    drain_timeout <duration>
//	    encryption {
//	        key      <key or placeholder>
//	        old_keys <key or placeholder>...
//	    }
//	}
func (h *Handler) UnmarshalCaddyfile(d *caddyfile.Dispenser) error {
	d.Next() // the directive name
	if d.NextArg() {
		return d.ArgErr()
	}
	seen := map[string]bool{}
	for d.NextBlock(0) {
		sub := d.Val()
		if sub == "retention" {
			if err := h.parseRetention(d, seen); err != nil {
				return err
			}
			continue
		}
		if err := once(d, seen, sub); err != nil {
			return err
		}
		switch sub {
		case "identity":
			return d.Errf("identity is part of the profile now, which is on by default: remove the line (profile off turns it off)")
		case "embed":
			cfg, err := parseEmbed(d)
			if err != nil {
				return err
			}
			h.Embed = cfg
			continue
		case "encryption":
			cfg, err := parseEncryption(d)
			if err != nil {
				return err
			}
			h.Encryption = cfg
			continue
		case "llm":
			cfg, err := parseLLM(d)
			if err != nil {
				return err
			}
			h.LLM = cfg
			continue
		case "diagnostics":
			if d.NextArg() {
				return d.Errf("diagnostics takes no argument")
			}
			h.Diagnostics = true
			continue
		case "tools":
			h.Tools = d.RemainingArgs()
			if len(h.Tools) == 0 {
				h.Tools = []string{toolSave, toolRecall}
			}
			for _, t := range h.Tools {
				if _, ok := toolDefs[t]; !ok {
					return d.Errf("tools: %q is not a memory tool: use save_memory, recall_memory, or neither for both", t)
				}
			}
			continue
		case "no_system_role", "owner":
			args := d.RemainingArgs()
			if len(args) == 0 {
				return d.ArgErr()
			}
			if sub == "owner" {
				h.Owner = args
			} else {
				h.NoSystemRole = args
			}
			continue
		}
		arg, err := oneArg(d, sub)
		if err != nil {
			return err
		}
		switch sub {
		case "storage":
			h.Storage = arg
		case "session":
			h.Session = arg
		case "scope":
			if arg != "owner" && arg != "session" {
				return d.Errf("scope must be owner or session, not %q", arg)
			}
			h.Scope = arg
		case "placement":
			h.Placement = arg
		case "format":
			if inject.ByName(arg) == nil {
				return d.Errf("format must be openai_chat, anthropic, ollama or openai_responses, not %q", arg)
			}
			h.Format = arg
		case "max_tokens":
			h.MaxTokens, err = positive(arg)
		case "max_items":
			h.MaxItems, err = positive(arg)
		case "min_score":
			var f float64
			if f, err = strconv.ParseFloat(arg, 64); err != nil || f < 0 || f > 1 {
				return d.Errf("min_score: %q is not a number from 0 to 1", arg)
			}
			h.MinScore = &f
		case "max_body":
			h.MaxBody, err = size(arg)
		case "max_capture":
			h.MaxCapture, err = size(arg)
		case "search_cache":
			if arg == "off" {
				h.SearchCache = -1
			} else {
				h.SearchCache, err = size(arg)
			}
		case "timeout":
			h.Timeout, err = duration(arg)
		case "fail":
			switch arg {
			case "open":
				h.FailClosed = false
			case "closed":
				h.FailClosed = true
			default:
				return d.Errf("fail must be open or closed, not %q", arg)
			}
		case "consolidate_every":
			var every caddy.Duration
			if arg != "off" {
				every, err = duration(arg)
			}
			h.ConsolidateEvery = &every
		case "salience_floor":
			var f float64
			if f, err = strconv.ParseFloat(arg, 64); err != nil || f < 0 || f > 1 {
				return d.Errf("salience_floor: %q is not a number from 0 to 1", arg)
			}
			h.SalienceFloor = &f
		case "gate":
			if arg != "heuristic" && arg != "off" {
				return d.Errf("gate must be heuristic or off, not %q", arg)
			}
			h.Gate = arg
		case "profile":
			if arg != "on" && arg != "off" {
				return d.Errf("profile must be on or off, not %q", arg)
			}
			h.Profile = arg
		case "profile_tokens":
			h.ProfileTokens, err = positive(arg)
		case "max_tool_rounds":
			h.MaxToolRounds, err = positive(arg)
		case "index_shards":
			h.IndexShards, err = positive(arg)
		case "queue_size":
			h.QueueSize, err = positive(arg)
		case "drain_timeout":
			h.DrainTimeout, err = duration(arg)
		default:
			return d.Errf("unrecognized memory subdirective '%s'", sub)
		}
		if err != nil {
			return d.Errf("%s: %v", sub, err)
		}
	}
	return nil
}

// UnmarshalCaddyfile sets up the API from Caddyfile tokens. Syntax:
//
//	memory_api [<matcher>] {
//	    storage     <directory>|postgres://...
//	    mode        self|admin
//	    owner       <placeholder template>...
//	    max_body    <size>
//	    max_import  <size>
//	    index_shards <n>
//	    insecure_no_auth
//	    encryption { ... }   # as memory's; not needed when a memory handler has the key
//	}
func (a *APIHandler) UnmarshalCaddyfile(d *caddyfile.Dispenser) error {
	d.Next() // the directive name
	if d.NextArg() {
		return d.ArgErr()
	}
	seen := map[string]bool{}
	for d.NextBlock(0) {
		sub := d.Val()
		if err := once(d, seen, sub); err != nil {
			return err
		}
		switch sub {
		case "insecure_no_auth":
			if d.NextArg() {
				return d.Errf("insecure_no_auth takes no argument")
			}
			a.InsecureNoAuth = true
			continue
		case "owner":
			if a.Owner = d.RemainingArgs(); len(a.Owner) == 0 {
				return d.ArgErr()
			}
			continue
		case "encryption":
			cfg, err := parseEncryption(d)
			if err != nil {
				return err
			}
			a.Encryption = cfg
			continue
		}
		arg, err := oneArg(d, sub)
		if err != nil {
			return err
		}
		switch sub {
		case "storage":
			a.Storage = arg
		case "mode":
			if arg != string(api.Self) && arg != string(api.Admin) {
				return d.Errf("mode must be self or admin, not %q", arg)
			}
			a.Mode = arg
		case "max_body":
			a.MaxBody, err = size(arg)
		case "max_import":
			a.MaxImport, err = size(arg)
		case "index_shards":
			a.IndexShards, err = positive(arg)
		default:
			return d.Errf("unrecognized memory_api subdirective '%s'", sub)
		}
		if err != nil {
			return d.Errf("%s: %v", sub, err)
		}
	}
	return nil
}

// parseRetention reads "retention <turn|episode|fact> <duration>", given
// at most once per class; 0 keeps them for ever.
func (h *Handler) parseRetention(d *caddyfile.Dispenser, seen map[string]bool) error {
	var class, arg string
	if !d.Args(&class, &arg) {
		return d.ArgErr()
	}
	if d.NextArg() {
		return d.Errf("retention takes a class and a duration, e.g. retention turn 90d")
	}
	if class != "turn" && class != "episode" && class != "fact" {
		return d.Errf("retention is for turn, episode or fact, not %q", class)
	}
	if err := once(d, seen, "retention "+class); err != nil {
		return err
	}
	var dur caddy.Duration
	if arg != "0" {
		var err error
		if dur, err = duration(arg); err != nil {
			return d.Errf("retention %s: %v (0 keeps them for ever)", class, err)
		}
	}
	if h.Retention == nil {
		h.Retention = map[string]caddy.Duration{}
	}
	h.Retention[class] = dur
	return nil
}

// once refuses a subdirective given twice in one block: the second would
// silently win.
func once(d *caddyfile.Dispenser, seen map[string]bool, sub string) error {
	if seen[sub] {
		return d.Errf("%s already specified", sub)
	}
	seen[sub] = true
	return nil
}

// oneArg reads the single argument of the subdirective named name.
func oneArg(d *caddyfile.Dispenser, name string) (string, error) {
	var arg string
	if !d.Args(&arg) {
		return "", d.ArgErr()
	}
	if d.NextArg() {
		return "", d.Errf("%s takes one argument", name)
	}
	return arg, nil
}

// errUnknown is what a block's setter returns for a subdirective it does
// not know.
var errUnknown = errors.New("unrecognized")

// block reads the nested block of the subdirective name, whose
// subdirectives take one argument each and may each be given once, calling
// set with each.
func block(d *caddyfile.Dispenser, name string, set func(sub, arg string) error) error {
	if d.NextArg() {
		return d.ArgErr()
	}
	seen := map[string]bool{}
	for nesting := d.Nesting(); d.NextBlock(nesting); {
		sub := d.Val()
		if err := once(d, seen, name+" "+sub); err != nil {
			return err
		}
		arg, err := oneArg(d, name+" "+sub)
		if err != nil {
			return err
		}
		if err := set(sub, arg); errors.Is(err, errUnknown) {
			return d.Errf("unrecognized %s subdirective '%s'", name, sub)
		} else if err != nil {
			return d.Errf("%s %s: %v", name, sub, err)
		}
	}
	return nil
}

// parseEmbed reads the embed block.
func parseEmbed(d *caddyfile.Dispenser) (*EmbedConfig, error) {
	cfg := new(EmbedConfig)
	err := block(d, "embed", func(sub, arg string) (err error) {
		switch sub {
		case "url":
			cfg.URL = arg
		case "model":
			cfg.Model = arg
		case "dimensions":
			cfg.Dimensions, err = positive(arg)
		case "api_key":
			cfg.APIKey = arg
		case "timeout":
			cfg.Timeout, err = duration(arg)
		case "min_similarity":
			if cfg.MinSimilarity, err = strconv.ParseFloat(arg, 64); err != nil || cfg.MinSimilarity < 0 || cfg.MinSimilarity > 1 {
				return fmt.Errorf("%q is not a number from 0 to 1", arg)
			}
		case "batch_size":
			cfg.BatchSize, err = positive(arg)
		default:
			return errUnknown
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
	err := block(d, "llm", func(sub, arg string) (err error) {
		switch sub {
		case "url":
			cfg.URL = arg
		case "model":
			cfg.Model = arg
		case "api_key":
			cfg.APIKey = arg
		case "debounce":
			cfg.Debounce, err = duration(arg)
		case "timeout":
			cfg.Timeout, err = duration(arg)
		case "calls_per_minute":
			cfg.CallsPerMinute, err = positive(arg)
		default:
			return errUnknown
		}
		return err
	})
	if err == nil && (cfg.URL == "" || cfg.Model == "") {
		err = d.Err("llm needs url and model")
	}
	return cfg, err
}

func positive(s string) (int, error) {
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 {
		return 0, fmt.Errorf("%q is not a positive whole number", s)
	}
	return n, nil
}

func size(s string) (int64, error) {
	n, err := humanize.ParseBytes(s)
	if err != nil || n == 0 {
		return 0, fmt.Errorf("%q is not a size such as 4MiB or 512KB", s)
	}
	return int64(n), nil
}

func duration(s string) (caddy.Duration, error) {
	d, err := caddy.ParseDuration(s)
	if err != nil || d <= 0 {
		return 0, fmt.Errorf("%q is not a duration such as 500ms or 10s", s)
	}
	return caddy.Duration(d), nil
}
