package api

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/caddy-memory/memory/internal/engine"
	"github.com/caddy-memory/memory/store"
)

// Limits on what the API accepts.
const (
	maxContent   = store.MaxContent
	maxKey       = 256
	maxSession   = 200
	maxMeta      = 32
	defaultLimit = 50
	maxLimit     = 500
)

var kindRE = regexp.MustCompile(`^[a-z][a-z0-9_:-]{0,31}$`)

func checkMemoryFields(kind, content, key, session string, meta map[string]string) error {
	switch {
	case strings.TrimSpace(content) == "":
		return badRequest("content is required")
	case store.CheckContent(content) != nil:
		return badRequest("%v", store.CheckContent(content))
	case kind != "" && !kindRE.MatchString(kind):
		return badRequest("kind %q must be lowercase letters, digits, _ : or -, up to 32 characters", kind)
	case len(key) > maxKey:
		return badRequest("key is longer than %d bytes", maxKey)
	case len(session) > maxSession:
		return badRequest("session is longer than %d bytes", maxSession)
	case len(meta) > maxMeta:
		return badRequest("meta has %d entries; the limit is %d", len(meta), maxMeta)
	}
	return nil
}

// listPage is the answer to GET /memories.
type listPage struct {
	Memories   []*store.Memory `json:"memories"`
	NextCursor string          `json:"next_cursor,omitempty"`
	Stats      store.Counts    `json:"stats"`
	// Skipped counts damaged records passed over (they cannot be read;
	// 'caddy memory salvage' drops them).
	Skipped int `json:"skipped_damaged,omitempty"`
}

// list serves GET /memories: the owner's memories (or, in admin mode
// without an owner, everyone's) filtered by session, kind, time, deletion,
// or full text (q), a page at a time.
func (h *Handler) list(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	owner, err := h.ownerOf(r, queryOwner(r), false)
	if err != nil {
		h.fail(w, err)
		return
	}
	limit := defaultLimit
	if v := q.Get("limit"); v != "" {
		if limit, err = strconv.Atoi(v); err != nil || limit < 1 || limit > maxLimit {
			h.fail(w, badRequest("limit must be 1 to %d, not %q", maxLimit, v))
			return
		}
	}
	includeDeleted, err := boolParam(r, "include_deleted")
	if err != nil {
		h.fail(w, err)
		return
	}
	var since time.Time
	if v := q.Get("since"); v != "" {
		if since, err = parseTime(v); err != nil {
			h.fail(w, badRequest("since: %v", err))
			return
		}
	}
	session, kind, source, reason := q.Get("session"), q.Get("kind"), q.Get("source"), q.Get("delete_reason")
	// exclude_kind leaves kinds out (turn,identity: neither transcripts
	// nor identity facts).
	excluded := map[string]bool{}
	for k := range strings.SplitSeq(q.Get("exclude_kind"), ",") {
		if k = strings.TrimSpace(k); k != "" {
			excluded[k] = true
		}
	}
	f, err := parseFilters(r)
	if err != nil {
		h.fail(w, err)
		return
	}
	if reason != "" {
		includeDeleted = true
	}
	keep := func(m *store.Memory, now time.Time) bool {
		return (includeDeleted || m.Active(now)) && (session == "" || m.Session == session) &&
			(kind == "" || m.Kind == kind) && !excluded[m.Kind] && (source == "" || m.Source == source) && !m.UpdatedAt.Before(since) &&
			(reason == "" || strings.HasPrefix(m.DeleteReason, reason)) && f.keep(m)
	}

	page := listPage{Memories: []*store.Memory{}}
	if text := q.Get("q"); text != "" {
		if owner == "" {
			h.fail(w, badRequest("a full-text search (q) needs an owner"))
			return
		}
		res, err := h.cfg.Engine.Search(r.Context(), engine.SearchRequest{Owner: owner, Query: text, Limit: maxLimit})
		if err != nil {
			h.fail(w, err)
			return
		}
		for _, m := range res {
			if keep(m.Memory, time.Now()) && len(page.Memories) < limit {
				page.Memories = append(page.Memories, m.Memory)
			}
		}
	} else {
		cur, err := parseCursor(q.Get("cursor"))
		if err != nil {
			h.fail(w, err)
			return
		}
		if owner != "" && cur.owner != "" && cur.owner != owner {
			h.fail(w, badRequest("the cursor belongs to another listing"))
			return
		}
		if page.Memories, page.NextCursor, page.Skipped, err = h.scan(owner, cur, limit, keep); err != nil {
			h.fail(w, err)
			return
		}
	}
	if page.Stats, err = h.cfg.Engine.Counts(owner); err != nil {
		h.fail(w, err)
		return
	}
	writeJSON(w, http.StatusOK, page)
}

// filters are the listing's filters on how memories have been used and
// how much they still matter.
type filters struct {
	pinned                 *bool
	minUses                int
	maxSalience            *float64
	usedSince, unusedSince time.Time
}

func parseFilters(r *http.Request) (filters, error) {
	q := r.URL.Query()
	var f filters
	if v := q.Get("pinned"); v != "" {
		b, err := boolParam(r, "pinned")
		if err != nil {
			return f, err
		}
		f.pinned = &b
	}
	if v := q.Get("min_uses"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			return f, badRequest("min_uses must be a whole number, not %q", v)
		}
		f.minUses = n
	}
	if v := q.Get("max_salience"); v != "" {
		s, err := strconv.ParseFloat(v, 64)
		if err != nil || s < 0 || s > 1 {
			return f, badRequest("max_salience must be a number from 0 to 1, not %q", v)
		}
		f.maxSalience = &s
	}
	for name, t := range map[string]*time.Time{"used_since": &f.usedSince, "unused_since": &f.unusedSince} {
		if v := q.Get(name); v != "" {
			var err error
			if *t, err = parseTime(v); err != nil {
				return f, badRequest("%s: %v", name, err)
			}
		}
	}
	return f, nil
}

func (f filters) keep(m *store.Memory) bool {
	switch {
	case f.pinned != nil && m.Pinned != *f.pinned,
		m.Uses < f.minUses,
		f.maxSalience != nil && m.Salience > *f.maxSalience,
		!f.usedSince.IsZero() && (m.LastUsed == nil || m.LastUsed.Before(f.usedSince)),
		!f.unusedSince.IsZero() && m.LastUsed != nil && !m.LastUsed.Before(f.unusedSince):
		return false
	}
	return true
}

// cursor is where a listing continues: after memory id of owner.
type cursor struct {
	owner string
	after uint64
}

func parseCursor(s string) (cursor, error) {
	if s == "" {
		return cursor{}, nil
	}
	raw, err := base64.RawURLEncoding.DecodeString(s)
	owner, id, ok := strings.Cut(string(raw), ":")
	after, perr := strconv.ParseUint(id, 10, 64)
	if err != nil || !ok || perr != nil || !validOwnerID(owner) {
		return cursor{}, badRequest("cursor %q is not one this API returned", s)
	}
	return cursor{owner: owner, after: after}, nil
}

func (c cursor) String() string {
	return base64.RawURLEncoding.EncodeToString([]byte(c.owner + ":" + strconv.FormatUint(c.after, 10)))
}

// scan lists memories in (owner, id) order after cur, limit at a time.
// skipped counts the damaged records passed over.
func (h *Handler) scan(owner string, cur cursor, limit int, keep func(*store.Memory, time.Time) bool) (page []*store.Memory, next string, skipped int, err error) {
	page, more, skipped, err := h.cfg.Engine.List(engine.ListQuery{Owner: owner, After: engine.Cursor{Owner: cur.owner, ID: cur.after}, Limit: limit, Keep: keep})
	if more {
		last := page[len(page)-1]
		next = cursor{owner: last.Owner, after: last.ID}.String()
	}
	return page, next, skipped, err
}

// newMemory is the body of POST /memories.
type newMemory struct {
	ownerRef
	Session   string            `json:"session"`
	Kind      string            `json:"kind"`
	Content   string            `json:"content"`
	Key       string            `json:"key"`
	Ref       string            `json:"ref"`
	Meta      map[string]string `json:"meta"`
	ExpiresAt *time.Time        `json:"expires_at"`
	// Pinned memories are never merged away, evicted or pruned.
	Pinned bool `json:"pinned"`
}

// create serves POST /memories: an upsert by key, as the extractor does.
func (h *Handler) create(w http.ResponseWriter, r *http.Request) {
	var in newMemory
	if err := h.decode(w, r, &in); err != nil {
		h.fail(w, err)
		return
	}
	owner, err := h.ownerOf(r, in.ownerRef, true)
	if err == nil {
		err = checkMemoryFields(in.Kind, in.Content, in.Key, in.Session, in.Meta)
	}
	if err != nil {
		h.fail(w, err)
		return
	}
	res, err := h.cfg.Engine.Remember(r.Context(), engine.OwnedPut{Owner: owner, Put: store.Put{Session: in.Session, Kind: in.Kind, Key: in.Key,
		Content: in.Content, Ref: in.Ref, Meta: in.Meta, ExpiresAt: in.ExpiresAt, Source: store.SourceAPI, Pinned: in.Pinned}})
	if err != nil {
		h.fail(w, err)
		return
	}
	status := http.StatusOK
	if res[0].Op == store.Created {
		status = http.StatusCreated
	}
	writeJSON(w, status, map[string]any{"memory": res[0].Memory, "op": res[0].Op})
}

// owning finds whose memory id is, for the request: any owner's in admin
// mode, only the caller's in self mode (another owner's id is simply not
// found, as a missing one is).
func (h *Handler) owning(r *http.Request, id uint64) (string, error) {
	if h.cfg.Mode == Self {
		return h.ownerOf(r, ownerRef{}, true)
	}
	owner, err := h.cfg.Engine.OwnerOf(id)
	if errors.Is(err, store.ErrNotFound) {
		return "", notFound("no memory %d", id)
	}
	return owner, err
}

// notFoundAs turns the engine's "no such memory" into the API's 404.
func notFoundAs(err error, id uint64) error {
	if errors.Is(err, store.ErrNotFound) {
		return notFound("no memory %d", id)
	}
	return err
}

func (h *Handler) get(w http.ResponseWriter, r *http.Request) {
	id, err := memoryID(r)
	if err != nil {
		h.fail(w, err)
		return
	}
	owner, err := h.owning(r, id)
	if err != nil {
		h.fail(w, err)
		return
	}
	m, err := h.cfg.Engine.Get(owner, id)
	if err != nil {
		h.fail(w, notFoundAs(err, id))
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"memory": m})
}

// memoryPatch is the body of PATCH /memories/{id}. A field left out is
// unchanged; "expires_at": null clears the expiry.
type memoryPatch struct {
	Content   *string            `json:"content"`
	Kind      *string            `json:"kind"`
	Meta      *map[string]string `json:"meta"`
	ExpiresAt json.RawMessage    `json:"expires_at"`
	Pinned    *bool              `json:"pinned"`
	// Deleted false restores a deleted (or evicted) memory; true deletes
	// it, as DELETE does.
	Deleted *bool `json:"deleted"`
}

func (h *Handler) patch(w http.ResponseWriter, r *http.Request) {
	id, err := memoryID(r)
	if err != nil {
		h.fail(w, err)
		return
	}
	var p memoryPatch
	if err := h.decode(w, r, &p); err != nil {
		h.fail(w, err)
		return
	}
	var expires *time.Time
	clearExpiry := string(p.ExpiresAt) == "null"
	if len(p.ExpiresAt) > 0 && !clearExpiry {
		var t time.Time
		if err := json.Unmarshal(p.ExpiresAt, &t); err != nil {
			h.fail(w, badRequest("expires_at must be an RFC 3339 time or null"))
			return
		}
		expires = &t
	}
	if p.Content == nil && p.Kind == nil && p.Meta == nil && len(p.ExpiresAt) == 0 && p.Pinned == nil && p.Deleted == nil {
		h.fail(w, badRequest("nothing to change: send content, kind, meta, expires_at, pinned or deleted"))
		return
	}
	owner, err := h.owning(r, id)
	if err != nil {
		h.fail(w, err)
		return
	}
	m, err := h.cfg.Engine.Edit(r.Context(), owner, id, func(m *store.Memory) error {
		content, kind, meta := m.Content, m.Kind, m.Meta
		if p.Content != nil {
			content = *p.Content
		}
		if p.Kind != nil {
			kind = *p.Kind
		}
		if p.Meta != nil {
			meta = *p.Meta
		}
		if err := checkMemoryFields(kind, content, m.Key, m.Session, meta); err != nil {
			return err
		}
		if strings.TrimSpace(content) != m.Content {
			// An edit is a new version: the old text stays as history.
			m.History = append(m.History, store.Version{Content: m.Content, Ref: m.Ref, Session: m.Session, At: m.UpdatedAt})
			if len(m.History) > store.MaxHistory {
				m.History = m.History[len(m.History)-store.MaxHistory:]
			}
			m.Content, m.Version = strings.TrimSpace(content), m.Version+1
		}
		now := time.Now().UTC()
		if p.Content != nil || p.Kind != nil || p.Meta != nil {
			m.Kind, m.Meta, m.UpdatedAt = kind, meta, now
		}
		switch {
		case clearExpiry:
			m.ExpiresAt = nil
		case expires != nil:
			e := expires.UTC()
			m.ExpiresAt = &e
		}
		if p.Pinned != nil {
			m.Pinned = *p.Pinned
		}
		switch {
		case p.Deleted == nil:
		case !*p.Deleted:
			m.DeletedAt, m.DeleteReason = nil, ""
		case m.DeletedAt == nil:
			m.DeletedAt = &now
		}
		return nil
	})
	if err != nil {
		h.fail(w, notFoundAs(err, id))
		return
	}
	if p.Deleted != nil && !*p.Deleted {
		// Restored on purpose: as good as used, so it does not fade
		// straight out again.
		h.cfg.Engine.Used(owner, id)
	}
	writeJSON(w, http.StatusOK, map[string]any{"memory": m})
}

// remove serves DELETE /memories/{id}: a soft delete (never recalled, still
// listed with include_deleted and exported), or with purge=true removal of
// the memory and its history for good.
func (h *Handler) remove(w http.ResponseWriter, r *http.Request) {
	id, err := memoryID(r)
	if err != nil {
		h.fail(w, err)
		return
	}
	purge, err := boolParam(r, "purge")
	if err != nil {
		h.fail(w, err)
		return
	}
	owner, err := h.owning(r, id)
	if err == nil {
		err = h.cfg.Engine.Delete(r.Context(), owner, id, purge)
	}
	if err != nil {
		h.fail(w, notFoundAs(err, id))
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"deleted": id, "purged": purge})
}

// searchRequest is the body of POST /search.
type searchRequest struct {
	ownerRef
	Query    string  `json:"query"`
	Session  string  `json:"session"`
	Limit    int     `json:"limit"`
	MinScore float64 `json:"min_score"`
}

// searchResult is one hit of POST /search.
type searchResult struct {
	ID        uint64    `json:"id"`
	Content   string    `json:"content"`
	Kind      string    `json:"kind"`
	Score     float64   `json:"score"`
	Rank      float64   `json:"rank"`
	Ref       string    `json:"ref,omitempty"`
	Session   string    `json:"session,omitempty"`
	CreatedAt time.Time `json:"created_at"`
}

// search serves POST /search: the memories the proxy would recall for a
// query, ranked by the same retrieval code.
func (h *Handler) search(w http.ResponseWriter, r *http.Request) {
	var in searchRequest
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
	case strings.TrimSpace(in.Query) == "":
		h.fail(w, badRequest("query is required"))
		return
	case in.Limit < 0 || in.Limit > maxLimit:
		h.fail(w, badRequest("limit must be 1 to %d", maxLimit))
		return
	case in.Limit == 0:
		in.Limit = 10
	}
	res, err := h.cfg.Engine.Search(r.Context(), engine.SearchRequest{Owner: owner, Session: in.Session,
		OnlySession: in.Session != "", Query: in.Query, Limit: in.Limit, MinScore: in.MinScore})
	if err != nil {
		h.fail(w, err)
		return
	}
	out := make([]searchResult, len(res))
	for i, x := range res {
		m := x.Memory
		out[i] = searchResult{ID: m.ID, Content: m.Content, Kind: m.Kind, Score: x.Score, Rank: x.Rank,
			Ref: m.Ref, Session: m.Session, CreatedAt: m.CreatedAt}
	}
	writeJSON(w, http.StatusOK, map[string]any{"results": out})
}

// parseTime reads RFC 3339 or Unix seconds.
func parseTime(s string) (time.Time, error) {
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t, nil
	}
	if n, err := strconv.ParseInt(s, 10, 64); err == nil {
		return time.Unix(n, 0), nil
	}
	return time.Time{}, errors.New("want an RFC 3339 time (2026-01-02T15:04:05Z) or Unix seconds")
}
