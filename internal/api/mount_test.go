package api

import (
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
)

// TestEveryRouteAnswersUnderAMount: each route of the table is reached
// wherever memory_api is mounted (at the root, under /memory, under a
// deeper prefix, with or without handle_path's prefix left on), so a
// route the mount's path roots missed would answer 404 there.
func TestEveryRouteAnswersUnderAMount(t *testing.T) {
	h := New(Config{Mode: Admin, Proxy: Proxy{Plan: unplanned}})
	wildcard := regexp.MustCompile(`\{[^}]*\}`)
	for _, rt := range routes {
		method, path, ok := strings.Cut(rt.pattern, " ")
		if !ok {
			method, path = "POST", rt.pattern // a route for every method
		}
		// A request path the pattern matches: each wildcard a segment,
		// {$} nothing, a subtree (ending in /) a file under it.
		path = wildcard.ReplaceAllStringFunc(path, func(w string) string {
			if w == "{$}" {
				return ""
			}
			return "7"
		})
		if strings.HasSuffix(path, "/") && path != "/" {
			path += "app.js"
		}
		for _, mount := range []string{"", "/memory", "/tools/memory/admin"} {
			got := Path(mount + path)
			_, pattern := h.mux.Handler(httptest.NewRequest(method, got, nil))
			if pattern != rt.pattern {
				t.Errorf("%s %s (route %q mounted at %q): the API reads the path %s, which reaches %q",
					method, mount+path, rt.pattern, mount, got, pattern)
			}
		}
	}
}
