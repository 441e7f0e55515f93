package learning

import (
	"regexp"
	"strings"
	"testing"
)

// blockHas reports whether a block has a line matching pattern
// (case-insensitive).
func blockHas(block, pattern string) bool {
	return regexp.MustCompile(`(?im)^- .*` + pattern).MatchString(block)
}

// TestOthersWordsTeachNothingAboutTheUser: a pasted email to answer, a
// text to translate and a role-play through Caddy teach nothing about the
// user, and what the user says stepping out of the role-play does; a
// later question carries none of the others' facts.
func TestOthersWordsTeachNothingAboutTheUser(t *testing.T) {
	p := newProfileRig(t, "")
	const key = "sk-pasting"
	chat(t, p, key, "", "Please reply to this email for me:\n\nHi,\nI'm Laura, I'm writing about the flat. I live in Dublin and I have two daughters. I'm vegan.\nBest,\nLaura")
	chat(t, p, key, "", "Translate into Spanish: I live in Rome and I'm allergic to nuts")
	chat(t, p, key, "", "Let's role-play: you're a waiter and I'm a customer.", "Hi, I'm vegetarian and I'm allergic to shellfish",
		"Out of character: I'm actually a nurse in Leeds.")
	block := p.ask(t, key, "Suggest a dinner for tonight.")
	for _, other := range []string{"Laura", "Dublin", "daughters", "vegan", "Rome", "nuts", "vegetarian", "shellfish"} {
		if strings.Contains(block, other) {
			t.Errorf("someone else's %q reached the user's block:\n%s", other, block)
		}
	}
	if !blockHas(block, "nurse") || !blockHas(block, "Leeds") {
		t.Errorf("what the user said out of character is not in the block:\n%s", block)
	}
}

// TestACorrectionInsideOneMessageReplaces: a slip corrected in the same
// message teaches the corrected value only, and a change of job said in
// ordinary words replaces job and employer.
func TestACorrectionInsideOneMessageReplaces(t *testing.T) {
	p := newProfileRig(t, "")
	const key = "sk-correcting"
	chat(t, p, key, "", "We have three kids, no wait, four.")
	chat(t, p, key, "", "I work at a bank.")
	chat(t, p, key, "", "Actually I quit the bank, I'm now a teacher.")
	block := p.ask(t, key, "Plan a family day out for us.")
	if !blockHas(block, `\b(four|4) (kids|children)`) || blockHas(block, `\bthree\b`) {
		t.Errorf("the corrected count is not the one in the block:\n%s", block)
	}
	if !blockHas(block, "teacher") || blockHas(block, `works at a bank`) {
		t.Errorf("the change of job did not replace the old one:\n%s", block)
	}
}

// TestASpanishSpeakerGetsTheSameProfile: a user who writes in Spanish
// gets the profile an English speaker saying the same gets, and a move
// said in Spanish replaces the old home, transcript included.
func TestASpanishSpeakerGetsTheSameProfile(t *testing.T) {
	p := newProfileRig(t, "")
	chat(t, p, "sk-lucia", "", "Me llamo Lucía, vivo en Bilbao y soy celíaca.")
	chat(t, p, "sk-lucy", "", "My name is Lucía, I live in Bilbao and I'm coeliac.")
	es := p.ask(t, "sk-lucia", "¿Qué puedo cenar esta noche?")
	en := p.ask(t, "sk-lucy", "What can I have for dinner tonight?")
	for _, want := range []string{"name is Lucía", "lives in Bilbao", "c(o)?eliac"} {
		if !blockHas(es, want) || !blockHas(en, want) {
			t.Errorf("%q is not in both profiles:\nSpanish:\n%s\nEnglish:\n%s", want, es, en)
		}
	}
	chat(t, p, "sk-lucia", "", "Ahora vivo en Zaragoza.")
	es = p.ask(t, "sk-lucia", "¿Qué puedo hacer este fin de semana cerca de casa?")
	if !blockHas(es, "Zaragoza") || strings.Contains(es, "Bilbao") {
		t.Errorf("after the move the old home still rides, or the new one does not:\n%s", es)
	}
}

// TestAHouseholdReachesAQuestionAboutTheChildren: family said in the
// forms people use reaches a question about the children that names none
// of it.
func TestAHouseholdReachesAQuestionAboutTheChildren(t *testing.T) {
	p := newProfileRig(t, "")
	const key = "sk-household"
	chat(t, p, key, "", "I live with my wife Grace and our son Leo, he's 5. We're in Glasgow.")
	chat(t, p, key, "", "My daughter Zoe is 7 and she's allergic to eggs.")
	chat(t, p, key, "", "We have a dog called Biscuit.")
	block := p.ask(t, key, "What could the kids and I do on Saturday?")
	for _, want := range []string{`son Leo is 5`, `daughter Zoe is 7`, `Zoe is allergic to eggs|daughter.*eggs`, `Glasgow`, `Biscuit`} {
		if !blockHas(block, want) {
			t.Errorf("%q is not in the block:\n%s", want, block)
		}
	}
	if blockHas(block, `User is (5|7|allergic to eggs)`) {
		t.Errorf("a child's fact is the user's in the block:\n%s", block)
	}
}

// TestWhatNoRuleReadsReachesTheModel: a standing thing said in a form no
// rule reads reaches, through Caddy, a later question that shares no word
// with it, in the user's words; once the user says where they live now,
// the old sentence of their home (it names a flat) rides no more, neither
// as a note nor as its transcript.
func TestWhatNoRuleReadsReachesTheModel(t *testing.T) {
	p := newProfileRig(t, "")
	const key = "sk-nights"
	chat(t, p, key, "", "hey so im an RN, i work nights on a peds floor at nationwide childrens. need help with my sleep lol")
	chat(t, p, key, "", "our flat is a tiny walk-up in german village, columbus, with way too many plants")
	chat(t, p, key, "", "Ha, there's a bake-off on Friday. I can never eat any of it (coeliac, joys) but I'm expected to enter.")
	block := p.ask(t, key, "Fancy a treat this afternoon, what can I grab from a café around here?")
	for _, want := range []string{`coeliac`, `columbus`, `nights`} {
		if !blockHas(block, want) {
			t.Errorf("%q is not in the block:\n%s", want, block)
		}
	}
	chat(t, p, key, "", "Big news: we moved to Cincinnati last month and I started at a clinic in Hyde Park.")
	block = p.ask(t, key, "Where could I take my sister for dinner this weekend?")
	if blockHas(block, `columbus`) || !blockHas(block, `Cincinnati`) {
		t.Errorf("after the move, the block:\n%s", block)
	}
}
