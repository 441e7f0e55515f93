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
			have = wordSet(user)
			for w := range have {
				if p := prefix(w); p != "" {
					have[p] = true
				}
			}
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
		b.WriteRune(unaccented(r)) // "végét" is "veget"
		n++
	}
	return ""
}

// unaccented is a Latin letter without its accent.
func unaccented(r rune) rune {
	if r < 0xC0 {
		return r
	}
	if i := strings.IndexRune(accented, r); i >= 0 {
		return rune(plain[utf8.RuneCountInString(accented[:i])])
	}
	return r
}

const (
	accented = "àáâãäåçèéêëìíîïñòóôõöùúûüýÿ"
	plain    = "aaaaaaceeeeiiiinooooouuuuyy"
)

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
