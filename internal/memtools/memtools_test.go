package memtools_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/tidwall/gjson"
	"go.uber.org/zap"

	"github.com/caddy-memory/memory/inject"
	"github.com/caddy-memory/memory/internal/engine"
	"github.com/caddy-memory/memory/internal/engine/enginetest"
	"github.com/caddy-memory/memory/internal/memtools"
)

// The rounds as the client and the upstream see them, with a fake
// upstream (Next) that answers from a script and keeps what it was sent,
// and a real engine in a temporary directory.

// answer is one scripted answer of the upstream.
type answer struct{ contentType, body string }

// upstream is a fake Next: each request gets the next scripted answer.
type upstream struct {
	t       *testing.T
	answers []answer
	got     [][]byte // the request bodies, in order
}

func (u *upstream) ServeHTTP(w http.ResponseWriter, r *http.Request) error {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return err
	}
	u.got = append(u.got, body)
	if len(u.got) > len(u.answers) {
		u.t.Errorf("the upstream was asked %d times; the script has %d answers", len(u.got), len(u.answers))
		return errors.New("no answer scripted")
	}
	a := u.answers[len(u.got)-1]
	w.Header().Set("Content-Type", a.contentType)
	w.Header().Set("Content-Length", strconv.Itoa(len(a.body)))
	w.WriteHeader(http.StatusOK)
	_, err = io.WriteString(w, a.body)
	return err
}

// client is the learning tee's place: a recorder that flushes.
type client struct{ *httptest.ResponseRecorder }

func (c client) FlushError() error {
	c.Flush()
	return nil
}

func openEngine(t *testing.T) *engine.Engine {
	return enginetest.Open(t, engine.Config{Shards: 1})
}

func runner(e *engine.Engine, maxRounds int) *memtools.Runner {
	return &memtools.Runner{Tools: []string{memtools.Save, memtools.Recall}, MaxRounds: maxRounds, MaxCapture: 1 << 20,
		Engine: e, Owed: new(memtools.Owed), Logger: zap.NewNop()}
}

// forward sends body through r to up as a chat request of owner, and
// returns what the client got and the texts the tools recalled.
func forward(t *testing.T, rn *memtools.Runner, up *upstream, d inject.Dialect, owner, body string) (*httptest.ResponseRecorder, []string) {
	t.Helper()
	rec := httptest.NewRecorder()
	req := httptest.NewRequest(http.MethodPost, "/v1/chat/completions", strings.NewReader(body))
	recalled, err := rn.Forward(client{rec}, req, up, d, owner, []byte(body))
	if err != nil {
		t.Fatalf("Forward: %v", err)
	}
	return rec, recalled
}

// chatCalls is a chat completions answer calling tools: name, then its
// arguments (JSON), for each.
func chatCalls(prompt int, nameArgs ...string) answer {
	var calls []string
	for i := 0; i < len(nameArgs); i += 2 {
		calls = append(calls, fmt.Sprintf(`{"id":"call_%d","type":"function","function":{"name":%q,"arguments":%q}}`, i/2, nameArgs[i], nameArgs[i+1]))
	}
	return answer{"application/json", fmt.Sprintf(`{"id":"chatcmpl-1","object":"chat.completion","choices":[{"index":0,`+
		`"message":{"role":"assistant","content":null,"tool_calls":[%s]},"finish_reason":"tool_calls"}],`+
		`"usage":{"prompt_tokens":%d,"completion_tokens":5,"total_tokens":%d}}`, strings.Join(calls, ","), prompt, prompt+5)}
}

// chatText is a chat completions answer that says text.
func chatText(prompt int, text string) answer {
	return answer{"application/json", fmt.Sprintf(`{"id":"chatcmpl-2","object":"chat.completion","choices":[{"index":0,`+
		`"message":{"role":"assistant","content":%q},"finish_reason":"stop"}],`+
		`"usage":{"prompt_tokens":%d,"completion_tokens":7,"total_tokens":%d}}`, text, prompt, prompt+7)}
}

const question = `{"model":"gpt-4o-mini","messages":[{"role":"user","content":"I moved to Lisbon last month."}]}`

// A save round: the model's call is run for the owner, the upstream is
// asked again with its result, and the client gets one ordinary answer,
// billed for both rounds.
func TestSaveRoundIsRunAndHidden(t *testing.T) {
	e := openEngine(t)
	owner := e.OwnerID("alice-key")
	up := &upstream{t: t, answers: []answer{
		chatCalls(40, memtools.Save, `{"content":"The user lives in Lisbon.","category":"fact"}`),
		chatText(60, "Noted: Lisbon."),
	}}
	rec, _ := forward(t, runner(e, 3), up, inject.OpenAIChat, owner, question)

	if offered := gjson.GetBytes(up.got[0], "tools.#.function.name").String(); offered != `["save_memory","recall_memory"]` {
		t.Errorf("the upstream was offered %s, want both memory tools", offered)
	}
	if len(up.got) != 2 {
		t.Fatalf("the upstream was asked %d times, want 2 (the call, then its result)", len(up.got))
	}
	result := gjson.GetBytes(up.got[1], `messages.#(role=="tool").content`).String()
	if !gjson.Get(result, "saved").Bool() || gjson.GetBytes(up.got[1], `messages.#(role=="assistant").tool_calls.0.function.name`).String() != memtools.Save {
		t.Errorf("the second request does not carry the call and its result:\n%s", up.got[1])
	}

	body := rec.Body.Bytes()
	if rec.Code != http.StatusOK || gjson.GetBytes(body, "choices.0.message.content").String() != "Noted: Lisbon." {
		t.Fatalf("the client got %d %s", rec.Code, body)
	}
	if gjson.GetBytes(body, "choices.0.message.tool_calls").Exists() || strings.Contains(string(body), memtools.Save) {
		t.Errorf("the client sees the proxy's call: %s", body)
	}
	if got := gjson.GetBytes(body, "usage.prompt_tokens").Int(); got != 100 {
		t.Errorf("the client is billed %d prompt tokens, want 100 (40 + 60, both rounds)", got)
	}
	if cl := rec.Header().Get("Content-Length"); cl != strconv.Itoa(len(body)) {
		t.Errorf("Content-Length %s for a body of %d bytes", cl, len(body))
	}
	found, err := e.RecallMemory(context.Background(), owner, "Lisbon", "", 5)
	if err != nil || len(found) != 1 || found[0].Content != "The user lives in Lisbon." {
		t.Errorf("the owner's memories after the round: %+v %v", found, err)
	}
}

// A recall round: the upstream is asked again with what the owner's
// memories say, and Forward returns those texts (not to be learned again).
func TestRecallRoundBringsTheOwnersMemories(t *testing.T) {
	e := openEngine(t)
	owner := e.OwnerID("alice-key")
	if _, _, err := e.SaveMemory(context.Background(), owner, "The user is allergic to peanuts.", "fact", "api"); err != nil {
		t.Fatal(err)
	}
	if _, _, err := e.SaveMemory(context.Background(), e.OwnerID("bob-key"), "The user is allergic to shellfish.", "fact", "api"); err != nil {
		t.Fatal(err)
	}
	up := &upstream{t: t, answers: []answer{
		chatCalls(40, memtools.Recall, `{"query":"allergic"}`),
		chatText(60, "Avoid peanuts."),
	}}
	_, recalled := forward(t, runner(e, 3), up, inject.OpenAIChat, owner, question)
	result := gjson.GetBytes(up.got[1], `messages.#(role=="tool").content`).String()
	if !strings.Contains(result, "allergic to peanuts") || strings.Contains(result, "shellfish") {
		t.Errorf("the recall's result is %s, want alice's allergy and not bob's", result)
	}
	if len(recalled) != 1 || recalled[0] != "The user is allergic to peanuts." {
		t.Errorf("Forward says it recalled %q", recalled)
	}
}

// The rounds run out: after max rounds the upstream is not asked again,
// and the client gets the last answer with its calls, as it came.
func TestRoundsRunOut(t *testing.T) {
	e := openEngine(t)
	call := chatCalls(40, memtools.Recall, `{"query":"anything"}`)
	up := &upstream{t: t, answers: []answer{call, call}}
	rec, _ := forward(t, runner(e, 1), up, inject.OpenAIChat, e.OwnerID("k"), question)
	if len(up.got) != 2 {
		t.Errorf("with max 1 round, the upstream was asked %d times, want 2", len(up.got))
	}
	body := rec.Body.Bytes()
	if gjson.GetBytes(body, "choices.0.message.tool_calls.0.function.name").String() != memtools.Recall ||
		gjson.GetBytes(body, "choices.0.finish_reason").String() != "tool_calls" {
		t.Errorf("the client got %s, want the last answer's call as it came", body)
	}
	if got := gjson.GetBytes(body, "usage.prompt_tokens").Int(); got != 80 {
		t.Errorf("the client is billed %d prompt tokens, want 80 (both rounds)", got)
	}
}

// An answer calling the client's tool beside the proxy's is the client's:
// it gets its own call alone, and what the model asked to save is saved.
func TestClientsOwnCallsGoToTheClient(t *testing.T) {
	e := openEngine(t)
	owner := e.OwnerID("alice-key")
	withWeather := `{"model":"gpt-4o-mini","messages":[{"role":"user","content":"Weather in Lisbon? I live there now."}],` +
		`"tools":[{"type":"function","function":{"name":"get_weather","parameters":{"type":"object"}}}]}`
	up := &upstream{t: t, answers: []answer{
		chatCalls(40, "get_weather", `{"city":"Lisbon"}`, memtools.Save, `{"content":"The user lives in Lisbon."}`),
	}}
	rec, _ := forward(t, runner(e, 3), up, inject.OpenAIChat, owner, withWeather)
	if len(up.got) != 1 {
		t.Errorf("the upstream was asked %d times, want once: the answer is the client's", len(up.got))
	}
	if names := gjson.GetBytes(rec.Body.Bytes(), "choices.0.message.tool_calls.#.function.name").String(); names != `["get_weather"]` {
		t.Errorf("the client got the calls %s, want get_weather alone", names)
	}
	if found, _ := e.RecallMemory(context.Background(), owner, "Lisbon", "", 5); len(found) != 1 {
		t.Errorf("the save beside the client's call was not run: %+v", found)
	}
}

// Without tools configured, or when the client defines the tool itself,
// the proxy offers nothing of its own and the answer is the client's.
func TestToolsTheClientHasAreNotOffered(t *testing.T) {
	e := openEngine(t)
	theirs := `{"model":"m","messages":[{"role":"user","content":"hi"}],` +
		`"tools":[{"type":"function","function":{"name":"save_memory","parameters":{"type":"object"}}}]}`
	for name, c := range map[string]struct {
		rn   *memtools.Runner
		body string
	}{
		"no tools configured":   {&memtools.Runner{Engine: e, Logger: zap.NewNop()}, question},
		"the client's own save": {&memtools.Runner{Tools: []string{memtools.Save}, Engine: e, Logger: zap.NewNop(), Owed: new(memtools.Owed)}, theirs},
	} {
		t.Run(name, func(t *testing.T) {
			a := chatCalls(40, memtools.Save, `{"content":"x"}`)
			up := &upstream{t: t, answers: []answer{a}}
			rec, _ := forward(t, c.rn, up, inject.OpenAIChat, e.OwnerID("k"), c.body)
			if string(up.got[0]) != c.body {
				t.Errorf("the upstream got\n%s\nwant the request as the client sent it\n%s", up.got[0], c.body)
			}
			if rec.Body.String() != a.body {
				t.Errorf("the client got\n%s\nwant the answer as it came", rec.Body)
			}
		})
	}
}

// A stream that talks, then calls the proxy's tool, carries on with the
// next round's answer: the client reads one stream, both texts, one end.
func TestStreamCarriesOnAcrossARound(t *testing.T) {
	e := openEngine(t)
	event := func(delta string) string {
		return `data: {"id":"c1","object":"chat.completion.chunk","choices":[{"index":0,"delta":` + delta + `}]}` + "\n\n"
	}
	first := event(`{"role":"assistant","content":"Let me note that."}`) +
		event(`{"tool_calls":[{"index":0,"id":"call_0","type":"function","function":{"name":"save_memory","arguments":"{\"content\":\"The user lives in Lisbon.\"}"}}]}`) +
		`data: {"id":"c1","object":"chat.completion.chunk","choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}` + "\n\n" +
		"data: [DONE]\n\n"
	second := event(`{"role":"assistant","content":" Done."}`) +
		`data: {"id":"c2","object":"chat.completion.chunk","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}` + "\n\n" +
		"data: [DONE]\n\n"
	up := &upstream{t: t, answers: []answer{{"text/event-stream", first}, {"text/event-stream", second}}}
	streamed := strings.Replace(question, `"messages"`, `"stream":true,"messages"`, 1)
	rec, _ := forward(t, runner(e, 3), up, inject.OpenAIChat, e.OwnerID("k"), streamed)

	out := rec.Body.String()
	said, err := inject.Decode(inject.OpenAIChat, "text/event-stream", rec.Body.Bytes())
	if err != nil {
		t.Fatalf("the client's stream does not decode: %v\n%s", err, out)
	}
	if said.Text != "Let me note that. Done." || strings.Count(out, "[DONE]") != 1 || strings.Contains(out, memtools.Save) {
		t.Errorf("the client's stream says %q, with %d ends and the proxy's call %v:\n%s",
			said.Text, strings.Count(out, "[DONE]"), strings.Contains(out, memtools.Save), out)
	}
	if rec.Header().Get("Content-Length") != "" {
		t.Errorf("an edited stream went out with Content-Length %s", rec.Header().Get("Content-Length"))
	}
}

// OpenAI keeps a responses answer whole: when the client got its own call
// alone, the next request continuing that answer brings the output owed to
// the proxy's call, or OpenAI would refuse it.
func TestOwedOutputsReachTheNextRequest(t *testing.T) {
	e := openEngine(t)
	owner := e.OwnerID("alice-key")
	rn := runner(e, 3)
	answered := answer{"application/json", `{"id":"resp_1","object":"response","status":"completed","output":[` +
		`{"type":"function_call","id":"fc_1","call_id":"call_w","name":"get_weather","arguments":"{}"},` +
		`{"type":"function_call","id":"fc_2","call_id":"call_r","name":"recall_memory","arguments":"{\"query\":\"city\"}"}],` +
		`"usage":{"input_tokens":40,"output_tokens":5}}`}
	done := answer{"application/json", `{"id":"resp_2","object":"response","status":"completed","output":[` +
		`{"type":"message","role":"assistant","content":[{"type":"output_text","text":"Sunny."}]}],"usage":{"input_tokens":50,"output_tokens":2}}`}
	up := &upstream{t: t, answers: []answer{answered, done}}
	tools := `"tools":[{"type":"function","name":"get_weather","parameters":{"type":"object"}}]`

	rec, _ := forward(t, rn, up, inject.OpenAIResponses, owner, `{"model":"gpt-4o","input":"Weather?",`+tools+`}`)
	if names := gjson.GetBytes(rec.Body.Bytes(), `output.#.name`).String(); names != `["get_weather"]` {
		t.Fatalf("the client got the calls %s, want get_weather alone", names)
	}
	forward(t, rn, up, inject.OpenAIResponses, owner,
		`{"model":"gpt-4o","previous_response_id":"resp_1","input":[{"type":"function_call_output","call_id":"call_w","output":"sunny"}],`+tools+`}`)
	owed := gjson.GetBytes(up.got[1], `input.#(call_id=="call_r")`)
	if owed.Get("type").String() != "function_call_output" || !gjson.Valid(owed.Get("output").String()) {
		t.Errorf("the request continuing resp_1 does not bring the output owed to the proxy's call:\n%s", up.got[1])
	}

	// Owed once: a second continuation of the same answer brings nothing.
	up.answers = append(up.answers, done)
	forward(t, rn, up, inject.OpenAIResponses, owner, `{"model":"gpt-4o","previous_response_id":"resp_1","input":"again",`+tools+`}`)
	if gjson.GetBytes(up.got[2], `input.#(call_id=="call_r")`).Exists() {
		t.Errorf("the owed output was brought twice:\n%s", up.got[2])
	}
}
