package recall

import (
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/caddy-memory/memory/extract"
	"github.com/caddy-memory/memory/internal/norm"
	"github.com/caddy-memory/memory/store"
)

// What the profile says against the question's finds: a transcript turn
// saying what a fact said before it changed, and a turn whose facts say
// all it said.

// contradicted reports whether a transcript turn says what a fact of the
// profile said before it changed ("User: I live in Lisbon" once the user
// moved to Porto), or names what a fact ended ("User: my Ford's clutch is
// slipping" once the user sold the Ford): it is not injected as current.
func (p *profile) contradicted(m *store.Memory) bool {
	if p == nil || m.Kind != "turn" || len(p.changed) == 0 {
		return false
	}
	user := userSaid(m.Content)
	if user == "" {
		return false
	}
	var facts []extract.Fact
	var have map[string]bool // the words the user said, read once
	read := false
	for i, f := range p.changed {
		if p.ends[i] && m.UpdatedAt.Before(f.UpdatedAt) && extract.NamesEnded(f.Content, f.Key, user) {
			// What the user no longer does, has or is with: a turn said
			// before it that names the old value, whether or not a rule
			// read a fact from it, unless the turn teaches that key
			// itself (it says the change, or says it again).
			if !read {
				facts, read = extract.Facts(user), true
			}
			if !slices.ContainsFunc(facts, func(said extract.Fact) bool { return said.Key == f.Key }) {
				return true
			}
		}
		if !m.UpdatedAt.Before(since(f)) {
			continue
		}
		if have == nil {
			have = heardWords(user)
		}
		if !sharesAny(have, p.gone[i]) {
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

// saysStale reports whether a search's find x is a note or fact the
// profile found stale (staleNote), or the transcript of the turn it was
// said in.
func (p *profile) saysStale(x *Result) bool {
	switch {
	case p == nil:
		return false
	case x.Memory.Kind == "turn":
		return p.staleTurns[x.fromTurn()]
	}
	return p.stale[x.Memory.ID]
}

// staleNote reports whether f is a note (extract/notes.go: a sentence of
// the user's no rule read) said no later than a fact of the profile
// changed, that says what the fact said before ("Vivo en Madrid, en
// Lavapiés" once the user moved to Valencia) or names what it ended. A
// note is read by no rule, so what it says is not compared, only its
// words: one sharing a word the old value held and the new one does not
// stops riding.
func (p *profile) staleNote(f fact) bool {
	if f.kind != "said" {
		return p.changedSince(f)
	}
	topic := f.topic &^ extract.TopicChange
	for i := range p.facts {
		g := &p.facts[i]
		if g.topic&topic == 0 || g.turn != "" && g.turn == f.turn {
			continue
		}
		if g.kind != "said" && f.updated.UnixNano() < g.began {
			return true // said before the value of its topic began
		}
		if g.kind == "said" && g.topic&extract.TopicChange != 0 && f.updated.Before(g.updated) {
			return true // a later note says its topic changed
		}
	}
	var have map[string]bool
	for i, c := range p.changed {
		if t := extract.KeyTopic(c.Key); t&f.topic != 0 && c.Meta["turn"] != f.turn && f.updated.Before(since(c)) {
			return true
		}
		if f.updated.After(since(c)) && f.updated.After(c.UpdatedAt) {
			continue // said after the change: the note is the newer word
		}
		if p.ends[i] && c.Meta["turn"] != f.turn && extract.NamesEnded(c.Content, c.Key, f.content()) {
			// (The turn that said it ended names what ended, and says
			// what came after: "hab bei Airbus gekündigt und fange bei
			// Otto an".)
			return true
		}
		if have == nil {
			have = heardWords(f.content())
			for _, w := range extract.InEnglish(f.content()) {
				// "amendoim" says what "User is allergic to peanuts" did.
				have[w] = true
				if p := prefix(w); p != "" {
					have[p] = true
				}
			}
		}
		old := p.old[i]
		if c.Meta["turn"] == f.turn {
			old = p.oldOfTurn[i]
		}
		if sharesAny(have, old) {
			return true
		}
		for _, v := range c.History {
			// Said in the turn that last said the old value, and of it:
			// "Je suis allergique aux noix, attention aux desserts" beside
			// "User is allergic to nuts", which is now "to hazelnuts".
			if v.At.Equal(f.updated) && sharesAny(have, valueWords(v.Content, nil)) {
				return true
			}
		}
	}
	return false
}

// changedSince reports whether a later fact says what standing fact f
// names ended, or a note said after f (of a single-valued topic) says
// that topic changed: "na Samsung Galaxy A54 I
// dey use now" after "User uses a Tecno Camon 20.", which no rule read as
// a change.
func (p *profile) changedSince(f fact) bool {
	var words map[string]bool // f's, read once and only if a later fact ended something
	for i, c := range p.changed {
		// A later fact says what this one names ended ("User gave up law
		// for a history degree" after "User is studying law at
		// Edinburgh."), under another key.
		if !p.ends[i] || c.Key == f.key || !f.updated.Before(c.UpdatedAt) || c.Meta["turn"] != "" && c.Meta["turn"] == f.turn {
			continue
		}
		if words == nil {
			words = wordSet(f.content())
		}
		if sharesAny(words, p.gone[i]) && extract.NamesEnded(c.Content, c.Key, f.content()) {
			return true
		}
	}
	if f.topic == 0 {
		return false
	}
	for i := range p.facts {
		g := &p.facts[i]
		if g.kind == "said" && g.topic&extract.TopicChange != 0 && g.topic&f.topic != 0 && f.updated.Before(g.updated) &&
			(g.turn == "" || g.turn != f.turn) {
			return true
		}
	}
	return false
}

// oldWords are the words fact c's earlier versions held that it no longer
// does, and their stems, but the words every version of a fact is made
// of; sameTurn: for a note said in the turn that changed c.
func oldWords(c *store.Memory, sameTurn bool) []string {
	now := wordSet(c.Content)
	out := droppedNumbers(c) // an age, a count
	for _, v := range c.History {
		// The names it held, whatever it says of them now ("Toby has
		// died"), but to the turn that said the change, which names
		// them as it ends them ("hab bei Airbus gekündigt").
		for _, n := range names(v.Content) {
			if !sameTurn || !now[n] {
				out = append(out, n)
			}
		}
		out = append(out, valueWords(v.Content, now)...)
	}
	return out
}

// valueWords are the words and stems of a fact's text but those every
// fact is written with ("bei", "the", "lives": names are read apart) and
// those in except.
func valueWords(content string, except map[string]bool) []string {
	var out []string
	for w := range wordSet(content) {
		if except[w] || factWords[w] || extract.Common(w) || utf8.RuneCountInString(w) < 4 {
			continue
		}
		out = append(out, w)
		if p := prefix(w); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// droppedNumbers are the numbers fact c's earlier versions held that it
// no longer says: "Anika is 5" once she is 6.
func droppedNumbers(c *store.Memory) []string {
	now := numbersIn(c.Content)
	var out []string
	for _, v := range c.History {
		for _, w := range numbersIn(v.Content) {
			if !slices.Contains(now, w) {
				out = append(out, w)
			}
		}
	}
	return out
}

// heardWords are the words a text holds as the checks here compare them:
// its words (wordSet), its numbers, and the stems of both.
func heardWords(text string) map[string]bool {
	have := wordSet(text)
	for _, w := range numbersIn(text) {
		have[w] = true
	}
	for w := range have {
		if p := prefix(w); p != "" {
			have[p] = true
		}
	}
	return have
}

// factWords are the words the rules write facts with, which say nothing
// of a value.
var factWords = map[string]bool{"lives": true, "works": true, "named": true, "their": true, "with": true, "has": true,
	"is": true, "and": true, "for": true, "from": true, "user's": true, "users": true, "as": true, "at": true, "in": true,
	"now": true, "there": true, "moved": true, "speaks": true, "prefers": true, "likes": true, "eats": true}

// goneWords are the words a turn that says what fact f said before it
// changed shares with f: a turn sharing none of them cannot say it (a
// cheap first look, made once a profile). They are the words f no longer
// says, and the names its versions hold, which are the same in every
// language: "Tengo un perro, Toby" says what "User has a dog named Toby"
// said before "Toby has died", sharing no other word with either.
func goneWords(f *store.Memory, ends bool) []string {
	now := wordSet(f.Content)
	var out []string
	add := func(w string) {
		if !slices.Contains(out, w) {
			out = append(out, w)
		}
	}
	for _, w := range droppedNumbers(f) {
		add(w) // an age or a count
	}
	for _, v := range f.History {
		for w := range wordSet(v.Content) {
			if !now[w] {
				add(w)
			}
			if p := prefix(w); p != "" {
				// The old value said in another language shares its
				// stem, not its word ("vegetariana", "allergique").
				add(p)
			}
		}
		for _, w := range names(v.Content) {
			add(w)
		}
	}
	for _, w := range names(f.Content) {
		add(w)
	}
	if ends {
		// What it ended, said in any language, may share only its own
		// word with it ("Je joue au foot", "User gave up foot").
		for w := range wordSet(f.Content) {
			add(w)
		}
	}
	return out
}

// names are the capitalised words of a fact past its first, normalised as
// wordSet has them: the names and places it holds.
func names(fact string) []string {
	var out []string
	for i, w := range strings.Fields(fact) {
		if r, _ := utf8.DecodeRuneInString(w); i > 0 && unicode.IsUpper(r) {
			for n := range wordSet(w) {
				out = append(out, n)
			}
		}
	}
	return out
}

// sharesAny reports whether have holds one of words.
func sharesAny(have map[string]bool, words []string) bool {
	for _, w := range words {
		if have[w] {
			return true
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

// prefix is a long word's first five letters, marked so no word is one:
// a cheap stem shared across the languages the rules read.
func prefix(w string) string {
	if utf8.RuneCountInString(w) < 6 {
		return ""
	}
	var b strings.Builder
	n := 0
	for _, r := range w {
		if n == 5 {
			return b.String() + "~"
		}
		b.WriteRune(norm.Unaccented(r)) // "végét" is "veget"
		n++
	}
	return ""
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

// numbersIn are the numbers a text holds, as words of digits: what
// wordSet leaves out as too short ("5").
func numbersIn(s string) []string {
	var out []string
	for _, w := range strings.Fields(norm.Normalize(s)) {
		if w[0] >= '0' && w[0] <= '9' {
			out = append(out, w)
		}
	}
	return out
}
