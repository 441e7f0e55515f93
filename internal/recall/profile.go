package recall

import (
	"cmp"
	"maps"
	"math"
	"math/bits"
	"slices"
	"strings"

	"github.com/caddy-memory/memory/extract"
	"github.com/caddy-memory/memory/index"
	"github.com/caddy-memory/memory/internal/block"
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
	// profileCacheBytes bounds the cached profiles: a few kilobytes a
	// small owner's, so tens of thousands of owners'; a miss reads every
	// record of a small owner.
	profileCacheBytes = 48 << 20
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
	prioNote              // what the user said of themselves that no rule read (extract/notes.go)
)

// standingKinds are the kinds of memories the profile holds.
var standingKinds = map[string]bool{"health": true, "identity": true, "family": true, "relationship": true,
	"work": true, "instruction": true, "preference": true, "habit": true, "possession": true, "said": true}

// standing reports whether a memory of kind belongs in the profile, and
// with which priority.
func standing(kind, key, content string) (int, bool) {
	switch kind {
	case "health":
		// What the user no longer has is no constraint: it only
		// replaces one, and rides with no request (a question that names
		// it still finds it).
		if extract.Retracts(content) {
			return 0, false
		}
		return prioConstraint, true
	case "identity":
		if key == "identity:diet" || strings.HasPrefix(key, "identity:diet:") {
			if extract.Retracts(content) {
				return 0, false
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
	case "said":
		return prioNote, true
	}
	return 0, false
}

// profile is one owner's standing facts.
type profile struct {
	rev uint64 // the owner's FactsRevision it was read at
	seq uint64 // the change log position it is up to date with
	// keys are a large owner's active standing facts, by what orders them
	// (nil for a small owner, read whole when one of its facts changes):
	// a large owner's profile holds thousands of facts, and only a few
	// hundred ride.
	keys map[uint64]standingKey
	// facts are the first maxStanding standing facts in the order they
	// ride, one of each text.
	facts []fact
	// changed are the facts whose value changed, with what they said
	// before (see contradicted), and gone the words each said before and
	// no longer says.
	changed []*store.Memory
	gone    [][]string
	ends    []bool // changed[i] says what the user no longer does, has or is with
	// stale are the notes of what the user said that a later fact made
	// stale (staleNote): left out of the profile, and of a search's finds.
	stale map[uint64]bool
	// old are the words each changed fact said before and no longer says
	// (oldWords), oldOfTurn the same to a note of the turn that changed
	// it: read once a profile, for every note.
	old, oldOfTurn [][]string
	// staleTurns are the turns those notes were said in: their
	// transcripts say the old value too.
	staleTurns map[uint32]bool // by index.TurnHash
	size       int             // bytes, about
}

// profileIn returns owner's profile as of tx, from the cache when none of
// the owner's facts changed since it was read.
func (s *Searcher) profileIn(tx *store.Tx, owner string) (*profile, error) {
	rev := tx.FactsRevision(owner)
	old := s.profiles.Get(owner)
	if old != nil && old.rev == rev {
		return old, nil
	}
	p, err := s.readProfile(tx, owner, old)
	if err != nil {
		return nil, err
	}
	p.rev = rev
	p.gone = make([][]string, len(p.changed))
	p.ends = make([]bool, len(p.changed))
	p.old, p.oldOfTurn = make([][]string, len(p.changed)), make([][]string, len(p.changed))
	for i, m := range p.changed {
		p.ends[i] = extract.Ends(m.Content)
		p.gone[i] = goneWords(m, p.ends[i])
		p.old[i], p.oldOfTurn[i] = oldWords(m, false), oldWords(m, true)
	}
	p.stale, p.staleTurns = map[uint64]bool{}, map[uint32]bool{}
	p.facts = slices.DeleteFunc(p.facts, func(f fact) bool {
		if p.staleNote(f) {
			p.stale[f.id] = true
			if f.turn != "" {
				p.staleTurns[index.TurnHash(f.turn)] = true
			}
			return true
		}
		return false
	})
	p.size = p.bytes()
	s.profiles.Put(owner, p)
	return p, nil
}

// profileOf returns owner's profile (see profileIn).
func (s *Searcher) profileOf(owner string) (*profile, error) {
	var p *profile
	err := s.cfg.Store.View(func(tx *store.Tx) error {
		var err error
		p, err = s.profileIn(tx, owner)
		return err
	})
	return p, err
}

// HoldsProfile reports whether owner's profile is held in memory: once
// read, it is read again only when one of the owner's facts changes.
func (s *Searcher) HoldsProfile(owner string) bool { return s.profiles.Get(owner) != nil }

// WarmProfile reads the profile of an owner of memories memories, when
// it is large, into the cache, as the postings are built: a large owner's
// first profile reads every one of its records (tens of milliseconds at
// tens of thousands), which its first request after a start would wait
// for. A small owner's costs a fraction of a millisecond, and is read when
// it is asked for.
func (s *Searcher) WarmProfile(tx *store.Tx, owner string, memories int) error {
	if memories <= s.cfg.LocalSearchMax() || s.profiles.Get(owner) != nil {
		return nil
	}
	_, err := s.profileIn(tx, owner)
	return err
}

// standingKey is what orders a standing fact (see order), and whether its
// value changed.
type standingKey struct {
	prio, importance, mentions int
	updated                    int64
	hash                       uint64 // of its text: one of each rides
	changed                    bool
	// retracts: what the user no longer has or is; it rides with no
	// request, but says what a transcript that states the old value is.
	retracts bool
}

func keyOf(m *store.Memory) standingKey {
	prio, ok := standing(m.Kind, m.Key, m.Content)
	return standingKey{prio: prio, importance: m.Importance, mentions: m.Mentions, updated: m.UpdatedAt.UnixNano(),
		hash: norm.Hash(m.Content), changed: len(m.History) > 0 || extract.Ends(m.Content), retracts: !ok}
}

// readProfile reads owner's standing facts: every record of a small owner,
// or, for a large one already read, only what changed since.
func (s *Searcher) readProfile(tx *store.Tx, owner string, old *profile) (*profile, error) {
	now := tx.Now()
	p := &profile{seq: tx.LastSeq(), keys: map[uint64]standingKey{}}
	// What this read already has: memories decoded now or kept whole by
	// old, facts kept from old, unchanged; the others are read as needed.
	r := profileRead{whole: map[uint64]*store.Memory{}, kept: map[uint64]fact{}}
	keep := func(m *store.Memory) {
		p.keys[m.ID], r.whole[m.ID] = keyOf(m), m
	}
	big, err := s.outgrown(tx, owner)
	if err != nil {
		return nil, err
	}
	if big && old != nil && old.keys != nil {
		if changes, oldest := tx.Changes(old.seq, profileCatchUp); (oldest == 0 || oldest <= old.seq+1) && len(changes) < profileCatchUp {
			p.keys = maps.Clone(old.keys)
			touched := map[uint64]bool{}
			for _, c := range changes {
				if c.Owner != owner {
					continue
				}
				touched[c.ID] = true
				delete(p.keys, c.ID)
				m, err := tx.Get(owner, c.ID)
				if err == nil && m.Active(now) && standingKinds[m.Kind] {
					keep(m)
				}
			}
			for _, f := range old.facts {
				if !touched[f.id] {
					r.kept[f.id] = f
				}
			}
			for _, m := range old.changed {
				if !touched[m.ID] {
					r.whole[m.ID] = m
				}
			}
			return p, s.order(p, tx, owner, &r, big)
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
			keep(m)
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	return p, s.order(p, tx, owner, &r, big)
}

// profileRead is what a profile's read already has: whole memories (those
// it decoded, and the changed facts the profile before kept), and the
// facts the profile before kept.
type profileRead struct {
	whole map[uint64]*store.Memory
	kept  map[uint64]fact
}

// memory is memory id of owner: at hand already, or read from tx.
func (r *profileRead) memory(tx *store.Tx, owner string, id uint64) (*store.Memory, error) {
	if m := r.whole[id]; m != nil {
		return m, nil
	}
	return tx.Get(owner, id)
}

// order puts the standing facts in the order they ride, by priority, then
// importance, mentions and recency, one of each text, and keeps the first
// maxStanding of them, and those whose value changed whole. A large
// owner's profile keeps every fact's key, to be brought up to date from
// the change log.
func (s *Searcher) order(p *profile, tx *store.Tx, owner string, r *profileRead, big bool) error {
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
	seen := map[uint64]bool{}
	for _, a := range all {
		if a.k.changed {
			m, err := r.memory(tx, owner, a.id)
			if err != nil {
				return err
			}
			p.changed = append(p.changed, m)
		}
		if seen[a.k.hash] || len(p.facts) == maxStanding || a.k.retracts {
			continue // a retraction only says a transcript is stale (above)
		}
		seen[a.k.hash] = true
		f, ok := r.kept[a.id]
		if !ok {
			m, err := r.memory(tx, owner, a.id)
			if err != nil {
				return err
			}
			f = s.factOf(m, a.k)
		}
		p.facts = append(p.facts, f)
	}
	if !big {
		p.keys = nil
	}
	return nil
}

// maxKnownProfile is how many of the profile's facts a distillation call
// is shown, first among what the owner already remembers.
const maxKnownProfile = 8

// ProfileKnown is the head of owner's profile, as a distillation call
// shows what is known.
func (s *Searcher) ProfileKnown(owner string) ([]extract.Known, error) {
	var known []extract.Known
	err := s.cfg.Store.View(func(tx *store.Tx) error {
		p, err := s.profileIn(tx, owner)
		if err != nil {
			return err
		}
		for _, f := range p.facts[:min(maxKnownProfile, len(p.facts))] {
			known = append(known, extract.Known{Key: f.key, Kind: f.kind, Content: f.content()})
		}
		return nil
	})
	return known, err
}

// ProfileFact is one of an owner's standing facts, as the proxy orders
// them (see Profile).
type ProfileFact struct {
	// Memory is the fact whole: its history holds what it replaced.
	Memory *store.Memory
	// Rides reports whether it fits the profile's budget, so that it leads
	// every block the gate lets search; the others ride only with a
	// question of their domain (food, travel, pets, ...).
	Rides bool
}

// ProfileKinds are the kinds of memories an owner's profile is made of.
func ProfileKinds() []string { return slices.Sorted(maps.Keys(standingKinds)) }

// Profile returns owner's standing facts as of tx in the order they ride
// (the proxy's: constraints first, then identity, instructions and what
// the owner avoids, preferences, likings; one of each text), each record
// read whole, and which of them fit within profileTokens (0:
// DefaultProfileTokens) of a block of maxTokens (0: no bound but
// profileTokens).
func (s *Searcher) Profile(tx *store.Tx, owner string, profileTokens, maxTokens int) ([]ProfileFact, error) {
	if profileTokens <= 0 {
		profileTokens = DefaultProfileTokens
	}
	if maxTokens <= 0 {
		maxTokens = math.MaxInt32
	}
	out := []ProfileFact{}
	p, err := s.profileIn(tx, owner)
	if err != nil {
		return out, err
	}
	var shown []block.Standing
	for i := range p.facts {
		f := &p.facts[i]
		if !f.active(tx.Now()) {
			continue
		}
		m, err := tx.Get(owner, f.id)
		if skipRecord(err) {
			continue // damaged since the profile was read: passed over alone
		}
		if err != nil {
			return out, err
		}
		out, shown = append(out, ProfileFact{Memory: m}), append(shown, f.shown)
	}
	for _, i := range block.StandingFits(shown, profileTokens, maxTokens) {
		out[i].Rides = true
	}
	return out, nil
}

// maxBridged is the most facts the budget left out that a question's
// domains bring back.
const maxBridged = 2

// bridged are the profile facts, of those not shown (shown), that fall
// in the question's domains (qdom), most domains shared first, then in
// the profile's order.
func (p *profile) bridged(qdom uint32, shown map[uint64]bool, skip func(*fact) bool) []int {
	if p == nil || qdom == 0 {
		return nil
	}
	var out []int
	for want := bits.OnesCount32(qdom); want > 0 && len(out) < maxBridged; want-- {
		for i := range p.facts {
			f := &p.facts[i]
			if len(out) == maxBridged {
				break
			}
			if !shown[f.id] && !skip(f) && bits.OnesCount32(f.dom&qdom) == want {
				out = append(out, i)
			}
		}
	}
	return out
}
