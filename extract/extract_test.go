package extract

import (
	"strings"
	"testing"

	"github.com/caddy-memory/memory/internal/block"
)

type fact struct{ key, content string }

func checkFacts(t *testing.T, input string, want []fact) {
	t.Helper()
	got := Facts(input)
	var g []fact
	for _, f := range got {
		g = append(g, fact{f.Key, f.Content})
		if kind, _, _ := strings.Cut(f.Key, ":"); kind != f.Kind {
			t.Errorf("Facts(%q): key %q does not start with its kind %q", input, f.Key, f.Kind)
		}
	}
	if len(g) != len(want) {
		t.Errorf("Facts(%q) =\n  %q\nwant\n  %q", input, g, want)
		return
	}
	for i := range want {
		if g[i] != want[i] {
			t.Errorf("Facts(%q)[%d] = %q, want %q", input, i, g[i], want[i])
		}
	}
}

func TestFacts(t *testing.T) {
	tests := []struct {
		in   string
		want []fact
	}{
		// identity
		{"Hi! My name is Alice.", []fact{{"identity:name", "User's name is Alice."}}},
		{"my name's Bob Smith, nice to meet you", []fact{{"identity:name", "User's name is Bob Smith."}}},
		{"Please call me Ishmael.", []fact{{"identity:name", "User's name is Ishmael."}}},
		{"I'm 34 years old.", []fact{{"identity:age", "User is 34 years old."}}},
		{"I am 7 year old", []fact{{"identity:age", "User is 7 years old."}}},
		{"I live in Berlin.", []fact{{"identity:location", "User lives in Berlin."}}},
		{"I live in Lisbon and my favorite color is teal.", []fact{{"identity:location", "User lives in Lisbon."}, {"preference:favorite:color", "User's favorite color is teal."}}},
		{"I live in Bergen now.", []fact{{"identity:location", "User lives in Bergen."}}},
		{"I currently live in San Francisco, California.", []fact{{"identity:location", "User lives in San Francisco."}}},
		{"I just moved to Lisbon.", []fact{{"identity:location", "User moved to Lisbon and lives there."}}},
		{"I've recently moved to Tokyo", []fact{{"identity:location", "User moved to Tokyo and lives there."}}},
		{"I'm originally from Portugal.", []fact{{"identity:origin", "User is from Portugal."}}},
		{"I work as a software engineer.", []fact{{"identity:job", "User works as a software engineer."}}},
		{"My job is teaching chemistry.", []fact{{"identity:job", "User's job is teaching chemistry."}}},
		{"I work at Google.", []fact{{"identity:job", "User works at Google."}}},
		{"I work for Acme Corp.", []fact{{"identity:job", "User works at Acme Corp."}}},
		{"I'm vegetarian.", []fact{{"identity:diet", "User is vegetarian."}}},
		{"I am a Vegan!", []fact{{"identity:diet", "User is vegan."}}},
		{"I'm lactose intolerant, so no milk please.", []fact{{"health:allergy:lactose", "User is lactose intolerant."}}},
		{"I'm married.", []fact{{"identity:relationship", "User is married."}}},
		{"I am in a relationship", []fact{{"identity:relationship", "User is in a relationship."}}},
		// health
		{"I'm allergic to peanuts.", []fact{{"health:allergy:peanuts", "User is allergic to peanuts."}}},
		{"I am allergic to shellfish and nuts", []fact{{"health:allergy:shellfish", "User is allergic to shellfish and nuts."}}},
		// family
		{"My wife is Maria.", []fact{{"family:partner", "User's wife is named Maria."}}},
		{"My husband's name is Tom.", []fact{{"family:partner", "User's husband is named Tom."}}},
		{"My son is called Leo.", []fact{{"family:person:leo", "User's son is named Leo."}}},
		{"My dog is named Rex.", []fact{{"family:pet:rex", "User's dog is named Rex."}}},
		{"My best friend is Jake.", []fact{{"family:best friend", "User's best friend is named Jake."}}},
		{"My wife is Maria and my daughter is Zoe.", []fact{{"family:partner", "User's wife is named Maria."}, {"family:person:zoe", "User's daughter is named Zoe."}}},
		{"My dog is Rex. My dog is Bella.", []fact{{"family:pet:rex", "User's dog is named Rex."}, {"family:pet:bella", "User's dog is named Bella."}}},
		{"I have two kids.", []fact{{"family:count:child", "User has two kids."}}},
		{"I have a kid", []fact{{"family:count:child", "User has a kid."}}},
		{"I have 3 cats", []fact{{"family:count:cat", "User has 3 cats."}}},
		// preferences
		{"My favorite color is blue.", []fact{{"preference:favorite:color", "User's favorite color is blue."}}},
		{"My favourite band is Radiohead!", []fact{{"preference:favorite:band", "User's favorite band is Radiohead."}}},
		{"I love coffee.", []fact{{"preference:coffee", "User loves coffee."}}},
		{"I really love coffee in the morning.", []fact{{"preference:coffee", "User really loves coffee in the morning."}}},
		{"I don't like coffee.", []fact{{"preference:coffee", "User doesn't like coffee."}}},
		{"I do not drink coffee", []fact{{"preference:coffee", "User does not drink coffee."}}},
		{"I can't stand jazz.", []fact{{"preference:jazz", "User can't stand jazz."}}},
		{"I prefer tea over coffee.", []fact{{"preference:tea", "User prefers tea over coffee."}}},
		{"I love coffee, but I hate tea.", []fact{{"preference:coffee", "User loves coffee."}, {"preference:tea", "User hates tea."}}},
		{"I love coffee! I hate tea!", []fact{{"preference:coffee", "User loves coffee."}, {"preference:tea", "User hates tea."}}},
		{"I love my job.", []fact{{"preference:job", "User loves the user's job."}}},
		// habits
		{"I usually run in the morning.", []fact{{"habit:run", "User usually runs in the morning."}}},
		{"I always go to bed at 11pm.", []fact{{"habit:go bed", "User always goes to bed at 11pm."}}},
		{"I never drink alcohol.", []fact{{"health:alcohol", "User does not drink alcohol."}}},
		{"I tend to work late.", []fact{{"habit:work late", "User tends to work late."}}},
		{"Every Sunday I call my mom.", []fact{{"habit:call mom", "Every Sunday, the user calls the user's mom."}}},
		{"Every morning, I watch the news.", []fact{{"habit:watch news", "Every morning, the user watches the news."}}},
		// decisions and plans
		{"I decided to learn Spanish.", []fact{{"decision:learn spanish", "User decided to learn Spanish."}}},
		{"We've decided on Postgres for the backend.", []fact{{"decision:postgres", "User decided on Postgres for the backend."}}},
		{"Let's go with Postgres.", []fact{{"decision:postgres", "User chose to go with Postgres."}}},
		{"I'll switch to Neovim.", []fact{{"decision:neovim", "User chose to switch to Neovim."}}},
		{"I'm planning to visit Japan in April.", []fact{{"plan:visit japan", "User plans to visit Japan in April."}}},
		{"I plan to retire at 60.", []fact{{"plan:retire", "User plans to retire at 60."}}},
		{"I'm going to learn piano.", []fact{{"plan:learn piano", "User plans to learn piano."}}},
		{"Remember that I need to renew my passport.", []fact{{"note:" + contentKey("User needs to renew the user's passport."), "User needs to renew the user's passport."}}},
		// several statements in one message
		{"I'm 34 years old and I live in Berlin.", []fact{{"identity:age", "User is 34 years old."}, {"identity:location", "User lives in Berlin."}}},
		{"Can you help me plan a trip? I live in Berlin.", []fact{{"identity:location", "User lives in Berlin."}}},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) { checkFacts(t, tt.in, tt.want) })
	}
}

// Everyday phrasings of the identity facts above; each must yield its fact.
func TestFactsCommonPhrasings(t *testing.T) {
	tests := []struct {
		in   string
		want []fact
	}{
		// object() rejects a two-word object starting with an article.
		{"I work as a nurse.", []fact{{"identity:job", "User works as a nurse."}}},
		{"I work as an engineer.", []fact{{"identity:job", "User works as an engineer."}}},
		{"I live in the UK.", []fact{{"identity:location", "User lives in the UK."}}},
		{"I'm from the Netherlands.", []fact{{"identity:origin", "User is from the Netherlands."}}},
		// The "'m working" / "'m living" alternatives follow a mandatory \s+
		// after "i", so the contraction never matches.
		{"I'm working at Google.", []fact{{"identity:job", "User works at Google."}}},
		{"I'm living in Berlin.", []fact{{"identity:location", "User lives in Berlin."}}},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) { checkFacts(t, tt.in, tt.want) })
	}
}

// A newer statement must supersede an older one: both have to share a key.
func TestFactsSupersedingKeys(t *testing.T) {
	pairs := []struct{ older, newer string }{
		{"I love coffee.", "I don't like coffee."},
		{"I really love coffee in the morning.", "I hate coffee."},
		{"I live in Berlin.", "I just moved to Lisbon."},
		{"My wife is Maria.", "My wife's name is Anna."},
		{"I usually drink coffee.", "I never drink coffee."},
		{"My favorite color is blue.", "My favourite color is green."},
		{"I have a kid.", "I have two kids."},
		{"I have one child.", "I have two children."},
		{"I have one son.", "I have two sons."},
		{"I work at Google.", "I work for Microsoft."},
	}
	for _, p := range pairs {
		a, b := Facts(p.older), Facts(p.newer)
		if len(a) != 1 || len(b) != 1 {
			t.Errorf("%q -> %v, %q -> %v: want one fact each", p.older, a, p.newer, b)
			continue
		}
		if a[0].Key != b[0].Key {
			t.Errorf("%q (key %q) and %q (key %q) do not share a key, so the newer does not supersede the older", p.older, a[0].Key, p.newer, b[0].Key)
		}
		if a[0].Content == b[0].Content {
			t.Errorf("%q and %q give the same content %q", p.older, p.newer, a[0].Content)
		}
	}
	// Different things keep different keys.
	distinct := []string{
		"I love coffee.", "I love tea.", "My son is Leo.", "My son is Max.", "I have two dogs.", "I have two cats.",
		"I usually go for a run.", "I usually go for a swim.",
	}
	keys := map[string]string{}
	for _, s := range distinct {
		for _, f := range Facts(s) {
			if prev, ok := keys[f.Key]; ok {
				t.Errorf("%q and %q share key %q", prev, s, f.Key)
			}
			keys[f.Key] = s
		}
	}
}

func TestFactsRememberNote(t *testing.T) {
	tests := []struct{ in, content string }{
		{"Remember that my flight is on Friday.", "User's flight is on Friday."},
		{"Please remember that I'm allergic to cats.", "User is allergic to cats."},
		{"Don't forget: my passport expires in May.", "User's passport expires in May."},
		{"Keep in mind that I use Linux.", "User uses Linux."},
		{"note: I'm left-handed", "User is left-handed."},
		{"remember that I have a meeting with my boss on Monday", "User has a meeting with the user's boss on Monday."},
		{"Remember that I live in Berlin and I love coffee.", "User lives in Berlin and the user loves coffee."},
	}
	keys := map[string]bool{}
	for _, tt := range tests {
		got := Facts(tt.in)
		if len(got) != 1 {
			t.Errorf("Facts(%q) = %+v, want exactly one note (not also split into other facts)", tt.in, got)
			continue
		}
		f := got[0]
		if f.Kind != "note" || !strings.HasPrefix(f.Key, "note:") || len(f.Key) <= len("note:") {
			t.Errorf("Facts(%q) = %+v, want a note", tt.in, f)
		}
		if f.Content != tt.content {
			t.Errorf("Facts(%q).Content = %q, want %q", tt.in, f.Content, tt.content)
		}
		if keys[f.Key] {
			t.Errorf("Facts(%q): key %q reused by another note", tt.in, f.Key)
		}
		keys[f.Key] = true
	}
	// The same note said twice keeps its key; punctuation and case do not matter.
	a, b := Facts("Remember that my flight is on Friday."), Facts("remember that my flight is on friday")
	if len(a) != 1 || len(b) != 1 || a[0].Key != b[0].Key {
		t.Errorf("the same note gave keys %v and %v", a, b)
	}
	// A note is only the sentence it is in; the next sentence is a fact of its own.
	checkFacts(t, "Remember that my flight is on Friday. I love coffee.", []fact{
		{a[0].Key, "User's flight is on Friday."},
		{"preference:coffee", "User loves coffee."},
	})
}

func TestFactsNotStatements(t *testing.T) {
	tests := []string{
		// questions
		"Do I like coffee?",
		"do i like coffee",
		"Should I move to Berlin",
		"Would I love the new Zelda?",
		"Is it true that I live in Berlin",
		"What if I moved to Paris?",
		"I love coffee, right?",
		// hypotheticals
		"If I move to Paris I will learn French.",
		"If I lived in Berlin, I'd cycle everywhere.",
		"Suppose I work at Google.",
		"Imagine I'm allergic to peanuts.",
		"When I was young I lived in Rome.",
		// pronoun objects
		"I like it.",
		"I love this!",
		"I hate that.",
		"I love you",
		"I like it a lot.",
		// code and quotes
		"Why does this fail?\n```python\n# I love coffee\nprint('My name is Alice')\n```",
		"```\nI live in Berlin\n```",
		"Here is the log:\n```\nI'm allergic to peanuts",
		"> I love coffee\n> My name is Alice",
		"You wrote:\n> I live in Berlin.\nIs that right?",
		// injected memory block echoed in the user message
		block.Start + "\n- User: I love coffee\n- My name is Alice.\n" + block.End + "\nWhat should I drink?",
		block.Start + "\n- I live in Berlin.\n- I'm vegetarian.",
		// negations and embedded statements
		"I don't think I like coffee.",
		"I'm not vegetarian.",
		"I used to work at Google.",
		// too short / empty
		"",
		"ok",
		"I do.",
	}
	for _, in := range tests {
		if got := Facts(in); len(got) != 0 {
			t.Errorf("Facts(%q) = %+v, want none", in, got)
		}
	}
}

func TestFactsLimitAndDedup(t *testing.T) {
	var b strings.Builder
	for _, s := range []string{
		"My name is Alice.", "I'm 34 years old.", "I live in Berlin.", "I'm originally from Portugal.",
		"I work as a software engineer.", "I work at Google.", "I'm vegetarian.", "I'm married.",
		"I'm allergic to peanuts.", "My wife is Maria.", "My son is called Leo.", "I have two dogs.",
		"My favorite color is blue.", "I love coffee.", "I usually run in the morning.", "I decided to learn Spanish.",
	} {
		b.WriteString(s + " ")
	}
	got := Facts(b.String())
	if len(got) != maxFactsPerTurn || maxFactsPerTurn != 12 {
		t.Errorf("%d facts from 16 statements, want 12: %+v", len(got), got)
	}
	if len(got) > 0 && got[0].Key != "identity:name" {
		t.Errorf("first fact = %+v, want the name (facts come in message order)", got[0])
	}

	got = Facts("I love coffee. I really love coffee in the morning. I love coffee!\nI love coffee")
	if len(got) != 1 || got[0].Key != "preference:coffee" {
		t.Errorf("same key returned %d times: %+v", len(got), got)
	}
	seen := map[string]bool{}
	for _, f := range Facts("My name is Alice. Call me Ally. I live in Oslo. I moved to Bergen. My wife is Maria. My wife is Anna.") {
		if seen[f.Key] {
			t.Errorf("key %q returned twice", f.Key)
		}
		seen[f.Key] = true
	}
	if len(seen) != 3 {
		t.Errorf("keys = %v, want name, location and wife once each", seen)
	}
}

func TestHeadAndThirdPerson(t *testing.T) {
	heads := map[string]string{
		"coffee in the morning": "coffee",
		"the beach":             "beach",
		"my new bike":           "new bike",
		"Rock-n-Roll music":     "rock n roll music",
		"tea, not coffee":       "tea coffee",
		"very spicy thai food":  "spicy thai food",
	}
	for in, want := range heads {
		if got := head(in); got != want {
			t.Errorf("head(%q) = %q, want %q", in, got, want)
		}
	}
	third := map[string]string{
		"my flight is on Friday":   "the user's flight is on Friday",
		"I call my mom":            "the user calls the user's mom",
		"I'm tired":                "the user is tired",
		"I've got a cat":           "the user has got a cat",
		"give me mine, myself.":    "give the user the user's, themselves.",
		"we visit our parents":     "the user and others visit their parents",
		"I watch films":            "the user watches films",
		"I go to the gym":          "the user goes to the gym",
		"I study at night":         "the user studies at night",
		"I'll call when I'm there": "the user will call when the user is there",
	}
	for in, want := range third {
		if got := thirdPerson(in); got != want {
			t.Errorf("thirdPerson(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestConjugate(t *testing.T) {
	tests := map[string]string{
		"run": "runs", "watch": "watches", "go": "goes", "fix": "fixes", "study": "studies",
		"play": "plays", "have": "has", "do": "does", "can": "can", "walked": "walked",
		"usually": "usually", "is": "is", "swimming": "swimming",
		// regular verbs that happen to end in "ed" or "ly"
		"need": "needs", "feed": "feeds", "fly": "flies", "apply": "applies", "reply": "replies",
	}
	for in, want := range tests {
		if got := conjugate(in); got != want {
			t.Errorf("conjugate(%q) = %q, want %q", in, got, want)
		}
	}
}
