package memory

import (
	"net"
	"strings"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
	"go.uber.org/zap"
)

// announce logs where a's dashboard is, once the configuration started:
// Caddy tells a handler nothing of its route, so the routes of the http
// app are walked to find a (by identity) and what leads to it, the
// server's address, a site's host and the paths matched on the way. A
// mount its matchers do not describe as a path (an expression, a header)
// gets what is known and a hint.
func (a *APIHandler) announce(ctx caddy.Context, logger *zap.Logger) {
	fields := []zap.Field{zap.String("storage", a.storage.Name), zap.String("mode", a.Mode)}
	v, err := ctx.AppIfConfigured("http")
	httpApp, _ := v.(*caddyhttp.App)
	if err != nil || httpApp == nil {
		logger.Info("memory_api ready: its dashboard is at <where it is mounted>/ui/", fields...)
		return
	}
	for _, srv := range httpApp.Servers {
		if m, ok := findMount(srv.Routes, a, mount{}); ok {
			logger.Info("memory_api ready: its dashboard is at "+m.dashboard(srv), append(fields, zap.Strings("listen", srv.Listen))...)
			return
		}
	}
	logger.Info("memory_api ready: its dashboard is at <where it is mounted>/ui/", fields...)
}

// mount is what routes lead to a handler: the hosts and path patterns they
// match, innermost last, and whether anything else is matched too.
type mount struct {
	hosts, paths []string
	other        bool
}

// findMount finds h among routes (and the subroutes in them), and what
// leads to it.
func findMount(routes caddyhttp.RouteList, h caddyhttp.MiddlewareHandler, on mount) (mount, bool) {
	for _, r := range routes {
		m := on
		for _, set := range r.MatcherSets {
			for _, matcher := range set {
				switch matcher := matcher.(type) {
				case *caddyhttp.MatchHost:
					m.hosts = append(m.hosts[:len(m.hosts):len(m.hosts)], *matcher...)
				case *caddyhttp.MatchPath:
					if len(*matcher) > 0 {
						m.paths = append(m.paths[:len(m.paths):len(m.paths)], (*matcher)[0])
					}
				default:
					m.other = true
				}
			}
		}
		for _, handler := range r.Handlers {
			if handler == h {
				return m, true
			}
			if sub, ok := handler.(*caddyhttp.Subroute); ok {
				if found, ok := findMount(sub.Routes, h, m); ok {
					return found, true
				}
			}
		}
	}
	return mount{}, false
}

// dashboard is the dashboard's URL on srv, or as much of it as is known.
func (m mount) dashboard(srv *caddyhttp.Server) string {
	scheme := "http"
	if len(srv.TLSConnPolicies) > 0 {
		scheme = "https"
	}
	host, port := "localhost", ""
	if len(srv.Listen) > 0 {
		if na, err := caddy.ParseNetworkAddress(srv.Listen[0]); err == nil && !na.IsUnixNetwork() {
			if na.Host != "" && na.Host != "0.0.0.0" && na.Host != "::" {
				host = na.Host
			}
			port = na.JoinHostPort(0)
			_, port, _ = net.SplitHostPort(port)
		}
	}
	if len(m.hosts) > 0 && !strings.Contains(m.hosts[0], "*") {
		host = m.hosts[0]
	}
	if scheme == "http" && port == "80" || scheme == "https" && port == "443" {
		port = ""
	}
	addr := host
	if port != "" {
		addr = net.JoinHostPort(host, port)
	}
	path := "/"
	if n := len(m.paths); n > 0 {
		p := m.paths[n-1]
		if !strings.HasSuffix(p, "*") {
			return scheme + "://" + addr + " under the path " + p + " (its dashboard: <mount>/ui/)"
		}
		path = strings.TrimSuffix(p, "*")
		if !strings.HasSuffix(path, "/") {
			path += "/"
		}
	}
	if !strings.HasSuffix(path, "/ui/") {
		path += "ui/"
	}
	url := scheme + "://" + addr + path
	if m.other {
		url += " (for the requests its other matchers let through)"
	}
	return url
}
