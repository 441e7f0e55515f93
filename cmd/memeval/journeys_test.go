package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// day is the run's date the grader's tests use.
var day = time.Date(2026, time.January, 15, 10, 0, 0, 0, time.UTC)

// testProbe compiles a probe as loadJourneys does.
func testProbe(t *testing.T, pr *probe) *probe {
	t.Helper()
	pe := &person{ID: "t", Conversations: [][]string{{"hi"}}, Probes: []*probe{pr}}
	if err := pe.compile(day); err != nil {
		t.Fatal(err)
	}
	return pr
}

func blockOf(lines ...string) string {
	return "<memory-context source=\"caddy-memory\">\nMemories of this user from earlier conversations.\n- " +
		strings.Join(lines, "\n- ") + "\n</memory-context>"
}

func TestJudgeProbe(t *testing.T) {
	pr := &probe{Ask: "What should I cook tonight?", Must: []anyOf{{"teacher", "teach"}, {"egg"}}}
	pr.MustNot.Stale = []string{`\bbank`, `banque`}
	pr.MustNot.Other = []string{`\bRome\b`, `User is allergic to eggs`}
	pr.MustNot.Echo = []string{`haiku`}
	testProbe(t, pr)
	earlier := []string{"I work at a bank.", "Which wine goes with fish?", "Write me a haiku.", "I'm at the airport.  What can I do in Lisbon?", "Is it far?\nHow far?"}
	for _, tc := range []struct {
		name                 string
		block                string
		hit                  bool
		stale, other, echoes int
		profile              bool // the hit is on the profile's (undated) lines
	}{
		{"needed facts, nothing wrong", blockOf("User is a teacher.", "User's daughter Mia is allergic to eggs."), true, 0, 0, 0, true},
		{"one group missing is a miss", blockOf("User is a teacher."), false, 0, 0, 0, false},
		{"no block", "", false, 0, 0, 0, false},
		{"the replaced value shown as current", blockOf("User works at a bank.", "User is a teacher.", "Mia: eggs"), true, 1, 0, 0, true},
		{"a dated transcript line shows it too", blockOf("[2026-01-02] User: I work at a bank.", "User is a teacher."), false, 1, 0, 0, false},
		{"a line saying it ended is not stale", blockOf("User quit the bank.", "User: Ich arbeite nicht mehr bei der Bank.", "User: je ne travaille plus à la banque"), false, 0, 0, 0, false},
		{"a resignation said as people say it is not stale", blockOf(`User said: "Handed in my notice at the bank, starting Monday".`, `User said: "Renuncié al banco".`), false, 0, 0, 0, false},
		{"a line with the new value beside the old is not stale", blockOf("User: Actually I left banking, I'm now a teacher. Eggs."), true, 0, 0, 0, true},
		{"an earlier mark is not stale", blockOf("(earlier) User worked at a bank."), false, 0, 0, 0, false},
		{"another person's facts", blockOf("User lives in Rome.", "User is allergic to eggs.", "User teaches."), true, 0, 2, 0, true},
		{"a transcript of a pasted text counts as other", blockOf("[2026-01-03] User: Translate: I live in Rome.", "User teaches. Egg."), true, 0, 1, 0, true},
		{"an earlier question echoed", blockOf("User: Which wine goes with fish?", "User teaches eggs."), true, 0, 0, 1, true},
		{"an echo pattern", blockOf("User: Write me a haiku."), false, 0, 0, 1, false},
		{"a statement is no echo", blockOf("User: I work at a bank. Teacher now. Eggs"), true, 0, 0, 0, true},
		{"a message that says something and asks is no echo", blockOf("User: I'm at the airport. What can I do in Lisbon?"), false, 0, 0, 0, false},
		{"questions only, made one line", blockOf("User: Is it far? How far?"), false, 0, 0, 1, false},
		{"an earlier probe's question, whatever its form", blockOf("User: Plan my week"), false, 0, 0, 1, false},
		{"a hit from a transcript turn is not from the profile", blockOf("User is a teacher.", "[2026-01-02] User: Eggs for breakfast."), true, 0, 0, 0, false},
	} {
		o := judgeProbe(pr, earlier, []string{"Plan my week"}, tc.block)
		if o.Hit != tc.hit || len(o.Stale) != tc.stale || len(o.Other) != tc.other || len(o.Echoes) != tc.echoes {
			t.Errorf("%s: hit %v stale %q other %q echoes %q, want %v %d %d %d", tc.name, o.Hit, o.Stale, o.Other, o.Echoes,
				tc.hit, tc.stale, tc.other, tc.echoes)
		}
		if o.ok() != (tc.hit && tc.stale+tc.other+tc.echoes == 0) {
			t.Errorf("%s: ok() = %v", tc.name, o.ok())
		}
		if o.FromProfile != (tc.hit && tc.profile) {
			t.Errorf("%s: from the profile %v", tc.name, o.FromProfile)
		}
		if (tc.block == "") != (o.Tokens == 0) {
			t.Errorf("%s: %d tokens", tc.name, o.Tokens)
		}
	}

	pe := &person{ID: "p", Conversations: [][]string{{"hi"}}, MustNot: mustNot{Other: []string{"Tomasz"}},
		Probes: []*probe{{Ask: "q", Must: []anyOf{{"Leeds"}}}}}
	if err := pe.compile(day); err != nil {
		t.Fatal(err)
	}
	if o := judgeProbe(pe.Probes[0], nil, nil, blockOf("User lives in Leeds.", "User's name is Tomasz.")); !o.Hit || len(o.Other) != 1 {
		t.Errorf("the person's must_not holds for each probe: %+v", o)
	}

	small := testProbe(t, &probe{Ask: "hey, how's it going?", Empty: true})
	if o := judgeProbe(small, nil, nil, ""); !o.ok() || !o.SmallTalk || o.Needed {
		t.Errorf("small talk without a block: %+v", o)
	}
	if o := judgeProbe(small, nil, nil, blockOf("User lives in Oslo.")); o.ok() || !o.Spoke {
		t.Errorf("small talk with a block: %+v", o)
	}
}

func TestDatePlaceholders(t *testing.T) {
	for _, tc := range []struct {
		pattern, text string
		match         bool
	}{
		{"moved[^.]*{month-1}", "User moved to Bristol in December 2025.", true},
		{"moved[^.]*{month-1}", "User moved to Bristol (2025-12-20).", true},
		{"{month-1}", "Se mudó a Sevilla en diciembre de 2025.", true},
		{"{month-1}", "moved in December, 2025", true},
		{"{month-1}", "moved in December 2026", false},
		{"{month-1}", "User moved to Bristol last month.", false},
		{"{month-1}", "User moved to Bristol in December.", false}, // which December?
		{"{month+0}", "seit Januar 2026", true},
		{"{month-8}", "User started in May 2025.", true},
		{"{month-8}", "User may start in 2025.", false},
		{"{month-8}", "since 05/2025", true},
		{"{year-2}", "married in 2024", true},
	} {
		re, err := compilePattern(tc.pattern, day)
		if err != nil {
			t.Fatal(err)
		}
		if re.MatchString(tc.text) != tc.match {
			t.Errorf("%q on %q: %v, want %v", tc.pattern, tc.text, !tc.match, tc.match)
		}
	}
}

func TestGradeJourneys(t *testing.T) {
	set := &journeySet{People: []*person{
		{ID: "a", Tags: []string{"paste"}, Conversations: [][]string{{"x"}}, Probes: []*probe{{Ask: "q1", Tags: []string{"diet"}, Must: []anyOf{{"vegan"}}}, {Ask: "q2", Empty: true}}},
		{ID: "b", Tags: []string{"language:es"}, Conversations: [][]string{{"x"}}, Probes: []*probe{{Ask: "q3", Must: []anyOf{{"Bilbao"}}}}},
	}}
	for _, pe := range set.People {
		if err := pe.compile(day); err != nil {
			t.Fatal(err)
		}
	}
	outcomes := [][]probeOutcome{
		{{Needed: true, Hit: true, FromProfile: true, Block: "b", Tokens: 100, Other: []string{"User lives in Rome."}}, {SmallTalk: true}},
		{{Needed: true, Block: "b", Tokens: 50}},
	}
	r := gradeJourneys("f", set, outcomes)
	if r.All.Probes != 3 || r.All.Needed != 2 || r.All.Hits != 1 || r.All.HitRate != 0.5 || r.All.Other != 1 || r.All.Clean != 1 ||
		r.All.SmallTalk != 1 || r.All.WithBlock != 2 || r.All.MeanTokens != 75 || r.All.MeanTokensAll != 50 || r.PeopleWrong != 1 || r.All.HitsFromProfile != 1 {
		t.Errorf("all: %+v, people wrong %d", r.All, r.PeopleWrong)
	}
	if s := r.ByTag["paste"]; s.Probes != 2 || s.Hits != 1 || s.Other != 1 {
		t.Errorf("paste: %+v", s)
	}
	if s := r.ByTag["diet"]; s.Probes != 1 {
		t.Errorf("a probe's own tag: %+v", s)
	}
	if s := r.ByTag["language:en"]; s.Probes != 2 {
		t.Errorf("a person without a language is English: %+v", s)
	}
	if s := r.ByTag["language:es"]; s.Probes != 1 || s.Hits != 0 {
		t.Errorf("language:es: %+v", s)
	}
	if got := r.Probes[2]; got.Person != "b" || !slices.Equal(got.Tags, []string{"language:es"}) {
		t.Errorf("outcome %+v", got)
	}
}

func TestLoadJourneysRefuses(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct{ body, want string }{
		{`{"people":[]}`, "no people"},
		{`{"people":[{"id":"a","conversations":[["hi"]],"probes":[{"ask":"q","must":["x"]}]},{"id":"a","conversations":[["hi"]],"probes":[{"ask":"q","must":["x"]}]}]}`, `"a" twice`},
		{`{"people":[{"id":"a","conversations":[["hi"]],"probes":[{"ask":"q"}]}]}`, "nothing to grade"},
		{`{"people":[{"id":"a","conversations":[["hi"]],"probes":[{"ask":"q","must":["("]}]}]}`, "pattern"},
		{`{"people":[{"id":"a","conversations":[["hi"]],"probes":[{"ask":"q","mustnot":{}}]}]}`, "unknown field"},
		{`{"people":[{"id":"a","conversations":[["hi"]],"probes":[{"ask":"q","empty":true,"must":["x"]}]}]}`, "no block needs no fact"},
	} {
		path := filepath.Join(dir, "j.json")
		os.WriteFile(path, []byte(tc.body), 0o600)
		if _, err := loadJourneys(path, day); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.body, err, tc.want)
		}
	}
}

// TestTheJourneySetsAreWellFormed: the shipped sets load, have the people
// the project promises, share no person, and every category the issue
// names has probes in each development set.
func TestTheJourneySetsAreWellFormed(t *testing.T) {
	ids := map[string]string{}
	for _, tc := range []struct {
		file   string
		people int
	}{{"testdata/journeys.json", 32}, {"testdata/journeys-holdout.json", 12},
		{"testdata/journeys-dev2.json", 45}, {"testdata/journeys-holdout2.json", 25}} {
		set, err := loadJourneys(tc.file, day)
		if err != nil {
			t.Fatal(err)
		}
		if len(set.People) < tc.people {
			t.Errorf("%s: %d people, want at least %d", tc.file, len(set.People), tc.people)
		}
		tags := map[string]int{}
		for _, pe := range set.People {
			if f, ok := ids[pe.ID]; ok {
				t.Errorf("%s: person %s is in %s too", tc.file, pe.ID, f)
			}
			ids[pe.ID] = tc.file
			if n := len(pe.Probes); n < 2 || n > 5 {
				t.Errorf("%s: %s has %d probes, want 2 to 5", tc.file, pe.ID, n)
			}
			for _, pr := range pe.Probes {
				for _, tag := range tagsOf(pe, pr) {
					tags[tag]++
				}
			}
		}
		if tc.file != "testdata/journeys.json" && tc.file != "testdata/journeys-dev2.json" {
			continue
		}
		for _, want := range []string{"paste", "translate", "proofread", "reply", "summarise", "roleplay", "hypothetical", "quote",
			"family", "household", "pets", "correction", "change", "typo", "passing-state", "relative-date",
			"preference-in-passing", "long-message", "language:es", "language:de", "language:fr", "language:pt"} {
			if tags[want] == 0 {
				t.Errorf("%s: no probe tagged %s", tc.file, want)
			}
		}
	}
	cs, err := loadUpdates("testdata/updates-holdout.json")
	if err != nil {
		t.Fatal(err)
	}
	dev, _ := loadUpdates("testdata/updates.json")
	if len(cs) < 20 {
		t.Errorf("updates-holdout: %d cases, want 20", len(cs))
	}
	for _, c := range cs {
		if slices.ContainsFunc(dev, func(d updateCase) bool { return d.ID == c.ID }) {
			t.Errorf("updates-holdout: case %s is in updates.json too", c.ID)
		}
	}
}
