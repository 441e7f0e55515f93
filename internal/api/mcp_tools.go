package api

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"go.uber.org/zap"

	"github.com/caddy-memory/memory/internal/engine"
	"github.com/caddy-memory/memory/store"
)

// The MCP tools themselves: whose memories a request's tools act on, and
// what each tool does, as the REST routes beside them do.

// mcpScope is whose memories one request's tools act on: the caller's own
// (self, an owner id) or, in admin mode (self ""), those of the owner each
// call names.
type mcpScope struct {
	h    *Handler
	self string
}

// ownerArgs name the owner of a call, in admin mode only.
type ownerArgs struct {
	Owner   string `json:"owner,omitempty" jsonschema:"the owner, by the value the proxy sees (e.g. the API key); or give owner_id"`
	OwnerID string `json:"owner_id,omitempty" jsonschema:"the owner, by the owner id the API returns (32 hex characters); or give owner"`
}

// owner resolves the owner a call acts on, as Handler.ownerOf does for a
// REST request: in self mode always the caller, and naming anyone is
// refused; in admin mode required says whether an owner must be named.
func (sc mcpScope) owner(a ownerArgs, required bool) (string, error) {
	ref := ownerRef(a)
	if sc.self != "" {
		if ref.given() {
			return "", errorf(http.StatusForbidden, "forbidden", "this server serves only your own memories; call the tool without owner or owner_id")
		}
		return sc.self, nil
	}
	// In admin mode ownerOf reads nothing of the request.
	return sc.h.ownerOf(nil, ref, required)
}

// toolError is what a tool's caller reads of err: the message of a mistake
// it can fix as is; an internal failure logged, and said to be.
func (sc mcpScope) toolError(tool string, err error) error {
	var ae *apiError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &ae), errors.Is(err, engine.ErrBadScope):
		return err
	}
	sc.h.cfg.Logger.Error("memory MCP tool failed", zap.String("tool", tool), zap.Error(err))
	return fmt.Errorf("%s failed on the server (%v); the error is logged there: try again later, or tell the operator if it persists", tool, err)
}

// mcpMemory is a memory as the tools show it: what a model needs to read
// and refer to it, not the whole record (history, usage, digests).
type mcpMemory struct {
	ID uint64 `json:"id"`
	// OwnerID is set in admin mode only.
	OwnerID   string    `json:"owner_id,omitempty"`
	Kind      string    `json:"kind"`
	Key       string    `json:"key,omitempty"`
	Content   string    `json:"content"`
	Session   string    `json:"session,omitempty"`
	Source    string    `json:"source,omitempty"`
	Version   int       `json:"version"`
	CreatedAt time.Time `json:"created_at"`
	UpdatedAt time.Time `json:"updated_at"`
}

func (sc mcpScope) view(m *store.Memory) mcpMemory {
	v := mcpMemory{ID: m.ID, Kind: m.Kind, Key: m.Key, Content: m.Content, Session: m.Session, Source: m.Source,
		Version: m.Version, CreatedAt: m.CreatedAt, UpdatedAt: m.UpdatedAt}
	if sc.self == "" {
		v.OwnerID = m.Owner
	}
	return v
}

// noMemory is the answer for an id the owner has no memory under, whether
// it is missing or another owner's.
func noMemory(err error, id uint64) error {
	if errors.Is(err, store.ErrNotFound) {
		return notFound("no memory %d: search_memory and list_memories give the ids of the memories", id)
	}
	return err
}

type searchArgs struct {
	Query string `json:"query" jsonschema:"what to recall, in words"`
	Limit int    `json:"limit,omitempty" jsonschema:"how many memories at most"`
	Scope string `json:"scope,omitempty" jsonschema:"where to look: facts, episodes (session summaries), transcript (past turns) or all (the default)"`
	ownerArgs
}

type searchOut struct {
	Results []engine.Recollection `json:"results"`
}

func (sc mcpScope) search(ctx context.Context, a searchArgs) (searchOut, error) {
	owner, err := sc.owner(a.ownerArgs, true)
	if err != nil {
		return searchOut{}, err
	}
	if strings.TrimSpace(a.Query) == "" {
		return searchOut{}, badRequest("query is empty: say what to recall")
	}
	// RecallMemory counts what it returns as used, as the proxy's own
	// recall tool does: the model asked for it.
	res, err := sc.h.cfg.Engine.RecallMemory(ctx, owner, a.Query, a.Scope, orDefault(a.Limit, defaultRecall))
	if err != nil {
		return searchOut{}, err
	}
	return searchOut{Results: res}, nil
}

// orDefault is n, or def for an argument left out.
func orDefault(n, def int) int {
	if n == 0 {
		return def
	}
	return n
}

type addArgs struct {
	Content string `json:"content" jsonschema:"the memory: one standalone sentence"`
	Kind    string `json:"kind,omitempty" jsonschema:"what it is: preference, decision, identity, habit, plan, note (the default) or another lowercase word"`
	Key     string `json:"key,omitempty" jsonschema:"a stable name for a fact that changes (home_city); a new content under the same key replaces the old"`
	ownerArgs
}

type addOut struct {
	Memory mcpMemory `json:"memory"`
	// Op is created, updated (the same again) or superseded (a new content
	// under the key).
	Op store.Op `json:"op"`
}

func (sc mcpScope) add(ctx context.Context, a addArgs) (addOut, error) {
	owner, err := sc.owner(a.ownerArgs, true)
	if err != nil {
		return addOut{}, err
	}
	content := strings.TrimSpace(a.Content)
	if err := checkMemoryFields(a.Kind, content, a.Key, "", nil); err != nil {
		return addOut{}, err
	}
	if a.Key == "" {
		m, op, err := sc.h.cfg.Engine.SaveMemory(ctx, owner, content, a.Kind, store.SourceTool)
		if err != nil {
			return addOut{}, err
		}
		return addOut{Memory: sc.view(m), Op: op}, nil
	}
	kind := a.Kind
	if kind == "" {
		kind = "note" // as SaveMemory does
	}
	res, err := sc.h.cfg.Engine.Remember(ctx, engine.OwnedPut{Owner: owner,
		Put: store.Put{Kind: kind, Key: a.Key, Content: content, Source: store.SourceTool}})
	if err != nil {
		return addOut{}, err
	}
	return addOut{Memory: sc.view(res[0].Memory), Op: res[0].Op}, nil
}

type listArgs struct {
	Limit  int    `json:"limit,omitempty" jsonschema:"how many memories at most"`
	Cursor string `json:"cursor,omitempty" jsonschema:"next_cursor of the previous page"`
	Kind   string `json:"kind,omitempty" jsonschema:"only memories of this kind (preference, note, episode, turn, ...)"`
	ownerArgs
}

type listOut struct {
	Memories   []mcpMemory `json:"memories"`
	NextCursor string      `json:"next_cursor,omitempty"`
}

// list lists live memories (not deleted, not expired), as GET /memories
// does by default; in admin mode without an owner, every owner's.
func (sc mcpScope) list(_ context.Context, a listArgs) (listOut, error) {
	owner, err := sc.owner(a.ownerArgs, false)
	if err != nil {
		return listOut{}, err
	}
	cur, err := parseCursor(a.Cursor)
	if err != nil {
		return listOut{}, err
	}
	if owner != "" && cur.owner != "" && cur.owner != owner {
		return listOut{}, badRequest("the cursor belongs to another listing: pass the next_cursor this tool returned, or none")
	}
	page, next, _, err := sc.h.scan(owner, cur, orDefault(a.Limit, defaultPage), func(m *store.Memory, now time.Time) bool {
		return m.Active(now) && (a.Kind == "" || m.Kind == a.Kind)
	})
	if err != nil {
		return listOut{}, err
	}
	out := listOut{Memories: make([]mcpMemory, len(page)), NextCursor: next}
	for i, m := range page {
		out.Memories[i] = sc.view(m)
	}
	return out, nil
}

type updateArgs struct {
	ID      uint64 `json:"id" jsonschema:"the memory's id"`
	Content string `json:"content" jsonschema:"the new text: one standalone sentence"`
	ownerArgs
}

type memoryOut struct {
	Memory mcpMemory `json:"memory"`
}

// update gives a memory a new text, as PATCH /memories/{id} does: a new
// version, the old text kept as history.
func (sc mcpScope) update(ctx context.Context, a updateArgs) (memoryOut, error) {
	owner, err := sc.owning(a.ownerArgs, a.ID)
	if err != nil {
		return memoryOut{}, noMemory(err, a.ID)
	}
	content := strings.TrimSpace(a.Content)
	m, err := sc.h.cfg.Engine.Edit(ctx, owner, a.ID, func(m *store.Memory) error {
		if m.DeletedAt != nil {
			return badRequest("memory %d is deleted; save it again with add_memory", a.ID)
		}
		if err := checkMemoryFields(m.Kind, content, m.Key, m.Session, m.Meta); err != nil {
			return err
		}
		if content != m.Content {
			m.History = append(m.History, store.Version{Content: m.Content, Ref: m.Ref, Session: m.Session, At: m.UpdatedAt})
			if len(m.History) > store.MaxHistory {
				m.History = m.History[len(m.History)-store.MaxHistory:]
			}
			m.Content, m.Version = content, m.Version+1
		}
		m.UpdatedAt = time.Now().UTC()
		return nil
	})
	if err != nil {
		return memoryOut{}, noMemory(err, a.ID)
	}
	return memoryOut{Memory: sc.view(m)}, nil
}

type deleteArgs struct {
	ID uint64 `json:"id" jsonschema:"the memory's id"`
	ownerArgs
}

type deleteOut struct {
	Deleted uint64 `json:"deleted"`
}

// remove soft-deletes a memory, as DELETE /memories/{id} does: never
// recalled again, still there for an operator to restore.
func (sc mcpScope) remove(ctx context.Context, a deleteArgs) (deleteOut, error) {
	owner, err := sc.owning(a.ownerArgs, a.ID)
	if err == nil {
		err = sc.h.cfg.Engine.Delete(ctx, owner, a.ID, false)
	}
	if err != nil {
		return deleteOut{}, noMemory(err, a.ID)
	}
	return deleteOut{Deleted: a.ID}, nil
}

// owning is whose memory id is for a call: the caller's in self mode (so
// another owner's id is not found, as a missing one is); in admin mode the
// named owner's, or whoever has it.
func (sc mcpScope) owning(a ownerArgs, id uint64) (string, error) {
	owner, err := sc.owner(a, false)
	if err != nil || owner != "" {
		return owner, err
	}
	return sc.h.cfg.Engine.OwnerOf(id)
}

type forgetArgs struct {
	ownerArgs
}

type forgetOut struct {
	OwnerID   string           `json:"owner_id"`
	Forgotten engine.Forgotten `json:"forgotten"`
}

// forget removes an owner completely, as DELETE /owners/{owner} does.
func (sc mcpScope) forget(ctx context.Context, a forgetArgs) (forgetOut, error) {
	owner, err := sc.owner(a.ownerArgs, true)
	if err != nil {
		return forgetOut{}, err
	}
	f, err := sc.h.forgetOwner(ctx, owner)
	return forgetOut{OwnerID: owner, Forgotten: f}, err
}
