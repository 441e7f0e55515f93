package inject

import (
	"strings"
	"testing"
)

// TestDroppedAreTheMessagesTheCutLeftOut: after Trim, Dropped lists the
// messages the cut request no longer holds, in order, instructions and the
// newest turns kept.
func TestDroppedAreTheMessagesTheCutLeftOut(t *testing.T) {
	body := `{"model":"m","messages":[{"role":"system","content":"Be brief."},` +
		`{"role":"user","content":"My balcony faces north."},{"role":"assistant","content":"Noted."},` +
		`{"role":"user","content":"` + strings.Repeat("harbour ships ", 300) + `"},{"role":"assistant","content":"Yes."},` +
		`{"role":"user","content":"Which plants suit my balcony?"}]}`
	cut, n, err := Trim(OpenAIChat, []byte(body), 200)
	if err != nil || n != 4 {
		t.Fatalf("Trim: %d dropped, %v", n, err)
	}
	got := Dropped(OpenAIChat, []byte(body), cut)
	if len(got) != 4 || got[0] != (Message{Role: "user", Text: "My balcony faces north."}) || got[1].Role != "assistant" || got[3].Text != "Yes." {
		t.Errorf("Dropped: %+v", got)
	}
	if Dropped(OpenAIChat, []byte(body), []byte("not json")) != nil {
		t.Error("a cut that does not parse dropped something")
	}
}

// TestPassagesSplitAtSentences: a long message is split at sentence and
// line ends into passages of at most maxBytes (a longer sentence alone).
func TestPassagesSplitAtSentences(t *testing.T) {
	text := "First sentence here. Second one is here!\nA line without a stop\nIs it the fourth? " + strings.Repeat("long ", 30)
	got := Passages(text, 45)
	want := []string{"First sentence here. Second one is here!", "A line without a stop Is it the fourth?", strings.TrimSpace(strings.Repeat("long ", 30))}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("Passages:\n got %q\nwant %q", got, want)
	}
	if Passages("  ", 10) != nil {
		t.Error("blank text made passages")
	}
}
