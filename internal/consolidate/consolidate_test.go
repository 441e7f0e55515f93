package consolidate

import (
	"slices"
	"testing"
	"time"
)

var day = 24 * time.Hour

func TestSalienceDecaysWithIdleTime(t *testing.T) {
	now := time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)
	m := Memory{Kind: "preference", Updated: now}
	if s := Salience(m, now); s != 0.5 {
		t.Errorf("a new fact of no given importance: %v, want 0.5", s)
	}
	month := Salience(m, now.Add(30*day))
	if month < 0.18 || month > 0.19 {
		t.Errorf("after 30 idle days: %v, want 0.5/e", month)
	}
	used := m
	used.LastUsed, used.Uses = now.Add(29*day), 3
	if s := Salience(used, now.Add(30*day)); s <= 0.5 {
		t.Errorf("used the day before: %v, want more than fresh and unused", s)
	}
	important := m
	important.Importance, important.Boost, important.Mentions = 9, 2, 3
	if s := Salience(important, now); s != 1 {
		t.Errorf("important, promoted and restated: %v, want the ceiling 1", s)
	}
}

func TestPlan(t *testing.T) {
	now := time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)
	cfg := Config{TurnRetention: 90 * day, EpisodeRetention: 365 * day, SalienceFloor: 0.2}
	ms := []Memory{
		{ID: 1, Kind: "turn", Updated: now.Add(-100 * day)},                                          // pruned
		{ID: 2, Kind: "turn", Updated: now.Add(-10 * day), Content: "I swim at the lido every week"}, // kept, confirms 7
		{ID: 3, Kind: "episode", Updated: now.Add(-400 * day)},                                       // pruned
		{ID: 4, Kind: "turn", Updated: now.Add(-200 * day), Pinned: true},                            // pinned: kept
		{ID: 5, Kind: "preference", Content: "The user likes strong black coffee in the morning", Updated: now.Add(-5 * day), Mentions: 2},
		{ID: 6, Kind: "preference", Content: "The user likes strong black coffee in the morning.", Updated: now.Add(-3 * day)}, // merged into 5
		{ID: 7, Kind: "habit", Content: "The user swims at the lido", Updated: now.Add(-20 * day)},                             // promoted
		{ID: 8, Kind: "habit", Content: "The user collects stamps", Updated: now.Add(-60 * day)},                               // evicted
		{ID: 9, Kind: "habit", Content: "The user knits scarves", Updated: now.Add(-60 * day), Source: "api"},                  // api: kept
		{ID: 10, Kind: "identity", Content: "User's name is Ana.", Updated: now.Add(-300 * day)},                               // identity: kept
		{ID: 11, Kind: "turn", Updated: now.Add(-5 * day), Content: "Off to the lido, I swim there on Sundays"},
		{ID: 12, Kind: "episode", Updated: now.Add(-2 * day), Content: "The user talked about how they swim at the lido."},
	}
	p := PlanFor(ms, now, cfg)
	if !slices.Equal(p.Prune, []uint64{1, 3}) {
		t.Errorf("pruned %v, want the old turn and episode", p.Prune)
	}
	if len(p.Merges) != 1 || p.Merges[0].Into != 5 || !slices.Equal(p.Merges[0].Others, []uint64{6}) {
		t.Errorf("merges %+v, want 6 into 5 (more mentions)", p.Merges)
	}
	if len(p.Promotions) != 1 || p.Promotions[0].ID != 7 || p.Promotions[0].Boost != 1 {
		t.Errorf("promotions %+v, want 7 confirmed by three recent turns and episodes", p.Promotions)
	}
	if !slices.Equal(p.Evict, []uint64{8}) {
		t.Errorf("evicted %v, want only the faded, idle fact of no one's choosing", p.Evict)
	}
	// Nothing pinned or saved on purpose is touched, in any step.
	for _, m := range ms {
		if !Explicit(m) {
			continue
		}
		for _, ids := range [][]uint64{p.Prune, p.Evict, p.PruneFacts} {
			if slices.Contains(ids, m.ID) {
				t.Errorf("memory %d, saved on purpose, is in the plan: %+v", m.ID, p)
			}
		}
	}
	// Facts past a retention, when one is set, are deleted (recoverable).
	cfg.FactRetention = 30 * day
	if p := PlanFor(ms, now, cfg); !slices.Contains(p.PruneFacts, 10) || slices.Contains(p.PruneFacts, 9) {
		t.Errorf("facts past their retention: %v", p.PruneFacts)
	}
}

// Facts of one kind that restate each other with a word or two more or
// less are merged; a negation, another number or more than two words
// more keep them apart.
func TestMergeRestatements(t *testing.T) {
	now := time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)
	fact := func(id uint64, kind, content string, ago int) Memory {
		return Memory{ID: id, Kind: kind, Content: content, Updated: now.Add(-time.Duration(ago) * day)}
	}
	for _, tc := range []struct {
		a, b  string
		merge bool
	}{
		{"Ana lives in Porto, Portugal.", "Ana lives in Porto, Portugal now.", true},
		{"The user's sister Zofia lives in Krakow.", "The user's sister Zofia lives in Krakow, Poland.", true},
		{"User is vegetarian and cooks at home.", "User is not vegetarian and cooks at home.", false},
		{"User is 34 years old.", "User is 35 years old.", false},
		{"User has two kids at school.", "User has three kids at school.", false},
		{"Ana lives in Porto.", "Ana lives in Porto with her sister Zofia and two cats.", false},
		{"User plays tennis on Sundays.", "User stopped playing tennis on Sundays.", false},
	} {
		ms := []Memory{fact(1, "identity", tc.a, 10), fact(2, "identity", tc.b, 2)}
		p := PlanFor(ms, now, Config{})
		if got := len(p.Merges) == 1; got != tc.merge {
			t.Errorf("%q / %q: merged %v, want %v", tc.a, tc.b, got, tc.merge)
		}
		if tc.merge && len(p.Merges) == 1 && (p.Merges[0].Into != 2 || !slices.Equal(p.Merges[0].Others, []uint64{1})) {
			t.Errorf("%q / %q: merges %+v, want the older into the newer", tc.a, tc.b, p.Merges)
		}
	}
	// Only within one kind.
	ms := []Memory{fact(1, "identity", "Ana lives in Porto, Portugal.", 10), fact(2, "preference", "Ana lives in Porto, Portugal now.", 2)}
	if p := PlanFor(ms, now, Config{}); len(p.Merges) != 0 {
		t.Errorf("facts of two kinds merged: %+v", p.Merges)
	}
}
