package memory

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
	chat(t, p, key, "", "My friend said: I'm allergic to shellfish and I live in Tokyo.")
	chat(t, p, key, "", "Help me answer this support ticket.\nCustomer: I am vegan and I work as a pilot.\nAgent: Thanks, noted.")
	chat(t, p, key, "", "In this story, I am a doctor who lives in London.")
	chat(t, p, key, "", `My sister always says "I'm lactose intolerant" but she eats ice cream.`)
	chat(t, p, key, "", "I'm allergic to nuts.")
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
