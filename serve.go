package memory

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
	"go.uber.org/zap"

	"github.com/caddy-memory/memory/contentenc"
	"github.com/caddy-memory/memory/engine"
	"github.com/caddy-memory/memory/extract"
	"github.com/caddy-memory/memory/inject"
	"github.com/caddy-memory/memory/internal/norm"
)

// ServeHTTP recalls, injects, proxies, and hands the turn to the engine. Any
// memory failure passes the request on without memories (unless fail_closed).
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request, next caddyhttp.Handler) error {
	if r.Method != http.MethodPost {
		return next.ServeHTTP(w, r)
	}
	dialect := h.format
	if dialect == nil {
		dialect = inject.ForPath(r.URL.Path)
	}
	if dialect == nil {
		return next.ServeHTTP(w, r)
	}
	req, body, enc, rawOwner := h.read(r, dialect)
	if req == nil {
		h.report(w, outcomePassed, 0, 0)
		return next.ServeHTTP(w, r)
	}

	owner := h.engine.OwnerID(rawOwner)
	conversation := h.conversation(req, owner)
	session := ""
	if h.Session != "" {
		if repl, _ := r.Context().Value(caddy.ReplacerCtxKey).(*caddy.Replacer); repl != nil {
			session = strings.TrimSpace(repl.ReplaceAll(h.Session, ""))
		}
	}
	if session == "" {
		session = conversation
	}
	session = capLen(session, maxSessionLen)
	turnKey := extract.TurnKey(conversation, req.UserTurns(), req.Query())

	start := time.Now()
	injected, rewritten, result, err := h.recall(r, req, enc, owner, session, turnKey)
	took := time.Since(start)
	if rewritten != nil {
		body = rewritten
	}
	if err != nil {
		if h.FailClosed {
			h.report(w, outcomeFailedClosed, 0, took)
			return caddyhttp.Error(http.StatusServiceUnavailable, err)
		}
		result = outcomeFailedOpen
		h.logger.Warn("memory unavailable; request passed on without memories", zap.Error(err))
	}
	h.report(w, result, len(injected), took)
	// Ask for a readable answer; encode, outside this handler, still
	// compresses for the client. A compressed answer is decoded for the copy.
	r.Header.Set("Accept-Encoding", "identity")

	// The request's id, read before the proxy runs: Caddy makes it on first
	// use, writing the request's variables, which reverse_proxy's dialer
	// reads from its own goroutine, one that can outlive the request.
	var ref string
	if repl, _ := r.Context().Value(caddy.ReplacerCtxKey).(*caddy.Replacer); repl != nil {
		ref, _ = repl.GetString("http.request.uuid")
	}
	t := newTee(w, h.MaxCapture)
	recalled, err := h.forward(t, r, next, req.Dialect, owner, body)
	injected = append(injected, recalled...)
	if err != nil {
		return err
	}
	if !t.capture {
		return nil
	}
	// No flush before the hand-off. An answer with a Content-Length is
	// whole at the client once its last byte is out, and the client sends
	// its next request on the kept-alive connection at once; if a reload
	// shuts the server down before this handler returns, net/http closes
	// that connection with the request unread (an EOF or a reset). Left in
	// the server's buffer, the answer's end goes out as the handler
	// returns, as with reverse_proxy alone, and says "Connection: close"
	// when the server is shutting down. The hand-off only queues the turn.
	job := &engine.Job{Owner: owner, Turn: extract.Turn{
		Session:         session,
		Conversation:    conversation,
		Dialect:         req.Dialect,
		User:            req.Query(),
		NewTurn:         req.NewTurn(),
		Turn:            req.UserTurns(),
		Before:          req.Before(2),
		Response:        t.buf.Bytes(),
		ContentType:     t.ctype,
		ContentEncoding: t.encoding,
		Truncated:       t.truncated,
		Injected:        injected,
		Time:            time.Now().UTC(),
		Ref:             ref,
	}}
	h.learner.Enqueue(job)
	return nil
}

// read finds the owner and parses the request body. A nil request means the
// request goes on untouched: no owner, an encoding or a body it cannot read,
// or not a chat request. The body is always left whole.
func (h *Handler) read(r *http.Request, dialect inject.Dialect) (req *inject.Request, body []byte, enc, owner string) {
	owner = resolveOwner(h.Owner, r)
	if owner == "" {
		return nil, nil, "", ""
	}
	enc = r.Header.Get("Content-Encoding")
	if !contentenc.Identity(enc) && !contentenc.Supported(enc) {
		return nil, nil, "", ""
	}
	raw, complete, err := readBody(r, h.MaxBody)
	if err != nil || !complete {
		return nil, nil, "", ""
	}
	setBody(r, raw) // read once; from here the body is always whole again
	body, err = contentenc.Decode(enc, raw, h.MaxBody, false)
	if err != nil { // too large once decoded (a bomb), or corrupt
		return nil, nil, "", ""
	}
	if req, err = dialect.Parse(body); err != nil {
		return nil, nil, "", ""
	}
	return req, body, enc, owner
}

// report counts a request's outcome and, with diagnostics on, tells the
// client in response headers.
func (h *Handler) report(w http.ResponseWriter, result string, injected int, took time.Duration) {
	outcome(result)
	if !h.Diagnostics {
		return
	}
	hd := w.Header()
	hd.Set("X-Memory-Status", result)
	hd.Set("X-Memory-Injected", strconv.Itoa(injected))
	hd.Set("X-Memory-Time", strconv.FormatFloat(float64(took.Microseconds())/1000, 'f', 2, 64)+"ms")
}

// conversation names the conversation a request belongs to: the id the
// request gives (the responses API's conversation), the conversation of the
// response it continues (previous_response_id), or one derived from its
// first messages.
func (h *Handler) conversation(req *inject.Request, owner string) string {
	switch {
	case req.Thread != "" && !req.ThreadIsPrev:
		return capLen(req.Thread, maxSessionLen)
	case req.Thread != "":
		if c := h.engine.ConversationOf(owner, req.Thread); c != "" {
			return c
		}
		// Not learned yet (or forgotten): the chain from here on still
		// shares one id.
		return "r-" + norm.Short(req.Thread, 8)
	}
	return req.Conversation()
}

// placementFor is the placement for a model: "user" for models that reject
// the system role.
func (h *Handler) placementFor(model string) inject.Placement {
	if h.placement == inject.User || model == "" {
		return h.placement
	}
	if i := strings.LastIndexByte(model, '/'); i >= 0 {
		model = model[i+1:] // "openai/o1-mini" on routers
	}
	for _, m := range h.NoSystemRole {
		if model == m || strings.HasPrefix(model, m+"-") {
			return inject.User
		}
	}
	return h.placement
}

const maxSessionLen = 200

// recall retrieves the owner's relevant memories and rewrites the request
// body to carry them, returning the injected memories as the model sees
// them, the new body (nil when unchanged) and the outcome. On any error the
// body stays as received.
func (h *Handler) recall(r *http.Request, req *inject.Request, enc, owner, session, turnKey string) ([]string, []byte, string, error) {
	ctx, cancel := context.WithTimeout(r.Context(), time.Duration(h.Timeout))
	defer cancel()
	start := time.Now()
	rec, err := h.engine.Recall(ctx, h.recallRequest(owner, session, req.Query(), turnKey))
	retrievalSeconds.Observe(time.Since(start).Seconds())
	if err != nil {
		return nil, nil, "", fmt.Errorf("searching memories: %w", err)
	}
	if rec.Block == "" {
		injectedPerRequest.Observe(0)
		return nil, nil, outcomeNothing, nil
	}
	block, kept, texts := rec.Block, rec.Memories, rec.Texts
	nb, err := req.Inject(block, h.placementFor(req.Model))
	if err != nil {
		return nil, nil, "", fmt.Errorf("placing memories: %w", err)
	}
	setBody(r, nb)
	if !contentenc.Identity(enc) {
		r.Header.Del("Content-Encoding") // the rewritten body goes on decoded
	}
	injectedPerRequest.Observe(float64(len(kept)))
	ids := make([]uint64, len(kept))
	for i, m := range kept {
		ids[i] = m.Memory.ID
	}
	h.engine.Used(owner, ids...)
	if c := h.logger.Check(zap.DebugLevel, "injected memories"); c != nil {
		c.Write(zap.Int("memories", len(kept)), zap.Int("block_bytes", len(block)))
	}
	return texts, nb, outcomeInjected, nil
}

// recallRequest is what the handler asks of a recall, for a question of
// owner in session; the API's preview asks the same.
func (h *Handler) recallRequest(owner, session, query, turnKey string) engine.RecallRequest {
	return engine.RecallRequest{
		SearchRequest: engine.SearchRequest{
			Owner: owner, Session: session, OnlySession: h.Scope == "session",
			Query: query, Limit: h.MaxItems, MinScore: h.minScore, ExcludeTurn: turnKey, Gate: h.Gate != "off",
		},
		Profile: h.Profile != "off", ProfileTokens: h.ProfileTokens, MaxTokens: h.MaxTokens, MaxItems: h.MaxItems,
	}
}

func capLen(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s
}

// readBody reads at most max bytes of the request body. When the body is
// larger, complete is false and r.Body is restored to the whole body, the
// read part stitched back in front of the rest.
func readBody(r *http.Request, max int64) (body []byte, complete bool, err error) {
	if r.Body == nil || r.Body == http.NoBody {
		return nil, false, nil
	}
	if r.ContentLength > max {
		return nil, false, nil
	}
	// A declared length is read into one buffer of its size, not one that
	// doubles as it fills (twice the memory, for a body near max_body).
	var b bytes.Buffer
	if r.ContentLength > 0 {
		b.Grow(int(r.ContentLength) + bytes.MinRead)
	}
	_, err = b.ReadFrom(io.LimitReader(r.Body, max+1))
	buf := b.Bytes()
	if err != nil || int64(len(buf)) > max {
		r.Body = stitched{io.MultiReader(bytes.NewReader(buf), r.Body), r.Body}
		if err != nil {
			return nil, false, fmt.Errorf("reading request body: %w", err)
		}
		return nil, false, nil
	}
	return buf, true, nil
}

// stitched is a body whose first bytes were already read: reads see them
// again, Close closes the original.
type stitched struct {
	io.Reader
	io.Closer
}

// setBody replaces the request body and every header that describes it.
func setBody(r *http.Request, b []byte) {
	r.Body = io.NopCloser(bytes.NewReader(b))
	r.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(b)), nil }
	r.ContentLength = int64(len(b))
	r.Header.Set("Content-Length", strconv.Itoa(len(b)))
	r.TransferEncoding = nil
}
