package api

import (
	"bytes"
	"embed"
	"io/fs"
	"net/http"
	"path"
	"strings"
	"time"
)

// The dashboard is plain HTML, CSS and JavaScript embedded in the binary:
// nothing to build, fetch or install beyond Caddy itself. It talks to the
// REST routes beside it with relative URLs, so it works wherever
// memory_api is mounted.
//
//go:embed ui
var uiFiles embed.FS

// uiTypes are the content types of the dashboard's files.
var uiTypes = map[string]string{
	".html": "text/html; charset=utf-8",
	".js":   "text/javascript; charset=utf-8",
	".css":  "text/css; charset=utf-8",
	".svg":  "image/svg+xml",
}

// uiStart is when the binary's assets were last changed, as far as a
// browser's cache can tell: the process start.
var uiStart = time.Now()

// ui serves GET /ui/ and the files below it. index.html learns the API's
// mode, so the page knows whether to ask for a key (self) or to list the
// owners (admin, where the browser already sends Caddy's auth), and
// whether its caller is the person at this machine.
func (h *Handler) ui(w http.ResponseWriter, r *http.Request) {
	h.serveUI(w, r, strings.TrimPrefix(r.URL.Path, "/ui/"))
}

// uiRoot serves GET /ui: the page's relative URLs need the slash, so a
// request without one is redirected to it. The mount drops a trailing
// slash (/memory/ui/ reaches the API as /ui), so the request's own URI
// tells. The redirect is relative: the API does not know where it is
// mounted.
func (h *Handler) uiRoot(w http.ResponseWriter, r *http.Request) {
	if p, _, _ := strings.Cut(r.RequestURI, "?"); strings.HasSuffix(p, "/") {
		h.serveUI(w, r, "")
		return
	}
	w.Header().Set("Location", "ui/")
	w.WriteHeader(http.StatusFound)
}

// mountRoot serves GET / (the mount's root, /memory/ with the README's
// layout): the dashboard, by a relative redirect as for /ui.
func (h *Handler) mountRoot(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Location", "ui/")
	w.WriteHeader(http.StatusFound)
}

func (h *Handler) serveUI(w http.ResponseWriter, r *http.Request, name string) {
	if name == "" {
		name = "index.html"
	}
	b, err := fs.ReadFile(uiFiles, path.Join("ui", path.Clean("/"+name)))
	ctype, known := uiTypes[path.Ext(name)]
	if err != nil || !known {
		writeError(w, notFound("the dashboard has no file %q", name))
		return
	}
	if name == "index.html" {
		mode := Admin
		if h.cfg.Mode == Self {
			mode = Self
		}
		b = bytes.ReplaceAll(b, []byte("{{mode}}"), []byte(mode))
		// Whether the one who opens it is the person at this machine,
		// known without a key: the page then opens on their memories
		// rather than asking for a key (it asks the API, which resolves the
		// caller of each request as the proxy does; this only names them).
		local := "false"
		if h.cfg.Mode == Self && h.cfg.Local != nil && h.cfg.Local(r) {
			local = "true"
		}
		b = bytes.ReplaceAll(b, []byte("{{local}}"), []byte(local))
	}
	hd := w.Header()
	hd.Set("Content-Type", ctype)
	hd.Set("X-Content-Type-Options", "nosniff")
	// Everything the page runs is its own; no inline script, no framing.
	hd.Set("Content-Security-Policy", "default-src 'self'; img-src 'self' data: blob:; frame-ancestors 'none'; base-uri 'none'; form-action 'none'")
	hd.Set("Referrer-Policy", "no-referrer")
	hd.Set("Cache-Control", "no-cache")
	http.ServeContent(w, r, name, uiStart, bytes.NewReader(b))
}
