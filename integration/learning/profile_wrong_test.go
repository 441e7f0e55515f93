package learning

import (
	"strings"
	"testing"
)

// What reaches the model as the user's must be the user's: someone else's
// words in a message (reported speech, a pasted exchange, a story) never
// become the user's allergy, diet, home or job.
func TestSomeoneElsesWordsAreNotTheUsers(t *testing.T) {
	p := newProfileRig(t, "")
	const key = "sk-quotes"
	sayEach(t, p, key,
		"My friend said: I'm allergic to shellfish and I live in Tokyo.",
		"Help me answer this support ticket.\nCustomer: I am vegan and I work as a pilot.\nAgent: Thanks, noted.",
		"In this story, I am a doctor who lives in London.",
		`My sister always says "I'm lactose intolerant" but she eats ice cream.`,
		"I'm allergic to nuts.",
	)
	block := p.ask(t, key, "What should I cook tonight?")
	if !strings.Contains(block, "User is allergic to nuts.") {
		t.Errorf("the user's own allergy is missing:\n%s", block)
	}
	for _, wrong := range []string{"User is allergic to shellfish", "User lives in Tokyo", "User is vegan",
		"User works as a pilot", "User is a doctor", "User is lactose"} {
		if strings.Contains(block, wrong) {
			t.Errorf("someone else's words reached the model as the user's (%q):\n%s", wrong, block)
		}
	}
}

// A preference sent in quote marks, with no one else named as its
// speaker, is the user's; one a speaker is named for is still not.
func TestAQuotedPreferenceIsTheUsers(t *testing.T) {
	p := newProfileRig(t, "")
	const key = "sk-quoted"
	sayEach(t, p, key,
		"\"I do not enjoy casinos.\"",
		"My boss said \"I love sushi\"",
	)
	block := p.ask(t, key, "Any ideas for a weekend in Macau?")
	if !strings.Contains(block, "User does not enjoy casinos.") {
		t.Errorf("the user's quoted preference is missing:\n%s", block)
	}
	if strings.Contains(block, "User loves sushi") {
		t.Errorf("the boss's words reached the model as the user's:\n%s", block)
	}
}

// A retraction replaces what it retracts: once the user says they are no
// longer a nurse, not allergic after all, or no longer work somewhere, the
// old value stops riding as current.
func TestARetractionReplacesTheOldValue(t *testing.T) {
	p := newProfileRig(t, "")
	const key = "sk-retract"
	sayEach(t, p, key,
		"I'm a nurse.",
		"I'm allergic to nuts.",
		"I work at Acme Corp.",
		"I live in London.",
		"I'm vegetarian.",
		"I'm not a nurse anymore, I retrained as a carpenter.",
		"Sorry, I mixed that up: I'm not allergic to nuts, my husband is.",
		"I no longer work at Acme Corp.",
		"Actually I don't live in London, I live in Leeds.",
		"I eat meat again.",
	)
	block := p.ask(t, key, "Plan my week for me.")
	for _, stale := range []string{"User is a nurse.", "User is allergic to nuts.", "User works at Acme Corp.",
		"User lives in London.", "User is vegetarian."} {
		if strings.Contains(block, stale) {
			t.Errorf("a retracted value rides as current (%q):\n%s", stale, block)
		}
	}
	if !strings.Contains(block, "User lives in Leeds.") {
		t.Errorf("the corrected home is missing:\n%s", block)
	}
}

// sayEach says each line in a conversation of its own.
func sayEach(t *testing.T, p *profileRig, key string, lines ...string) {
	t.Helper()
	for _, l := range lines {
		chat(t, p, key, "", l)
	}
}

// A correction replaces what it corrects, said in the same message or as
// the next one: the slip never rides as current.
func TestACorrectionReplacesTheSlip(t *testing.T) {
	p := newProfileRig(t, "")
	const key = "sk-correct"
	chat(t, p, key, "", "I live in Berlin, near the park.", "Sorry, I meant Munich.")
	chat(t, p, key, "", "My partner's name is Jon. Oops, I meant Jan.")
	chat(t, p, key, "", "I work at Siemens now.", "sorry I mean Bosch")
	block := p.ask(t, key, "Plan a weekend for me and my partner.")
	for _, want := range []string{"User lives in Munich.", "User's partner is named Jan.", "User works at Bosch."} {
		if !strings.Contains(block, want) {
			t.Errorf("the block lacks the corrected %q:\n%s", want, block)
		}
	}
	for _, slip := range []string{"User lives in Berlin", "User's partner is named Jon", "User works at Siemens"} {
		if strings.Contains(block, slip) {
			t.Errorf("the slip %q rides as current:\n%s", slip, block)
		}
	}
}
