package memory

import (
	"net/http"
	"strings"

	"github.com/caddyserver/caddy/v2"
)

// apiKeyPlaceholder is the placeholder holding the caller's API key.
const apiKeyPlaceholder = "memory.api_key"

// resolveOwner is whose memories a request uses: the value of the first
// owner template that is not empty, or "" for nobody. The proxy and the API
// in self mode resolve owners with it, so the same request is the same
// owner.
//
// A value from a fallback template (any but the first) is its own owner,
// kept apart from the same value produced by another template: otherwise a
// client could send "Authorization: Bearer laptop" and read the memories of
// the key-less client whose X-Device header says "laptop".
func resolveOwner(templates []string, r *http.Request) string {
	repl, _ := r.Context().Value(caddy.ReplacerCtxKey).(*caddy.Replacer)
	if repl == nil {
		repl = caddy.NewReplacer()
	}
	repl.Set(apiKeyPlaceholder, apiKey(r))
	for i, tmpl := range templates {
		v := strings.TrimSpace(repl.ReplaceAll(tmpl, ""))
		if v == "" || isScheme(v) {
			continue
		}
		if i > 0 {
			return tmpl + "\x00" + v
		}
		return v
	}
	return ""
}

// apiKey is the credential the request authenticates with upstream: the
// token of an Authorization header (the whole value for schemes other than
// Bearer) or an x-api-key header (Anthropic's). OpenAI-style upstreams read
// the first, Anthropic the second; a client sends one, or the same key in
// both. A request carrying two different credentials is ambiguous (which
// one the upstream honours depends on the upstream) and has no key, as has
// one whose credentials are blank or a scheme alone ("Bearer " from an
// unset $OPENAI_API_KEY).
func apiKey(r *http.Request) string {
	key := ""
	for _, c := range credentials(r.Header) {
		if key != "" && c != key {
			return ""
		}
		key = c
	}
	return key
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
