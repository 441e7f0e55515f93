package block

import (
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

func TestRenderLayout(t *testing.T) {
	at := time.Date(2024, 3, 5, 23, 30, 0, 0, time.FixedZone("EST", -5*3600)) // 2024-03-06 in UTC
	items := []Item{
		{Text: "User lives in Oslo.", Time: at},
		{Text: "User is vegetarian.\n\n  Since   2019.", Time: time.Date(2023, 12, 1, 0, 0, 0, 0, time.UTC)},
		{Text: "User likes Tom & Jerry <cartoons>."},
	}
	block, kept, texts := Render(items, 1000, 10)
	if len(kept) != 3 || kept[0] != 0 || kept[1] != 1 || kept[2] != 2 {
		t.Errorf("kept = %v, want [0 1 2]", kept)
	}
	// What the proxy reports as injected is what the block shows.
	if want := []string{"User lives in Oslo.", "User is vegetarian. Since 2019.", "User likes Tom & Jerry <cartoons>."}; !slices.Equal(texts, want) {
		t.Errorf("texts = %q, want %q", texts, want)
	}
	if !strings.HasPrefix(block, Start+"\n") || !strings.HasSuffix(block, "\n"+End) {
		t.Errorf("block not wrapped in markers:\n%s", block)
	}
	for _, line := range []string{
		"\n- [2024-03-06] User lives in Oslo.\n",
		"\n- [2023-12-01] User is vegetarian. Since 2019.\n",
		"\n- User likes Tom & Jerry <cartoons>.\n",
	} {
		if !strings.Contains(block, line) {
			t.Errorf("block lacks line %q:\n%s", line, block)
		}
	}
	if strings.Index(block, "Oslo") > strings.Index(block, "vegetarian") {
		t.Errorf("items not in the given order:\n%s", block)
	}
	if strings.Count(block, Start) != 1 || strings.Count(block, End) != 1 {
		t.Errorf("markers repeated:\n%s", block)
	}
	if Strip(block) != "" {
		t.Errorf("Strip(block) = %q, want empty", Strip(block))
	}
	if !regexp.MustCompile(`(?m)^- \[\d{4}-\d{2}-\d{2}\] `).MatchString(block) {
		t.Errorf("no YYYY-MM-DD date:\n%s", block)
	}
}

func TestRenderBudget(t *testing.T) {
	var items []Item
	for i := 0; i < 40; i++ {
		items = append(items, Item{Text: strings.Repeat("memory number "+string(rune('a'+i%26))+" ", 1+i%7), Time: time.Date(2024, 1, 1+i%28, 0, 0, 0, 0, time.UTC)})
	}
	lastKept := 0
	for _, maxTokens := range []int{60, 70, 80, 100, 150, 200, 400, 800, 5000} {
		block, kept, _ := Render(items, maxTokens, 0)
		if block == "" {
			continue
		}
		if n := EstimateTokens(block); n > maxTokens {
			t.Errorf("maxTokens %d: block estimates %d tokens", maxTokens, n)
		}
		if strings.Count(block, "\n- ") != len(kept) {
			t.Errorf("maxTokens %d: %d lines for %d kept items", maxTokens, strings.Count(block, "\n- "), len(kept))
		}
		lastKept = len(kept)
	}
	if lastKept != len(items) {
		t.Errorf("a budget of 5000 tokens kept %d of %d small items", lastKept, len(items))
	}

	block, kept, _ := Render(items, 5000, 3)
	if len(kept) != 3 || strings.Count(block, "\n- ") != 3 {
		t.Errorf("maxItems 3: kept %v", kept)
	}
}

func TestRenderSkipsWhatDoesNotFit(t *testing.T) {
	small1 := Item{Text: "User lives in Oslo."}
	big := Item{Text: strings.Repeat("a long transcript turn about many things ", 12)} // ~125 tokens
	small2 := Item{Text: "User is vegetarian."}
	withSmall, both, _ := Render([]Item{small1, small2}, 1000, 0)
	if len(both) != 2 {
		t.Fatal("setup: two small items do not fit in 1000 tokens")
	}
	budget := EstimateTokens(withSmall) + 20 // room for both small ones, not the big one
	block, kept, _ := Render([]Item{small1, big, small2}, budget, 0)
	if len(kept) != 2 || kept[0] != 0 || kept[1] != 2 {
		t.Errorf("kept = %v, want [0 2]", kept)
	}
	if strings.Contains(block, "transcript") || !strings.Contains(block, "vegetarian") {
		t.Errorf("block:\n%s", block)
	}
	if EstimateTokens(block) > budget {
		t.Errorf("block %d tokens over budget %d", EstimateTokens(block), budget)
	}
}

func TestRenderNothingFits(t *testing.T) {
	for _, tt := range []struct {
		items     []Item
		maxTokens int
	}{
		{nil, 1000},
		{[]Item{}, 1000},
		{[]Item{{Text: "User lives in Oslo."}}, 10},
		{[]Item{{Text: "User lives in Oslo."}}, 0},
	} {
		block, kept, _ := Render(tt.items, tt.maxTokens, 5)
		if block != "" || kept != nil {
			t.Errorf("Render(%v, %d) = %q, %v; want empty", tt.items, tt.maxTokens, block, kept)
		}
	}
}

func TestRenderTruncatesLongItems(t *testing.T) {
	long := strings.Repeat("The user described their whole holiday in great detail. ", 60)
	block, kept, _ := Render([]Item{{Text: long, Time: time.Date(2024, 5, 1, 0, 0, 0, 0, time.UTC)}, {Text: "short"}}, 2000, 0)
	if len(kept) != 2 {
		t.Fatalf("kept = %v", kept)
	}
	var line string
	for _, l := range strings.Split(block, "\n") {
		if strings.HasPrefix(l, "- [2024-05-01] ") {
			line = l
		}
	}
	if !strings.HasSuffix(line, "…") {
		t.Errorf("long item not truncated with an ellipsis: %q", line)
	}
	if n := EstimateTokens(strings.TrimPrefix(line, "- [2024-05-01] ")); n > MaxItemTokens {
		t.Errorf("truncated item estimates %d tokens, over MaxItemTokens %d", n, MaxItemTokens)
	}
	if !strings.Contains(block, "\n- short\n") {
		t.Errorf("the short item is missing:\n%s", block)
	}
}

func TestStrip(t *testing.T) {
	blk := Start + "\n- User lives in Oslo.\n" + End
	tests := []struct{ name, in, want string }{
		{"no markers", "  Hello,\n world  ", "  Hello,\n world  "},
		{"empty", "", ""},
		{"one block", "before " + blk + " after", "before\n\nafter"},
		{"block only", blk, ""},
		{"two blocks", blk + "A" + blk + "B" + blk, "A\n\nB"},
		{"block without end marker", "Sure. " + Start + "\n- User lives in", "Sure."},
		{"complete then cut block", "x" + blk + "y " + Start + " - cut", "x\n\ny"},
		{"end marker alone", "text " + End + " more", "text " + End + " more"},
		{"similar but different tag", `<memory-context source="other">x</memory-context>`, `<memory-context source="other">x</memory-context>`},
	}
	for _, tt := range tests {
		if got := Strip(tt.in); got != tt.want {
			t.Errorf("%s: Strip(%q) = %q, want %q", tt.name, tt.in, got, tt.want)
		}
	}
}

func TestEstimateTokens(t *testing.T) {
	tests := []struct {
		in   string
		want int
	}{
		{"", 0},
		{"a", 1},
		{"abcd", 1},
		{"abcde", 2},
		{strings.Repeat("x", 400), 100},
		{"日本語", 3},
		{"héllo", 2}, // 4 ASCII bytes -> 1, one accented letter -> 1
		{"😀😀", 2},
		{"Zoë & 日本", 2 + 3},
	}
	for _, tt := range tests {
		if got := EstimateTokens(tt.in); got != tt.want {
			t.Errorf("EstimateTokens(%q) = %d, want %d", tt.in, got, tt.want)
		}
	}
}

func TestTruncate(t *testing.T) {
	t.Run("fits unchanged", func(t *testing.T) {
		for _, s := range []string{"", "short text", "日本語"} {
			if got := Truncate(s, 10); got != s {
				t.Errorf("Truncate(%q, 10) = %q", s, got)
			}
		}
	})
	check := func(t *testing.T, s string, max int) string {
		t.Helper()
		got := Truncate(s, max)
		if !utf8.ValidString(got) {
			t.Fatalf("Truncate(%q, %d) = %q: invalid UTF-8", s, max, got)
		}
		if !strings.HasSuffix(got, "…") {
			t.Errorf("Truncate(%q, %d) = %q: no ellipsis", s, max, got)
		}
		if n := EstimateTokens(got); n > max {
			t.Errorf("Truncate(%q, %d) = %q: %d tokens", s, max, got, n)
		}
		if !strings.HasPrefix(s, strings.TrimSuffix(got, "…")) {
			t.Errorf("Truncate(%q, %d) = %q: not a prefix", s, max, got)
		}
		return strings.TrimSuffix(got, "…")
	}
	t.Run("word boundary", func(t *testing.T) {
		s := "The quick brown fox jumps over the lazy dog and keeps running far away"
		kept := check(t, s, 8)
		if next := s[len(kept)]; next != ' ' {
			t.Errorf("cut mid-word: %q|%q", kept, s[len(kept):])
		}
		if len(kept) < 16 {
			t.Errorf("kept only %q", kept)
		}
	})
	t.Run("no spaces", func(t *testing.T) {
		s := strings.Repeat("abcdefghij", 20)
		kept := check(t, s, 10)
		if len(kept) < 30 {
			t.Errorf("kept only %d bytes of a spaceless string", len(kept))
		}
	})
	t.Run("multibyte without spaces", func(t *testing.T) {
		s := strings.Repeat("日本語のテキスト", 10)
		kept := check(t, s, 10)
		if utf8.RuneCountInString(kept) != 9 {
			t.Errorf("kept %d runes, want 9 (+ ellipsis = 10 tokens)", utf8.RuneCountInString(kept))
		}
	})
	t.Run("mixed multibyte and ASCII", func(t *testing.T) {
		s := strings.Repeat("Café crème über naïve façade ", 20)
		check(t, s, 12)
	})
	t.Run("emoji", func(t *testing.T) {
		check(t, strings.Repeat("😀", 50), 5)
	})
	t.Run("trailing punctuation dropped", func(t *testing.T) {
		for max := 3; max <= 12; max++ {
			kept := check(t, "alpha, beta; gamma: delta, epsilon, zeta, eta, theta, iota, kappa", max)
			if kept != "" && strings.ContainsAny(kept[len(kept)-1:], ",;: ") {
				t.Errorf("Truncate(_, %d) kept trailing punctuation: %q", max, kept)
			}
		}
	})
}

// TestOneLineIsFieldsJoined: the block's one-line form of a memory is what
// joining its words with single spaces gives, whatever the white space,
// Unicode or invalid UTF-8; and the token estimate does not depend on
// which path counts it.
func TestOneLineIsFieldsJoined(t *testing.T) {
	for _, s := range []string{
		"", " ", "word", "two words", " lead", "trail ", "a  b", "a\nb", "User: hi\nAssistant:  hello\t there\r\n",
		"no\u00a0break\u2003em space", "\u3000ideographic\u3000space\u3000", "caf\u00e9 na\u00efve \u65e5\u672c\u8a9e",
		"bad \xff\xfe bytes\x80", "\x85next line\u0085", "\u200bzero width is not a space", "tab\tand\vvertical\ffeed",
		"User: hi\nAssistant: hello", "a\tb\nc d", "\u65e5\u672c\n\u8a9e", "a\n\u00a0b", "x\n\xff", "\xff\ny", "a\nb\n", "\na\nb",
	} {
		if got, want := oneLine(s), strings.Join(strings.Fields(s), " "); got != want {
			t.Errorf("oneLine(%q) = %q, want %q", s, got, want)
		}
		ascii := 0 // bytes under 0x80, each a rune of its own
		for i := range len(s) {
			ascii += int(s[i]>>7) ^ 1
		}
		other := utf8.RuneCountInString(s) - ascii
		if got, want := EstimateTokens(s), (ascii+3)/4+other; got != want {
			t.Errorf("EstimateTokens(%q) = %d, want %d", s, got, want)
		}
	}
}

// TestEarlierSectionShowsTheBestInOrder: the section takes items best
// first while they fit and shows them in the conversation's order.
func TestEarlierSectionShowsTheBestInOrder(t *testing.T) {
	items := []Earlier{{Text: "User: best, said late.", At: 9}, {Text: "User: " + strings.Repeat("too long ", 100), At: 1}, {Text: "User: second best, said early.", At: 2}}
	got := RenderEarlier(items, 40)
	if !strings.HasPrefix(got, earlierHeader+"\n") || strings.Contains(got, "too long") ||
		strings.Index(got, "second best") > strings.Index(got, "best, said late") {
		t.Errorf("section:\n%s", got)
	}
}

// BenchmarkRender renders a block as the proxy does: ten turn-sized
// memories (a question and an answer of a few hundred bytes each).
func BenchmarkRender(b *testing.B) {
	items := make([]Item, 10)
	for i := range items {
		items[i] = Item{Text: "User: " + strings.Repeat("what was the name of the trail we hiked near the river ", 3) +
			"\nAssistant: " + strings.Repeat("It was the  Ridge Loop,\n a six mile trail with views over the valley. ", 5), Time: time.Now()}
	}
	b.ReportAllocs()
	for b.Loop() {
		Render(items, 800, 10)
	}
}
