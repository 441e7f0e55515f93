package api

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"go.uber.org/zap"

	"github.com/caddy-memory/memory/extract"
	"github.com/caddy-memory/memory/internal/engine"
	"github.com/caddy-memory/memory/store"
)

const maxTurns = 10_000

// ingestRequest is the body of POST /ingest.
type ingestRequest struct {
	ownerRef
	Session string       `json:"session"`
	Turns   []ingestTurn `json:"turns"`
	// Extract says how the turns are learned from: "rules" (or true, the
	// default) as from proxied traffic, "llm" the rules and then a model's
	// distillation of the session, "none" (or false) not at all: the turns
	// are stored and nothing more.
	Extract extractMode `json:"extract"`
}

// extractMode is the extract field of POST /ingest.
type extractMode string

func (m *extractMode) UnmarshalJSON(b []byte) error {
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	switch v {
	case true, "rules":
		*m = "rules"
	case false, "none":
		*m = "none"
	case "llm":
		*m = "llm"
	default:
		return fmt.Errorf(`extract must be "rules" (or true), "llm" or "none" (or false), not %s`, b)
	}
	return nil
}

type ingestTurn struct {
	Role    string     `json:"role"`
	Content string     `json:"content"`
	Time    *time.Time `json:"time"`
	Ref     string     `json:"ref"`
}

// ingest serves POST /ingest: a transcript bulk-loaded for migration or
// evaluation, answered once it is durable and searchable.
func (h *Handler) ingest(w http.ResponseWriter, r *http.Request) {
	var in ingestRequest
	if err := h.decode(w, r, &in); err != nil {
		h.fail(w, err)
		return
	}
	owner, err := h.ownerOf(r, in.ownerRef, true)
	if err != nil {
		h.fail(w, err)
		return
	}
	switch {
	case len(in.Turns) == 0:
		h.fail(w, badRequest("turns is empty"))
		return
	case len(in.Turns) > maxTurns:
		h.fail(w, badRequest("%d turns; send at most %d per request", len(in.Turns), maxTurns))
		return
	case len(in.Session) > maxSession:
		h.fail(w, badRequest("session is longer than %d bytes", maxSession))
		return
	}
	turns := make([]extract.Said, len(in.Turns))
	for i, t := range in.Turns {
		if strings.TrimSpace(t.Role) == "" || len(t.Role) > 64 {
			h.fail(w, badRequest("turns[%d]: role is required (user, assistant, or a speaker's name up to 64 bytes)", i))
			return
		}
		if len(t.Content) > maxContent {
			h.fail(w, badRequest("turns[%d]: content is %d bytes; the limit is %d", i, len(t.Content), maxContent))
			return
		}
		turns[i] = extract.Said{Role: t.Role, Content: t.Content, Ref: t.Ref}
		if t.Time != nil {
			turns[i].Time = *t.Time
		}
	}
	facts := in.Extract != "none"
	res, err := h.cfg.Engine.Ingest(r.Context(), owner, in.Session, turns, facts, in.Extract == "llm")
	if errors.Is(err, engine.ErrNoLLM) {
		err = badRequest("%v", err)
	}
	if err != nil {
		h.fail(w, err)
		return
	}
	writeJSON(w, http.StatusOK, res)
}

// export serves GET /export: the owner's memories (in admin mode without an
// owner, everyone's) as JSON lines, history included, streamed.
func (h *Handler) export(w http.ResponseWriter, r *http.Request) {
	owner, err := h.ownerOf(r, queryOwner(r), false)
	if err != nil {
		h.fail(w, err)
		return
	}
	w.Header().Set("Content-Type", "application/x-ndjson")
	w.Header().Set("Content-Disposition", `attachment; filename="memories.jsonl"`)
	// How many damaged records were passed over is known only at the end:
	// a trailer says it (curl --raw or any HTTP/1.1 chunked reader sees
	// it), and the log says it too.
	w.Header().Set("Trailer", skippedTrailer)
	out := &sentWriter{w: w}
	bw := bufio.NewWriterSize(out, 64<<10)
	enc := json.NewEncoder(bw)
	enc.SetEscapeHTML(false)
	skipped, err := h.cfg.Engine.Export(owner, func(m *store.Memory) error { return enc.Encode(m) })
	if err == nil {
		err = bw.Flush()
	}
	switch {
	case err == nil:
		w.Header().Set(skippedTrailer, strconv.Itoa(skipped))
	case out.err != nil:
		// The client went away: there is no one left to tell.
		panic(http.ErrAbortHandler)
	case out.sent == 0:
		// Nothing has reached the client: the status can still say it.
		w.Header().Del("Content-Disposition")
		h.fail(w, err)
	default:
		// The status line said 200: only a transfer that fails tells the
		// client (curl's exit status, a reader's error) that the file it
		// holds is not the whole export. net/http (and Caddy above it)
		// abort the response on this panic, without logging a stack.
		h.cfg.Logger.Error("memory export failed midway; the response is aborted",
			zap.Int64("bytes_sent", out.sent), zap.Error(err))
		panic(http.ErrAbortHandler)
	}
}

// skippedTrailer carries an export's count of damaged records passed over.
const skippedTrailer = "X-Memory-Skipped-Damaged"

// sentWriter counts what has been written through to the client, and
// keeps the error of a write that failed.
type sentWriter struct {
	w    io.Writer
	sent int64
	err  error
}

func (s *sentWriter) Write(p []byte) (int, error) {
	n, err := s.w.Write(p)
	s.sent += int64(n)
	if err != nil {
		s.err = err
	}
	return n, err
}

// forget serves DELETE /owners/{owner}: everything of one owner, gone for
// good. {owner} is the raw value the proxy sees (id=true: an owner id); in
// self mode it must be "me".
func (h *Handler) forget(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("owner")
	byID, err := boolParam(r, "id")
	if err != nil {
		h.fail(w, err)
		return
	}
	var ref ownerRef
	switch {
	case h.cfg.Mode == Self && name != "me":
		h.fail(w, errorf(http.StatusForbidden, "forbidden", "you can forget only yourself: DELETE /owners/me"))
		return
	case h.cfg.Mode == Self:
	case byID:
		ref.OwnerID = name
	default:
		ref.Owner = name
	}
	owner, err := h.ownerOf(r, ref, true)
	if err != nil {
		h.fail(w, err)
		return
	}
	f, err := h.forgetOwner(r.Context(), owner)
	if err != nil {
		h.fail(w, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"owner_id": owner, "forgotten": f})
}

// forgetOwner erases owner: their memories and what their recent requests
// were given (receipts name memories, and an owner asked to be forgotten).
// REST and MCP forget through it alike.
func (h *Handler) forgetOwner(ctx context.Context, owner string) (engine.Forgotten, error) {
	h.cfg.Receipts.Forget(owner)
	return h.cfg.Engine.Forget(ctx, owner)
}

// stats serves GET /stats: the whole database (admin) or the caller's
// memories (self).
func (h *Handler) stats(w http.ResponseWriter, r *http.Request) {
	if h.cfg.Mode == Self {
		owner, err := h.ownerOf(r, ownerRef{}, true)
		if err != nil {
			h.fail(w, err)
			return
		}
		c, err := h.cfg.Engine.Counts(owner)
		if err != nil {
			h.fail(w, err)
			return
		}
		writeJSON(w, http.StatusOK, map[string]any{"owner_id": owner, "memories": c})
		return
	}
	st, err := h.cfg.Engine.Stats()
	if err != nil {
		h.fail(w, err)
		return
	}
	writeJSON(w, http.StatusOK, st)
}

// health serves GET /health: a read from the store and a search of the
// index, with their latencies.
func (h *Handler) health(w http.ResponseWriter, r *http.Request) {
	if err := h.damaged(); err != nil {
		writeJSON(w, http.StatusServiceUnavailable, map[string]any{"status": "damaged",
			"error": map[string]string{"code": "damaged", "message": err.Error()}})
		return
	}
	hl, err := h.cfg.Engine.Health(r.Context())
	if err != nil {
		writeError(w, errorf(http.StatusServiceUnavailable, "unhealthy", "%v", err))
		return
	}
	out := map[string]any{
		"status":           "ok",
		"store_latency_ms": float64(hl.StoreLatency) / float64(time.Millisecond),
		"index_latency_ms": float64(hl.IndexLatency) / float64(time.Millisecond),
	}
	if hl.DamagedRecords > 0 {
		// Still serving: each damaged record is passed over alone.
		out["status"], out["damaged_reads"] = "degraded", hl.DamagedRecords
		out["advice"] = "some memory records are damaged and were passed over; run 'caddy memory check' to count them and 'caddy memory salvage' to drop them"
	}
	writeJSON(w, http.StatusOK, out)
}

// consolidate serves POST /consolidate (admin mode): a consolidation pass
// over one owner (owner or owner_id) or every owner, answering its counts;
// with dry_run=true, what it would do, changing nothing.
func (h *Handler) consolidate(w http.ResponseWriter, r *http.Request) {
	if h.cfg.Mode != Admin {
		h.fail(w, errorf(http.StatusForbidden, "forbidden", "consolidation is an operator's task: use the admin API"))
		return
	}
	owner, err := h.ownerOf(r, queryOwner(r), false)
	if err != nil {
		h.fail(w, err)
		return
	}
	dry, err := boolParam(r, "dry_run")
	if err != nil {
		h.fail(w, err)
		return
	}
	res, err := h.cfg.Engine.Consolidate(r.Context(), owner, dry)
	if err != nil {
		h.fail(w, err)
		return
	}
	writeJSON(w, http.StatusOK, res)
}
