package learning

import (
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/caddy-memory/memory/inject"
	"github.com/caddy-memory/memory/internal/harness"
	"github.com/caddy-memory/memory/store"
)

// TestInjectedMemoriesAreNeverLearnedAgain is the feedback loop that fills
// other memory systems with junk: a model that quotes the injected block,
// verbatim and line by line, and a client that echoes it back in its own
// messages, for 20 turns, in every format. Afterwards the store holds the
// facts the user stated once and one transcript per turn, and no memory
// holds text that came from a block.
func TestInjectedMemoriesAreNeverLearnedAgain(t *testing.T) {
	for _, w := range harness.Wires {
		t.Run(w.Name, func(t *testing.T) { testFeedbackLoop(t, w) })
	}
}

func testFeedbackLoop(t *testing.T, w harness.Wire) {
	storage := t.TempDir()
	up := harness.NewFakeLLM(t)
	var mu sync.Mutex
	var lastBlock string
	up.Answer = func(body []byte) string {
		block := harness.InjectedBlock(body)
		mu.Lock()
		lastBlock = block
		mu.Unlock()
		if block == "" {
			return "I will keep that in mind."
		}
		// Quote the block whole, then its memories one per line without the
		// markers, the way a model answers "what do you know about me?".
		var lines []string
		for _, l := range strings.Split(block, "\n") {
			if strings.HasPrefix(l, "- [") {
				lines = append(lines, l[strings.Index(l, "]")+2:])
			}
		}
		return "Here is what I remember:\n" + block + "\n" + strings.Join(lines, "\n") + "\nAnything else?"
	}
	tester := harness.StartCaddy(t, harness.SiteConfig(storage, up.Addr(), ""))
	c := harness.Doer{C: tester.Client}
	key := "key-loop-" + w.Name

	questions := []string{
		"Where do I live?", "What is my favorite color?", "Which snacks are safe with my peanut allergy?",
		"What is my name?", "Remind me where I live and my favorite color.",
	}
	turns := []string{"My name is Ana. I live in Lisbon. I'm allergic to peanuts. My favorite color is teal."}
	injected := 0
	for i := 1; i <= 20; i++ {
		got := harness.Send(t, c, up, w, key, w.Body(i%2 == 0, "You are helpful.", turns...))
		_ = got
		harness.Settle(t, storage, i)
		mu.Lock()
		block := lastBlock
		mu.Unlock()
		if block != "" {
			injected++
		}
		answer := up.Answer(up.Last(w.Path).Body) // what the client was told
		if i == 20 {
			break
		}
		q := questions[i%len(questions)]
		if i%2 == 1 && block != "" {
			// The client echoes the block back, as a client that keeps what
			// it sent upstream would.
			q = block + "\n\n" + q
		}
		turns = append(turns, answer, q)
	}
	if injected < 15 {
		t.Fatalf("only %d of 20 turns carried memories; the loop was not exercised", injected)
	}

	e := harness.EngineAt(storage)
	owner := e.OwnerID(key)
	var facts, transcripts []*store.Memory
	_, err := e.Export(owner, func(m *store.Memory) error {
		if m.Kind == "turn" {
			transcripts = append(transcripts, m)
		} else {
			facts = append(facts, m)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	wantFacts := map[string]string{
		"identity:name":             "User's name is Ana.",
		"identity:location":         "User lives in Lisbon.",
		"health:allergy:peanuts":    "User is allergic to peanuts.",
		"preference:favorite:color": "User's favorite color is teal.",
	}
	if len(facts) != len(wantFacts) {
		var got []string
		for _, f := range facts {
			got = append(got, fmt.Sprintf("%s=%q", f.Key, f.Content))
		}
		t.Errorf("want exactly the %d stated facts, got %d: %v", len(wantFacts), len(facts), got)
	}
	for _, f := range facts {
		if wantFacts[f.Key] != f.Content || f.Mentions != 1 || len(f.History) != 0 {
			t.Errorf("fact %s = %q (mentions %d, history %d): learned again from an injected block", f.Key, f.Content, f.Mentions, len(f.History))
		}
	}
	if len(transcripts) != 20 {
		t.Errorf("want one transcript per turn (20), got %d", len(transcripts))
	}
	for _, m := range append(facts, transcripts...) {
		for _, bad := range []string{inject.BlockStart, inject.BlockEnd, "Memories from earlier conversations", "memory-context"} {
			if strings.Contains(m.Content, bad) {
				t.Fatalf("memory %d holds block text %q:\n%s", m.ID, bad, m.Content)
			}
		}
		if m.Kind != "turn" {
			continue
		}
		for _, fact := range wantFacts {
			if strings.Contains(m.Content, fact) {
				t.Fatalf("transcript %d holds the injected memory %q:\n%s", m.ID, fact, m.Content)
			}
		}
	}
}
