package extract

import "testing"

// Someone else's words in the user's message teach nothing about the user;
// the user's own words around them, and their own labelled or quoted
// statements, still do.
func TestFactsSomeoneElsesWords(t *testing.T) {
	checkNoFacts(t,
		"My friend said: I am allergic to shellfish.",
		`He said "I live in Tokyo and I'm vegan".`,
		"Write a story where the narrator says: I live in Tokyo and I'm vegan.",
		"The customer says: I am allergic to latex.",
		"Please reply to this.\nCustomer: I am allergic to latex.\nAgent: Noted.",
		"Dr. Lee: I work as a surgeon.",
		"In this story, I am a doctor who lives in London.",
		"My character is a nurse who is vegan.",
		"For my D&D campaign, I am a dwarf who lives in Moria.",
		"Let's pretend I'm a vegan chef.",
	)
	for in, want := range map[string][]fact{
		"Update: I moved to Porto.":                            {{"identity:location", "User moved to Porto and lives there."}},
		"FYI: I'm vegan.":                                      {{"identity:diet", "User is vegan."}},
		"I told him: I'm vegan now!":                           {{"identity:diet", "User is vegan."}},
		`My mom says "I hate cilantro". I'm allergic to nuts.`: {{"health:allergy:nuts", "User is allergic to nuts."}},
		"She said I should try yoga, but I prefer running.":    {{"preference:running", "User prefers running."}},
	} {
		checkFacts(t, in, want)
	}
}

// A quotation with no one else named as its speaker is the user's: a
// preference sent in quote marks, a line that is one quotation, or words
// the user says they say. One with a speaker is still the speaker's.
func TestFactsQuotedWords(t *testing.T) {
	for in, want := range map[string][]fact{
		"\"I do not enjoy casinos.\"":                   {{"preference:casinos", "User does not enjoy casinos."}},
		"  \u201cI have a phobia of elevators.\u201d\n": {{"preference:elevators", "User has a phobia of elevators."}},
		"Note to self:\n\n\"I'm allergic to nuts.\"":    {{"health:allergy:nuts", "User is allergic to nuts."}},
		`I told him "I'm vegan now"!`:                   {{"identity:diet", "User is vegan."}},
		// The speech ends where its quotation closes.
		`The manager said: "We will come on Monday", and I'm allergic to dust.`: {{"health:allergy:dust", "User is allergic to dust."}},
	} {
		checkFacts(t, in, want)
	}
	checkNoFacts(t,
		"My boss said \"I love sushi\"",
		"My boss said \"I love sushi\".\n\"I live in Paris.\"",
		`"I love sushi," my boss said.`,
		"My sister wrote:\n\nI'm allergic to shellfish.",
		"Customer:\nI am vegan.",
		"Customer: \"I am vegan\" and I live in Leeds.",
		"She said:\n\"I live in Paris.\"",
	)
}

// checkNoFacts checks that each input teaches nothing about the user.
func checkNoFacts(t *testing.T, ins ...string) {
	t.Helper()
	for _, in := range ins {
		if got := Facts(in); len(got) != 0 {
			t.Errorf("Facts(%q) = %+v, want none", in, got)
		}
	}
}
