package norm

import (
	"math/rand/v2"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

// TestNormalizeAsRunes: Normalize and Hash read texts of every kind (ASCII,
// other scripts, punctuation, broken UTF-8) as the plain definition does:
// lowercase letters and digits, runs of anything else one space, none at
// either end.
func TestNormalizeAsRunes(t *testing.T) {
	pieces := []string{"a", "Z", "7", " ", "  ", "\t", "\n", ".", ",", "—", "é", "É", "Ω", "日本", "\xff", "\ufffd", "ß", "İ", "_", "'", "\u00a0", "٣"}
	rng := rand.New(rand.NewPCG(8, 9))
	for range 5000 {
		var b strings.Builder
		for range rng.IntN(12) {
			b.WriteString(pieces[rng.IntN(len(pieces))])
		}
		s := b.String()
		var words []string
		var w []rune
		for _, r := range s {
			if r == utf8.RuneError || !unicode.IsLetter(unicode.ToLower(r)) && !unicode.IsDigit(unicode.ToLower(r)) {
				if len(w) > 0 {
					words, w = append(words, string(w)), nil
				}
				continue
			}
			w = append(w, unicode.ToLower(r))
		}
		if len(w) > 0 {
			words = append(words, string(w))
		}
		want := strings.Join(words, " ")
		if got := Normalize(s); got != want {
			t.Fatalf("Normalize(%q) = %q, want %q", s, got, want)
		}
		h := uint64(14695981039346656037)
		for _, r := range want {
			h = (h ^ uint64(r)) * 1099511628211
		}
		if got := Hash(s); got != h {
			t.Fatalf("Hash(%q) is not the hash of %q", s, want)
		}
	}
}

// TestHash: texts hash alike exactly when they normalise alike.
func TestHash(t *testing.T) {
	texts := []string{
		"User lives in Lisbon.", "user  lives in lisbon", "User lives in Lisbon!!", " User, lives — in LISBON ",
		"User lives in Lisboa.", "User livesin Lisbon.", "Zürich café", "ZÜRICH CAFÉ.", "", "...", "a b", "ab",
		"Route 66", "route 6 6", "route66", "ROUTE 66!", "naïve—Ωmega", "NAÏVE Ωmega", "bad \xff byte", "bad \ufffd byte",
	}
	for _, a := range texts {
		for _, b := range texts {
			if same := Normalize(a) == Normalize(b); (Hash(a) == Hash(b)) != same {
				t.Errorf("%q and %q: normalised alike %v, hashed alike %v", a, b, same, !same)
			}
		}
	}
	for in, want := range map[string]string{
		" User, lives — in LISBON ": "user lives in lisbon",
		"Zürich CAFÉ!":              "zürich café",
		"naïve—ΩMEGA\tRoute 66":     "naïve ωmega route 66",
		"bad \xff byte":             "bad byte",
		"...":                       "",
	} {
		if got := Normalize(in); got != want {
			t.Errorf("Normalize(%q) = %q, want %q", in, got, want)
		}
	}
}
