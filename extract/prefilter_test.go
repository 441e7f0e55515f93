package extract

import (
	"math/rand/v2"
	"regexp"
	"regexp/syntax"
	"slices"
	"strings"
	"testing"
	"unicode"
)

func TestMustHold(t *testing.T) {
	for _, c := range []struct {
		pattern string
		want    literals
	}{
		{`(?i)\bi(?:'m| am)\s+allergic to`, literals{{"ALLERGIC TO"}}},
		{`(?i)\bi\s+(?:have|suffer from)\s+(?:a\s+)?(?:allerg|intolerance)`, literals{{"HAVE", "SUFFER FROM"}, {"ALLERG", "INTOLERANCE"}}},
		// An optional part, or a branch that needs nothing, needs nothing.
		{`(?i)\bi\s+(?:really\s+)?like`, literals{{"LIKE"}}},
		{`(?i)\bi\s+(?:love|)\s+it`, nil},
		{`(?i)\bi\s+(?:love)*\s+it`, nil},
		{`(?i)\bi\s+(?:love){0,2}\s+it`, nil},
		{`(?i)\bi\s+(?:love){1,2}\s+it`, literals{{"LOVE"}}},
		// Too short to be worth a test.
		{`(?i)\bi\s+am\s+\p{Lu}`, nil},
		// Case matters in the pattern, not in the test: the test is only
		// a necessary condition.
		{`My name is (\p{Lu}\p{Ll}+)`, literals{{"MY NAME IS "}}},
	} {
		if got := mustHold(c.pattern); !slices.EqualFunc(got, c.want, slices.Equal) {
			t.Errorf("mustHold(%q) = %q, want %q", c.pattern, got, c.want)
		}
	}
}

// TestFold: every form a case-insensitive pattern matches folds to the
// same text, the Kelvin sign and the long s included, which lower-casing
// does not give.
func TestFold(t *testing.T) {
	re := regexp.MustCompile(`(?i)kosher|vegans`)
	for _, s := range []string{"kosher", "KOSHER", "\u212Aosher", "vegan\u017F", "VEGANS"} {
		if !re.MatchString(s) {
			t.Fatalf("%q does not match", s)
		}
		if !mustHold(re.String()).heldBy(fold(s)) {
			t.Errorf("%q matches %s, but its fold %q holds none of %q", s, re, fold(s), mustHold(re.String()))
		}
	}
}

// TestRulesHoldWhatTheyMatch: every text a rule's pattern matches holds
// what the prefilter asks of it. The texts are made from the patterns
// themselves, every branch and case form in turn, so a rule added or
// changed is checked as it is written.
func TestRulesHoldWhatTheyMatch(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for k, r := range rules {
		ls := mustHold(r.re.String())
		parsed, err := syntax.Parse(r.re.String(), syntax.Perl)
		if err != nil {
			t.Fatal(err)
		}
		matched := 0
		for range 400 {
			var b strings.Builder
			generate(&b, parsed, rng)
			s := "Well, " + b.String() + " today."
			if !r.re.MatchString(s) {
				if s = b.String(); !r.re.MatchString(s) { // an anchored pattern
					continue
				}
			}
			matched++
			if !ls.heldBy(fold(s)) {
				t.Fatalf("rule %d matches %q, whose fold holds none of a group of %q", k, s, ls)
			}
		}
		if matched < 100 {
			t.Errorf("rule %d: only %d of 400 generated texts match %s", k, matched, r.re)
		}
	}
}

// generate writes a random text re matches (save for its assertions, such
// as \b, which the caller checks), in random case where re ignores case.
func generate(b *strings.Builder, re *syntax.Regexp, rng *rand.Rand) {
	switch re.Op {
	case syntax.OpLiteral:
		for _, r := range re.Rune {
			if re.Flags&syntax.FoldCase != 0 {
				for n := rng.IntN(3); n > 0; n-- {
					r = unicode.SimpleFold(r)
				}
			}
			b.WriteRune(r)
		}
	case syntax.OpCharClass:
		// Mostly a letter or a space where the class has one, as text has.
		for _, r := range []rune{'e', ' ', 'E'} {
			if inClass(re.Rune, r) && rng.IntN(4) > 0 {
				b.WriteRune(r)
				return
			}
		}
		i := 2 * rng.IntN(len(re.Rune)/2)
		lo, hi := re.Rune[i], min(re.Rune[i+1], re.Rune[i]+64)
		b.WriteRune(lo + rune(rng.IntN(int(hi-lo)+1)))
	case syntax.OpAnyCharNotNL, syntax.OpAnyChar:
		b.WriteByte('x')
	case syntax.OpCapture:
		generate(b, re.Sub[0], rng)
	case syntax.OpStar, syntax.OpPlus, syntax.OpQuest, syntax.OpRepeat:
		lo, hi := 0, 2
		switch re.Op {
		case syntax.OpPlus:
			lo = 1
		case syntax.OpQuest:
			hi = 1
		case syntax.OpRepeat:
			lo, hi = re.Min, re.Max
			if hi < 0 {
				hi = lo + 2
			}
		}
		for n := lo + rng.IntN(hi-lo+1); n > 0; n-- {
			generate(b, re.Sub[0], rng)
		}
	case syntax.OpConcat:
		for _, sub := range re.Sub {
			generate(b, sub, rng)
		}
	case syntax.OpAlternate:
		generate(b, re.Sub[rng.IntN(len(re.Sub))], rng)
	}
}

func inClass(ranges []rune, r rune) bool {
	for i := 0; i+1 < len(ranges); i += 2 {
		if ranges[i] <= r && r <= ranges[i+1] {
			return true
		}
	}
	return false
}
