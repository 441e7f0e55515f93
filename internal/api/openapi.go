package api

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
)

// openAPIDoc describes the routes (the route table in api.go) in OpenAPI
// 3.1: for client generators and API tools. Its test holds it to the
// route table and to real answers (openapi_test.go, and through Caddy the
// root package's).
//
//go:embed openapi.json
var openAPIDoc []byte

// openAPI serves GET /openapi.json, its server the mount it was asked at
// (/memory, from the request's own URI, as the API does not know where it
// is mounted), so a tool's base URL is right.
func (h *Handler) openAPI(w http.ResponseWriter, r *http.Request) {
	p := r.URL.Path
	if u, err := url.ParseRequestURI(r.RequestURI); err == nil {
		p = u.Path
	}
	mount := strings.TrimSuffix(strings.TrimSuffix(p, "openapi.json"), "/")
	if mount == "" {
		mount = "/"
	}
	server, _ := json.Marshal(mount)
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-cache")
	_, _ = w.Write(bytes.Replace(openAPIDoc, []byte(`"{{mount}}"`), server, 1))
}
