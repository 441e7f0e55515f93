package learning

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/caddy-memory/memory/inject"
	"github.com/caddy-memory/memory/internal/harness"
	"github.com/caddy-memory/memory/internal/llm/llmtest"
)

// TestSessionsAreDistilledByAModel: through Caddy, with a scripted model on
// its own port, the three turns of one conversation make one call once the
// conversation is quiet, carrying the three user turns and never the
// injected block; what the model answers is listed by the API as the
// model's, and a new conversation of the same owner is given the distilled
// fact, which no other owner ever sees.
func TestSessionsAreDistilledByAModel(t *testing.T) {
	model := llmtest.NewServer(llmtest.Answer{Content: `{"episode": {"summary": "The user talked about their sister Zofia's move to Krakow.", "topics": ["family", "Krakow"]},
		"facts": [{"content": "The user's sister Zofia lives in Krakow.", "category": "relationship", "importance": 7, "turns": [1, 2]}]}`})
	defer model.Close()
	storage := t.TempDir()
	up := harness.NewFakeLLM(t)
	const debounce = 2 * time.Second
	tester := harness.StartCaddy(t, harness.APIConfigWith(t, storage, fmt.Sprintf(`llm {
				url %s
				model distiller-1
				api_key sk-model-key
				debounce %s
			}`, model.Endpoint(), debounce), up.Addr(), "", ""))
	a := harness.APICall{T: t, Client: tester.Client}

	// One conversation: the client resends its history every turn.
	history := []map[string]any{harness.Msg("system", "You are helpful."), harness.Msg("user", "My sister is called Zofia. Remember that I live in Lisbon.")}
	harness.Post(t, tester, "/v1/chat/completions", "sk-zofia", harness.ChatBody(false, history...))
	history = append(history, harness.Msg("assistant", "Noted."), harness.Msg("user", "My sister Zofia moved to Krakow last spring."))
	harness.Settle(t, storage, 1)
	harness.Post(t, tester, "/v1/chat/completions", "sk-zofia", harness.ChatBody(false, history...))
	if !harness.HasBlock(up.Last("/chat/completions").Body) {
		t.Fatal("the second turn carried no memories; the test would not show the block is kept from the model")
	}
	history = append(history, harness.Msg("assistant", "Noted."), harness.Msg("user", "We talk on the phone every Sunday."))
	harness.Post(t, tester, "/v1/chat/completions", "sk-zofia", harness.ChatBody(false, history...))
	harness.Settle(t, storage, 3)

	deadline := time.Now().Add(20 * time.Second)
	for len(model.Calls()) == 0 && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	time.Sleep(debounce + time.Second) // longer than the debounce again: nothing more to send
	calls := model.Calls()
	if len(calls) != 1 {
		t.Fatalf("%d calls to the model for one conversation, want 1", len(calls))
	}
	text := calls[0].Text()
	for _, want := range []string{"My sister is called Zofia.", "My sister Zofia moved to Krakow last spring.", "We talk on the phone every Sunday."} {
		if !strings.Contains(text, want) {
			t.Errorf("the call lacks the user's turn %q", want)
		}
	}
	if strings.Contains(text, inject.BlockStart) || strings.Contains(text, "memory-context") {
		t.Errorf("the call carries the injected block:\n%s", text)
	}
	if calls[0].Model != "distiller-1" || calls[0].Authorization != "Bearer sk-model-key" {
		t.Errorf("the call went to model %q with %q", calls[0].Model, calls[0].Authorization)
	}

	// The API lists what the model taught, as the model's.
	harness.Settle(t, storage, 3)
	_, list := a.Do("GET", "/memory/admin/memories?owner=sk-zofia", "admin", nil)
	bySource := map[string][]string{}
	for _, m := range list["memories"].([]any) {
		m := m.(map[string]any)
		src, _ := m["source"].(string)
		bySource[src] = append(bySource[src], m["kind"].(string)+": "+m["content"].(string))
	}
	llmMems := strings.Join(bySource["llm"], " | ")
	if !strings.Contains(llmMems, "relationship: The user's sister Zofia lives in Krakow.") || !strings.Contains(llmMems, "episode: The user talked about") {
		t.Errorf("the model's memories as listed: %v", bySource)
	}
	if len(bySource["rules"]) == 0 {
		t.Errorf("the turns and rule facts are not listed as the rules': %v", bySource)
	}

	// A new conversation of the same owner is given the fact; nobody else is.
	harness.Post(t, tester, "/v1/chat/completions", "sk-zofia", harness.ChatBody(false, harness.Msg("user", "Where does my sister Zofia live these days?")))
	if body := string(up.Last("/chat/completions").Body); !strings.Contains(body, "The user's sister Zofia lives in Krakow.") {
		t.Errorf("a new conversation was not given the distilled fact: %s", body)
	}
	harness.Post(t, tester, "/v1/chat/completions", "sk-stranger", harness.ChatBody(false, harness.Msg("user", "Where does my sister Zofia live these days?")))
	if body := up.Last("/chat/completions").Body; harness.HasBlock(body) || strings.Contains(string(body), "Krakow") {
		t.Errorf("another owner was given memories: %s", body)
	}
}
