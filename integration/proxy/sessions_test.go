package proxy

import (
	"strings"
	"testing"

	"github.com/caddy-memory/memory/internal/harness"
	"github.com/caddy-memory/memory/store"
)

// TestDerivedSessions: with no session header, each conversation still gets
// its own stable id (from its first messages), so scope session works with
// unmodified clients, and scope owner recalls across conversations.
func TestDerivedSessions(t *testing.T) {
	for _, scope := range []string{"session", "owner"} {
		t.Run(scope, func(t *testing.T) {
			storage := t.TempDir()
			up := harness.NewFakeLLM(t)
			tester := harness.StartCaddy(t, harness.SiteConfig(storage, up.Addr(), "scope "+scope))
			c, w := harness.Doer{C: tester.Client}, harness.Wires[0]
			const key = "key-sessions"
			const sys = "You are a travel agent."

			planA := "I'm planning a trip to Japan and I love sushi."
			harness.Send(t, c, up, w, key, w.Body(false, sys, planA))
			harness.Settle(t, storage, 1)

			// Another conversation: a different first message.
			harness.Send(t, c, up, w, key, w.Body(false, sys, "Which food do I love?"))
			other := harness.HasBlock(up.Last(w.Path).Body)
			harness.Settle(t, storage, 2)

			// The first conversation again, its history resent.
			harness.Send(t, c, up, w, key, w.Body(false, sys, planA, "Noted.", "Which food do I love?"))
			same := up.Last(w.Path).Body

			if !strings.Contains(string(same), "User loves sushi.") {
				t.Errorf("the conversation's own memory was not recalled in it: %s", same)
			}
			if scope == "session" && other {
				t.Errorf("scope session: another conversation recalled this one's memories")
			}
			if scope == "owner" && !other {
				t.Errorf("scope owner: memories did not follow the owner into a new conversation")
			}
		})
	}
}

// TestResponsesChainKeepsItsConversation: a responses-API client sends only
// the new input and previous_response_id; the chain is still one
// conversation, for session scope and for grouping its transcript.
func TestResponsesChainKeepsItsConversation(t *testing.T) {
	storage := t.TempDir()
	up := harness.NewFakeLLM(t)
	tester := harness.StartCaddy(t, harness.SiteConfig(storage, up.Addr(), "scope session"))
	c, w := harness.Doer{C: tester.Client}, responsesWire
	const key = "key-chain"

	harness.Send(t, c, up, w, key, []byte(`{"model":"gpt-4.1","input":"My favorite city is Kyoto."}`)) // answered as resp_1
	harness.Settle(t, storage, 1)
	harness.Send(t, c, up, w, key, []byte(`{"model":"gpt-4.1","previous_response_id":"resp_1","input":"Which city is my favorite?"}`))
	if !strings.Contains(string(up.Last(w.Path).Body), "User's favorite city is Kyoto.") {
		t.Errorf("the continued conversation did not recall its own memory")
	}
	harness.Settle(t, storage, 2)
	harness.Send(t, c, up, w, key, []byte(`{"model":"gpt-4.1","input":"Which city is my favorite?"}`))
	if harness.HasBlock(up.Last(w.Path).Body) {
		t.Errorf("scope session: a new conversation recalled the chain's memories")
	}
	harness.Settle(t, storage, 3)

	e := harness.EngineAt(storage)
	conversations := map[string]int{}
	e.Export(e.OwnerID(key), func(m *store.Memory) error {
		if m.Kind == "turn" {
			conversations[m.Meta["conversation"]]++
		}
		return nil
	})
	if len(conversations) != 2 {
		t.Errorf("want the chain's two turns in one conversation and the new one apart, got %v", conversations)
	}
	for conv, n := range conversations {
		if conv == "" || (n != 2 && n != 1) {
			t.Errorf("conversation %q has %d turns", conv, n)
		}
	}
}
