package engine

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/caddy-memory/memory/extract"
	"github.com/caddy-memory/memory/internal/block"
	"github.com/caddy-memory/memory/internal/llm"
	"github.com/caddy-memory/memory/internal/llm/llmtest"
	"github.com/caddy-memory/memory/store"
)

// withModel opens an engine that learns with the scripted model srv,
// distilling a session debounce after its latest turn and retrying a
// failed flush after 50 ms.
func withModel(t *testing.T, dir string, srv *llmtest.Server, debounce time.Duration) (*Engine, *countingObserver) {
	t.Helper()
	obs := &countingObserver{}
	e, err := openConfig(t, Config{Dir: dir, Shards: 2, LockTimeout: 200 * time.Millisecond, Observer: obs})
	if err != nil {
		t.Fatal(err)
	}
	e.UseLLM(LLMConfig{Client: &llm.Client{URL: srv.Endpoint(), Model: "test-model"}, Debounce: debounce,
		Timeout: 5 * time.Second, retry: 50 * time.Millisecond})
	return e, obs
}

// sessionTurn hands over a proxied turn of a session.
func said(t *testing.T, e *Engine, owner, session string, turn int, user, answer string) {
	t.Helper()
	if !e.Enqueue(&Job{Owner: owner, Turn: extract.Turn{Session: session, Conversation: session, Dialect: "openai_chat",
		Turn: turn, NewTurn: true, User: user, Response: chatJSON(answer), ContentType: "application/json", Time: time.Now()}}) {
		t.Fatal("turn dropped")
	}
}

// waitFor polls cond until it holds, or fails the test after 10 s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func distilled(facts ...string) llmtest.Answer {
	var fs []string
	for _, f := range facts {
		fs = append(fs, fmt.Sprintf(`{"content": %q, "category": "relationship", "importance": 7, "turns": [1]}`, f))
	}
	return llmtest.Answer{Content: `{"episode": {"summary": "The user talked about their family.", "topics": ["family"]}, "facts": [` + strings.Join(fs, ",") + `]}`}
}

func memoriesBy(t *testing.T, e *Engine, owner, source string) []*store.Memory {
	t.Helper()
	var out []*store.Memory
	for _, m := range memoriesOf(t, e, owner) {
		if m.Source == source && m.DeletedAt == nil {
			out = append(out, m)
		}
	}
	return out
}

// TestDistilsASessionOnceItIsQuiet: three turns of a session make one call
// once the session is quiet, carrying all three and no injected block; the
// facts and the episode are stored as the model's, and nothing more is
// asked of it.
func TestDistilsASessionOnceItIsQuiet(t *testing.T) {
	srv := llmtest.NewServer(distilled("The user's sister Zofia lives in Krakow."))
	defer srv.Close()
	e, obs := withModel(t, t.TempDir(), srv, 300*time.Millisecond)
	defer closeEngine(t, e)
	owner := e.OwnerID("sk-family")
	said(t, e, owner, "s1", 1, "My sister is called Zofia.", "Lovely name.")
	said(t, e, owner, "s1", 2, block.Start+"\n- User lives in Lisbon.\n"+block.End+"\n\nShe moved to Krakow last year.", "Nice city.")
	said(t, e, owner, "s1", 3, "We speak every Sunday.", "That is a good habit.")
	settle(t, e)
	if n := len(srv.Calls()); n != 0 {
		t.Fatalf("%d calls before the session was quiet", n)
	}
	waitFor(t, "the distillation", func() bool { return len(memoriesBy(t, e, owner, store.SourceLLM)) == 2 })
	time.Sleep(3 * 300 * time.Millisecond) // more than the debounce again: nothing more to send
	calls := srv.Calls()
	if len(calls) != 1 {
		t.Fatalf("%d calls for one quiet session, want 1", len(calls))
	}
	text := calls[0].Text()
	for _, want := range []string{"My sister is called Zofia.", "She moved to Krakow last year.", "We speak every Sunday."} {
		if !strings.Contains(text, want) {
			t.Errorf("the call lacks the turn %q", want)
		}
	}
	if strings.Contains(text, "memory-context") || strings.Contains(text, "User lives in Lisbon") {
		t.Errorf("the call carries the injected block:\n%s", text)
	}
	if calls[0].ResponseFormat != "json_object" || calls[0].Model != "test-model" {
		t.Errorf("the call asked %q of %q", calls[0].ResponseFormat, calls[0].Model)
	}
	kinds := map[string]string{}
	for _, m := range memoriesBy(t, e, owner, store.SourceLLM) {
		kinds[m.Kind] = m.Content
	}
	if kinds["relationship"] != "The user's sister Zofia lives in Krakow." || kinds["episode"] != "The user talked about their family." {
		t.Errorf("the model's memories: %v", kinds)
	}
	if obs.calls(LLMOK) != 1 {
		t.Errorf("calls counted ok: %d", obs.calls(LLMOK))
	}
	if res := search(t, e, owner, "Where does my sister Zofia live?"); !strings.Contains(contents(res), "Zofia lives in Krakow") {
		t.Errorf("the distilled fact is not found: %s", contents(res))
	}
	if res := search(t, e, e.OwnerID("sk-other"), "Where does my sister Zofia live?"); len(res) != 0 {
		t.Errorf("another owner finds %s", contents(res))
	}
}

// TestDistillingSupersedesAndRestates: a fact the model says replaces a
// memory it was shown becomes that memory's new version, the old text kept
// as history with the time it stopped being true; a fact it restates is
// another mention of the memory, not a copy.
func TestDistillingSupersedesAndRestates(t *testing.T) {
	srv := llmtest.NewServer()
	defer srv.Close()
	e, _ := withModel(t, t.TempDir(), srv, 100*time.Millisecond)
	defer closeEngine(t, e)
	owner := e.OwnerID("sk-job")
	stored, err := e.Remember(context.Background(),
		OwnedPut{owner, store.Put{Kind: "work", Key: "job", Content: "The user works at Acme as a welder.", Source: store.SourceAPI}},
		OwnedPut{owner, store.Put{Kind: "preference", Key: "tea", Content: "The user drinks green tea at work.", Source: store.SourceAPI}})
	if err != nil {
		t.Fatal(err)
	}
	// The model is shown the memories numbered: it answers by number.
	number := func(c llmtest.Call, content string) int {
		m := regexp.MustCompile(`(?m)^(\d+)\. ` + regexp.QuoteMeta(content) + `$`).FindStringSubmatch(c.Text())
		if m == nil {
			return 0
		}
		var n int
		fmt.Sscan(m[1], &n)
		return n
	}
	srv.Answer(func(c llmtest.Call) llmtest.Answer {
		job, tea := number(c, "The user works at Acme as a welder."), number(c, "The user drinks green tea at work.")
		if job == 0 || tea == 0 {
			return llmtest.Answer{Content: `{"facts": []}`}
		}
		return llmtest.Answer{Content: fmt.Sprintf(`{"episode": {"summary": "New job."}, "facts": [
			{"content": "The user works at Globex as an engineer.", "category": "work", "importance": 8, "replaces": %d},
			{"content": "The user drinks green tea at work.", "category": "preference", "importance": 3}]}`, job)}
	})
	said(t, e, owner, "s1", 1, "I left Acme and now work at Globex as an engineer. Still drinking green tea at work.", "Congratulations!")
	waitFor(t, "the distillation", func() bool { return len(memoriesBy(t, e, owner, store.SourceLLM)) >= 2 })
	if err := e.WaitDistilled(context.Background()); err != nil {
		t.Fatal(err)
	}
	job, err := e.Get(owner, stored[0].Memory.ID)
	if err != nil {
		t.Fatal(err)
	}
	if job.Content != "The user works at Globex as an engineer." || job.Source != store.SourceLLM || len(job.History) != 1 ||
		job.History[0].Content != "The user works at Acme as a welder." || job.History[0].Until.IsZero() {
		t.Errorf("the replaced memory: %+v", job)
	}
	tea, err := e.Get(owner, stored[1].Memory.ID)
	if err != nil {
		t.Fatal(err)
	}
	if tea.Mentions != 2 || tea.Source != store.SourceAPI || len(tea.History) != 0 {
		t.Errorf("the restated memory: mentions %d, source %q, history %v", tea.Mentions, tea.Source, tea.History)
	}
	n := 0
	for _, m := range memoriesOf(t, e, owner) {
		if strings.Contains(m.Content, "green tea") && m.Kind != "turn" {
			n++
		}
	}
	if n != 1 {
		t.Errorf("%d memories of the green tea, want 1", n)
	}
}

// TestDistillingFailuresLoseNothing: a model that fails the first two
// calls delays the session's facts; none is lost, and each call is counted.
func TestDistillingFailuresLoseNothing(t *testing.T) {
	srv := llmtest.NewServer(llmtest.Answer{Status: 500}, llmtest.Answer{Status: 503}, distilled("The user's brother Jan plays chess."))
	defer srv.Close()
	e, obs := withModel(t, t.TempDir(), srv, 100*time.Millisecond)
	defer closeEngine(t, e)
	owner := e.OwnerID("sk-fail")
	said(t, e, owner, "s1", 1, "My brother Jan plays chess.", "Fun.")
	waitFor(t, "the facts after the failures", func() bool { return len(memoriesBy(t, e, owner, store.SourceLLM)) == 2 })
	if len(srv.Calls()) != 3 || obs.calls(LLMError) != 2 || obs.calls(LLMOK) != 1 {
		t.Errorf("%d calls; counted %d failed and %d ok", len(srv.Calls()), obs.calls(LLMError), obs.calls(LLMOK))
	}
}

// TestUnreadableAnswersAreAskedAgainThenDeferred: an answer that is not the
// JSON asked for is asked again once, saying why; a second such answer
// defers the session's turns to the next flush, which learns them.
func TestUnreadableAnswersAreAskedAgainThenDeferred(t *testing.T) {
	srv := llmtest.NewServer(llmtest.Answer{Content: "Sure! The user has a dog."}, llmtest.Answer{Content: "{not json"})
	defer srv.Close()
	e, obs := withModel(t, t.TempDir(), srv, 100*time.Millisecond)
	defer closeEngine(t, e)
	owner := e.OwnerID("sk-json")
	srv.Answer(func(llmtest.Call) llmtest.Answer { return distilled("The user has a dog named Rex.") })
	said(t, e, owner, "s1", 1, "My dog is called Rex.", "Good boy.")
	waitFor(t, "the facts of the next flush", func() bool { return len(memoriesBy(t, e, owner, store.SourceLLM)) == 2 })
	calls := srv.Calls()
	if len(calls) != 3 || obs.calls(LLMBadJSON) != 2 {
		t.Fatalf("%d calls, %d unreadable; want the retry and then a new flush", len(calls), obs.calls(LLMBadJSON))
	}
	retry := calls[1].Messages
	if last := retry[len(retry)-1]; last.Role != "user" || !strings.Contains(last.Content, "could not be read") || !strings.Contains(last.Content, "no JSON object") {
		t.Errorf("the retry does not say why: %+v", last)
	}
	if !strings.Contains(calls[2].Text(), "My dog is called Rex.") || len(calls[2].Messages) != 2 {
		t.Errorf("the next flush did not send the turn afresh: %+v", calls[2].Messages)
	}
}

// TestANewSessionMakesTheLastOneDue: a turn of a new session of the same
// owner distils the owner's waiting session at once, without its debounce.
func TestANewSessionMakesTheLastOneDue(t *testing.T) {
	srv := llmtest.NewServer(distilled("The user's aunt Ola bakes bread."))
	defer srv.Close()
	e, _ := withModel(t, t.TempDir(), srv, time.Hour)
	defer closeEngine(t, e)
	owner := e.OwnerID("sk-sessions")
	said(t, e, owner, "s1", 1, "My aunt Ola bakes bread.", "Yum.")
	settle(t, e)
	said(t, e, owner, "s2", 1, "Something else entirely.", "Sure.")
	waitFor(t, "the first session's distillation", func() bool { return len(memoriesBy(t, e, owner, store.SourceLLM)) == 2 })
	calls := srv.Calls()
	if len(calls) != 1 || !strings.Contains(calls[0].Text(), "Ola bakes bread") || strings.Contains(calls[0].Text(), "Something else") {
		t.Fatalf("calls: %d, want one with the first session only", len(calls))
	}
}

// TestClosingDistilsWhatWaits: at Close the waiting sessions are distilled
// within the drain; the memories are there at the next start.
func TestClosingDistilsWhatWaits(t *testing.T) {
	dir := t.TempDir()
	srv := llmtest.NewServer(distilled("The user's cousin Ida sails."))
	defer srv.Close()
	e, _ := withModel(t, dir, srv, time.Hour)
	owner := e.OwnerID("sk-close")
	said(t, e, owner, "s1", 1, "My cousin Ida sails.", "Ahoy.")
	settle(t, e)
	closeEngine(t, e)
	if len(srv.Calls()) != 1 {
		t.Fatalf("%d calls at close, want 1", len(srv.Calls()))
	}
	e = open(t, dir, 2)
	defer closeEngine(t, e)
	if got := memoriesBy(t, e, owner, store.SourceLLM); len(got) != 2 {
		t.Errorf("after a restart: %d of the model's memories", len(got))
	}
	if st, _ := e.Stats(); st.PendingSessions != 0 {
		t.Errorf("%d sessions still wait", st.PendingSessions)
	}
}

// TestIngestDistilsTheSessionByItsDate: an ingested session is distilled
// at once, dated by its turns, not by today.
func TestIngestDistilsTheSessionByItsDate(t *testing.T) {
	srv := llmtest.NewServer(distilled("The user visited Oslo."))
	defer srv.Close()
	e, _ := withModel(t, t.TempDir(), srv, time.Hour)
	defer closeEngine(t, e)
	owner := e.OwnerID("sk-ingest")
	when := time.Date(2023, 5, 8, 13, 0, 0, 0, time.UTC)
	if _, err := e.Ingest(context.Background(), owner, "2023-05-08", []extract.Said{
		{Role: "user", Content: "Last week I visited Oslo.", Time: when, Ref: "d1"},
		{Role: "assistant", Content: "How was it?", Time: when, Ref: "d2"},
	}, true, true); err != nil {
		t.Fatal(err)
	}
	if err := e.WaitDistilled(context.Background()); err != nil {
		t.Fatal(err)
	}
	if calls := srv.Calls(); len(calls) != 1 || !strings.Contains(calls[0].Text(), "DATE: 2023-05-08") {
		t.Fatalf("calls %+v, want one dated 2023-05-08", calls)
	}
	for _, m := range memoriesBy(t, e, owner, store.SourceLLM) {
		if !m.UpdatedAt.Equal(when) || m.Ref == "" {
			t.Errorf("%s %q dated %v, ref %q; want the session's date and its turns", m.Kind, m.Content, m.UpdatedAt, m.Ref)
		}
	}
}

// TestRulesOnlyKeepsNoSessions: without a model nothing waits to be
// distilled, and an ingest that asks for it is refused with a reason.
func TestRulesOnlyKeepsNoSessions(t *testing.T) {
	e := open(t, t.TempDir(), 2)
	defer closeEngine(t, e)
	owner := e.OwnerID("sk-rules")
	said(t, e, owner, "s1", 1, "My name is Ana.", "Hi Ana.")
	settle(t, e)
	if st, _ := e.Stats(); st.PendingSessions != 0 {
		t.Errorf("%d sessions wait without a model", st.PendingSessions)
	}
	if _, err := e.Ingest(context.Background(), owner, "s", []extract.Said{{Role: "user", Content: "hi"}}, true, true); err != ErrNoLLM {
		t.Errorf("ingest asking for a model without one: %v", err)
	}
}

// TestStopLLMStopsCalling: once learning with a model is turned off (a
// configuration without llm), quiet sessions make no more calls, and a
// call in flight does not hold the stop up; turned on again, the session
// that waited is distilled.
func TestStopLLMStopsCalling(t *testing.T) {
	block := make(chan struct{})
	var calls atomic.Int32
	srv := llmtest.NewServer()
	defer srv.Close()
	defer close(block) // before the server's Close, which waits for the call
	srv.Answer(func(llmtest.Call) llmtest.Answer {
		if calls.Add(1) == 1 {
			<-block
		}
		return distilled("The user's brother Tomas lives in Vilnius.")
	})
	e, _ := withModel(t, t.TempDir(), srv, 50*time.Millisecond)
	defer closeEngine(t, e)
	owner := e.OwnerID("sk-stop")
	said(t, e, owner, "s1", 1, "My brother Tomas lives in Vilnius.", "Tell me more.")
	waitFor(t, "the call in flight", func() bool { return len(srv.Calls()) == 1 })
	stopped := make(chan struct{})
	go func() { e.StopLLM(); close(stopped) }()
	select {
	case <-stopped:
	case <-time.After(5 * time.Second):
		t.Fatal("StopLLM waited for the call in flight")
	}

	said(t, e, owner, "s2", 1, "My sister Ona lives in Kaunas.", "Nice.")
	settle(t, e)
	time.Sleep(300 * time.Millisecond) // six debounces: a running distiller would have called
	if n := len(srv.Calls()); n != 1 {
		t.Fatalf("%d calls after learning with a model was turned off, want the 1 before", n)
	}
	if _, err := e.Ingest(context.Background(), owner, "s3", []extract.Said{{Role: "user", Content: "Hello"}}, true, true); err == nil {
		t.Error("an ingest asking for the model was accepted with the model off")
	}

	e.UseLLM(LLMConfig{Client: &llm.Client{URL: srv.Endpoint(), Model: "test-model"}, Debounce: 50 * time.Millisecond,
		Timeout: 5 * time.Second, retry: 50 * time.Millisecond})
	waitFor(t, "the session cut short distilled once the model is on again", func() bool {
		return len(memoriesBy(t, e, owner, store.SourceLLM)) > 0
	})
}
