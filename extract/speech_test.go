package extract

import "testing"

// Someone else's words in the user's message teach nothing about the user;
// the user's own words around them, and their own labelled or quoted
// statements, still do.
func TestFactsSomeoneElsesWords(t *testing.T) {
	for _, in := range []string{
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
	} {
		if got := Facts(in); len(got) != 0 {
			t.Errorf("Facts(%q) = %v, want none", in, got)
		}
	}
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
