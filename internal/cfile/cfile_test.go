package cfile

import "testing"

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
