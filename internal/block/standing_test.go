package block

import (
	"strings"
	"testing"
	"time"
)

// Standing facts lead the block, undated, within their own budget; once
// one does not fit, none of a higher rank takes its place; items follow.
func TestRenderWithStanding(t *testing.T) {
	standing := []Standing{
		{Text: "User is allergic to peanuts.", Rank: 0},
		{Text: "User has type 2 diabetes, diagnosed years ago after a long illness, and watches every meal.", Rank: 0},
		{Text: "User prefers tea.", Rank: 3},
	}
	items := []Item{{Text: "User: I went to Lisbon in May.", Time: time.Date(2026, 5, 2, 0, 0, 0, 0, time.UTC)}}
	block, kept, keptItems, texts := RenderWith(standing, 20, items, 800, 1)
	if len(kept) != 1 || kept[0] != 0 || len(keptItems) != 1 {
		t.Fatalf("kept standing %v, items %v:\n%s", kept, keptItems, block)
	}
	if !strings.Contains(block, "\n- User is allergic to peanuts.\n- [") || strings.Contains(block, "tea") {
		t.Errorf("block:\n%s", block)
	}
	if len(texts) != 2 || texts[0] != "User is allergic to peanuts." {
		t.Errorf("texts %q", texts)
	}
	// With room for all, all of them, in order.
	if _, kept, _, _ := RenderWith(standing, 200, nil, 800, 10); len(kept) != 3 {
		t.Errorf("kept %v, want all three", kept)
	}
	// Measured once (a cached profile), the same block.
	measured := make([]Standing, len(standing))
	for i, s := range standing {
		measured[i] = StandingOf(s.Text, s.Rank)
	}
	if again, _, _, _ := RenderWith(measured, 20, items, 800, 1); again != block {
		t.Errorf("measured standing facts make another block:\n%s\nagainst\n%s", again, block)
	}
	// Nothing at all: no block.
	if block, _, _, _ := RenderWith(nil, 200, nil, 800, 10); block != "" {
		t.Errorf("empty block %q", block)
	}
}
