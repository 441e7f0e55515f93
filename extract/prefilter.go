package extract

import (
	"regexp/syntax"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// A rule's pattern is tried at every byte of every sentence, and most
// sentences hold none of the words it is written around ("allergic",
// "years old", "decided"). Which words a match must hold is read from the
// pattern once, so a sentence without them is passed over with a few
// substring tests instead of the pattern. The test is a necessary
// condition, so what the rules learn is unchanged.

// literals are the strings a match of a pattern must hold: one of each
// group, in folded form (see fold). None known is nil.
type literals [][]string

// shortestNeeded is the shortest string worth testing for: a group with a
// shorter one ("i", "a") passes nearly every sentence and costs a test.
const shortestNeeded = 3

// mustHold reads from a pattern the strings every match holds.
func mustHold(pattern string) literals {
	re, err := syntax.Parse(pattern, syntax.Perl)
	if err != nil {
		return nil
	}
	var out literals
	for _, g := range groups(re.Simplify()) {
		if shortest(g) >= shortestNeeded {
			out = append(out, g)
		}
	}
	// The smaller groups first: they cost fewer tests, and a sentence
	// fails on its first group missing.
	slices.SortStableFunc(out, func(a, b []string) int { return len(a) - len(b) })
	return out
}

// heldBy reports whether folded, a sentence in folded form, holds a string
// of every group.
func (ls literals) heldBy(folded string) bool {
	for _, g := range ls {
		if !hasAny(folded, g) {
			return false
		}
	}
	return true
}

// groups are the groups of strings a match of re holds one of each.
func groups(re *syntax.Regexp) [][]string {
	switch re.Op {
	case syntax.OpLiteral:
		return [][]string{{fold(string(re.Rune))}}
	case syntax.OpCapture, syntax.OpPlus:
		return groups(re.Sub[0])
	case syntax.OpRepeat:
		if re.Min >= 1 {
			return groups(re.Sub[0])
		}
	case syntax.OpConcat:
		var out [][]string
		for _, sub := range re.Sub {
			out = append(out, groups(sub)...)
		}
		return out
	case syntax.OpAlternate:
		// One branch matches: it holds one string of its best group.
		var any []string
		for _, sub := range re.Sub {
			best := -1
			gs := groups(sub)
			for i, g := range gs {
				if best < 0 || shortest(g) > shortest(gs[best]) {
					best = i
				}
			}
			if best < 0 {
				return nil
			}
			any = append(any, gs[best]...)
		}
		return [][]string{any}
	}
	return nil
}

func shortest(g []string) int {
	n := -1
	for _, w := range g {
		if n < 0 || len(w) < n {
			n = len(w)
		}
	}
	return n
}

// fold maps each letter of s to one of its case forms, the same for every
// form a case-insensitive pattern matches ("k", "K" and the Kelvin sign
// "K"; "s", "S" and the long "ſ"): a text that a pattern's literal matches
// holds the literal, once both are folded.
func fold(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if 'a' <= c && c <= 'z' {
				c -= 'a' - 'A'
			}
			b.WriteByte(c)
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		b.WriteRune(foldRune(r))
		i += n
	}
	return b.String()
}

// foldRune is the least rune of r's case orbit ('A' before 'a').
func foldRune(r rune) rune {
	least := r
	for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
		least = min(least, f)
	}
	return least
}
