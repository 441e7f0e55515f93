// Package overflow owns conversations longer than the model takes: when
// the upstream refuses a request for its length, it asks once more with
// the conversation cut (inject.Trim) and what the cut turns said, as far
// as recall finds it in this conversation, back in the one memory block.
// A format whose server never refuses (inject.Truncating: Ollama drops the
// oldest tokens itself) has a request over its context cut before it is
// sent.
package overflow

import (
	"bytes"
	"context"
	"io"
	"mime"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"go.uber.org/zap"

	"github.com/caddy-memory/memory/index"
	"github.com/caddy-memory/memory/inject"
	"github.com/caddy-memory/memory/internal/block"
	"github.com/caddy-memory/memory/internal/contentenc"
	"github.com/caddy-memory/memory/internal/engine"
	"github.com/caddy-memory/memory/internal/reqbody"
)

// What came of a refusal, as Config.Count hears it.
const (
	Rescued      = "rescued"       // asked again, cut, and answered
	RefusedAgain = "refused_again" // the cut request was refused too: the client got the first refusal
	NotTrimmable = "not_trimmable" // nothing could be cut: the client got the refusal
)

// Defaults.
const (
	// DefaultOllamaCtx is Ollama's own context, the default DefaultCtx.
	DefaultOllamaCtx = 2048
	// maxRefusal bounds an error answer held back to read whether it is a
	// refusal for length; a longer one goes to the client as it comes.
	maxRefusal = 64 << 10
	// earlierItems bounds what the section of the cut turns shows: of the
	// cut messages, and of what recall finds.
	earlierItems = 8
)

// Next is the handler a request goes on to (reverse_proxy): Caddy's
// caddyhttp.Handler.
type Next interface {
	ServeHTTP(http.ResponseWriter, *http.Request) error
}

// Config is one memory handler's rescue of long conversations.
type Config struct {
	Engine *engine.Engine
	// MaxTokens bounds the block (the handler's max_tokens); the section
	// of the cut turns takes at most a quarter of what the cut request
	// may hold, within it.
	MaxTokens int
	// Timeout bounds the recall of the cut turns.
	Timeout time.Duration
	// DefaultCtx is the context of a truncating format's models
	// (inject.Truncating) whose requests set none: Ollama's without
	// options.num_ctx (the handler's overflow_ollama_ctx).
	DefaultCtx int
	// MaxBody bounds a compressed request once decoded (the handler's
	// max_body).
	MaxBody int64
	// Diagnostics adds X-Memory-Overflow to a rescued answer.
	Diagnostics bool
	// Placement is where a block goes for a model, when the request had
	// none to add the cut turns to.
	Placement func(model string) inject.Placement
	Logger    *zap.Logger
	// Count hears what came of each refusal (Rescued, RefusedAgain,
	// NotTrimmable), for the metrics.
	Count func(result string)
}

// Request is what the rescue knows of one chat request.
type Request struct {
	Dialect inject.Dialect
	Owner   string
	Session string
	Query   string
	// TurnKey is the request's own turn, left out of the recall.
	TurnKey string
	// Block is the memory block the request carries, "" for none.
	Block string
}

// Wrap returns next, for req, as a handler that rescues a refusal for
// length (see ServeHTTP).
func (c *Config) Wrap(next Next, req Request) Next {
	return &overflowNext{c: c, next: next, Request: req}
}

// overflowNext is the next handler for one request whose conversation may
// be too long: see ServeHTTP.
type overflowNext struct {
	c    *Config
	next Next
	Request
	// refused says an earlier call of this request (before a tool round)
	// was refused for its length, naming limit: a later round, the same
	// conversation grown, is cut before it is sent.
	refused bool
	limit   int
}

// ServeHTTP sends the request on; a refusal for its length is held back and
// the request asked once more, cut. The client sees one answer: the cut
// request's, or, refused again (or not cut), the first refusal unchanged.
// The tool rounds of a request refused once go cut from the start.
func (o *overflowNext) ServeHTTP(w http.ResponseWriter, r *http.Request) error {
	raw, err := io.ReadAll(r.Body)
	if err != nil {
		return err
	}
	reqbody.Set(r, raw)
	if t, ok := o.Dialect.(inject.Truncating); ok {
		return o.truncating(w, r, t, o.plain(r, raw))
	}
	if o.refused {
		body := o.plain(r, raw)
		if cut, n := o.cut(r.Context(), body, refusalBudget(body, o.limit)); cut != nil {
			setCut(r, cut)
			o.diagnose(w.Header(), n)
		}
		return o.next.ServeHTTP(w, r)
	}
	first := &refusalCatcher{w: w, header: http.Header{}}
	err = o.next.ServeHTTP(first, r)
	if !first.held {
		return err
	}
	limit, refused := inject.LengthRefusal(o.Dialect, first.status, first.body.Bytes())
	if err != nil || !refused {
		first.release()
		return err
	}
	o.refused, o.limit = true, limit
	body := o.plain(r, raw)
	cut, n := o.cut(r.Context(), body, refusalBudget(body, limit))
	if cut == nil {
		o.c.Count(NotTrimmable)
		first.release()
		return nil
	}
	setCut(r, cut)
	o.diagnose(w.Header(), n)
	again := &refusalCatcher{w: w, header: http.Header{}}
	err = o.next.ServeHTTP(again, r)
	if again.held {
		if _, refused := inject.LengthRefusal(o.Dialect, again.status, again.body.Bytes()); refused {
			o.c.Count(RefusedAgain)
			w.Header().Del("X-Memory-Overflow")
			first.release()
			return nil
		}
		again.release()
	}
	if again.status < 400 {
		o.c.Count(Rescued)
	}
	return err
}

// truncating cuts, before sending, a request of a format whose server
// never refuses over the model's context: the one the request sets, else
// DefaultCtx. Ollama cuts its prompt to num_ctx alone (the answer shifts
// the context as it grows), so the answer's num_predict takes no room here.
func (o *overflowNext) truncating(w http.ResponseWriter, r *http.Request, t inject.Truncating, body []byte) error {
	ctx := t.Context(body)
	if ctx <= 0 {
		ctx = o.c.DefaultCtx
	}
	if body != nil && t.PromptTokens(body) > ctx {
		// A margin: tokenizers count otherwise than the estimate.
		if cut, n := o.cut(r.Context(), body, ctx*3/4); cut != nil {
			setCut(r, cut)
			o.diagnose(w.Header(), n)
			o.c.Count(Rescued)
		} else {
			o.c.Count(NotTrimmable)
		}
	}
	return o.next.ServeHTTP(w, r)
}

// plain is the request body raw, decoded. A body the client compressed
// goes on as it came when the handler had nothing to add to it; it is
// measured and cut decoded (only when it has to be: on a refusal, or for
// Ollama's size), and a cut one goes on decoded. One that cannot be
// decoded is nil: it is not cut.
func (o *overflowNext) plain(r *http.Request, raw []byte) []byte {
	enc := r.Header.Get("Content-Encoding")
	if contentenc.Identity(enc) {
		return raw
	}
	body, err := contentenc.Decode(enc, raw, o.c.MaxBody, false)
	if err != nil {
		return nil
	}
	return body
}

// setCut makes cut, never compressed, the request's body.
func setCut(r *http.Request, cut []byte) {
	reqbody.Set(r, cut)
	r.Header.Del("Content-Encoding")
}

// refusalBudget is the size, in estimated tokens, a request refused for
// its length is cut to: under the limit the refusal names, else half.
func refusalBudget(body []byte, limit int) int {
	if limit <= 0 {
		return block.EstimateTokens(string(body)) / 2
	}
	// The limits count the answer's tokens with the prompt's, and
	// tokenizers count otherwise than the estimate: a margin.
	return (limit - inject.CompletionTokens(body)) * 3 / 4
}

// cut returns body cut to fit budget tokens (0 or less: half its size)
// with what the cut turns said of the latest question in the memory block,
// and how many messages it dropped; nil when nothing can be cut. The
// section of the cut turns has room for what the block leaves of the
// handler's max_tokens, and a quarter of budget at most.
func (o *overflowNext) cut(ctx context.Context, body []byte, budget int) ([]byte, int) {
	if body == nil {
		return nil, 0
	}
	carried := o.Block
	if carried == "" {
		carried = block.Holding("") // the block the section will need
	}
	room := max(min(o.c.MaxTokens-block.EstimateTokens(carried), budget/4), 0)
	cut, n, err := inject.Trim(o.Dialect, body, budget-room)
	if err != nil {
		return nil, 0
	}
	section := o.earlier(ctx, inject.Dropped(o.Dialect, body, cut), room)
	if section == "" {
		return cut, n
	}
	if with, ok := inject.WithEarlier(cut, o.Block, section); ok {
		return with, n
	}
	req, err := o.Dialect.Parse(cut)
	if err != nil {
		return cut, n
	}
	with, err := req.Inject(block.Holding(section), o.c.Placement(req.Model))
	if err != nil {
		return cut, n
	}
	return with, n
}

// passageBytes bounds a passage of a cut message shown in the block: about
// 60 tokens, a few sentences.
const passageBytes = 240

// earlier is what the cut part of the conversation says of the latest
// question, as a section of the memory block within maxTokens; "" for
// nothing. First the passages of the dropped messages themselves, ranked
// against the question (a conversation sent whole for the first time has
// nothing stored); then what recall finds within this conversation, stored
// turn by turn (its facts, and turns the client no longer sends), for
// what room is left. Both are the owner's own: the request's words and
// the owner's memories of this session.
func (o *overflowNext) earlier(ctx context.Context, dropped []inject.Message, maxTokens int) string {
	var passages, texts []string
	for _, m := range dropped {
		who := "User: "
		switch m.Role {
		case "user":
		case "assistant":
			who = "Assistant: "
		default:
			continue // instructions are kept; tool results say nothing of the person
		}
		for _, p := range inject.Passages(block.Strip(m.Text), passageBytes) {
			passages, texts = append(passages, who+p), append(texts, p)
		}
	}
	var items []block.Earlier
	for _, i := range index.RankTexts(o.Query, texts) {
		if len(items) == earlierItems {
			break
		}
		items = append(items, block.Earlier{Text: passages[i], At: i})
	}
	for _, content := range o.recalled(ctx) {
		if !block.Shows(o.Block, content) && !holdsAny(content, items) { // the block, or a passage, says it already
			items = append(items, block.Earlier{Text: content, At: len(passages) + len(items)})
		}
	}
	return block.RenderEarlier(items, maxTokens)
}

// holdsAny reports whether content holds the text of one of the passages.
func holdsAny(content string, items []block.Earlier) bool {
	for _, it := range items {
		_, text, _ := strings.Cut(it.Text, ": ")
		if strings.Contains(content, text) {
			return true
		}
	}
	return false
}

// recalled is what recall finds for the latest message within this
// conversation, stored turn by turn: the memories' contents, oldest first.
func (o *overflowNext) recalled(ctx context.Context) []string {
	ctx, cancel := context.WithTimeout(ctx, o.c.Timeout)
	defer cancel()
	res, err := o.c.Engine.Search(ctx, engine.SearchRequest{Owner: o.Owner, Session: o.Session, OnlySession: true,
		Query: o.Query, Limit: earlierItems, ExcludeTurn: o.TurnKey})
	if err != nil {
		o.c.Logger.Warn("recalling the cut part of a conversation failed; it is asked again cut, with what the cut messages say alone", zap.Error(err))
		return nil
	}
	slices.SortFunc(res, func(a, b engine.Result) int { return a.Memory.CreatedAt.Compare(b.Memory.CreatedAt) })
	out := make([]string, len(res))
	for i, r := range res {
		out[i] = r.Memory.Content
	}
	return out
}

// diagnose tells the client, with diagnostics on, in the headers h of the
// answer, that its conversation was cut.
func (o *overflowNext) diagnose(h http.Header, n int) {
	if o.c.Diagnostics {
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
