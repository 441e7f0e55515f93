// Package consolidate owns how memories age: how much a memory still
// matters (its salience, decaying with idle time), and what a consolidation
// pass does to an owner's memories: merge near-duplicates, promote facts the
// owner's later conversations keep confirming, evict facts that faded, and
// prune transcripts and episodes past their retention. It decides; the
// engine reads the memories and applies the plan. Nothing here is on the
// request path, and nothing does I/O.
package consolidate

import (
	"math"
	"slices"
	"strings"
	"time"

	"github.com/caddy-memory/memory/internal/norm"
)

// Memory is what the policy needs to know of a memory.
type Memory struct {
	ID         uint64
	Kind       string
	Content    string
	Source     string
	Importance int
	Mentions   int
	Pinned     bool
	Updated    time.Time
	Uses       int
	LastUsed   time.Time
	Boost      int
}

// Config is the policy's settings.
type Config struct {
	// Retention of transcript turns, episodes and facts: older ones are
	// pruned; 0 keeps them for ever.
	TurnRetention, EpisodeRetention, FactRetention time.Duration
	// SalienceFloor: a fact below it, idle for MinIdle, is evicted.
	SalienceFloor float64
}

// Defaults of Config.
const (
	DefaultTurnRetention    = 90 * 24 * time.Hour
	DefaultEpisodeRetention = 365 * 24 * time.Hour
	DefaultSalienceFloor    = 0.2
)

// Policy constants.
const (
	// decayTime is the idle time in which a memory's salience falls to
	// 1/e of its base: exp(-idle/decayTime).
	decayTime = 30 * 24 * time.Hour
	// MinIdle is how long a fact must be idle to be evicted.
	MinIdle = 30 * 24 * time.Hour
	// mergeJaccard is the share of their words two memories of one kind
	// must share to be merged.
	mergeJaccard = 0.9
	// A memory restates another of its kind with a word or two more (see
	// restates): at most restateExtra words more, of at least restateMin.
	restateExtra = 2
	restateMin   = 3
	// confirmWindow is how recent the turns and episodes that confirm a fact
	// must be, and confirmShare how many of its words they must hold.
	confirmWindow = 30 * 24 * time.Hour
	confirmShare  = 0.6
	// confirmationsPerBoost confirmations raise a fact's boost by one, up
	// to maxBoost.
	confirmationsPerBoost = 3
	maxBoost              = 3
	// maxCompared bounds the pairs a merge compares in one kind of one
	// owner, so a pass stays bounded for a huge owner.
	maxCompared = 4_000_000
)

// Salience is how much a memory still matters at now, 0 to 1: a base (its
// importance when its learner gave one, else the middle; more for each
// promotion, restatement and use), decaying exponentially with the time
// since it was last stated or used.
func Salience(m Memory, now time.Time) float64 {
	return base(m) * decay(m, now)
}

func base(m Memory) float64 {
	b := 0.5
	if m.Importance > 0 {
		b = float64(min(m.Importance, 10)) / 10
	}
	b += 0.1 * float64(min(m.Boost, maxBoost))
	b += 0.05 * float64(min(max(m.Mentions-1, 0), 4))
	b += min(0.05*math.Log2(1+float64(m.Uses)), 0.2)
	return min(b, 1)
}

func decay(m Memory, now time.Time) float64 {
	idle := now.Sub(lastTouched(m))
	if idle <= 0 {
		return 1
	}
	return math.Exp(-float64(idle) / float64(decayTime))
}

func lastTouched(m Memory) time.Time {
	if m.LastUsed.After(m.Updated) {
		return m.LastUsed
	}
	return m.Updated
}

// Explicit reports whether a memory was saved on purpose (through the API
// or by the model's memory tool), or pinned: such memories never fade out,
// are never merged away and are never pruned.
func Explicit(m Memory) bool {
	return m.Pinned || m.Source == "api" || m.Source == "tool"
}

// Kinds the policy treats apart.
const (
	kindTurn     = "turn"
	kindEpisode  = "episode"
	kindIdentity = "identity"
)

// Merge is a near-duplicate group: Into keeps the others' texts as its
// history and their mentions; the others are deleted.
type Merge struct {
	Into   uint64
	Others []uint64
}

// Promotion is a fact's new boost; being confirmed counts as being used
// at the time of the pass.
type Promotion struct {
	ID    uint64
	Boost int
}

// Plan is what one pass does to one owner's memories.
type Plan struct {
	// Decayed counts memories that lost salience since they were last
	// stated or used (informational: decay is computed, not stored).
	Decayed    int
	Merges     []Merge
	Promotions []Promotion
	// Evict are facts to delete as faded (recoverable); Prune are turns and
	// episodes past their retention, removed for good, and PruneFacts facts
	// past theirs (deleted, recoverable).
	Evict, Prune, PruneFacts []uint64
}

// Empty reports whether the plan changes nothing.
func (p Plan) Empty() bool {
	return len(p.Merges)+len(p.Promotions)+len(p.Evict)+len(p.Prune)+len(p.PruneFacts) == 0
}

// PlanFor decides what a pass does to an owner's active memories at now.
// A memory takes part in at most one step: what is pruned or merged away is
// not also evicted.
func PlanFor(ms []Memory, now time.Time, cfg Config) Plan {
	var p Plan
	gone := map[uint64]bool{}
	// Retention first: what is past it is not worth merging.
	for _, m := range ms {
		if Explicit(m) {
			continue
		}
		age := now.Sub(m.Updated)
		switch {
		case m.Kind == kindTurn && cfg.TurnRetention > 0 && age > cfg.TurnRetention,
			m.Kind == kindEpisode && cfg.EpisodeRetention > 0 && age > cfg.EpisodeRetention:
			p.Prune = append(p.Prune, m.ID)
			gone[m.ID] = true
		case m.Kind != kindTurn && m.Kind != kindEpisode && cfg.FactRetention > 0 && age > cfg.FactRetention:
			p.PruneFacts = append(p.PruneFacts, m.ID)
			gone[m.ID] = true
		}
	}
	p.Merges = merges(ms, gone)
	for _, g := range p.Merges {
		for _, id := range g.Others {
			gone[id] = true
		}
	}
	p.Promotions = promotions(ms, gone, now)
	boost := map[uint64]int{}
	for _, pr := range p.Promotions {
		boost[pr.ID] = pr.Boost
	}
	for _, m := range ms {
		if gone[m.ID] || m.Kind == kindTurn {
			continue
		}
		if b, ok := boost[m.ID]; ok {
			// Confirmed lately: as good as used now.
			m.Boost, m.LastUsed = b, now
		}
		s := Salience(m, now)
		if s < base(m)*0.9 {
			p.Decayed++
		}
		if m.Kind != kindEpisode && m.Kind != kindIdentity && !Explicit(m) &&
			s < cfg.SalienceFloor && now.Sub(lastTouched(m)) >= MinIdle {
			p.Evict = append(p.Evict, m.ID)
		}
	}
	return p
}

// words is the set of a text's words of three letters or more, and its
// numbers, normalised, a plural's s dropped ("lives" and "live" are one
// word here): "34 years old" and "35 years old" differ.
func words(s string) map[string]bool {
	out := map[string]bool{}
	for _, w := range strings.Fields(norm.Normalize(s)) {
		if (len(w) >= 3 || strings.ContainsAny(w, "0123456789")) && !stopWords[w] {
			if len(w) > 3 && strings.HasSuffix(w, "s") && !strings.HasSuffix(w, "ss") {
				w = w[:len(w)-1]
			}
			out[w] = true
		}
	}
	return out
}

var stopWords = map[string]bool{
	"the": true, "and": true, "for": true, "are": true, "was": true, "with": true, "that": true, "this": true,
	"has": true, "have": true, "had": true, "his": true, "her": true, "their": true, "they": true, "she": true,
	"from": true, "but": true, "user": true, "users": true, "who": true, "which": true,
}

// negations turn a statement into its opposite: a restatement never adds
// one ("User is vegetarian." is not "User is not vegetarian.").
var negations = map[string]bool{"not": true, "never": true, "doesn": true, "don": true, "isn": true, "no": true,
	"nor": true, "without": true, "anymore": true, "longer": true, "stopped": true, "quit": true, "former": true}

// restates reports whether the shorter of two word sets says what the
// longer says with a word or two less: all its words are in the longer,
// which adds at most restateExtra, none of them a negation ("Ana lives in
// Porto, Portugal." and "... Portugal now.").
func restates(a, b map[string]bool) bool {
	if len(a) > len(b) {
		a, b = b, a
	}
	if len(a) < restateMin || len(b)-len(a) > restateExtra {
		return false
	}
	for w := range a {
		if !b[w] {
			return false
		}
	}
	for w := range b {
		if !a[w] && negations[w] {
			return false
		}
	}
	return true
}

func jaccard(a, b map[string]bool) float64 {
	if len(a) == 0 || len(b) == 0 {
		return 0
	}
	inter := 0
	for w := range a {
		if b[w] {
			inter++
		}
	}
	return float64(inter) / float64(len(a)+len(b)-inter)
}

// merges groups the facts and episodes, within one kind, whose words are
// near the same (Jaccard at least mergeJaccard), or of which one restates
// the other with a word or two more (restates). The survivor of a group is
// an explicit memory if there is one, else the most mentioned, else the
// newest; explicit memories are never merged away.
func merges(ms []Memory, gone map[uint64]bool) []Merge {
	byKind := map[string][]int{}
	for i, m := range ms {
		if m.Kind != kindTurn && !gone[m.ID] {
			byKind[m.Kind] = append(byKind[m.Kind], i)
		}
	}
	var out []Merge
	kinds := make([]string, 0, len(byKind))
	for k := range byKind {
		kinds = append(kinds, k)
	}
	slices.Sort(kinds)
	for _, k := range kinds {
		idx := byKind[k]
		sets := make([]map[string]bool, len(idx))
		for j, i := range idx {
			sets[j] = words(ms[i].Content)
		}
		grouped := make([]bool, len(idx))
		compared := 0
		for a := range idx {
			if grouped[a] {
				continue
			}
			group := []int{a}
			for b := a + 1; b < len(idx) && compared < maxCompared; b++ {
				compared++
				if !grouped[b] && (jaccard(sets[a], sets[b]) >= mergeJaccard || restates(sets[a], sets[b])) {
					group = append(group, b)
					grouped[b] = true
				}
			}
			if len(group) < 2 {
				continue
			}
			survivor := group[0]
			for _, g := range group[1:] {
				if better(ms[idx[g]], ms[idx[survivor]]) {
					survivor = g
				}
			}
			m := Merge{Into: ms[idx[survivor]].ID}
			for _, g := range group {
				if g != survivor && !Explicit(ms[idx[g]]) {
					m.Others = append(m.Others, ms[idx[g]].ID)
				}
			}
			if len(m.Others) > 0 {
				out = append(out, m)
			}
		}
	}
	return out
}

// better reports whether a should survive a merge rather than b.
func better(a, b Memory) bool {
	if Explicit(a) != Explicit(b) {
		return Explicit(a)
	}
	if a.Mentions != b.Mentions {
		return a.Mentions > b.Mentions
	}
	return a.Updated.After(b.Updated)
}

// promotions are the facts whose boost grows: those whose words (most of
// them) recur in the owner's recent turns and episodes, a boost of one for
// each confirmationsPerBoost of them.
func promotions(ms []Memory, gone map[uint64]bool, now time.Time) []Promotion {
	var recent []map[string]bool
	for _, m := range ms {
		if (m.Kind == kindTurn || m.Kind == kindEpisode) && !gone[m.ID] && now.Sub(m.Updated) <= confirmWindow {
			recent = append(recent, words(m.Content))
		}
	}
	if len(recent) < confirmationsPerBoost {
		return nil
	}
	var out []Promotion
	for _, m := range ms {
		if m.Kind == kindTurn || m.Kind == kindEpisode || gone[m.ID] || m.Boost >= maxBoost {
			continue
		}
		fact := words(m.Content)
		if len(fact) < 2 {
			continue
		}
		confirmed := 0
		for _, r := range recent {
			held := 0
			for w := range fact {
				if r[w] {
					held++
				}
			}
			if float64(held) >= confirmShare*float64(len(fact)) {
				confirmed++
			}
		}
		if b := min(confirmed/confirmationsPerBoost, maxBoost); b > m.Boost {
			out = append(out, Promotion{m.ID, b})
		}
	}
	return out
}
