package memory

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
	"go.uber.org/zap"

	"github.com/caddy-memory/memory/app"
	"github.com/caddy-memory/memory/extract"
	"github.com/caddy-memory/memory/inject"
	"github.com/caddy-memory/memory/internal/block"
	"github.com/caddy-memory/memory/internal/contentenc"
	"github.com/caddy-memory/memory/internal/engine"
	"github.com/caddy-memory/memory/internal/memtools"
	"github.com/caddy-memory/memory/internal/norm"
	"github.com/caddy-memory/memory/internal/overflow"
	"github.com/caddy-memory/memory/internal/receipts"
	"github.com/caddy-memory/memory/internal/reqbody"
)

// ServeHTTP recalls, injects, proxies, and hands the turn to the engine. Any
// memory failure passes the request on without memories (unless fail_closed).
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request, next caddyhttp.Handler) error {
	control := takeControl(r)
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
	if control == controlOff {
		h.report(w, outcomeOptedOut, nil, 0)
		return next.ServeHTTP(w, r)
	}
	if err := h.storage.Damaged(); err != nil {
		// Logged once, where it was found (the app, the engine).
		if h.FailClosed {
			h.report(w, outcomeFailedClosed, nil, 0)
			return caddyhttp.Error(http.StatusServiceUnavailable, err)
		}
		h.report(w, outcomeFailedOpen, nil, 0)
		return next.ServeHTTP(w, r)
	}
	defer h.storage.Use()()
	req, body, enc, rawOwner := h.read(r, dialect)
	if req == nil {
		h.report(w, outcomePassed, nil, 0)
		return next.ServeHTTP(w, r)
	}

	owner := h.engine.OwnerID(rawOwner)
	session := ""
	if h.Session != "" {
		if repl, _ := r.Context().Value(caddy.ReplacerCtxKey).(*caddy.Replacer); repl != nil {
			session = strings.TrimSpace(repl.ReplaceAll(h.Session, ""))
		}
	}
	p := h.plan(owner, session, req)
	conversation, session, turnKey := p.conversation, p.Session, p.ExcludeTurn

	start := time.Now()
	got, err := h.recall(r, req, enc, owner, p.RecallRequest)
	took := time.Since(start)
	if got.body != nil {
		body = got.body
	}
	if err != nil {
		if h.FailClosed {
			h.report(w, outcomeFailedClosed, nil, took)
			return caddyhttp.Error(http.StatusServiceUnavailable, err)
		}
		got.outcome = outcomeFailedOpen
		h.logger.Warn("memory unavailable; request passed on without memories", zap.Error(err))
	}
	h.report(w, got.outcome, got.ids, took)
	var upstream memtools.Next = next
	if h.overflow != nil {
		upstream = h.overflow.Wrap(next, overflow.Request{Dialect: dialect, Owner: owner, Session: session,
			Query: req.Query(), TurnKey: turnKey, Block: got.block})
	}
	h.receipts.Record(owner, receipts.Receipt{Time: start.UTC(), Outcome: got.outcome, MemoryIDs: got.ids,
		Tokens: got.tokens, SearchMS: float64(took.Microseconds()) / 1000})
	// Ask for a readable answer; encode, outside this handler, still
	// compresses for the client. A compressed answer is decoded for the copy.
	r.Header.Set("Accept-Encoding", "identity")
	if control == controlNoLearn {
		// Nothing of it is learned: no turn, and no tools (the model could
		// save with them).
		return upstream.ServeHTTP(w, r)
	}

	// The request's id, read before the proxy runs: Caddy makes it on first
	// use, writing the request's variables, which reverse_proxy's dialer
	// reads from its own goroutine, one that can outlive the request.
	var ref string
	if repl, _ := r.Context().Value(caddy.ReplacerCtxKey).(*caddy.Replacer); repl != nil {
		ref, _ = repl.GetString("http.request.uuid")
	}
	t := newTee(w, h.MaxCapture)
	recalled, err := h.tools.Forward(t, r, upstream, dialect, owner, body)
	injected := append(got.texts, recalled...)
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
		Earlier:         req.EarlierUser(maxEarlier),
		Framed:          extract.Framed(req.EarlierUsers(maxFramed)),
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

// maxEarlier is how much of the user's previous message a turn carries: a
// correction ("Sorry, I meant Munich") corrects what it said last.
const maxEarlier = 600

// maxFramed bounds the earlier user messages read for a role-play or a
// story the conversation set up (extract.Framed).
const maxFramed = 40

// What a client asks of memory for one request, in the X-Memory header.
const (
	controlHeader  = "X-Memory"
	controlOff     = "off"      // neither inject nor learn
	controlNoLearn = "no-learn" // inject, learn nothing
)

// takeControl reads the request's X-Memory header and removes it, so it
// never reaches the upstream. The header can come more than once or as a
// list (a gateway adding its own to the client's): the strictest value
// listed rules, since a request that asked anywhere not to be learned
// must not be. Values other than off and no-learn are ignored: a request
// with none of those is handled as any other.
func takeControl(r *http.Request) string {
	control := ""
	for _, line := range r.Header.Values(controlHeader) {
		for v := range strings.SplitSeq(line, ",") {
			switch strings.ToLower(strings.TrimSpace(v)) {
			case controlOff:
				control = controlOff
			case controlNoLearn:
				if control == "" {
					control = controlNoLearn
				}
			}
		}
	}
	r.Header.Del(controlHeader)
	return control
}

// read finds the owner and parses the request body. A nil request means the
// request goes on untouched: no owner (logged, see noOwnerLog), an encoding
// or a body it cannot read, or not a chat request. The body is always left
// whole.
func (h *Handler) read(r *http.Request, dialect inject.Dialect) (req *inject.Request, body []byte, enc, owner string) {
	owner, why := whose(h.Owner, r)
	if owner == "" {
		h.noOwner.report(r, why)
		return nil, nil, "", ""
	}
	enc = r.Header.Get("Content-Encoding")
	if !contentenc.Identity(enc) && !contentenc.Supported(enc) {
		return nil, nil, "", ""
	}
	raw, complete, err := reqbody.Read(r, h.MaxBody)
	if err != nil || !complete {
		return nil, nil, "", ""
	}
	reqbody.Set(r, raw) // read once; from here the body is always whole again
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
// client in response headers: the outcome, the memories injected (their
// ids in block order) and the search time.
func (h *Handler) report(w http.ResponseWriter, result string, ids []uint64, took time.Duration) {
	outcome(result)
	if !h.Diagnostics {
		return
	}
	hd := w.Header()
	hd.Set("X-Memory-Status", result)
	hd.Set("X-Memory-Injected", strconv.Itoa(len(ids)))
	if len(ids) > 0 {
		list := make([]string, min(len(ids), maxHeaderIds))
		for i := range list {
			list[i] = strconv.FormatUint(ids[i], 10)
		}
		hd.Set("X-Memory-Ids", strings.Join(list, ","))
	}
	hd.Set("X-Memory-Time", strconv.FormatFloat(float64(took.Microseconds())/1000, 'f', 2, 64)+"ms")
}

// maxHeaderIds is the most ids X-Memory-Ids lists (the first, in block
// order): with a max_items in the hundreds the list would pass the 4 to 8
// KiB a front proxy allows a response's headers, and its answer would
// fail. X-Memory-Injected counts them all, and GET /injections lists them.
const maxHeaderIds = 64

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

// recalled is what a request was given.
type recalled struct {
	outcome string
	block   string   // the block placed, "" for none
	body    []byte   // the rewritten body; nil when unchanged
	ids     []uint64 // the memories injected, in block order
	texts   []string // each as the model sees it
	tokens  int      // the block's estimated tokens
}

// recall retrieves the owner's relevant memories and rewrites the request
// body to carry them. On any error the body stays as received.
func (h *Handler) recall(r *http.Request, req *inject.Request, enc, owner string, rr engine.RecallRequest) (recalled, error) {
	ctx, cancel := context.WithTimeout(r.Context(), time.Duration(h.Timeout))
	defer cancel()
	start := time.Now()
	rec, err := h.engine.Recall(ctx, rr)
	app.RetrievalSeconds.Observe(time.Since(start).Seconds())
	if err != nil {
		return recalled{}, fmt.Errorf("searching memories: %w", err)
	}
	if rec.Block == "" {
		app.InjectedMemories.Observe(0)
		return recalled{outcome: outcomeNothing}, nil
	}
	nb, err := req.Inject(rec.Block, h.placementFor(req.Model))
	if err != nil {
		return recalled{}, fmt.Errorf("placing memories: %w", err)
	}
	reqbody.Set(r, nb)
	if !contentenc.Identity(enc) {
		r.Header.Del("Content-Encoding") // the rewritten body goes on decoded
	}
	app.InjectedMemories.Observe(float64(len(rec.Memories)))
	ids := make([]uint64, len(rec.Memories))
	for i, m := range rec.Memories {
		ids[i] = m.Memory.ID
	}
	h.engine.Used(owner, ids...)
	if c := h.logger.Check(zap.DebugLevel, "injected memories"); c != nil {
		c.Write(zap.Int("memories", len(ids)), zap.Int("block_bytes", len(rec.Block)))
	}
	return recalled{outcome: outcomeInjected, block: rec.Block, body: nb, ids: ids, texts: rec.Texts, tokens: block.EstimateTokens(rec.Block)}, nil
}

// planned is the recall the handler makes for a chat request, with the
// conversation it belongs to.
type planned struct {
	engine.RecallRequest
	conversation string
}

// plan is the recall the handler makes for a chat request of owner (an
// owner id): session is what the session template gave ("": the
// conversation's own id), and the request's own turn is left out of what
// it finds. The proxy and the API's preview plan alike, so the preview is
// exactly what the proxy injects.
func (h *Handler) plan(owner, session string, req *inject.Request) planned {
	conversation := h.conversation(req, owner)
	if session == "" {
		session = conversation
	}
	session = capLen(session, maxSessionLen)
	return planned{
		RecallRequest: engine.RecallRequest{
			SearchRequest: engine.SearchRequest{
				Owner: owner, Session: session, OnlySession: h.Scope == "session",
				Query: req.Query(), Limit: h.MaxItems, MinScore: h.minScore, Gate: h.Gate != "off",
				ExcludeTurn: extract.TurnKey(conversation, req.UserTurns(), req.Query()),
			},
			Profile: h.Profile != "off", ProfileTokens: h.ProfileTokens, MaxTokens: h.MaxTokens, MaxItems: h.MaxItems,
		},
		conversation: conversation,
	}
}

// Plan is the recall the handler makes for a chat request (see plan), for
// the API's preview.
func (h *Handler) Plan(owner, session string, req *inject.Request) engine.RecallRequest {
	return h.plan(owner, session, req).RecallRequest
}

func capLen(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s
}
