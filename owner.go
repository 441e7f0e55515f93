package memory

import (
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"

	"github.com/caddyserver/caddy/v2"
)

// The placeholders the handlers set for owner templates.
const (
	// apiKeyPlaceholder holds the caller's API key.
	apiKeyPlaceholder = "memory.api_key"
	// localUserPlaceholder holds localUser for a request made on this
	// machine by no one else's agent, "" for any other (see localUser).
	localUserPlaceholder = "memory.local_user"
	// localUser is the value of {memory.local_user}: the person at this
	// machine, one owner.
	localUser = "local"
)

// resolveOwner is whose memories a request uses: the value of the first
// owner template that is not empty, or "" for nobody. The proxy and the API
// in self mode resolve owners with it, so the same request is the same
// owner.
func resolveOwner(templates []string, r *http.Request) string {
	owner, _ := whose(templates, r)
	return owner
}

// isLocalUser reports whether templates resolve r to the person at this
// machine ({memory.local_user}): a keyless request made on it.
func isLocalUser(templates []string, r *http.Request) bool {
	tmpl, v, ok := strings.Cut(resolveOwner(templates, r), "\x00")
	return ok && v == localUser && strings.Contains(tmpl, "{"+localUserPlaceholder+"}")
}

// whose is resolveOwner that also says, when the request has no owner, why
// not: one reason for each template, in order (see noOwner).
//
// A value from a fallback template (any but the first) is its own owner,
// kept apart from the same value produced by another template: otherwise a
// client could send "Authorization: Bearer laptop" and read the memories of
// the key-less client whose X-Device header says "laptop". So is the local
// user wherever its template stands: a key "local" is someone else.
func whose(templates []string, r *http.Request) (string, noOwner) {
	repl, _ := r.Context().Value(caddy.ReplacerCtxKey).(*caddy.Replacer)
	if repl == nil {
		repl = caddy.NewReplacer()
	}
	key, keyWhy := apiKey(r)
	repl.Set(apiKeyPlaceholder, key)
	var localWhy *reason // nil until a template asks for the local user
	var why noOwner
	for i, tmpl := range templates {
		local := strings.Contains(tmpl, "{"+localUserPlaceholder+"}")
		if local && localWhy == nil {
			user, because := localUserOf(r)
			repl.Set(localUserPlaceholder, user)
			localWhy = &because
		}
		v := strings.TrimSpace(repl.ReplaceAll(tmpl, ""))
		if v != "" && !isScheme(v) {
			if i > 0 || local {
				return tmpl + "\x00" + v, nil
			}
			return v, nil
		}
		switch tmpl {
		case "{" + apiKeyPlaceholder + "}":
			why = append(why, keyWhy)
		case "{" + localUserPlaceholder + "}":
			why = append(why, *localWhy)
		default:
			why = append(why, reason{"empty:" + tmpl, tmpl + " is empty"})
		}
	}
	return "", why
}

// noOwner says why a request has no owner: for each owner template, why it
// gave nothing.
type noOwner []reason

// reason is why one owner template gave nothing: code names the cause
// (the same for every request with it), text says it to the operator. The
// text names no credential.
type reason struct{ code, text string }

// cause names the request's causes together, the same for every request
// that has no owner for the same reasons.
func (n noOwner) cause() string {
	codes := make([]string, len(n))
	for i, r := range n {
		codes[i] = r.code
	}
	return strings.Join(codes, " ")
}

func (n noOwner) String() string {
	texts := make([]string, len(n))
	for i, r := range n {
		texts[i] = r.text
	}
	return strings.Join(texts, "; ")
}

// apiKey is the credential the request authenticates with upstream: the
// token of an Authorization header (the whole value for schemes other than
// Bearer) or an x-api-key header (Anthropic's). OpenAI-style upstreams read
// the first, Anthropic the second; a client sends one, or the same key in
// both. A request carrying two different credentials is ambiguous (which
// one the upstream honours depends on the upstream) and has no key, as has
// one whose credentials are blank or a scheme alone ("Bearer " from an
// unset $OPENAI_API_KEY). Without a key, why says why.
func apiKey(r *http.Request) (key string, why reason) {
	for _, c := range credentials(r.Header) {
		if key != "" && c != key {
			return "", reason{"two_keys", "{memory.api_key}: the request carries two different keys (Authorization and x-api-key, or two of one), so whose it is is unclear"}
		}
		key = c
	}
	switch {
	case key != "":
		return key, reason{}
	case len(r.Header.Values("Authorization")) > 0 || len(r.Header.Values("X-Api-Key")) > 0:
		return "", reason{"blank_key", "{memory.api_key}: the Authorization or x-api-key header holds no key (blank, or a scheme alone such as \"Bearer \" from an unset $OPENAI_API_KEY)"}
	}
	return "", reason{"no_key", "{memory.api_key}: the request sends no API key (no Authorization: Bearer or x-api-key header)"}
}

// credentials lists the non-blank credentials of a request's Authorization
// and x-api-key headers, every value of each.
func credentials(h http.Header) []string {
	var out []string
	for _, v := range h.Values("Authorization") {
		v = strings.TrimSpace(v)
		if scheme, token, ok := strings.Cut(v, " "); ok && strings.EqualFold(scheme, "Bearer") {
			v = strings.TrimSpace(token)
		}
		if v != "" && !isScheme(v) {
			out = append(out, v)
		}
	}
	for _, v := range h.Values("X-Api-Key") {
		if v = strings.TrimSpace(v); v != "" && !isScheme(v) {
			out = append(out, v)
		}
	}
	return out
}

// isScheme reports whether v is an authentication scheme's name with no
// credential after it.
func isScheme(v string) bool {
	switch strings.ToLower(v) {
	case "bearer", "basic", "digest", "token", "apikey", "api-key", "negotiate":
		return true
	}
	return false
}

// localUserOf is {memory.local_user} for a request (set when an owner
// template names it): localUser when the person at this machine made it,
// else "" and why not. That is a request
// whose connection comes from a loopback address (the connection's own,
// never an address a header claims), naming this machine as its host, not
// relayed by a proxy on this machine for someone elsewhere, and not sent
// by a web page from another site in this machine's browser. Everything
// that withholds it is something a client can only add, never forge into
// being the local user: a local client that sends X-Forwarded-For only
// loses its memories.
func localUserOf(r *http.Request) (string, reason) {
	const self = "{memory.local_user}: "
	if !loopbackAddr(r.RemoteAddr) {
		return "", reason{"not_local", self + "the connection comes from " + hostOnly(r.RemoteAddr) +
			", not from a loopback address (127.0.0.1, ::1): a keyless request from the network is nobody's"}
	}
	for _, h := range relayHeaders {
		if len(r.Header.Values(h)) > 0 {
			return "", reason{"relayed", self + "a proxy on this machine relayed the request (it has a " + h +
				" header), so it may come from anyone"}
		}
	}
	if !loopbackName(hostOnly(r.Host)) {
		return "", reason{"other_host", self + "the request names " + hostOnly(r.Host) +
			" as its host, not localhost or 127.0.0.1 (as a page whose name was rebound to 127.0.0.1 does)"}
	}
	if o := r.Header.Get("Origin"); o != "" {
		if u, err := url.Parse(o); err != nil || !loopbackName(u.Hostname()) {
			return "", reason{"other_origin", self + "a web page from another site sent the request (Origin " + o + ")"}
		}
	}
	if r.Header.Get("Sec-Fetch-Site") == "cross-site" { // a browser's request with no Origin: an image, a link
		return "", reason{"other_origin", self + "a web page from another site sent the request (Sec-Fetch-Site: cross-site)"}
	}
	return localUser, reason{}
}

// relayHeaders are the headers a proxy adds to what it forwards (Caddy,
// nginx, cloudflared, ngrok, tailscale serve, load balancers): a request
// with one came from somewhere else through a proxy on this machine.
var relayHeaders = []string{"Forwarded", "X-Forwarded-For", "X-Forwarded-Host", "X-Real-Ip", "Via", "Cf-Connecting-Ip", "True-Client-Ip"}

// loopbackAddr reports whether a connection's remote address (host:port)
// is a loopback address.
func loopbackAddr(remote string) bool {
	ip, err := netip.ParseAddr(hostOnly(remote))
	return err == nil && ip.Unmap().IsLoopback()
}

// loopbackName reports whether a host name or address (no port) names this
// machine: localhost, a name under .localhost, or a loopback address.
func loopbackName(host string) bool {
	host = strings.TrimSuffix(strings.ToLower(host), ".")
	if host == "localhost" || strings.HasSuffix(host, ".localhost") {
		return true
	}
	ip, err := netip.ParseAddr(strings.Trim(host, "[]"))
	return err == nil && ip.Unmap().IsLoopback()
}

// hostOnly is an address without its port.
func hostOnly(addr string) string {
	if h, _, err := net.SplitHostPort(addr); err == nil {
		return h
	}
	return addr
}
