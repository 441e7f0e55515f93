package memory

import (
	"encoding/json"
	"fmt"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp/fileserver"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp/reverseproxy"
)

// A handler written after one that answers every request itself, in the
// same route block, never runs: `route { reverse_proxy ... memory }`
// validates and proxies, and memory is a silent no-op. The Caddyfile sorts
// a site's directives (memory before reverse_proxy), but keeps a route
// block's in the order written, and a JSON configuration is as written.
//
// Caddy tells a handler nothing of its route, but it provisions a route
// list's matchers before any of its handlers, and its routes in order: a
// handler being provisioned finds, in the routes of the module above it
// (ctx.Modules: a subroute, or the http app itself), the routes before
// its own provisioned, its own route and those after still as JSON. Every
// one of them is read, in order, as steps that either call the next
// handler or answer themselves.

// neverRuns says why a handler of module name (memory, memory_api)
// among the routes of the module that provisions it never runs: a handler
// before it in its route ends every request, or a route before it takes
// every request (no matcher) and ends it, or is of the same group (handle
// blocks) and so is the only one of them that runs. nil: nothing says so.
func neverRuns(ctx caddy.Context, name string) error {
	mods := ctx.Modules()
	if len(mods) < 2 {
		return nil
	}
	var lists []caddyhttp.RouteList
	switch parent := mods[len(mods)-2].(type) {
	case *caddyhttp.Subroute:
		lists = append(lists, parent.Routes)
	case *caddyhttp.App:
		for _, srv := range parent.Servers {
			lists = append(lists, srv.Routes)
		}
	}
	for _, list := range lists {
		routes := make([]route, len(list))
		for i, r := range list {
			routes[i] = provisionedRoute(r)
		}
		if why := blocked(routes, name); why != "" {
			return fmt.Errorf("%s never runs where it is: %s. Put %s before it in the route block (route { %s ... reverse_proxy ... }), "+
				"or outside the route block: in a site, Caddy orders %s before reverse_proxy itself", name, why, name, name, name)
		}
	}
	return nil
}

// route is a route as far as reaching its handlers goes.
type route struct {
	conditional bool   // it has matchers: some requests pass it by
	terminal    bool   // no route after it runs once it matched
	group       string // of the routes of one group, only the first that matches runs
	steps       []step
}

// step is one handler of a route.
type step struct {
	name string // its module's name (reverse_proxy)
	ends bool   // it answers every request it gets itself, never calling the next handler
}

// blocked says why a step named name in routes can never run, or "".
func blocked(routes []route, name string) string {
	by := ""                   // the step or route before that ends every request
	taken := map[string]bool{} // groups in which an earlier route takes every request
	for _, r := range routes {
		groupTaken := r.group != "" && taken[r.group]
		ended := ""
		for _, s := range r.steps {
			switch {
			case s.name != name:
			case by != "":
				return by
			case groupTaken:
				return "a route before it in the same group (handle blocks) takes every request, and only one of a group runs"
			case ended != "":
				return ended
			}
			if s.ends && ended == "" {
				ended = "before it in the same route, " + directiveOf(s.name) + " answers every request itself, so none reaches " + name
			}
		}
		if r.conditional || groupTaken {
			continue
		}
		if r.group != "" {
			taken[r.group] = true
		}
		if ended != "" && by == "" {
			by = "before it, " + directiveOf(endingStep(r.steps)) + " answers every request itself, so none reaches " + name
		} else if r.terminal && by == "" {
			by = "a terminal route before it takes every request"
		}
	}
	return ""
}

func endingStep(steps []step) string {
	for _, s := range steps {
		if s.ends {
			return s.name
		}
	}
	return ""
}

// directiveOf names a handler module as the Caddyfile writes it.
func directiveOf(module string) string {
	switch module {
	case "static_response":
		return "respond (or redir, abort)"
	case "subroute":
		return "a route or handle block"
	}
	return module
}

// ends reports whether a route list ends every request that reaches it:
// a route in it takes every request and ends it.
func ends(routes []route) bool {
	for _, r := range routes {
		if r.conditional {
			continue
		}
		if r.terminal || endingStep(r.steps) != "" {
			return true
		}
	}
	return false
}

// provisionedRoute reads a route of a list being provisioned: its matchers
// are provisioned, its handlers too if its turn has come, else still JSON.
func provisionedRoute(r caddyhttp.Route) route {
	out := route{conditional: len(r.MatcherSets) > 0 || len(r.MatcherSetsRaw) > 0, terminal: r.Terminal, group: r.Group}
	if len(r.Handlers) == 0 {
		for _, raw := range r.HandlersRaw {
			out.steps = append(out.steps, rawStep(raw))
		}
		return out
	}
	for _, h := range r.Handlers {
		s := step{name: caddy.GetModuleName(h)}
		switch h := h.(type) {
		case *reverseproxy.Handler:
			s.ends = len(h.HandleResponse) == 0 // handle_response routes go on to the next handler
		case *fileserver.FileServer:
			s.ends = !h.PassThru
		case *caddyhttp.Subroute:
			sub := make([]route, len(h.Routes))
			for i, r := range h.Routes {
				sub[i] = provisionedRoute(r)
			}
			s.ends = ends(sub)
		default:
			s.ends = endsAlways[s.name]
		}
		out.steps = append(out.steps, s)
	}
	return out
}

// endsAlways are the handlers that answer every request themselves, never
// calling the next one, whatever their settings.
var endsAlways = map[string]bool{"static_response": true, "error": true, "memory_api": true}

// rawHandler is what a handler's JSON says of whether it calls the next
// handler.
type rawHandler struct {
	Handler        string          `json:"handler"`
	PassThru       bool            `json:"pass_thru"`
	HandleResponse json.RawMessage `json:"handle_response"`
	Routes         []rawRoute      `json:"routes"`
}

// rawRoute is a route as JSON.
type rawRoute struct {
	Match    []json.RawMessage `json:"match"`
	Handle   []json.RawMessage `json:"handle"`
	Terminal bool              `json:"terminal"`
	Group    string            `json:"group"`
}

// rawStep reads a handler from its JSON; one it cannot read calls the
// next handler, as far as this check goes.
func rawStep(raw json.RawMessage) step {
	var h rawHandler
	if json.Unmarshal(raw, &h) != nil {
		return step{}
	}
	s := step{name: h.Handler}
	switch h.Handler {
	case "reverse_proxy":
		s.ends = len(h.HandleResponse) == 0 || string(h.HandleResponse) == "null"
	case "file_server":
		s.ends = !h.PassThru
	case "subroute":
		sub := make([]route, len(h.Routes))
		for i, r := range h.Routes {
			sub[i] = route{conditional: len(r.Match) > 0, terminal: r.Terminal, group: r.Group}
			for _, hr := range r.Handle {
				sub[i].steps = append(sub[i].steps, rawStep(hr))
			}
		}
		s.ends = ends(sub)
	default:
		s.ends = endsAlways[s.name]
	}
	return s
}
