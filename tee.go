package memory

import (
	"bytes"
	"io"
	"net/http"

	"github.com/caddyserver/caddy/v2/modules/caddyhttp"

	"github.com/caddy-memory/memory/inject"
	"github.com/caddy-memory/memory/internal/reqbody"
)

// tee writes the upstream response to the client and keeps a bounded copy of
// it for extraction. The client always comes first: a byte is copied only
// after it was written, a flush is never held, and nothing is retained from
// the caller's buffer (reverse_proxy reuses it).
type tee struct {
	*caddyhttp.ResponseWriterWrapper
	max int64

	status    int
	capture   bool
	ctype     string
	encoding  string
	buf       bytes.Buffer
	truncated bool
}

func newTee(w http.ResponseWriter, max int64) *tee {
	return &tee{ResponseWriterWrapper: &caddyhttp.ResponseWriterWrapper{ResponseWriter: w}, max: max}
}

func (t *tee) WriteHeader(code int) {
	if t.status == 0 && code >= 200 {
		t.status = code
		h := t.Header()
		t.ctype = h.Get("Content-Type")
		t.encoding = h.Get("Content-Encoding")
		t.capture = code < 300 && inject.Decodes(t.ctype)
	}
	t.ResponseWriterWrapper.WriteHeader(code)
}

func (t *tee) Write(p []byte) (int, error) {
	if t.status == 0 {
		t.WriteHeader(http.StatusOK)
	}
	n, err := t.ResponseWriterWrapper.Write(p)
	if t.capture && n > 0 {
		t.keep(p[:n])
	}
	return n, err
}

func (t *tee) keep(p []byte) {
	room := t.max - int64(t.buf.Len())
	if room <= 0 {
		t.truncated = true
		return
	}
	if int64(len(p)) > room {
		p = p[:room]
		t.truncated = true
	}
	t.buf.Write(p)
}

// ReadFrom sends io.Copy through Write; the wrapper's own ReadFrom would go
// straight to the client and bypass the copy.
func (t *tee) ReadFrom(r io.Reader) (int64, error) {
	return io.Copy(reqbody.WriterOnly{Writer: t}, r)
}

// FlushError and Flush serve callers that look for a flusher directly;
// http.ResponseController finds the client's writer through Unwrap anyway.
func (t *tee) FlushError() error {
	return http.NewResponseController(t.ResponseWriterWrapper.ResponseWriter).Flush()
}

func (t *tee) Flush() { _ = t.FlushError() }
