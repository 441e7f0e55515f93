package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestContentWordsAndHit(t *testing.T) {
	pref := "I have a severe nut allergy and must avoid all nuts and nut byproducts."
	got := contentWords(pref)
	for _, w := range []string{"severe", "allerg", "avoid", "nuts", "byprod"} {
		if !got[w] {
			t.Errorf("content words of %q lack %q: %v", pref, w, got)
		}
	}
	for _, w := range []string{"have", "must", "and", "nut"} {
		if got[w] {
			t.Errorf("%q is not a content word", w)
		}
	}
	block := "<memory-context source=\"caddy-memory\">\npreamble\n- [2026-01-02] User likes tea.\n- User has a severe allergy to nuts.\n</memory-context>"
	if !prefHit(pref, block) {
		t.Errorf("a line with 3 of the 6 content words is a hit")
	}
	if prefHit(pref, strings.Replace(block, "severe ", "", 1)) {
		t.Errorf("2 of 6 is no hit")
	}
	if prefHit(pref, "") {
		t.Errorf("no block, no hit")
	}
}

func TestJudgeUpdate(t *testing.T) {
	c := updateCase{Before: [][]string{{"I live in Lisbon."}, {"What's the weather like?"}}, New: []string{"Porto"}, Old: []string{"Lisbon"}}
	for _, tc := range []struct {
		block               string
		newFound, old, echo bool
	}{
		{"- User moved to Porto.\n", true, false, false},
		{"- User moved to Porto.\n- [2026-01-01] User: I live in Lisbon.\n", true, true, false},
		{"- User moved from Lisbon to Porto.\n", true, false, false},
		{"- User moved to Porto.\n- (earlier) User lived in Lisbon.\n", true, false, false},
		{"- User: What's the weather like?\n", false, false, true},
		{"- User: I live in Lisbonia.\n", false, false, false},
		{"- User stopped living in Lisbon.\n", false, false, false},
		{"- User lives in Portos.\n", true, false, false},
	} {
		n, o, e := judgeUpdate(c, tc.block)
		if n != tc.newFound || o != tc.old || e != tc.echo {
			t.Errorf("%q: new %v old-as-current %v echo %v, want %v %v %v", tc.block, n, o, e, tc.newFound, tc.old, tc.echo)
		}
	}
}

func TestTheUpdateSetIsWellFormed(t *testing.T) {
	cs, err := loadUpdates("testdata/updates.json")
	if err != nil {
		t.Fatal(err)
	}
	if len(cs) < 20 {
		t.Errorf("%d cases, want at least 20", len(cs))
	}
	seen := map[string]bool{}
	for _, c := range cs {
		if seen[c.ID] {
			t.Errorf("case %s twice", c.ID)
		}
		seen[c.ID] = true
		asked := false
		for _, conv := range c.Before {
			for _, turn := range conv {
				asked = asked || strings.HasSuffix(turn, "?")
			}
		}
		if !asked {
			t.Errorf("case %s: no earlier question, so echoes go unmeasured", c.ID)
		}
	}
}

// TestProxiedRun runs PrefEval, the updates and a journey end to end
// through Caddy on a tiny split: a preference sharing a word with its
// question reaches its block.
func TestProxiedRun(t *testing.T) {
	dir := t.TempDir()
	items := `{"id":"a-0","topic":"a","preference":"I have a severe peanut allergy and avoid peanuts entirely.","question":"What snacks with peanut butter are good?","persona_turns":["Hello! I have a severe peanut allergy and avoid peanuts entirely. What's new?"]}
{"id":"b-0","topic":"b","preference":"I prefer quiet hotels away from nightlife.","question":"Which hotel do you suggest?","persona_turns":["I prefer quiet hotels away from nightlife."]}
`
	os.WriteFile(filepath.Join(dir, "items.jsonl"), []byte(items), 0o600)
	os.WriteFile(filepath.Join(dir, "distractors.json"), []byte(`[["hi"],["write a poem"],["what is 2+2?"],["convert this to go"]]`), 0o600)
	upd := filepath.Join(dir, "updates.json")
	os.WriteFile(upd, []byte(`[{"id":"x","before":[["I live in Lisbon."],["Where is a good park?"]],"update":["I moved to Porto."],"question":"Where do I live?","new":["Porto"],"old":["Lisbon"]}]`), 0o600)
	jrn := filepath.Join(dir, "journeys.json")
	os.WriteFile(jrn, []byte(`{"people":[{"id":"p","conversations":[["I'm allergic to penicillin."],["Which wine goes with fish?"]],
		"probes":[{"ask":"I have a sore throat, what could my doctor prescribe?","must":["penicillin"]},{"ask":"hi!","empty":true}]}]}`), 0o600)
	pause = 200 * time.Millisecond
	out := filepath.Join(dir, "out.json")
	if err := runProxied(proxied{prefDir: dir, modes: "explicit", perTopic: 1, prefs: 2, updates: upd, journeys: jrn,
		storage: filepath.Join(dir, "storage"), workers: 2, jsonOut: out}); err != nil {
		t.Fatal(err)
	}
	raw, _ := os.ReadFile(out)
	var got struct {
		Explicit prefResult    `json:"prefeval_explicit"`
		Updates  updateResult  `json:"updates"`
		Journeys journeyResult `json:"journeys"`
	}
	if err := json.Unmarshal(raw, &got); err != nil {
		t.Fatal(err)
	}
	if got.Explicit.Questions != 2 || got.Explicit.ByTopic["a"] != 1 || got.Updates.Cases != 1 {
		t.Errorf("results: %s", raw)
	}
	// The journey's canonical allergy, learned before the probes were
	// asked, is in the first probe's block.
	if j := got.Journeys.All; j.Probes != 2 || j.Hits != 1 || j.SmallTalk != 1 || got.Journeys.Probes[0].Tokens == 0 {
		t.Errorf("journeys: %+v", got.Journeys)
	}
}
