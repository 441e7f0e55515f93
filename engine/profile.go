package engine

import (
	"cmp"
	"container/list"
	"maps"
	"math/bits"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/caddy-memory/memory/extract"
	"github.com/caddy-memory/memory/inject"
	"github.com/caddy-memory/memory/internal/norm"
	"github.com/caddy-memory/memory/store"
)

// The profile is what describes an owner and constrains what helps them:
// who they are, the people in their life, work and home, health and diet,
// standing preferences and instructions. It rides with every request the
// gate lets search, first in the block, current values only, so a question
// that never names the allergy still meets it. It is read on every request,
// so it is cached per owner and rebuilt only when one of the owner's facts
// changes (store.Tx.FactsRevision): turns, most of what is written, leave
// it as it is.

// Defaults and bounds of the profile.
const (
	DefaultProfileTokens = 200
	// maxProfiles is how many owners' profiles are cached.
	maxProfiles = 4096
	// maxStanding bounds the facts a profile orders (the first in the
	// order they ride), so an owner with thousands of facts costs what one
	// with a few hundred does.
	maxStanding = 512
	// profileCatchUp is the most changes (of all owners) read to bring a
	// large owner's profile up to date; further behind, it is read again.
	profileCatchUp = 20_000
)

// Priorities of standing facts, in the order they ride: what would harm
// the user if missed first, so the budget cuts a preference before it cuts
// an allergy.
const (
	prioConstraint = iota // health, diet
	prioIdentity          // name, home, work, study, family
	prioAgainst           // instructions, what the user avoids or refuses
	prioPreference        // other standing preferences, habits, possessions
	prioLiking            // what the user likes or is interested in
)

// standingKinds are the kinds of memories the profile holds.
var standingKinds = map[string]bool{"health": true, "identity": true, "family": true, "relationship": true,
	"work": true, "instruction": true, "preference": true, "habit": true, "possession": true}

// standing reports whether a memory of kind belongs in the profile, and
// with which priority.
func standing(kind, key, content string) (int, bool) {
	switch kind {
	case "health":
		// What the user no longer has is no constraint: it only
		// replaces one.
		if extract.Retracts(content) {
			return prioPreference, true
		}
		return prioConstraint, true
	case "identity":
		if key == "identity:diet" {
			if extract.Retracts(content) {
				return prioPreference, true
			}
			return prioConstraint, true
		}
		return prioIdentity, true
	case "family", "relationship", "work":
		return prioIdentity, true
	case "instruction":
		return prioAgainst, true
	case "preference", "habit":
		switch {
		case extract.Against(content):
			return prioAgainst, true
		case extract.Liking(content):
			return prioLiking, true
		}
		return prioPreference, true
	case "possession":
		return prioPreference, true
	}
	return 0, false
}

// profile is one owner's standing facts.
type profile struct {
	rev uint64 // the owner's FactsRevision it was read at
	seq uint64 // the change log position it is up to date with
	// keys are the owner's active standing facts, by what orders them;
	// facts, the first maxStanding of them in the order they ride, one of
	// each text, read whole. A large owner's profile holds thousands of
	// facts, and only a few hundred ride.
	keys  map[uint64]standingKey
	facts []*store.Memory
	prio  []int
	// dom are the domains of everyday life each fact falls in (see
	// index.Domains): a fact the budget left out still reaches a question
	// of its domain.
	dom []uint32
	// shown and hash are each fact as the block measures it and its
	// normal form's hash, made once: a profile rides with every request.
	shown []inject.Standing
	hash  []uint64
	// changed are the facts whose value changed, with what they said
	// before (see contradicted).
	changed []*store.Memory
}

// profileCache holds the profiles of recently seen owners.
type profileCache struct {
	mu     sync.Mutex
	owners map[string]*list.Element // of *profile, keyed below
	lru    list.List
}

type cachedProfile struct {
	owner string
	p     *profile
}

func (c *profileCache) get(owner string) *profile {
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.owners[owner]; ok {
		c.lru.MoveToBack(el)
		return el.Value.(*cachedProfile).p
	}
	return nil
}

func (c *profileCache) put(owner string, p *profile) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.owners == nil {
		c.owners = map[string]*list.Element{}
	}
	if el, ok := c.owners[owner]; ok {
		el.Value.(*cachedProfile).p = p
		c.lru.MoveToBack(el)
		return
	}
	c.owners[owner] = c.lru.PushBack(&cachedProfile{owner, p})
	for len(c.owners) > maxProfiles {
		el := c.lru.Front()
		c.lru.Remove(el)
		delete(c.owners, el.Value.(*cachedProfile).owner)
	}
}

// profileIn returns owner's profile as of tx, from the cache when none of
// the owner's facts changed since it was read.
func (sr *searcher) profileIn(tx *store.Tx, owner string) (*profile, error) {
	rev := tx.FactsRevision(owner)
	old := sr.profiles.get(owner)
	if old != nil && old.rev == rev {
		return old, nil
	}
	p, err := sr.readProfile(tx, owner, old)
	if err != nil {
		return nil, err
	}
	p.rev = rev
	p.dom = make([]uint32, len(p.facts))
	p.shown, p.hash = make([]inject.Standing, len(p.facts)), make([]uint64, len(p.facts))
	for i, m := range p.facts {
		p.dom[i] = sr.index.Domains(m.Content)
		p.shown[i] = inject.StandingOf(m.Content, p.prio[i])
		p.hash[i] = norm.Hash(m.Content)
	}
	sr.profiles.put(owner, p)
	return p, nil
}

// standingKey is what orders a standing fact (see order), and whether its
// value changed.
type standingKey struct {
	prio, importance, mentions int
	updated                    int64
	hash                       uint64 // of its text: one of each rides
	changed                    bool
}

func keyOf(m *store.Memory) standingKey {
	prio, _ := standing(m.Kind, m.Key, m.Content)
	return standingKey{prio: prio, importance: m.Importance, mentions: m.Mentions, updated: m.UpdatedAt.UnixNano(),
		hash: norm.Hash(m.Content), changed: len(m.History) > 0}
}

// readProfile reads owner's standing facts: every record of a small owner,
// or, for a large one already read, only what changed since.
func (sr *searcher) readProfile(tx *store.Tx, owner string, old *profile) (*profile, error) {
	now := tx.Now()
	p := &profile{seq: tx.LastSeq(), keys: map[uint64]standingKey{}}
	// read holds the memories this read decoded; the others come from old,
	// unchanged, or are read as needed.
	read := map[uint64]*store.Memory{}
	big, err := sr.outgrown(tx, owner)
	if err != nil {
		return nil, err
	}
	if big && old != nil {
		if changes, oldest := tx.Changes(old.seq, profileCatchUp); (oldest == 0 || oldest <= old.seq+1) && len(changes) < profileCatchUp {
			p.keys = maps.Clone(old.keys)
			changed := map[uint64]bool{}
			for _, c := range changes {
				if c.Owner != owner {
					continue
				}
				changed[c.ID] = true
				delete(p.keys, c.ID)
				m, err := tx.Get(owner, c.ID)
				if err == nil && m.Active(now) && standingKinds[m.Kind] {
					p.keys[m.ID], read[m.ID] = keyOf(m), m
				}
			}
			for _, m := range slices.Concat(old.facts, old.changed) {
				if !changed[m.ID] {
					read[m.ID] = m
				}
			}
			return p, p.order(tx, owner, read)
		}
	}
	err = tx.PeekAll(owner, func(pk *store.Peek) error {
		if !pk.Active(now) {
			return nil
		}
		b, err := pk.Brief()
		if err != nil || !standingKinds[b.Kind] {
			return err
		}
		m, err := pk.Memory()
		if err == nil {
			p.keys[m.ID], read[m.ID] = keyOf(m), m
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	return p, p.order(tx, owner, read)
}

// order puts the standing facts in the order they ride, by priority, then
// importance, mentions and recency, one of each text, and reads the first
// maxStanding of them, and those whose value changed, whole (from read, or
// from tx).
func (p *profile) order(tx *store.Tx, owner string, read map[uint64]*store.Memory) error {
	type ranked struct {
		id uint64
		k  standingKey
	}
	all := make([]ranked, 0, len(p.keys))
	for id, k := range p.keys {
		all = append(all, ranked{id, k})
	}
	slices.SortFunc(all, func(a, b ranked) int {
		return cmp.Or(cmp.Compare(a.k.prio, b.k.prio), cmp.Compare(b.k.importance, a.k.importance),
			cmp.Compare(b.k.mentions, a.k.mentions), cmp.Compare(b.k.updated, a.k.updated), cmp.Compare(a.id, b.id))
	})
	get := func(id uint64) (*store.Memory, error) {
		if m := read[id]; m != nil {
			return m, nil
		}
		return tx.Get(owner, id)
	}
	seen := map[uint64]bool{}
	for _, r := range all {
		if r.k.changed {
			m, err := get(r.id)
			if err != nil {
				return err
			}
			p.changed = append(p.changed, m)
		}
		if seen[r.k.hash] || len(p.facts) == maxStanding {
			continue
		}
		seen[r.k.hash] = true
		m, err := get(r.id)
		if err != nil {
			return err
		}
		p.facts, p.prio = append(p.facts, m), append(p.prio, r.k.prio)
	}
	return nil
}

// maxKnownProfile is how many of the profile's facts a distillation call
// is shown, first among what the owner already remembers.
const maxKnownProfile = 8

// profileKnown is the head of owner's profile, as a distillation call
// shows what is known.
func (sr *searcher) profileKnown(owner string) ([]extract.Known, error) {
	var known []extract.Known
	err := sr.store.View(func(tx *store.Tx) error {
		p, err := sr.profileIn(tx, owner)
		if err != nil {
			return err
		}
		for _, m := range p.facts[:min(maxKnownProfile, len(p.facts))] {
			known = append(known, extract.Known{Key: m.Key, Kind: m.Kind, Content: m.Content})
		}
		return nil
	})
	return known, err
}

// maxBridged is the most facts the budget left out that a question's
// domains bring back.
const maxBridged = 2

// bridged are the profile facts, of those not shown (shown), that fall
// in the question's domains (qdom), most domains shared first, then in
// the profile's order.
func (p *profile) bridged(qdom uint32, shown map[uint64]bool, skip func(*store.Memory) bool) []int {
	if p == nil || qdom == 0 {
		return nil
	}
	var out []int
	for want := bits.OnesCount32(qdom); want > 0 && len(out) < maxBridged; want-- {
		for i, m := range p.facts {
			if len(out) == maxBridged {
				break
			}
			if !shown[m.ID] && !skip(m) && bits.OnesCount32(p.dom[i]&qdom) == want {
				out = append(out, i)
			}
		}
	}
	return out
}

// contradicted reports whether a transcript turn says what a fact of the
// profile said before it changed ("User: I live in Lisbon" once the user
// moved to Porto): it is not injected as current.
func (p *profile) contradicted(m *store.Memory) bool {
	if p == nil || m.Kind != "turn" || len(p.changed) == 0 {
		return false
	}
	user := userSaid(m.Content)
	if user == "" {
		return false
	}
	var facts []extract.Fact
	read := false
	for _, f := range p.changed {
		if !m.UpdatedAt.Before(since(f)) || !mentionsEarlier(user, f) {
			continue
		}
		if !read {
			facts, read = extract.Facts(user), true
		}
		for _, said := range facts {
			if said.Key == f.Key && !norm.Same(said.Content, f.Content) {
				return true
			}
		}
	}
	return false
}

// mentionsEarlier is a cheap first look: does text share a word with what
// fact f said before it changed that it no longer says?
func mentionsEarlier(text string, f *store.Memory) bool {
	now := wordSet(f.Content)
	have := wordSet(text)
	for _, v := range f.History {
		for w := range wordSet(v.Content) {
			if !now[w] && have[w] {
				return true
			}
		}
	}
	return false
}

func wordSet(s string) map[string]bool {
	out := map[string]bool{}
	for _, w := range strings.Fields(norm.Normalize(s)) {
		if len(w) > 2 && w != "user" && w != "the" {
			out[w] = true
		}
	}
	return out
}

// saysAll reports whether facts, learned from transcript turn m, hold
// nearly every word the user said in it: the turn adds nothing to them.
func saysAll(facts []string, m *store.Memory) bool {
	if len(facts) == 0 || m.Kind != "turn" {
		return false
	}
	said := wordSet(userSaid(m.Content))
	if len(said) == 0 {
		return false
	}
	known := wordSet(strings.Join(facts, " "))
	missing := 0
	for w := range said {
		if !known[w] && !known[strings.TrimSuffix(w, "s")] && !known[w+"s"] {
			missing++
		}
	}
	return missing*5 <= len(said) // at most a fifth of its words
}

// since is when a profile fact took its current value (zero if it never
// changed).
func since(m *store.Memory) time.Time {
	if n := len(m.History); n > 0 {
		return m.History[n-1].Until
	}
	return time.Time{}
}
