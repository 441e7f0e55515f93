package memtools

import (
	"io"
	"net/http"
	"strconv"

	"github.com/caddy-memory/memory/inject"
	"github.com/caddy-memory/memory/internal/reqbody"
)

// One round of a request that carries the proxy's tools: the upstream's
// answer, through an Editor, to the client.

// roundWriter takes one answer of the upstream in a request that carries
// the proxy's tools: it gives it to an Editor, and passes to the client
// (through the learning tee) what the Editor lets through. Each round has
// headers of its own, a copy of the client's as the handlers before this
// one set them (HSTS, CORS, diagnostics), to which reverse_proxy adds the
// upstream's: the client gets the last round's, so the upstream's headers
// do not pile up across rounds.
type roundWriter struct {
	client   Client
	dialect  inject.Dialect
	isMemory func(string) bool
	prior    inject.Usage
	// limit bounds what the Editor holds back (max_capture): a longer
	// answer passes as it came, and the rounds stop.
	limit int64
	// prev, when set, is the round whose stream the client has: this
	// round carries it on (no headers of its own) or, failing, gives
	// nothing (discard).
	prev    *inject.Editor
	discard bool

	header  http.Header
	status  int
	editor  *inject.Editor // nil: passed through as it comes
	started bool           // the client has the status line
	wrote   bool           // the upstream answered
	spent   bool           // the last round called only the proxy's tools
}

func (w *roundWriter) Header() http.Header { return w.header }

func (w *roundWriter) WriteHeader(code int) {
	if w.status != 0 || code < 200 {
		if code < 200 {
			w.copyHeader()
			w.client.WriteHeader(code)
		}
		return
	}
	w.status, w.wrote = code, true
	// An answer that says it is longer than the Editor may hold goes as it
	// comes, unless a stream the client has must carry on.
	long := w.prev == nil && w.header.Get("Content-Length") != "" && !fits(w.header.Get("Content-Length"), w.limit)
	if code < 300 && w.header.Get("Content-Encoding") == "" && !long {
		w.editor = inject.NewEditor(w.dialect, w.header.Get("Content-Type"), int(w.limit), w.isMemory, w.prior)
	}
	if w.prev != nil {
		// The client's status and headers went with the first round.
		w.started = true
		if w.editor == nil {
			w.discard = true
		} else {
			w.editor.Resume(w.prev)
		}
		return
	}
	if w.editor == nil {
		w.start()
	}
}

// fits reports whether a Content-Length is at most limit.
func fits(length string, limit int64) bool {
	n, err := strconv.ParseInt(length, 10, 64)
	return err == nil && n <= limit
}

// copyHeader gives the client this round's headers.
func (w *roundWriter) copyHeader() {
	h := w.client.Header()
	for k := range h {
		delete(h, k)
	}
	for k, v := range w.header {
		h[k] = v
	}
}

// start sends the client the status line and headers; an edited answer
// has no length known in advance.
func (w *roundWriter) start() {
	if w.started {
		return
	}
	w.started = true
	w.copyHeader()
	if w.editor != nil && w.editor.State() != inject.Untouched {
		w.client.Header().Del("Content-Length")
	}
	w.client.WriteHeader(w.status)
}

func (w *roundWriter) Write(p []byte) (int, error) {
	if w.status == 0 {
		w.WriteHeader(http.StatusOK)
	}
	if w.discard {
		return len(p), nil
	}
	if w.editor == nil {
		return w.client.Write(p)
	}
	if out := w.editor.Write(p); len(out) > 0 || w.editor.State() == inject.Final {
		w.start()
		if _, err := w.client.Write(out); err != nil {
			return 0, err
		}
	}
	return len(p), nil
}

// FlushError flushes what the client has been given; a held answer is not
// flushed.
func (w *roundWriter) FlushError() error {
	if !w.started {
		return nil
	}
	return w.client.FlushError()
}

func (w *roundWriter) Flush() { _ = w.FlushError() }

// ReadFrom sends io.Copy through Write.
func (w *roundWriter) ReadFrom(r io.Reader) (int64, error) {
	return io.Copy(reqbody.WriterOnly{Writer: w}, r)
}

// end finishes the round once the upstream's answer is whole, and reports
// whether it was a tool round to run (the client's stream, if it has one,
// to be carried on). On the last round, an answer that calls only the
// proxy's tools goes to the client as it is, or ends its stream; either
// way with the usage of every round.
func (w *roundWriter) end(last bool) bool {
	if w.editor == nil {
		return false
	}
	out := w.editor.End()
	switch {
	case w.editor.ToolRound():
		if !last {
			return true
		}
		w.spent = true
		out = w.editor.AsCalled()
		if w.prev != nil {
			// Not a second answer in the client's stream: its end.
			total := w.prior
			total.Add(w.editor.Usage())
			out = w.prev.TailWith(total)
		}
	case w.editor.Continues():
		if !last {
			_, _ = w.client.Write(out)
			_ = w.client.FlushError()
			return true
		}
		out = append(out, w.editor.Tail()...)
	}
	if !w.started {
		// Held to its end: its length is known.
		w.started = true
		w.copyHeader()
		w.client.Header().Set("Content-Length", strconv.Itoa(len(out)))
		w.client.WriteHeader(w.status)
	}
	_, _ = w.client.Write(out) // a client gone is no failure of memory's
	return false
}

var _ http.ResponseWriter = (*roundWriter)(nil)
