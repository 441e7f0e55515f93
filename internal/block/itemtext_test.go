package block

import (
	"math/rand/v2"
	"strings"
	"testing"
)

// A long text shows in the block exactly as it would were it made one
// line whole: whatever its white space (runs that shrink it far below
// what is read first, newlines, none) and its letters (ASCII or not,
// cut mid-rune by the prefix).
func TestItemTextOfLongTextIsTheWholeTextsLine(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 7))
	pieces := []string{"word", "trail", " ", "  ", "\n", "\t\t", strings.Repeat(" ", 300), "é", "日本語", "🙂", "a,", "b;", "\u00a0"}
	for i := range 3000 {
		var b strings.Builder
		size := rng.IntN(3 * itemPrefix)
		if i%10 == 0 {
			size = itemPrefix + rng.IntN(8) - 4 // around the prefix's end
		}
		for b.Len() < size {
			b.WriteString(pieces[rng.IntN(len(pieces))])
		}
		text := b.String()
		want := Truncate(oneLine(text), MaxItemTokens)
		if got := itemText(Item{Text: text}); got != want {
			t.Fatalf("text of %d bytes:\n got  %q\n want %q", len(text), got, want)
		}
	}
}

// BenchmarkRenderLongTurns renders ten turns of the length a chat's
// answers have (a few kilobytes each).
func BenchmarkRenderLongTurns(b *testing.B) {
	items := make([]Item, 10)
	for i := range items {
		items[i] = Item{Text: "User: " + strings.Repeat("how do I set up the garden beds for spring? ", 4) +
			"\nAssistant: " + strings.Repeat("Start with the soil:\n loosen it, add compost, and  water it well. ", 100)}
	}
	b.ReportAllocs()
	for b.Loop() {
		Render(items, 800, 10)
	}
}

// BenchmarkRenderTurns renders ten transcript turns of a few hundred
// bytes, single-spaced as most are: only the line break between the
// user's words and the answer is not a space.
func BenchmarkRenderTurns(b *testing.B) {
	items := make([]Item, 10)
	for i := range items {
		items[i] = Item{Text: "User: " + strings.Repeat("what was the name of the trail we hiked ", 3) +
			"near the river\nAssistant: " + strings.Repeat("It was the Ridge Loop, a six mile trail with views over the valley. ", 4) + "Enjoy"}
	}
	b.ReportAllocs()
	for b.Loop() {
		Render(items, 800, 10)
	}
}
