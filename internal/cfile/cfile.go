// Package cfile owns the small readers shared by this module's Caddyfile
// parsers (the memory app's global option and the handlers' directives):
// one argument, a nested block of single-argument settings, sizes and
// durations, each setting given once; and the same ranges checked again
// for a configuration given in JSON, which no reader saw.
package cfile

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
	"github.com/dustin/go-humanize"
)

// Once refuses a subdirective given twice in one block: the second would
// silently win.
func Once(d *caddyfile.Dispenser, seen map[string]bool, sub string) error {
	if seen[sub] {
		return d.Errf("%s already specified", sub)
	}
	seen[sub] = true
	return nil
}

// OneArg reads the single argument of the subdirective named name.
func OneArg(d *caddyfile.Dispenser, name string) (string, error) {
	var arg string
	if !d.Args(&arg) {
		return "", d.ArgErr()
	}
	if d.NextArg() {
		return "", d.Errf("%s takes one argument", name)
	}
	return arg, nil
}

// ErrUnknown is what a block's setter returns for a subdirective it does
// not know.
var ErrUnknown = errors.New("unrecognized")

// Block reads the nested block of the subdirective name, whose
// subdirectives (known) take one argument each and may each be given once,
// calling set with each.
func Block(d *caddyfile.Dispenser, name string, known []string, set func(sub, arg string) error) error {
	if d.NextArg() {
		return d.ArgErr()
	}
	seen := map[string]bool{}
	for nesting := d.Nesting(); d.NextBlock(nesting); {
		sub := d.Val()
		if err := Once(d, seen, name+" "+sub); err != nil {
			return err
		}
		arg, err := OneArg(d, name+" "+sub)
		if err != nil {
			return err
		}
		if err := set(sub, arg); errors.Is(err, ErrUnknown) {
			return Unknown(d, name+" subdirective", sub, known)
		} else if err != nil {
			return d.Errf("%s %s: %v", name, sub, err)
		}
	}
	return nil
}

// Positive reads a whole number of at least 1.
func Positive(s string) (int, error) {
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 {
		return 0, fmt.Errorf("%q is not a positive whole number", s)
	}
	return n, nil
}

// Size reads a size such as 4MiB.
func Size(s string) (int64, error) {
	n, err := humanize.ParseBytes(s)
	if err != nil || n == 0 {
		return 0, fmt.Errorf("%q is not a size such as 4MiB or 512KB", s)
	}
	return int64(n), nil
}

// Duration reads a positive duration.
func Duration(s string) (caddy.Duration, error) {
	d, err := caddy.ParseDuration(s)
	if err != nil || d <= 0 {
		return 0, fmt.Errorf("%q is not a duration such as 500ms or 10s", s)
	}
	return caddy.Duration(d), nil
}

// Fraction reads a number from 0 to 1.
func Fraction(s string) (float64, error) {
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || !(f >= 0 && f <= 1) { // NaN too
		return 0, fmt.Errorf("%q is not a number from 0 to 1", s)
	}
	return f, nil
}

// The ranges the readers above check, for a setting a JSON configuration
// gives, where no reader saw it: each error names the setting and says
// what to write. Zero is what leaving the setting out gives (a default),
// so it passes.

// CheckCount refuses what Positive would: a negative whole number.
func CheckCount(setting string, n int) error {
	if n < 0 {
		return fmt.Errorf("%s must be a positive whole number, not %d", setting, n)
	}
	return nil
}

// CheckSize refuses what Size would: a negative size.
func CheckSize(setting string, n int64) error {
	if n < 0 {
		return fmt.Errorf("%s must be a size in bytes (such as 4194304 for 4 MiB), not %d", setting, n)
	}
	return nil
}

// CheckDuration refuses what Duration would: a negative duration.
func CheckDuration(setting string, d caddy.Duration) error {
	if d < 0 {
		return fmt.Errorf("%s must be a positive duration such as \"500ms\" or \"10s\", not %s", setting, time.Duration(d))
	}
	return nil
}

// CheckFraction refuses what Fraction would: a number outside 0 to 1.
func CheckFraction(setting string, f float64) error {
	if !(f >= 0 && f <= 1) {
		return fmt.Errorf("%s must be a number from 0 to 1, not %g", setting, f)
	}
	return nil
}

// OneOf refuses a value of setting that is none of allowed, in the
// Caddyfile and in JSON alike: "scope must be owner or session, not
// \"world\"".
func OneOf(setting, value string, allowed ...string) error {
	if slices.Contains(allowed, value) {
		return nil
	}
	list := allowed[0]
	if n := len(allowed); n > 1 {
		list = strings.Join(allowed[:n-1], ", ") + " or " + allowed[n-1]
	}
	return fmt.Errorf("%s must be %s, not %q", setting, list, value)
}

// Unknown is the error for a subdirective of block (say "memory
// subdirective") that is none of known, suggesting the nearest of them
// when one is near enough to be a typo: "did you mean max_tokens?".
func Unknown(d *caddyfile.Dispenser, block, sub string, known []string) error {
	if near := Nearest(sub, known); near != "" {
		return d.Errf("unrecognized %s '%s'; did you mean %s?", block, sub, near)
	}
	return d.Errf("unrecognized %s '%s'", block, sub)
}

// Nearest is the name among known that word is most likely a typo of, or
// "" when none is close: at most a third of the longer's letters apart
// (two for short names) by edits of one letter (inserted, removed,
// replaced, or two swapped), or the start of exactly one of them.
func Nearest(word string, known []string) string {
	best, bestDist := "", -1
	for _, k := range known {
		d := editDistance(word, k)
		if d > max(2, max(len(word), len(k))/3) || d >= len(k) {
			continue
		}
		if bestDist < 0 || d < bestDist {
			best, bestDist = k, d
		}
	}
	if best != "" {
		return best
	}
	prefixed := ""
	for _, k := range known {
		if len(word) >= 3 && strings.HasPrefix(k, word) {
			if prefixed != "" {
				return ""
			}
			prefixed = k
		}
	}
	return prefixed
}

// editDistance is the optimal string alignment distance between a and b:
// letters inserted, removed or replaced, and neighbours swapped.
func editDistance(a, b string) int {
	prev2 := make([]int, len(b)+1)
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(b)]
}
