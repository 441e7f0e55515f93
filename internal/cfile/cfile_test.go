package cfile

import (
	"strconv"
	"testing"
)

// TestNearestIsATypoNotAGuess: a misspelt name (a letter added, dropped,
// replaced or two swapped, or the start of one name) finds the name meant;
// a word like none of them finds nothing.
func TestNearestIsATypoNotAGuess(t *testing.T) {
	known := []string{"storage", "owner", "max_tokens", "max_items", "max_tool_rounds", "placement", "tools", "timeout", "mode"}
	for word, want := range map[string]string{
		"max_token":  "max_tokens",
		"max_tokenz": "max_tokens",
		"maxtokens":  "max_tokens",
		"placment":   "placement",
		"plcaement":  "placement",
		"ownr":       "owner",
		"tool":       "tools",
		"max_tool_r": "max_tool_rounds",
		"mod":        "mode",
		"bogus":      "",
		"url":        "",
		"x":          "",
		"max_":       "",
	} {
		if got := Nearest(word, known); got != want {
			t.Errorf("Nearest(%q) = %q, want %q", word, got, want)
		}
	}
}

// TestRangesAreTheReadersRanges: what a reader refuses in a Caddyfile, its
// check refuses in JSON, and the reverse; zero (the setting left out)
// passes the checks. NaN is no number from 0 to 1.
func TestRangesAreTheReadersRanges(t *testing.T) {
	for _, s := range []string{"-1", "0.5", "1", "1.01", "NaN"} {
		f, _ := strconv.ParseFloat(s, 64)
		_, readErr := Fraction(s)
		if checkErr := CheckFraction("x", f); (readErr == nil) != (checkErr == nil) {
			t.Errorf("%s: Fraction says %v, CheckFraction %v", s, readErr, checkErr)
		}
	}
	for _, n := range []int{-1, 1, 7} {
		_, readErr := Positive(strconv.Itoa(n))
		if checkErr := CheckCount("x", n); (readErr == nil) != (checkErr == nil) {
			t.Errorf("%d: Positive says %v, CheckCount %v", n, readErr, checkErr)
		}
	}
	if CheckCount("x", 0) != nil || CheckSize("x", 0) != nil || CheckDuration("x", 0) != nil || CheckFraction("x", 0) != nil {
		t.Error("a setting left out (zero) is refused")
	}
	if err := OneOf("placement", "sideways", "cache_safe", "system", "user"); err == nil ||
		err.Error() != `placement must be cache_safe, system or user, not "sideways"` {
		t.Errorf("OneOf: %v", err)
	}
}
