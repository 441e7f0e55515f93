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

	"github.com/caddy-memory/memory/engine"
	"github.com/caddy-memory/memory/inject"
)

// ServeHTTP recalls, injects, proxies, and hands the turn to the engine. Any
// memory failure passes the request on without memories (unless fail_closed).
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request, next caddyhttp.Handler) error {
	if r.Method != http.MethodPost {
		return next.ServeHTTP(w, r)
	}
	dialect := inject.ForPath(r.URL.Path)
	if dialect == nil {
		return next.ServeHTTP(w, r)
	}
	repl, _ := r.Context().Value(caddy.ReplacerCtxKey).(*caddy.Replacer)
	rawOwner := h.owner(r, repl)
	if rawOwner == "" {
		outcome(outcomePassed)
		return next.ServeHTTP(w, r)
	}
	if enc := r.Header.Get("Content-Encoding"); enc != "" && !strings.EqualFold(enc, "identity") {
		outcome(outcomePassed) // compressed bodies are not rewritten
		return next.ServeHTTP(w, r)
	}
	body, complete, err := readBody(r, h.MaxBody)
	if err != nil || !complete {
		outcome(outcomePassed)
		return next.ServeHTTP(w, r)
	}
	setBody(r, body) // read once; from here the body is always whole again
	req, err := dialect.Parse(body)
	if err != nil {
		outcome(outcomePassed)
		return next.ServeHTTP(w, r)
	}

	owner := h.engine.OwnerID(rawOwner)
	session := ""
	if h.Session != "" && repl != nil {
		session = strings.TrimSpace(repl.ReplaceAll(h.Session, ""))
	}
	if session == "" {
		session = req.Conversation()
	}
	if len(session) > maxSessionLen {
		session = session[:maxSessionLen]
	}

	if err := h.recall(r, req, owner, session); err != nil {
		if h.FailClosed {
			outcome(outcomeFailedClosed)
			return caddyhttp.Error(http.StatusServiceUnavailable, err)
		}
		outcome(outcomeFailedOpen)
		h.logger.Warn("memory unavailable; request passed on without memories", zap.Error(err))
	}
	// The response copy must be readable; the client's own compression is
	// applied by encode, outside this handler.
	r.Header.Set("Accept-Encoding", "identity")

	t := newTee(w, h.MaxCapture)
	if err := next.ServeHTTP(t, r); err != nil {
		return err
	}
	if !t.capture {
		return nil
	}
	job := &engine.Job{
		Owner:        owner,
		Session:      session,
		Conversation: req.Conversation(),
		Dialect:      req.Dialect,
		User:         req.Query(),
		NewTurn:      req.NewTurn(),
		Turn:         req.UserTurns(),
		ContentType:  t.ctype,
		Truncated:    t.truncated,
		Time:         time.Now().UTC(),
	}
	if repl != nil {
		job.Ref, _ = repl.GetString("http.request.uuid")
	}
	if t.encoding == "" || strings.EqualFold(t.encoding, "identity") {
		job.Response = t.buf.Bytes()
	}
	h.engine.Enqueue(job)
	return nil
}

const maxSessionLen = 200

// recall retrieves the owner's relevant memories and rewrites the request
// body to carry them; on any error the body stays as received.
func (h *Handler) recall(r *http.Request, req *inject.Request, owner, session string) error {
	query := req.Query()
	if strings.TrimSpace(query) == "" {
		outcome(outcomeNothing)
		return nil
	}
	ctx, cancel := context.WithTimeout(r.Context(), time.Duration(h.Timeout))
	defer cancel()
	start := time.Now()
	res, err := h.engine.Search(ctx, engine.SearchRequest{
		Owner: owner, Session: session, OnlySession: h.Scope == "session",
		Query: query, Limit: h.MaxItems, MinScore: h.minScore,
	})
	retrievalSeconds.Observe(time.Since(start).Seconds())
	if err != nil {
		return fmt.Errorf("searching memories: %w", err)
	}
	items := make([]inject.Item, len(res))
	for i, m := range res {
		items[i] = inject.Item{Text: m.Memory.Content, Time: m.Memory.UpdatedAt}
	}
	block, kept := inject.Render(items, h.MaxTokens, h.MaxItems)
	if block == "" {
		outcome(outcomeNothing)
		injectedPerRequest.Observe(0)
		return nil
	}
	nb, err := req.Inject(block, h.placement)
	if err != nil {
		return fmt.Errorf("placing memories: %w", err)
	}
	setBody(r, nb)
	outcome(outcomeInjected)
	injectedPerRequest.Observe(float64(len(kept)))
	if c := h.logger.Check(zap.DebugLevel, "injected memories"); c != nil {
		c.Write(zap.Int("memories", len(kept)), zap.Int("block_bytes", len(block)))
	}
	return nil
}

// owner resolves whose memories a request uses; "" means nobody's.
func (h *Handler) owner(r *http.Request, repl *caddy.Replacer) string {
	if h.Owner != "" {
		if repl == nil {
			return ""
		}
		return strings.TrimSpace(repl.ReplaceAll(h.Owner, ""))
	}
	return DefaultOwner(r)
}

// DefaultOwner is the bearer token of the Authorization header, else the
// x-api-key header (Anthropic's SDKs send the key there).
func DefaultOwner(r *http.Request) string {
	if a := strings.TrimSpace(r.Header.Get("Authorization")); a != "" {
		if scheme, token, ok := strings.Cut(a, " "); ok && strings.EqualFold(scheme, "Bearer") {
			return strings.TrimSpace(token)
		}
		return a
	}
	return strings.TrimSpace(r.Header.Get("X-Api-Key"))
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
	buf, err := io.ReadAll(io.LimitReader(r.Body, max+1))
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
