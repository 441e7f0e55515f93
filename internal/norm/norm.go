// Package norm owns when two memory texts count as the same: the normal
// form they are compared in (Normalize, Hash) and the short hashes that
// stored keys and ids are made of (Short). Every package that compares or
// keys texts uses it, so they cannot disagree.
package norm

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Normalize lowercases and collapses whitespace and punctuation, so two
// statements that differ only in case, spacing or final punctuation compare
// equal.
func Normalize(s string) string {
	b := make([]byte, 0, len(s))
	space, started := false, false
	for i := 0; i < len(s); {
		if c := s[i]; c < utf8.RuneSelf {
			i++
			if c = Lower[c]; c == 0 {
				space = true
				continue
			}
			if space && started {
				b = append(b, ' ')
			}
			space, started = false, true
			b = append(b, c)
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		i += size
		if r, ok := lowerLetter(r); ok {
			if space && started {
				b = append(b, ' ')
			}
			space, started = false, true
			b = utf8.AppendRune(b, r)
		} else {
			space = true
		}
	}
	return string(b)
}

// Hash is a hash of Normalize(s), computed without building it: a search
// compares the texts of all its candidates.
func Hash(s string) uint64 {
	const prime = 1099511628211
	h := uint64(14695981039346656037) // FNV-1a
	space, started := false, false
	for i := 0; i < len(s); {
		var r rune
		if c := s[i]; c < utf8.RuneSelf {
			i++
			if c = Lower[c]; c == 0 {
				space = true
				continue
			}
			r = rune(c)
		} else {
			var size int
			r, size = utf8.DecodeRuneInString(s[i:])
			i += size
			var ok bool
			if r, ok = lowerLetter(r); !ok {
				space = true
				continue
			}
		}
		if space && started {
			h = (h ^ ' ') * prime
		}
		space, started = false, true
		h = (h ^ uint64(r)) * prime
	}
	return h
}

// Same reports whether a and b normalise alike, building the normal forms
// only when their hashes agree.
func Same(a, b string) bool {
	return a == b || Hash(a) == Hash(b) && Normalize(a) == Normalize(b)
}

// Short is the first n bytes of the SHA-256 of s, in hex: the stable part
// of stored keys and derived ids. Changing it changes keys on disk.
func Short(s string, n int) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:n])
}

// Normalize and Hash run on every memory written and on every candidate of
// a search, so ASCII, nearly all of it, takes a table instead of the
// unicode package, in a loop of its own.

// lowerLetter is a non-ASCII rune as Normalize keeps it: lowercased, as
// strings.ToLower does (without a copy), and false when it is no letter
// or digit (a separator).
func lowerLetter(r rune) (rune, bool) {
	r = unicode.ToLower(r)
	return r, unicode.IsLetter(r) || unicode.IsDigit(r)
}

// Lower maps ASCII letters and digits to their lowercase form and every
// other ASCII byte, a separator, to 0.
var Lower = func() (t [utf8.RuneSelf]byte) {
	for c := byte('0'); c <= '9'; c++ {
		t[c] = c
	}
	for c := byte('a'); c <= 'z'; c++ {
		t[c], t[c-'a'+'A'] = c, c
	}
	return t
}()

// Unaccented is a Latin letter without its accent ("é" is "e"): the
// rules compare a word's stem across the languages they read, where one
// writes the accent another leaves off.
func Unaccented(r rune) rune {
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
