package api

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/caddy-memory/memory/internal/harness"
)

// What an owner of the preview test said, in two sessions.
var previewTranscript = []struct{ session, text string }{
	{"s1", "Hi, I am Ana."},
	{"s1", "I live in Porto and I work as a nurse at Santo Antonio hospital."},
	{"s1", "I have a severe peanut allergy."},
	{"s1", "I prefer vegetarian food and I can't stand coriander."},
	{"s1", "Can you recommend a good podcast about history?"},
	{"s2", "My sister Marta is getting married in June in Lisbon."},
	{"s2", "I cycle to work every morning along the river."},
	{"s2", "We decided to book the train to Lisbon on Friday."},
	{"s2", "My favourite band is Radiohead."},
	{"s2", "Remember that my gym locker code is 4711."},
}

// previewQuestions are the questions the preview and the proxy are asked:
// small talk, off topic, about the user, needing their constraints, about
// past sessions; some with earlier turns of their own conversation.
var previewQuestions = []string{
	"Good morning!", "thanks!", "ok", "Hello there", "bye", "lol",
	"How do I reverse a linked list in Go?", "What is the capital of Peru?", "Explain the CAP theorem.",
	"Write a haiku about autumn.", "What's 17 times 23?", "Translate 'good night' into German.",
	"What's my name?", "Where do I live?", "What is my job?", "Who is getting married?", "When is the wedding?",
	"What is my gym locker code?", "Which band do I like?", "How do I get to work?",
	"Suggest a snack for me.", "What should I cook tonight?", "Plan my commute for tomorrow.",
	"Can you recommend a restaurant in Porto?", "What should I bring to the wedding?", "Any dessert ideas?",
	"Recommend a podcast.", "What did we discuss last time?", "What did I say about the train?",
	"Is coriander in pesto?", "Give me a Thai curry recipe.", "Where should I go on holiday?",
	"What gift should I buy my sister?", "How long does the train to Lisbon take?", "Tell me about peanuts.",
	"I'm hungry, ideas?", "What's a good workout?", "Help me write an email to my manager at the hospital.",
	"Remind me what I decided about Friday.", "What music should I listen to while cycling?",
	"What do you know about me?", "Summarize my preferences.", "Do I have any allergies?",
	"Is Radiohead touring this year?", "What's the weather like where I live?", "Suggest a vegetarian lunch.",
	"Can I eat satay?", "What's the best bike for commuting?", "Book ideas for a nurse?", "Who is Marta?",
	"What time should I leave on Friday?", "Give me a packing list for Lisbon.",
}

// history is an earlier exchange some conversations carry before their
// question.
var history = []map[string]any{harness.Msg("user", "I need some help today."), harness.Msg("assistant", "Of course, what do you need?")}

// TestPreviewIsWhatTheProxyInjects: for the same owner, question and
// conversation, POST /preview gives exactly the block the proxy places in
// the request, byte for byte, or says why nothing when the proxy injects
// nothing: 52 questions in conversations with and without earlier turns,
// then with scope session.
func TestPreviewIsWhatTheProxyInjects(t *testing.T) {
	storage := t.TempDir()
	up := harness.NewFakeLLM(t)
	tester := harness.StartCaddy(t, harness.APIConfigWith(t, storage, "", up.Addr(), "diagnostics", ""))
	comparePreviews(t, tester.Client, up, "pv", "", nil)

	// A turn the proxy has already learned, sent again (a client's retry,
	// the request after a tool round): the proxy leaves that turn out of
	// what it recalls, and so must the preview, which it can only do when
	// it is given the conversation.
	key := "sk-pv-retry"
	retry := harness.ChatBody(false, harness.Msg("system", "You are a helpful assistant."),
		harness.Msg("user", "My zqkayak is stored in shed 12 behind the house. Where can I paddle near here?"))
	postWith(t, tester.Client, key, nil, retry)
	harness.Settle(t, storage, 1)
	a := harness.APICall{T: t, Client: tester.Client}
	_, raw := a.Raw("POST", "/memory/preview", key, map[string]any{"request": json.RawMessage(retry)})
	postWith(t, tester.Client, key, nil, retry)
	var got string
	gjson.GetBytes(up.Last("/chat/completions").Body, "messages").ForEach(func(_, m gjson.Result) bool {
		if c := m.Get("content").String(); strings.Contains(c, "<memory-context") {
			got = c
		}
		return true
	})
	if block := gjson.GetBytes(raw, "block").String(); block != got {
		t.Errorf("a retried turn: the preview's block differs from the proxy's:\npreview: %q\nproxy:   %q", block, got)
	}
	// The question alone, as the preview took it before, finds the turn
	// the proxy leaves out: it would show what the proxy does not inject.
	_, q := a.Raw("POST", "/memory/preview", key, map[string]any{"query": "My zqkayak is stored in shed 12 behind the house. Where can I paddle near here?"})
	if alone := gjson.GetBytes(q, "block").String(); alone == got || !strings.Contains(alone, "zqkayak") {
		t.Errorf("the question alone previews %q: the retried turn does not show why the preview needs the conversation", alone)
	}

	harness.Reload(t, tester, harness.APIConfigWith(t, storage, "", up.Addr(), "diagnostics\n\t\tscope session\n\t\tsession {http.request.header.X-Session}", ""))
	comparePreviews(t, tester.Client, up, "pvs", "s2", map[string]string{"X-Session": "s2"})
}

// comparePreviews asks each question of a fresh owner (so no earlier
// request's use counts change the ranking) through the preview and the
// proxy, and compares.
func comparePreviews(t *testing.T, c *http.Client, up *harness.FakeLLM, prefix, session string, headers map[string]string) {
	t.Helper()
	a := harness.APICall{T: t, Client: c}
	injected, nothing := 0, 0
	for i, q := range previewQuestions {
		key := fmt.Sprintf("sk-%s-%d", prefix, i)
		for _, s := range []string{"s1", "s2"} {
			var turns []map[string]any
			for _, line := range previewTranscript {
				if line.session == s {
					turns = append(turns, map[string]any{"role": "user", "content": line.text}, map[string]any{"role": "assistant", "content": "Noted."})
				}
			}
			if status, out := a.Do("POST", "/memory/admin/ingest", "admin", map[string]any{"owner": key, "session": s, "turns": turns}); status != http.StatusOK {
				t.Fatalf("ingest: %d %v", status, out)
			}
		}
		msgs := []map[string]any{harness.Msg("system", "You are a helpful assistant.")}
		if i%3 == 1 {
			msgs = append(msgs, history...)
		}
		body := harness.ChatBody(false, append(msgs, harness.Msg("user", q))...)

		status, raw := a.Raw("POST", "/memory/preview", key, map[string]any{"request": json.RawMessage(body), "session": session})
		if status != http.StatusOK {
			t.Fatalf("preview of %q: %d %s", q, status, raw)
		}
		block := gjson.GetBytes(raw, "block").String()
		resp := postWith(t, c, key, headers, body)
		sent := up.Last("/chat/completions").Body
		got := ""
		gjson.GetBytes(sent, "messages").ForEach(func(_, m gjson.Result) bool {
			if c := m.Get("content").String(); m.Get("role").String() == "system" && strings.Contains(c, "<memory-context") {
				got = c
			}
			return true
		})
		switch {
		case got != block:
			t.Errorf("%q: the preview's block differs from the proxy's:\npreview: %q\nproxy:   %q", q, block, got)
		case block == "" && (resp.Header.Get("X-Memory-Status") != "nothing_relevant" || gjson.GetBytes(raw, "nothing").String() == ""):
			t.Errorf("%q: nothing injected, but the proxy said %q and the preview %q", q, resp.Header.Get("X-Memory-Status"), gjson.GetBytes(raw, "nothing"))
		case block == "":
			nothing++
		default:
			injected++
		}
	}
	t.Logf("%s: %d questions injected, %d nothing, all as the preview said", prefix, injected, nothing)
	if injected < 10 || nothing < 5 {
		t.Errorf("%d injected and %d nothing: the questions do not test both sides", injected, nothing)
	}
}
