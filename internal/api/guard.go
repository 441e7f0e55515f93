package api

import (
	"mime"
	"net/http"
)

// Requests from browsers. An operator signed in to the admin dashboard
// behind basic_auth has a browser that resends the credentials to the API
// with every request, whichever page makes it. Any page the operator opens
// can POST a form or a no-cors fetch here, and without these checks it
// would write memories into any owner it names: lasting prompt injection
// into that owner's chats. Two checks, each enough on its own against
// today's browsers:
//
//   - where it comes from: a state-changing request that a browser marks
//     as made by another origin's page (Sec-Fetch-Site other than
//     same-origin or none, or else an Origin whose host is not the
//     request's) is refused. Another subdomain or port of the same site is
//     another origin, so same-site is refused too. Programs (curl, scripts,
//     MCP clients) send neither header and pass.
//   - what it carries: a page of another origin can send without asking
//     the API first (a CORS preflight, which it never grants) only the
//     types of HTML forms: text/plain, application/x-www-form-urlencoded,
//     multipart/form-data. Bodies must be JSON (imports: JSON lines), so
//     such a request never reaches a route.

// Content types of request bodies.
var (
	jsonTypes  = []string{"application/json"}
	jsonlTypes = []string{"application/x-ndjson", "application/jsonl", "application/json"}
)

// refuseForeign reports why a request to the route pattern is refused, or
// nil: a state-changing request from another origin's page, or a body of a
// type the route does not read.
func (h *Handler) refuseForeign(r *http.Request, pattern string) *apiError {
	if err := h.origins.Check(r); err != nil {
		return errorf(http.StatusForbidden, "cross_origin",
			"this API does not act on requests from other sites' pages (the browser says this one comes from %s): use the dashboard it serves (ui/), or call it from a program such as curl",
			foreignOrigin(r))
	}
	rt, _ := routeOf(pattern)
	want := rt.body
	if want == nil {
		return nil
	}
	ct := r.Header.Get("Content-Type")
	if ct == "" && rt.bodyOptional {
		return nil
	}
	if mt, _, err := mime.ParseMediaType(ct); err == nil {
		for _, t := range want {
			if mt == t {
				return nil
			}
		}
	}
	if ct == "" {
		ct = "none"
	}
	if want[0] == jsonlTypes[0] {
		return errorf(http.StatusUnsupportedMediaType, "unsupported_media_type",
			"the import must be sent as JSON lines with Content-Type: application/x-ndjson, not %s (curl: -H 'Content-Type: application/x-ndjson' --data-binary @memories.jsonl)", ct)
	}
	return errorf(http.StatusUnsupportedMediaType, "unsupported_media_type",
		"the body must be JSON sent with Content-Type: application/json, not %s (curl: --json '{...}')", ct)
}

// foreignOrigin names where a refused request came from, for the message.
func foreignOrigin(r *http.Request) string {
	if o := r.Header.Get("Origin"); o != "" && o != "null" {
		return o
	}
	if r.Header.Get("Sec-Fetch-Site") == "same-site" {
		return "a page of another origin on this site"
	}
	return "another site's page"
}
