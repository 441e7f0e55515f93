package index

import (
	"math/rand/v2"
	"strings"
	"testing"
)

// TestShownRoundTrip: a kept text decodes byte for byte, whatever its
// white space, letters or words (long ones, empty ones between two
// spaces, line breaks, tabs, accents), and a word is numbered once.
func TestShownRoundTrip(t *testing.T) {
	var w wordTable
	pieces := []string{"User:", "likes", "coffee", "café", "Ünïcödé", "", " ", "\n", "\t", "\r\n", "Assistant:",
		"a-very-long-identifier-that-is-not-a-word-0123456789", "https://example.com/x?y=z", ".", "😀", "\x00"}
	rng := rand.New(rand.NewPCG(1, 2))
	texts := []string{"", " ", "\n", "  two  spaces  ", "User: hi\nAssistant: hello", "trailing ", "\nleading"}
	for range 2000 {
		var b strings.Builder
		for range rng.IntN(30) {
			b.WriteString(pieces[rng.IntN(len(pieces))])
			switch rng.IntN(4) {
			case 0:
				b.WriteByte(' ')
			case 1:
				b.WriteByte('\n')
			}
		}
		texts = append(texts, b.String())
	}
	for _, text := range texts {
		enc := w.appendShown(nil, []byte(text))
		if got := string(w.appendText(nil, enc)); got != text {
			t.Fatalf("%q decodes as %q", text, got)
		}
	}
	n := len(w.own.at)
	for _, text := range texts {
		w.appendShown(nil, []byte(text))
	}
	if len(w.own.at) != n {
		t.Errorf("texts kept again numbered %d more words: words are not shared", len(w.own.at)-n)
	}
}

// TestShownIsCompact: a transcript turn's text takes well under its
// length once its words are known.
func TestShownIsCompact(t *testing.T) {
	var w wordTable
	text := []byte("User: what should I cook for my sister's birthday dinner on Saturday\nAssistant: a lemon risotto with basil and a tomato salad would suit a spring evening")
	w.appendShown(nil, text)
	if enc := w.appendShown(nil, text); len(enc)*2 > len(text) {
		t.Errorf("%d bytes kept for a text of %d", len(enc), len(text))
	}
}

// BenchmarkShownText is what a recall pays to render a memory from the
// postings: a transcript turn's text decoded.
func BenchmarkShownText(b *testing.B) {
	var w wordTable
	text := []byte("User: what should I cook for my sister's birthday dinner on Saturday, she is vegetarian and loves lemons\nAssistant: a lemon risotto with basil and a tomato salad would suit a spring evening; add a lemon tart for dessert and some sparkling water")
	s := Shown{enc: w.appendShown(nil, text), words: &w, kept: true}
	b.ReportAllocs()
	for b.Loop() {
		if t, _, _ := s.Text(); len(t) != len(text) {
			b.Fatal(t)
		}
	}
}
