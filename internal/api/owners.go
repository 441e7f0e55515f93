package api

import (
	"cmp"
	"net/http"
	"slices"
	"strconv"
	"time"

	"github.com/caddy-memory/memory/internal/engine"
	"github.com/caddy-memory/memory/store"
)

// ownerSummary is one owner of GET /stats/owners.
type ownerSummary struct {
	OwnerID string `json:"owner_id"`
	// Active counts the memories a request can recall; Deleted and Expired
	// the others.
	Active  int            `json:"active"`
	Deleted int            `json:"deleted"`
	Expired int            `json:"expired"`
	ByKind  map[string]int `json:"by_kind"`
	// LastActivity is the latest time one of the owner's memories was
	// created, changed, deleted or injected.
	LastActivity time.Time `json:"last_activity"`
}

const (
	defaultOwners = 100
	maxOwners     = 1000
)

// owners serves GET /stats/owners (admin mode): every owner with their
// counts and last activity, the most recently active first, limit at a
// time. It walks every memory, as GET /stats does: about a second per
// million. With owner (the raw value the proxy sees, e.g. an API key) or
// owner_id, that owner alone, or none when they have no memory: how an
// operator finds the user they know.
func (h *Handler) owners(w http.ResponseWriter, r *http.Request) {
	if h.cfg.Mode == Self {
		h.fail(w, errorf(http.StatusForbidden, "forbidden", "the owners list is for operators: use the admin API"))
		return
	}
	limit, err := intParam(r, "limit", defaultOwners, maxOwners)
	if err != nil {
		h.fail(w, err)
		return
	}
	one, err := h.ownerOf(r, queryOwner(r), false)
	if err != nil {
		h.fail(w, err)
		return
	}
	by := map[string]*ownerSummary{}
	_, _, _, err = h.cfg.Engine.List(engine.ListQuery{Owner: one, Keep: func(m *store.Memory, now time.Time) bool {
		o := by[m.Owner]
		if o == nil {
			o = &ownerSummary{OwnerID: m.Owner, ByKind: map[string]int{}}
			by[m.Owner] = o
		}
		switch {
		case m.DeletedAt != nil:
			o.Deleted++
		case !m.Active(now):
			o.Expired++
		default:
			o.Active++
			o.ByKind[m.Kind]++
		}
		for _, t := range []*time.Time{&m.CreatedAt, &m.UpdatedAt, m.DeletedAt, m.LastUsed} {
			if t != nil && t.After(o.LastActivity) {
				o.LastActivity = *t
			}
		}
		return false // counted, not listed
	}})
	if err != nil {
		h.fail(w, err)
		return
	}
	out := make([]*ownerSummary, 0, len(by))
	for _, o := range by {
		out = append(out, o)
	}
	slices.SortFunc(out, func(a, b *ownerSummary) int {
		return cmp.Or(b.LastActivity.Compare(a.LastActivity), cmp.Compare(a.OwnerID, b.OwnerID))
	})
	total := len(out)
	writeJSON(w, http.StatusOK, map[string]any{"owners": out[:min(limit, total)], "total": total})
}

// activityDay is one day of GET /stats/activity: the memories created that
// day (UTC) that are still kept, by kind.
type activityDay struct {
	Day    string         `json:"day"`
	ByKind map[string]int `json:"by_kind"`
}

const (
	defaultDays = 30
	maxDays     = 366
)

// activity serves GET /stats/activity: memories created per day by kind
// over the last days (default 30), for one owner (self mode: the caller)
// or, in admin mode without one, everyone; and, in admin mode, the proxy's
// chat requests by outcome.
func (h *Handler) activity(w http.ResponseWriter, r *http.Request) {
	owner, err := h.ownerOf(r, queryOwner(r), false)
	if err != nil {
		h.fail(w, err)
		return
	}
	days, err := intParam(r, "days", defaultDays, maxDays)
	if err != nil {
		h.fail(w, err)
		return
	}
	today := time.Now().UTC().Truncate(24 * time.Hour)
	first := today.AddDate(0, 0, 1-days)
	series := make([]activityDay, days)
	for i := range series {
		series[i] = activityDay{Day: first.AddDate(0, 0, i).Format(time.DateOnly), ByKind: map[string]int{}}
	}
	_, _, _, err = h.cfg.Engine.List(engine.ListQuery{Owner: owner, Keep: func(m *store.Memory, _ time.Time) bool {
		if i := int(m.CreatedAt.UTC().Sub(first) / (24 * time.Hour)); !m.CreatedAt.Before(first) && i < days {
			series[i].ByKind[m.Kind]++
		}
		return false
	}})
	if err != nil {
		h.fail(w, err)
		return
	}
	out := map[string]any{"days": series}
	if h.cfg.Mode != Self && h.cfg.Proxy.Outcomes != nil {
		// Process-wide counts: they say nothing about one owner, and a
		// self-mode caller has no business with everyone's traffic.
		out["outcomes"] = h.cfg.Proxy.Outcomes()
	}
	writeJSON(w, http.StatusOK, out)
}

// intParam reads a whole-number query parameter from 1 to max.
func intParam(r *http.Request, name string, def, max int) (int, error) {
	v := r.URL.Query().Get(name)
	if v == "" {
		return def, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 || n > max {
		return 0, badRequest("%s must be 1 to %d, not %q", name, max, v)
	}
	return n, nil
}

// injections serves GET /injections: what the proxy's most recent requests
// of an owner (self mode: the caller; admin mode: owner or owner_id) were
// given, newest first: the outcome, the ids of the memories injected in
// block order, the block's estimated tokens and the search time. Kept in
// memory only, a bounded number per owner, never the question's text.
func (h *Handler) injections(w http.ResponseWriter, r *http.Request) {
	owner, err := h.ownerOf(r, queryOwner(r), true)
	if err != nil {
		h.fail(w, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"injections": h.cfg.Receipts.Recent(owner)})
}
