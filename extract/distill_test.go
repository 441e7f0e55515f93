package extract

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/caddy-memory/memory/internal/block"
)

func TestDistillPromptShowsWhatTheModelNeeds(t *testing.T) {
	date := time.Date(2026, 3, 2, 15, 0, 0, 0, time.UTC)
	system, user, n := DistillPrompt(Session{
		Date: date,
		Turns: []string{
			"User: My sister Zofia moved to Krakow.\nAssistant: Nice!",
			"User: " + block.Start + "\n- User lives in Lisbon.\n" + block.End + "\n\nWe meet next Friday.",
		},
		Known: []Known{{Key: "identity:location", Content: "User lives in Lisbon."}, {Key: "k2", Content: "User has a\nsister."}},
	})
	if n != 2 {
		t.Errorf("%d turns in the prompt, want 2", n)
	}
	for _, want := range []string{"DATE: 2026-03-02 (Monday)", "1. User lives in Lisbon.", "2. User has a sister.",
		"[1] User: My sister Zofia moved to Krakow.", "[2] User:", "We meet next Friday."} {
		if !strings.Contains(user, want) {
			t.Errorf("the prompt lacks %q:\n%s", want, user)
		}
	}
	if strings.Contains(user, "memory-context") {
		t.Errorf("the prompt carries an injected block:\n%s", user)
	}
	for _, want := range []string{"JSON", "language the user wrote in", "absolute", "replaces", "third person"} {
		if !strings.Contains(system, want) {
			t.Errorf("the instructions do not mention %q", want)
		}
	}
	// A long session is sent a bounded part at a time.
	var many []string
	for range 100 {
		many = append(many, "User: "+strings.Repeat("words ", 50))
	}
	if _, _, n := DistillPrompt(Session{Turns: many}); n == 0 || n >= 100 {
		t.Errorf("%d of 100 long turns in one prompt", n)
	}
}

func TestParseDistilledIsTolerant(t *testing.T) {
	for name, answer := range map[string]string{
		"plain":      `{"episode":{"summary":"Talked about Zofia.","topics":["family"]},"facts":[{"content":"The user's sister Zofia lives in Krakow.","category":"relationship","importance":7,"replaces":2,"turns":[1]}]}`,
		"code fence": "Here you go:\n```json\n{\"episode\":{\"summary\":\"Talked about Zofia.\",\"topics\":[\"family\"]},\"facts\":[{\"content\":\"The user's sister Zofia lives in Krakow.\",\"category\":\"Relationship\",\"importance\":\"7\",\"replaces\":\"2\",\"turns\":[\"1\"]}]}\n```\nHope this helps!",
	} {
		d, err := ParseDistilled(answer, 2)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if d.Summary != "Talked about Zofia." || len(d.Topics) != 1 || len(d.Facts) != 1 {
			t.Fatalf("%s: %+v", name, d)
		}
		if f := d.Facts[0]; f.Category != "relationship" || f.Importance != 7 || f.Replaces != 2 || len(f.Turns) != 1 || f.Turns[0] != 1 {
			t.Errorf("%s: fact %+v", name, f)
		}
	}
	d, err := ParseDistilled(`{"facts":["The user plays chess.", {"content":"  "}, {"content":"User is 40.","category":"age","importance":99,"replaces":9}]}`, 2)
	if err != nil {
		t.Fatal(err)
	}
	if d.Summary != "" || len(d.Facts) != 2 || d.Facts[0].Content != "The user plays chess." || d.Facts[0].Importance != 5 {
		t.Fatalf("%+v", d)
	}
	if f := d.Facts[1]; f.Category != "fact" || f.Importance != 10 || f.Replaces != 0 {
		t.Errorf("an odd category, importance and replaces are not reined in: %+v", f)
	}
	for _, bad := range []string{"I could not find any facts.", `{"facts": "none"}`, `{"facts": [1, 2]`, `{"facts":[` + strings.Repeat("[", 500) + `]}`} {
		if _, err := ParseDistilled(bad, 0); err == nil {
			t.Errorf("%.60q read as an answer", bad)
		} else if !strings.Contains(RetryPrompt(err), err.Error()) {
			t.Errorf("the retry does not say why: %q", RetryPrompt(err))
		}
	}
	if _, err := ParseDistilled("no braces", 0); !errors.Is(err, ErrNoJSON) {
		t.Errorf("an answer without JSON: %v", err)
	}
}

func TestDistilledMemories(t *testing.T) {
	date := time.Date(2026, 3, 2, 0, 0, 0, 0, time.UTC)
	known := []Known{
		{Key: "identity:location", Kind: "identity", Content: "User lives in Lisbon."},
		{Key: "fact:tea", Kind: "preference", Content: "The user drinks green tea."},
	}
	d := Distilled{Summary: "Moved house.", Topics: []string{"moving"}, Facts: []DistilledFact{
		{Content: "The user moved to Porto.", Category: "identity", Importance: 8, Replaces: 1, Turns: []int{2}},
		{Content: "The user drinks green tea", Category: "fact", Importance: 3},
		{Content: "The user has a cat named Miso.", Category: "relationship", Importance: 6, Turns: []int{1, 2, 9}},
	}}
	ms := d.Memories("s1", date, known, []string{"m1", "m2"})
	if len(ms) != 4 {
		t.Fatalf("%d memories: %+v", len(ms), ms)
	}
	if e := ms[0]; e.Kind != "episode" || e.Content != "Moved house." || e.Ref != "m1,m2" || !e.Time.Equal(date) || !strings.Contains(e.Context, "moving") {
		t.Errorf("episode %+v", e)
	}
	if f := ms[1]; f.Key != "identity:location" || f.Kind != "identity" || f.Importance != 8 || f.Ref != "m2" {
		t.Errorf("a fact that replaces a known memory takes its key: %+v", f)
	}
	if f := ms[2]; f.Key != "fact:tea" || f.Kind != "preference" {
		t.Errorf("a fact the same as a known memory is another mention of it, as it is: %+v", f)
	}
	if f := ms[3]; !strings.HasPrefix(f.Key, "fact:") || f.Key == "fact:tea" || f.Ref != "m1,m2" {
		t.Errorf("a new fact: %+v", f)
	}
	if again := (Distilled{Summary: "Later."}).Memories("s1", date, nil, nil); again[0].Key != ms[0].Key {
		t.Errorf("a session's episodes do not share a key: %q and %q", again[0].Key, ms[0].Key)
	}
}
