package memory

import (
	"slices"

	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
	"github.com/caddyserver/caddy/v2/caddyconfig/httpcaddyfile"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"

	"github.com/caddy-memory/memory/app"
	"github.com/caddy-memory/memory/inject"
	"github.com/caddy-memory/memory/internal/api"
	"github.com/caddy-memory/memory/internal/cfile"
	"github.com/caddy-memory/memory/internal/memtools"
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

// The subdirectives of each directive, for the error a typo gets ("did
// you mean max_tokens?").
var (
	memorySubdirectives = []string{"storage", "owner", "session", "scope", "placement", "no_system_role", "format",
		"max_tokens", "max_items", "min_score", "max_body", "max_capture", "timeout", "fail", "diagnostics", "gate",
		"profile", "profile_tokens", "tools", "max_tool_rounds", "overflow", "overflow_ollama_ctx"}
	apiSubdirectives = []string{"storage", "mode", "owner", "max_body", "max_import", "insecure_no_auth"}
)

// unknownSub is the error for a subdirective directive does not know (its
// own, known, and the other handler's, other): the other handler's setting
// says where it belongs, anything else suggests the nearest of known.
func unknownSub(d *caddyfile.Dispenser, directive, sub string, known []string, otherDirective string, other []string) error {
	if slices.Contains(other, sub) {
		return d.Errf("%s is a setting of %s, not of %s", sub, otherDirective, directive)
	}
	return cfile.Unknown(d, directive+" subdirective", sub, known)
}

// storageName reads a handler's storage subdirective: the name of one of
// the memory app's storages.
func storageName(d *caddyfile.Dispenser) (string, error) {
	name, err := cfile.OneArg(d, "storage")
	if err != nil {
		return "", err
	}
	if line := d.Line(); d.Next() {
		if d.Val() == "{" && d.Line() == line {
			return "", d.Errf("a storage's settings go in the global options, { memory { storage %s { ... } } }; "+
				"here, storage %s only names it", name, name)
		}
		d.Prev()
	}
	for _, c := range name {
		if c == '/' || c == '\\' || c == ':' {
			return "", d.Errf("storage names a storage of the memory app now, not its place: "+
				"configure it in the global options, { memory { storage default { path %s } } } (url for a PostgreSQL database), and keep storage <name> here, or nothing for the default", name)
		}
	}
	return name, nil
}

// moved is the error for a storage setting given on a handler.
func moved(d *caddyfile.Dispenser, directive, sub string) error {
	return d.Errf("%s: %s is a setting of the storage, not of a route: move it to the storage in the global options, "+
		"{ memory { storage default { %s ... } } }", directive, sub, sub)
}

// UnmarshalCaddyfile sets up the handler from Caddyfile tokens. Syntax:
//
//	memory [<matcher>] {
//	    storage       <name>
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
//	    timeout       <duration>
//	    fail          open|closed
//	    diagnostics
//	    gate          heuristic|off
//	    profile       on|off
//	    profile_tokens <n>
//	    tools         [save_memory] [recall_memory]
//	    max_tool_rounds <n>
//	    overflow      trim|off
//	    overflow_ollama_ctx <tokens>
//	}
func (h *Handler) UnmarshalCaddyfile(d *caddyfile.Dispenser) error {
	d.Next() // the directive name
	if d.NextArg() {
		return d.ArgErr()
	}
	seen := map[string]bool{}
	for d.NextBlock(0) {
		sub := d.Val()
		if slices.Contains(app.StorageSettings, sub) {
			return moved(d, "memory", sub)
		}
		if !slices.Contains(memorySubdirectives, sub) && sub != "identity" {
			return unknownSub(d, "memory", sub, memorySubdirectives, "memory_api", apiSubdirectives)
		}
		if err := cfile.Once(d, seen, sub); err != nil {
			return err
		}
		switch sub {
		case "identity":
			return d.Errf("identity is part of the profile now, which is on by default: remove the line (profile off turns it off)")
		case "diagnostics":
			if d.NextArg() {
				return d.Errf("diagnostics takes no argument")
			}
			h.Diagnostics = true
			continue
		case "tools":
			h.Tools = d.RemainingArgs()
			if len(h.Tools) == 0 {
				h.Tools = []string{memtools.Save, memtools.Recall}
			}
			for _, t := range h.Tools {
				if !memtools.Known(t) {
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
		case "storage":
			name, err := storageName(d)
			if err != nil {
				return err
			}
			h.Storage = name
			continue
		}
		arg, err := cfile.OneArg(d, sub)
		if err != nil {
			return err
		}
		switch sub {
		case "session":
			h.Session = arg
		case "scope":
			if err := cfile.OneOf("scope", arg, "owner", "session"); err != nil {
				return d.Err(err.Error())
			}
			h.Scope = arg
		case "placement":
			h.Placement = arg
		case "format":
			if inject.ByName(arg) == nil {
				return d.Errf("format must be %s, not %q", inject.Names(), arg)
			}
			h.Format = arg
		case "max_tokens":
			h.MaxTokens, err = cfile.Positive(arg)
		case "max_items":
			h.MaxItems, err = cfile.Positive(arg)
		case "min_score":
			var f float64
			f, err = cfile.Fraction(arg)
			h.MinScore = &f
		case "max_body":
			h.MaxBody, err = cfile.Size(arg)
		case "max_capture":
			h.MaxCapture, err = cfile.Size(arg)
		case "timeout":
			h.Timeout, err = cfile.Duration(arg)
		case "fail":
			switch arg {
			case "open":
				h.FailClosed = false
			case "closed":
				h.FailClosed = true
			default:
				return d.Errf("fail must be open or closed, not %q", arg)
			}
		case "gate":
			if err := cfile.OneOf("gate", arg, "heuristic", "off"); err != nil {
				return d.Err(err.Error())
			}
			h.Gate = arg
		case "profile":
			if err := cfile.OneOf("profile", arg, "on", "off"); err != nil {
				return d.Err(err.Error())
			}
			h.Profile = arg
		case "profile_tokens":
			h.ProfileTokens, err = cfile.Positive(arg)
		case "max_tool_rounds":
			h.MaxToolRounds, err = cfile.Positive(arg)
		case "overflow":
			if err := cfile.OneOf("overflow", arg, "trim", "off"); err != nil {
				return d.Err(err.Error())
			}
			h.Overflow = arg
		case "overflow_ollama_ctx":
			h.OverflowOllamaCtx, err = cfile.Positive(arg)
		default:
			return unknownSub(d, "memory", sub, memorySubdirectives, "memory_api", apiSubdirectives)
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
//	    storage     <name>
//	    mode        self|admin
//	    owner       <placeholder template>...
//	    max_body    <size>
//	    max_import  <size>
//	    insecure_no_auth
//	}
func (a *APIHandler) UnmarshalCaddyfile(d *caddyfile.Dispenser) error {
	d.Next() // the directive name
	if d.NextArg() {
		return d.ArgErr()
	}
	seen := map[string]bool{}
	for d.NextBlock(0) {
		sub := d.Val()
		if slices.Contains(app.StorageSettings, sub) {
			return moved(d, "memory_api", sub)
		}
		if !slices.Contains(apiSubdirectives, sub) {
			return unknownSub(d, "memory_api", sub, apiSubdirectives, "memory", memorySubdirectives)
		}
		if err := cfile.Once(d, seen, sub); err != nil {
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
		case "storage":
			name, err := storageName(d)
			if err != nil {
				return err
			}
			a.Storage = name
			continue
		}
		arg, err := cfile.OneArg(d, sub)
		if err != nil {
			return err
		}
		switch sub {
		case "mode":
			if err := cfile.OneOf("mode", arg, string(api.Self), string(api.Admin)); err != nil {
				return d.Err(err.Error())
			}
			a.Mode = arg
		case "max_body":
			a.MaxBody, err = cfile.Size(arg)
		case "max_import":
			a.MaxImport, err = cfile.Size(arg)
		default:
			return unknownSub(d, "memory_api", sub, apiSubdirectives, "memory", memorySubdirectives)
		}
		if err != nil {
			return d.Errf("%s: %v", sub, err)
		}
	}
	return nil
}
