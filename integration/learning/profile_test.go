package learning

import (
	"strings"
	"testing"

	"github.com/caddyserver/caddy/v2/caddytest"

	"github.com/caddy-memory/memory/internal/harness"
)

// chat sends one conversation's user turns through Caddy for key, each
// request carrying the conversation so far, and returns the block the
// upstream received with the last one.
func chat(t *testing.T, p *profileRig, key, system string, turns ...string) string {
	t.Helper()
	var msgs []map[string]any
	if system != "" {
		msgs = append(msgs, harness.Msg("system", system))
	}
	for _, turn := range turns {
		msgs = append(msgs, harness.Msg("user", turn))
		harness.Post(t, p.tester, "/v1/chat/completions", key, harness.ChatBody(false, msgs...))
		p.turns++
		msgs = append(msgs, harness.Msg("assistant", "I will keep that in mind."))
	}
	return harness.InjectedBlock(p.up.Last("/chat/completions").Body)
}

// profileRig is a Caddy with memory (its defaults, plus directives) in
// front of a fake upstream.
type profileRig struct {
	tester  *caddytest.Tester
	up      *harness.FakeLLM
	storage string
	turns   int
}

func newProfileRig(t *testing.T, directives string) *profileRig {
	storage := t.TempDir()
	up := harness.NewFakeLLM(t)
	return &profileRig{tester: harness.StartCaddy(t, harness.SiteConfig(storage, up.Addr(), directives)), up: up, storage: storage}
}

// ask settles what was said, then asks question in a new conversation
// with a system prompt, as a chat client starting over does.
func (p *profileRig) ask(t *testing.T, key, question string) string {
	t.Helper()
	harness.Settle(t, p.storage, p.turns)
	return chat(t, p, key, "You are a helpful assistant.", question)
}

// A preference said once, among other conversations, reaches the block of
// a later question that shares no word with it.
func TestAPreferenceSaidOnceReachesALaterQuestion(t *testing.T) {
	p := newProfileRig(t, "")
	const key = "sk-maria"
	chat(t, p, key, "", "I have a severe nut allergy and must avoid all nuts and nut byproducts.")
	chat(t, p, key, "", "write a haiku about autumn leaves")
	chat(t, p, key, "", "I strongly prefer window seats on long flights.")
	chat(t, p, key, "", "What is the capital of Australia?", "And its population?")
	block := p.ask(t, key, "Can you recommend some popular local dishes I should try during my visit to Thailand?")
	if !strings.Contains(block, "User has a severe nut allergy and must avoid all nuts and nut byproducts.") {
		t.Errorf("the allergy did not reach the question's block:\n%s", block)
	}
	// Small talk still gets nothing.
	if block := p.ask(t, key, "Good morning!"); block != "" {
		t.Errorf("small talk got a block:\n%s", block)
	}
	// Off, the same question gets no block: nothing in it matches.
	harness.Reload(t, p.tester, harness.SiteConfig(p.storage, p.up.Addr(), "profile off"))
	p.turns = 0
	harness.TurnsAtStart = harness.HandedOver()
	if block := p.ask(t, key, "Can you recommend some popular local dishes I should try during my visit to Thailand?"); block != "" {
		t.Errorf("with profile off the question got a block:\n%s", block)
	}
}

// After an update only the new value rides, neither the old fact nor the
// transcript that said it; history stays readable.
func TestAfterAnUpdateOnlyTheNewValue(t *testing.T) {
	p := newProfileRig(t, "")
	const key = "sk-ana"
	chat(t, p, key, "", "Hi! I live in Lisbon, close to the river.")
	chat(t, p, key, "", "My partner's name is Miguel.")
	chat(t, p, key, "", "I moved to Porto last month.")
	chat(t, p, key, "", "I broke up with Miguel, I'm dating Sara now.")
	block := p.ask(t, key, "What's the weather like where I live, close to the river?")
	if !strings.Contains(block, "Porto") || strings.Contains(block, "Lisbon") {
		t.Errorf("the block for where the user lives:\n%s", block)
	}
	block = p.ask(t, key, "Plan a romantic date night for me and my partner.")
	if !strings.Contains(block, "dating Sara now") || strings.Contains(block, "User's partner is named Miguel") {
		t.Errorf("the block for the partner:\n%s", block)
	}
	e := harness.EngineAt(p.storage)
	if got := harness.SearchFor(t, e, key, "Lisbon river"); !strings.Contains(got, "I live in Lisbon") {
		t.Errorf("the earlier home is gone from search: %s", got)
	}
}

// A turn in which the user only asked something is never injected as a
// memory about them.
func TestAnEchoIsNeverInjected(t *testing.T) {
	p := newProfileRig(t, "")
	const key = "sk-echo"
	chat(t, p, key, "", "Thanks! Also, what's a good podcast about history?")
	chat(t, p, key, "", "Suggest a history podcast for long drives.")
	block := p.ask(t, key, "Recommend me a good history podcast to listen to.")
	if strings.Contains(block, "podcast") {
		t.Errorf("the user's own question came back as a memory:\n%s", block)
	}
	// Asked what was discussed, it is what was said.
	if block := p.ask(t, key, "What did we discuss about history podcasts?"); !strings.Contains(block, "what's a good podcast about history") {
		t.Errorf("what was discussed lacks the question:\n%s", block)
	}
}

// The profile keeps to profile_tokens, and the room goes to health and
// diet constraints before preferences, whatever the order they were said.
func TestTheProfileBudgetKeepsHealthConstraints(t *testing.T) {
	p := newProfileRig(t, "profile_tokens 45")
	const key = "sk-many"
	for _, s := range []string{
		"I strongly prefer window seats on long flights.", "I prefer hiking in the mountains over lying on the beach.",
		"I have a severe nut allergy.", "I love jazz music from the fifties.", "I usually prefer tea over coffee in the morning.",
		"I follow a strict gluten-free diet.", "I prefer small boutique hotels.",
	} {
		chat(t, p, key, "", s)
	}
	block := p.ask(t, key, "Any ideas for the weekend?")
	for _, want := range []string{"User has a severe nut allergy.", "User follows a strict gluten-free diet."} {
		if !strings.Contains(block, want) {
			t.Errorf("the block lacks the constraint %q:\n%s", want, block)
		}
	}
	profile := 0
	for _, l := range strings.Split(block, "\n") {
		if strings.HasPrefix(l, "- User") { // undated: the profile's lines
			profile += (len(l) + 1 + 3) / 4
		}
	}
	if profile > 45 {
		t.Errorf("the profile takes about %d tokens, over its 45:\n%s", profile, block)
	}
	if strings.Contains(block, "jazz") {
		t.Errorf("a liking took the room:\n%s", block)
	}
	// A constraint for which the room left is too small keeps the
	// preferences out, even one short enough to fit.
	chat(t, p, key, "", "I prefer tea.")
	chat(t, p, key, "", "I have type 2 diabetes, diagnosed six years ago after a long illness, so I watch every meal closely.")
	block = p.ask(t, key, "Any ideas for the weekend?")
	constraints := 0
	for _, c := range []string{"nut allergy", "gluten-free", "diabetes"} {
		if strings.Contains(block, c) {
			constraints++
		}
	}
	if constraints == 3 || strings.Contains(block, "User prefers tea.") {
		t.Errorf("want a constraint left out and no preference in its place:\n%s", block)
	}
}

// TestTheBlockSaysWhatItHolds: the block's first line promises standing
// facts first only when it holds some; with profile off it speaks of
// memories alone, and with the profile back on (a reload) of standing
// facts again.
func TestTheBlockSaysWhatItHolds(t *testing.T) {
	p := newProfileRig(t, "profile off")
	const key = "sk-header"
	chat(t, p, key, "", "I live in Zqlisbon and I am allergic to peanuts.")
	block := p.ask(t, key, "Which market in Zqlisbon sells peanuts?")
	if !strings.Contains(block, "Zqlisbon") || !strings.Contains(block, "Memories of this user from earlier conversations. Use them") ||
		strings.Contains(block, "standing facts") {
		t.Errorf("with profile off, the block:\n%s", block)
	}
	harness.Reload(t, p.tester, harness.SiteConfig(p.storage, p.up.Addr(), ""))
	p.turns = 0
	harness.TurnsAtStart = harness.HandedOver()
	if block := p.ask(t, key, "Which market in Zqlisbon sells peanuts?"); !strings.Contains(block, "standing facts first") {
		t.Errorf("with the profile on, the block:\n%s", block)
	}
}
