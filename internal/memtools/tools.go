// Package memtools owns the model's own memory tools inside the proxy: a
// request gains save_memory and recall_memory in its format's shape, and
// when the model calls only those, the proxy runs them for the request's
// owner and asks the upstream again with the calls and their results, up
// to a number of rounds; the client sees one ordinary answer. It owns the
// rounds, the writer that edits each answer for the client, and the
// outputs owed to stored OpenAI responses.
package memtools

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"time"

	"go.uber.org/zap"

	"github.com/caddy-memory/memory/inject"
	"github.com/caddy-memory/memory/internal/engine"
	"github.com/caddy-memory/memory/internal/reqbody"
	"github.com/caddy-memory/memory/store"
)

// Names of the proxy's tools.
const (
	Save   = "save_memory"
	Recall = "recall_memory"
)

// DefaultMaxRounds is how many times the proxy asks the upstream again
// for one request.
const DefaultMaxRounds = 3

// MaxCallsPerAnswer bounds the proxy's calls it runs of one answer: the
// calls past it are answered with an error and not run. Each call is a
// search or a write, and one answer can hold thousands of them; so a
// request runs at most (max_tool_rounds + 1) * MaxCallsPerAnswer.
const MaxCallsPerAnswer = 16

// notRun is the result of a call past MaxCallsPerAnswer.
var notRun = fmt.Sprintf(`{"error":"not run: the proxy runs at most %d memory calls per answer; call again in a later answer what still matters"}`, MaxCallsPerAnswer)

// Known reports whether name is one of the proxy's tools.
func Known(name string) bool {
	_, ok := toolDefs[name]
	return ok
}

// Next is the handler a request goes on to (reverse_proxy): Caddy's
// caddyhttp.Handler.
type Next interface {
	ServeHTTP(http.ResponseWriter, *http.Request) error
}

// Client is where the final answer goes: the response writer with its
// flush (the proxy's learning tee).
type Client interface {
	http.ResponseWriter
	FlushError() error
}

// Runner runs the tools of one memory handler.
type Runner struct {
	// Tools are the tools offered; none: the feature is off.
	Tools []string
	// MaxRounds is how many times, at most, the upstream is asked again.
	MaxRounds int
	// MaxCapture bounds what is held of one answer to edit it (the
	// handler's max_capture): a longer answer passes as it came, and the
	// rounds stop.
	MaxCapture int64
	Engine     *engine.Engine
	// Owed keeps outputs owed to stored OpenAI responses; it belongs to the
	// storage, so a reload keeps it.
	Owed   *Owed
	Logger *zap.Logger
	// Called hears each call the model makes of a tool (for the metrics).
	Called func(tool string)
}

// toolDefs are the tools as the model is told of them.
var toolDefs = map[string]inject.Tool{
	Save: {
		Name: Save,
		Description: "Save something about the user to long-term memory, so it is remembered in later conversations: " +
			"a preference, a fact about them or their life, or an instruction for how to help them. " +
			"Write it as one standalone sentence in the third person (\"The user prefers window seats.\").",
		Parameters: `{"type":"object","properties":{` +
			`"content":{"type":"string","description":"What to remember, one standalone sentence."},` +
			`"category":{"type":"string","enum":["preference","fact","instruction"],"description":"What kind of memory it is."}},` +
			`"required":["content"]}`,
	},
	Recall: {
		Name: Recall,
		Description: "Search the long-term memory of earlier conversations with this user. " +
			"Returns the 5 most relevant memories with their category, relevance (0 to 1) and when they were made.",
		Parameters: `{"type":"object","properties":{` +
			`"query":{"type":"string","description":"What to look for, in a few words."},` +
			`"scope":{"type":"string","enum":["facts","episodes","transcript","all"],"description":"Facts about the user, summaries of past conversations, their exact words, or all (the default)."}},` +
			`"required":["query"]}`,
	},
}

// recallLimit is how many memories recall_memory returns.
const recallLimit = 5

// offered returns the proxy's tools a request gains: those configured
// that the client does not define itself.
func (h *Runner) offered(body []byte) []inject.Tool {
	if len(h.Tools) == 0 {
		return nil
	}
	theirs := inject.ToolNames(body)
	var out []inject.Tool
	for _, name := range h.Tools {
		if !slices.Contains(theirs, name) {
			out = append(out, toolDefs[name])
		}
	}
	return out
}

// Forward sends the request on, through t: with the proxy's tools when it
// gains any (see serveWithTools), else as it is. It returns the texts the
// tools recalled: like the injected block, they are not to be learned
// again.
func (h *Runner) Forward(t Client, r *http.Request, next Next, dialect inject.Dialect, owner string, body []byte) ([]string, error) {
	tools := h.offered(body)
	if tools == nil {
		return nil, next.ServeHTTP(t, r)
	}
	if s, ok := dialect.(inject.Storing); ok {
		if owe := h.Owed.take(owner, s.Previous(body)); owe != nil {
			if b, err := s.PrependInput(body, owe); err == nil {
				body = b
			}
		}
	}
	withTools, err := inject.AddTools(dialect, body, tools)
	if err != nil {
		h.Logger.Warn("memory tools not offered; request passed on without them", zap.Error(err))
		return nil, next.ServeHTTP(t, r)
	}
	r.Header.Del("Content-Encoding") // the body goes on decoded
	return h.serveWithTools(t, r, next, dialect, owner, withTools, tools)
}

// serveWithTools proxies a request that carries the proxy's tools: each
// answer goes through an inject.Editor, tool rounds are run and the
// conversation sent again, and the final answer reaches the client through
// t (the learning tee). It returns the texts the tools recalled: like the
// injected block, they are not to be learned again.
func (h *Runner) serveWithTools(t Client, r *http.Request, next Next, dialect inject.Dialect, owner string, body []byte, tools []inject.Tool) ([]string, error) {
	mine := map[string]bool{}
	for _, tl := range tools {
		mine[tl.Name] = true
	}
	isMemory := func(name string) bool { return mine[name] }
	// What the handlers before this one set for the client; each round
	// starts from it.
	base := t.Header().Clone()
	// prior is the usage of the rounds so far.
	var prior inject.Usage
	var recalled []string
	// prev is the round whose stream the client has when a stream that
	// talked before calling the proxy's tools carries on; its end is held,
	// to close the client's stream should no round finish it.
	var prev *inject.Editor
	unfinished := func(err error) ([]string, error) {
		if prev != nil {
			_, _ = t.Write(prev.TailWith(prior))
		}
		return recalled, err
	}
	for round := 0; ; round++ {
		reqbody.Set(r, body)
		rw := &roundWriter{client: t, dialect: dialect, isMemory: isMemory, prior: prior, limit: h.MaxCapture, header: base.Clone(), prev: prev}
		err := next.ServeHTTP(rw, r)
		if prev == nil && err != nil && !rw.wrote {
			return recalled, err
		}
		if err != nil || rw.editor == nil {
			if prev != nil {
				h.Logger.Warn("the upstream failed to answer after the memory tools ran; the client's stream ends with what it had", zap.Error(err))
				return unfinished(nil)
			}
			return recalled, err
		}
		last := round == h.MaxRounds
		again := rw.end(last)
		if !again {
			if !rw.spent {
				h.besideClientCalls(r.Context(), owner, dialect, rw.editor)
			}
			return recalled, nil
		}
		if rw.editor.Continues() {
			// A tool round that talked first; one that did not leaves the
			// client's stream to the round that began it, end and all.
			prev = rw.editor
		}
		// A tool round: run the calls, and ask again.
		calls := rw.editor.Calls()
		results, texts := h.runCalls(r.Context(), owner, calls)
		recalled = append(recalled, texts...)
		prior.Add(rw.editor.Usage())
		if body, err = inject.AppendRound(dialect, body, rw.editor.Text(), calls, results); err != nil {
			return unfinished(fmt.Errorf("continuing after the memory tools: %w", err))
		}
	}
}

// besideClientCalls runs the proxy's calls of an answer the client has
// with its own calls alone: what the model asked to save is saved. A
// recall's result would reach no one, except in an answer the server
// keeps whole (inject.Storing: OpenAI responses): the next request
// continuing it owes an output for each call, kept until then (see Owed).
func (h *Runner) besideClientCalls(ctx context.Context, owner string, dialect inject.Dialect, ed *inject.Editor) {
	s, keeps := dialect.(inject.Storing)
	var calls []inject.ToolCall
	for _, c := range ed.Calls() {
		if c.Name == Save || keeps {
			calls = append(calls, c)
		}
	}
	results, _ := h.runCalls(ctx, owner, calls)
	if !keeps {
		return
	}
	owe := make([]string, len(calls))
	for i, c := range calls {
		owe[i] = s.Owed(c, results[i])
	}
	h.Owed.put(owner, ed.ResponseID(), owe)
}

// runCalls runs the proxy's calls of one answer for owner, the first
// MaxCallsPerAnswer of them, and returns a result for each (notRun for the
// others: the model's conversation needs one per call) and the memories
// the recalls found.
func (h *Runner) runCalls(ctx context.Context, owner string, calls []inject.ToolCall) (results, recalled []string) {
	results = make([]string, len(calls))
	for i, c := range calls {
		if i >= MaxCallsPerAnswer {
			results[i] = notRun
			continue
		}
		var texts []string
		results[i], texts = h.runTool(ctx, owner, c)
		recalled = append(recalled, texts...)
	}
	return results, recalled
}

// runTool runs one call of the proxy's tools for owner and returns its
// result, as the model reads it (JSON; an error is a result too, never a
// failed request), and the memories it recalled.
func (h *Runner) runTool(ctx context.Context, owner string, c inject.ToolCall) (string, []string) {
	fail := func(err error) (string, []string) {
		b, _ := json.Marshal(map[string]string{"error": err.Error()})
		return string(b), nil
	}
	var args struct {
		Content, Category, Query, Scope string
	}
	if c.Arguments != "" {
		if err := json.Unmarshal([]byte(c.Arguments), &args); err != nil {
			return fail(fmt.Errorf("the arguments are not a JSON object: %v", err))
		}
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if h.Called != nil {
		h.Called(c.Name)
	}
	switch c.Name {
	case Save:
		switch args.Category {
		case "", "preference", "fact", "instruction":
		default:
			return fail(fmt.Errorf("category must be preference, fact or instruction, not %q", args.Category))
		}
		m, op, err := h.Engine.SaveMemory(ctx, owner, args.Content, args.Category, store.SourceTool)
		if err != nil {
			return fail(err)
		}
		b, _ := json.Marshal(map[string]any{"saved": true, "id": m.ID, "op": op})
		return string(b), nil
	case Recall:
		found, err := h.Engine.RecallMemory(ctx, owner, args.Query, args.Scope, recallLimit)
		if err != nil {
			return fail(err)
		}
		if found == nil {
			found = []engine.Recollection{}
		}
		texts := make([]string, len(found))
		for i, f := range found {
			texts[i] = f.Content
		}
		b, _ := json.Marshal(map[string]any{"memories": found})
		return string(b), texts
	}
	return fail(fmt.Errorf("no tool %q", c.Name))
}
