package recall

import (
	"slices"
	"strings"
	"time"

	"github.com/caddy-memory/memory/extract"
	"github.com/caddy-memory/memory/internal/block"
	"github.com/caddy-memory/memory/internal/ownercache"
	"github.com/caddy-memory/memory/store"
)

// What a cached profile keeps of each standing fact, and the cache of
// owners' profiles (profile.go reads them).

// fact is a standing fact as a cached profile keeps it: what the block,
// the bridge and leaving out the turn being answered need of its memory.
// A whole record (its context, history and metadata) would take several
// times the room, and the cache is meant to hold every active owner.
type fact struct {
	id         uint64
	kind, key  string
	turn       string // Meta["turn"]: the turn that taught it
	expires    int64  // Unix nanoseconds; 0: never
	updated    time.Time
	importance int
	// shown is the fact as the block measures it (Text is its content),
	// hash its normal form's hash, dom the domains of everyday life it
	// falls in (see index.Domains): a fact the budget left out still
	// reaches a question of its domain.
	shown block.Standing
	hash  uint64
	dom   uint32
	// began is when its value began (Unix nanoseconds: its last change,
	// else its creation), topic what single-valued fact it is of, or a
	// note speaks of (extract.KeyTopic, extract.SaidTopics): a note said
	// before a fact of its topic began is stale (staleNote).
	began int64
	topic extract.Topic
}

// content is what the fact says.
func (f *fact) content() string { return f.shown.Text }

// active reports whether the fact has not expired by now: expiry is not a
// write, and a cached profile may hold a fact that expired since.
func (f *fact) active(now time.Time) bool { return f.expires == 0 || now.UnixNano() < f.expires }

// memory is the fact as a recall returns it.
func (f *fact) memory() *store.Memory {
	m := &store.Memory{ID: f.id, Kind: f.kind, Key: f.key, Content: f.content(), UpdatedAt: f.updated, Importance: f.importance}
	if f.turn != "" {
		m.Meta = map[string]string{"turn": f.turn}
	}
	if f.expires != 0 {
		t := time.Unix(0, f.expires).UTC()
		m.ExpiresAt = &t
	}
	return m
}

// factOf keeps what a profile needs of m, whose standingKey is k, in
// strings of its own (m's may share the memory of a whole decoded record).
func (s *Searcher) factOf(m *store.Memory, k standingKey) fact {
	f := fact{id: m.ID, kind: strings.Clone(m.Kind), key: strings.Clone(m.Key), turn: strings.Clone(m.Meta["turn"]),
		updated: m.UpdatedAt, importance: m.Importance, hash: k.hash, dom: s.cfg.Index.Domains(m.Content)}
	if m.ExpiresAt != nil {
		f.expires = m.ExpiresAt.UnixNano()
	}
	f.shown = block.StandingOf(strings.Clone(m.Content), k.prio)
	f.began = m.CreatedAt.UnixNano()
	if t := since(m); !t.IsZero() {
		f.began = t.UnixNano()
	}
	if m.Kind == "said" {
		f.topic = extract.SaidTopics(m.Content)
	} else {
		f.topic = extract.KeyTopic(m.Key)
	}
	return f
}

// bytes is about how much memory the fact takes.
func (f *fact) bytes() int {
	return 160 + len(f.kind) + len(f.key) + len(f.turn) + 2*len(f.shown.Text)
}

// bytes is about how much memory the profile takes.
func (p *profile) bytes() int {
	n := 256 + 64*len(p.keys)
	for i := range p.facts {
		n += p.facts[i].bytes()
	}
	for _, m := range p.changed {
		n += 512 + len(m.Content) + len(m.Context)
		for _, v := range m.History {
			n += 64 + len(v.Content)
		}
	}
	for _, g := range slices.Concat(p.gone, p.old, p.oldOfTurn) {
		n += 24 * len(g)
	}
	n += 48 * (len(p.stale) + len(p.staleTurns))
	return n
}

// newProfileCache keeps the profiles of recently seen owners within
// profileCacheBytes.
func newProfileCache() *ownercache.Cache[*profile] {
	return ownercache.New(profileCacheBytes, func(owner string, p *profile) int { return p.size + len(owner) + 128 })
}
