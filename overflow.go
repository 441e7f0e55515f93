package memory

import (
	"bytes"
	"context"
	"io"
	"mime"
	"net/http"
	"slices"
	"strconv"
	"time"

	"go.uber.org/zap"

	"github.com/caddy-memory/memory/engine"
	"github.com/caddy-memory/memory/inject"
	"github.com/caddy-memory/memory/internal/reqbody"
	"github.com/caddy-memory/memory/memtools"
)

// Conversations longer than the model takes (overflow trim): when the
// upstream refuses a request for its length, it is asked once more with the
// conversation cut (inject.Trim), and what the cut turns said comes back,
// as far as recall finds it within this conversation, inside the one
// memory block. Ollama never refuses (it drops the oldest tokens itself),
// so a request over its context is cut before it is sent.

// Results of a refusal, the values of caddy_memory_overflow_total's label.
const (
	overflowRescued      = "rescued"       // asked again, cut, and answered
	overflowRefusedAgain = "refused_again" // the cut request was refused too: the client got the first refusal
	overflowNotTrimmable = "not_trimmable" // nothing could be cut: the client got the refusal
)

// Defaults of the overflow settings.
const (
	defaultOllamaCtx = 2048
	// maxRefusal bounds an error answer held back to read whether it is a
	// refusal for length; a longer one goes to the client as it comes.
	maxRefusal = 64 << 10
	// earlierItems bounds what recall brings back of the cut turns.
	earlierItems = 8
)

// overflowNext is the next handler (reverse_proxy) for a request of owner
// in session whose conversation may be too long: see ServeHTTP.
type overflowNext struct {
	h       *Handler
	next    memtools.Next
	dialect inject.Dialect
	owner   string
	session string
	query   string
	turnKey string
	block   string // the memory block the request carries, "" for none
}

// ServeHTTP sends the request on; a refusal for its length is held back and
// the request asked once more, cut. The client sees one answer: the cut
// request's, or, refused again (or not cut), the first refusal unchanged.
func (o *overflowNext) ServeHTTP(w http.ResponseWriter, r *http.Request) error {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return err
	}
	reqbody.Set(r, body)
	if o.dialect.Name() == inject.NameOllama {
		return o.ollama(w, r, body)
	}
	first := &refusalCatcher{w: w, header: http.Header{}}
	err = o.next.ServeHTTP(first, r)
	if !first.held {
		return err
	}
	limit, refused := inject.LengthRefusal(o.dialect, first.status, first.body.Bytes())
	if err != nil || !refused {
		first.release()
		return err
	}
	cut, n := o.cut(r.Context(), body, limit)
	if cut == nil {
		overflowTotal.WithLabelValues(overflowNotTrimmable).Inc()
		first.release()
		return nil
	}
	reqbody.Set(r, cut)
	o.diagnose(w.Header(), n)
	again := &refusalCatcher{w: w, header: http.Header{}}
	err = o.next.ServeHTTP(again, r)
	if again.held {
		if _, refused := inject.LengthRefusal(o.dialect, again.status, again.body.Bytes()); refused {
			overflowTotal.WithLabelValues(overflowRefusedAgain).Inc()
			w.Header().Del("X-Memory-Overflow")
			first.release()
			return nil
		}
		again.release()
	}
	if again.status < 400 {
		overflowTotal.WithLabelValues(overflowRescued).Inc()
	}
	return err
}

// ollama cuts, before sending, a request over the model's context:
// options.num_ctx, else overflow_ollama_ctx.
func (o *overflowNext) ollama(w http.ResponseWriter, r *http.Request, body []byte) error {
	ctx := inject.OllamaContext(body)
	if ctx <= 0 {
		ctx = o.h.OverflowOllamaCtx
	}
	if inject.EstimateTokens(string(body))+inject.CompletionTokens(body) > ctx {
		if cut, n := o.cut(r.Context(), body, ctx); cut != nil {
			reqbody.Set(r, cut)
			o.diagnose(w.Header(), n)
			overflowTotal.WithLabelValues(overflowRescued).Inc()
		} else {
			overflowTotal.WithLabelValues(overflowNotTrimmable).Inc()
		}
	}
	return o.next.ServeHTTP(w, r)
}

// cut returns body cut to fit limit tokens (0: half its size) with what
// recall finds of the cut turns in the memory block, and how many messages
// it dropped; nil when nothing can be cut.
func (o *overflowNext) cut(ctx context.Context, body []byte, limit int) ([]byte, int) {
	budget := inject.EstimateTokens(string(body)) / 2
	if limit > 0 {
		// The limits count the answer's tokens with the prompt's, and
		// tokenizers count otherwise than the estimate: a margin.
		budget = (limit - inject.CompletionTokens(body)) * 3 / 4
	}
	section := o.earlier(ctx, min(o.h.MaxTokens, budget/4))
	cut, n, err := inject.Trim(o.dialect, body, budget-inject.EstimateTokens(section))
	if err != nil {
		return nil, 0
	}
	if section == "" {
		return cut, n
	}
	if with, ok := inject.WithEarlier(cut, o.block, section); ok {
		return with, n
	}
	req, err := o.dialect.Parse(cut)
	if err != nil {
		return cut, n
	}
	with, err := req.Inject(inject.Block(section), o.h.placementFor(req.Model))
	if err != nil {
		return cut, n
	}
	return with, n
}

// earlier is what recall finds for the latest message within this
// conversation (its stored turns and facts), as a section of the memory
// block within maxTokens, oldest first; "" for nothing.
func (o *overflowNext) earlier(ctx context.Context, maxTokens int) string {
	ctx, cancel := context.WithTimeout(ctx, time.Duration(o.h.Timeout))
	defer cancel()
	res, err := o.h.engine.Search(ctx, engine.SearchRequest{Owner: o.owner, Session: o.session, OnlySession: true,
		Query: o.query, Limit: earlierItems, ExcludeTurn: o.turnKey})
	if err != nil {
		o.h.logger.Warn("recalling the cut part of a conversation failed; it is asked again cut, without it", zap.Error(err))
		return ""
	}
	slices.SortFunc(res, func(a, b engine.Result) int { return a.Memory.CreatedAt.Compare(b.Memory.CreatedAt) })
	var items []inject.Item
	for _, m := range res {
		if !inject.Shows(o.block, m.Memory.Content) { // the block says it already
			items = append(items, inject.Item{Text: m.Memory.Content})
		}
	}
	return inject.RenderEarlier(items, maxTokens)
}

// diagnose tells the client, with diagnostics on, in the headers h of the
// answer, that its conversation was cut.
func (o *overflowNext) diagnose(h http.Header, n int) {
	if o.h.Diagnostics {
		h.Set("X-Memory-Overflow", "trimmed "+strconv.Itoa(n)+" messages")
	}
}

// refusalCatcher passes an answer to w as it comes, unless it is an error
// (400 or 413) in JSON: that one it holds, up to maxRefusal, for the
// caller to read and then give the client (release) or not.
type refusalCatcher struct {
	w      http.ResponseWriter
	header http.Header
	status int
	held   bool
	passed bool
	body   bytes.Buffer
}

func (c *refusalCatcher) Header() http.Header { return c.header }

func (c *refusalCatcher) WriteHeader(code int) {
	if c.status != 0 || c.passed {
		return
	}
	if code < 200 {
		c.pass(code)
		c.passed = false // an informational answer decides nothing
		return
	}
	c.status = code
	mt, _, _ := mime.ParseMediaType(c.header.Get("Content-Type"))
	if (code == http.StatusBadRequest || code == http.StatusRequestEntityTooLarge) && mt == "application/json" &&
		c.header.Get("Content-Encoding") == "" {
		c.held = true
		return
	}
	c.pass(code)
}

// pass gives the client the status line and the answer's headers, added
// to those the handlers before this one set.
func (c *refusalCatcher) pass(code int) {
	h := c.w.Header()
	for k, v := range c.header {
		h[k] = v
	}
	c.w.WriteHeader(code)
	c.passed = true
}

func (c *refusalCatcher) Write(p []byte) (int, error) {
	if c.status == 0 {
		c.WriteHeader(http.StatusOK)
	}
	if !c.held {
		return c.w.Write(p)
	}
	if c.body.Len()+len(p) > maxRefusal {
		c.release() // too long for a refusal: the client gets it as it is
		return c.w.Write(p)
	}
	return c.body.Write(p)
}

// release gives the client the held answer.
func (c *refusalCatcher) release() {
	if !c.held {
		return
	}
	c.held = false
	c.pass(c.status)
	_, _ = c.w.Write(c.body.Bytes())
}

// FlushError flushes what the client has been given; a held answer is not
// flushed.
func (c *refusalCatcher) FlushError() error {
	if c.held || !c.passed {
		return nil
	}
	return http.NewResponseController(c.w).Flush()
}

func (c *refusalCatcher) Flush() { _ = c.FlushError() }

// ReadFrom sends io.Copy through Write.
func (c *refusalCatcher) ReadFrom(r io.Reader) (int64, error) {
	return io.Copy(reqbody.WriterOnly{Writer: c}, r)
}
