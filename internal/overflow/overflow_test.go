package overflow_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/tidwall/gjson"
	"go.uber.org/zap"

	"github.com/caddy-memory/memory/extract"
	"github.com/caddy-memory/memory/inject"
	"github.com/caddy-memory/memory/internal/block"
	"github.com/caddy-memory/memory/internal/engine"
	"github.com/caddy-memory/memory/internal/engine/enginetest"
	"github.com/caddy-memory/memory/internal/overflow"
)

// A conversation longer than the model takes, as the client and the
// upstream see it, with a fake upstream (Next) that refuses any request
// over its limit as OpenAI does, and a real engine in a temporary
// directory.

// model is a fake upstream that takes at most limit tokens, as its
// tokenizer counts them: a fifth more than the proxy's estimate.
type model struct {
	limit int
	// refusal is its answer to a request over the limit; answer, to the
	// others.
	refusal func(tokens int) string
	answer  string
	got     [][]byte // the request bodies, in order
}

func (m *model) ServeHTTP(w http.ResponseWriter, r *http.Request) error {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return err
	}
	m.got = append(m.got, body)
	w.Header().Set("Content-Type", "application/json")
	if n := tokens(body); n > m.limit {
		w.WriteHeader(http.StatusBadRequest)
		_, err = io.WriteString(w, m.refusal(n))
		return err
	}
	w.WriteHeader(http.StatusOK)
	_, err = io.WriteString(w, m.answer)
	return err
}

// tokens counts body as the model's tokenizer does.
func tokens(body []byte) int { return block.EstimateTokens(string(body)) * 6 / 5 }

// openAI is a model refusing as OpenAI does, naming its limit.
func openAI(limit int) *model {
	return &model{limit: limit, refusal: naming(limit), answer: `{"id":"c","object":"chat.completion","choices":[{"index":0,` +
		`"message":{"role":"assistant","content":"Your sister is Ingrid."},"finish_reason":"stop"}]}`}
}

// naming is OpenAI's refusal for length, naming limit.
func naming(limit int) func(tokens int) string {
	return func(n int) string {
		return fmt.Sprintf(`{"error":{"message":"This model's maximum context length is %d tokens. However, your messages resulted in %d tokens.",`+
			`"type":"invalid_request_error","param":"messages","code":"context_length_exceeded"}}`, limit, n)
	}
}

// conversation is a chat request whose first turn names the user's
// sister, then turns of small talk long enough to fill about 4,000
// tokens, then the question.
func conversation(extra string) []byte {
	msgs := []map[string]string{
		{"role": "system", "content": "You are a helpful assistant."},
		{"role": "user", "content": "My sister's name is Ingrid and she lives in Oslo."},
		{"role": "assistant", "content": "Thanks for telling me about Ingrid."},
	}
	for i := range 30 {
		msgs = append(msgs,
			map[string]string{"role": "user", "content": fmt.Sprintf("Turn %d: tell me about tomatoes, %s", i, strings.Repeat("watering schedules and soil acidity, ", 12))},
			map[string]string{"role": "assistant", "content": fmt.Sprintf("Answer %d: %s", i, strings.Repeat("tomatoes like sun and steady water, ", 12))})
	}
	msgs = append(msgs, map[string]string{"role": "user", "content": "What is my sister's name?"})
	b, _ := json.Marshal(map[string]any{"model": "gpt-4o-mini", "messages": msgs})
	return append(b[:len(b)-1], []byte(extra+"}")...)
}

// rescue is a memory handler's overflow trim, with what it counted.
type rescue struct {
	overflow.Config
	counted []string
}

func newRescue(t *testing.T) *rescue {
	r := &rescue{}
	r.Config = overflow.Config{Engine: enginetest.Open(t, engine.Config{Shards: 1}), MaxTokens: 800, Timeout: time.Second,
		DefaultCtx: overflow.DefaultOllamaCtx, MaxBody: 4 << 20, Diagnostics: true, Logger: zap.NewNop(),
		Placement: func(string) inject.Placement { return inject.CacheSafe },
		Count:     func(result string) { r.counted = append(r.counted, result) }}
	return r
}

// send sends body, a request of dialect d, through the rescue to up.
func (r *rescue) send(t *testing.T, up overflow.Next, d inject.Dialect, body []byte) *httptest.ResponseRecorder {
	t.Helper()
	rec := httptest.NewRecorder()
	req := httptest.NewRequest(http.MethodPost, "/v1/chat/completions", strings.NewReader(string(body)))
	next := r.Wrap(up, overflow.Request{Dialect: d, Owner: r.Engine.OwnerID("k"), Session: "s", Query: "What is my sister's name?"})
	if err := next.ServeHTTP(rec, req); err != nil {
		t.Fatalf("ServeHTTP: %v", err)
	}
	return rec
}

// A refusal for length is held back, and the conversation asked again, cut
// under the limit the refusal named, keeping the question and the
// instructions, with what the cut turns said of the question in the
// memory block: the client sees the answer alone.
func TestRefusedForLengthIsAskedAgainCut(t *testing.T) {
	r, up := newRescue(t), openAI(2000)
	whole := conversation("")
	rec := r.send(t, up, inject.OpenAIChat, whole)

	if rec.Code != http.StatusOK || rec.Body.String() != up.answer {
		t.Fatalf("the client got %d %s, want the cut request's answer", rec.Code, rec.Body)
	}
	if len(up.got) != 2 {
		t.Fatalf("the upstream was asked %d times, want 2", len(up.got))
	}
	cut := up.got[1]
	if n := tokens(cut); n > 2000 {
		t.Errorf("the cut request is %d tokens, over the model's 2000", n)
	}
	msgs := gjson.GetBytes(cut, "messages")
	last := msgs.Get(fmt.Sprint(len(msgs.Array()) - 1))
	if msgs.Get("0.role").String() != "system" || last.Get("content").String() != "What is my sister's name?" {
		t.Errorf("the cut request lost its instructions or its question:\n%s", cut)
	}
	if gjson.GetBytes(cut, `messages.#(content=="My sister's name is Ingrid and she lives in Oslo.")`).Exists() {
		t.Errorf("the oldest turn was not cut")
	}
	if !strings.Contains(msgs.Raw, "Ingrid") {
		t.Errorf("what the cut turns said of the question (Ingrid) is not in the cut request:\n%s", cut)
	}
	// The block is a message of its own (cache_safe), before the question.
	dropped := len(gjson.GetBytes(whole, "messages").Array()) - (len(msgs.Array()) - 1)
	if got, want := rec.Header().Get("X-Memory-Overflow"), fmt.Sprintf("trimmed %d messages", dropped); got != want {
		t.Errorf("X-Memory-Overflow: %q, want %q", got, want)
	}
	if fmt.Sprint(r.counted) != "[rescued]" {
		t.Errorf("counted %v, want [rescued]", r.counted)
	}
}

// A cut request refused again, or one with nothing to cut, gives the
// client the first refusal as it came; another error is no refusal for
// length and passes as it came, asked once.
func TestWhatCannotBeRescuedGoesAsItCame(t *testing.T) {
	short := []byte(`{"model":"gpt-4o-mini","messages":[{"role":"user","content":"` + strings.Repeat("tomato ", 400) + `"}]}`)
	badKey := openAI(0)
	badKey.refusal = func(int) string {
		return `{"error":{"message":"Incorrect API key provided.","code":"invalid_api_key"}}`
	}
	// A model that counts many more tokens than the estimate: the cut
	// request, under the limit it names, is still over it.
	miscounts := openAI(60)
	miscounts.refusal = naming(2000)
	for name, c := range map[string]struct {
		up    *model
		body  []byte
		asked int
		count string
	}{
		"refused again":    {miscounts, conversation(""), 2, "[refused_again]"},
		"nothing to cut":   {openAI(60), short, 1, "[not_trimmable]"},
		"not about length": {badKey, conversation(""), 1, "[]"},
	} {
		t.Run(name, func(t *testing.T) {
			r := newRescue(t)
			rec := r.send(t, c.up, inject.OpenAIChat, c.body)
			first := c.up.refusal(tokens(c.body))
			if rec.Code != http.StatusBadRequest || rec.Body.String() != first {
				t.Errorf("the client got %d %s, want the first refusal %s", rec.Code, rec.Body, first)
			}
			if len(c.up.got) != c.asked || fmt.Sprint(r.counted) != c.count {
				t.Errorf("asked %d times, counted %v; want %d, %s", len(c.up.got), r.counted, c.asked, c.count)
			}
			if h := rec.Header().Get("X-Memory-Overflow"); h != "" {
				t.Errorf("X-Memory-Overflow %q on an answer that was not rescued", h)
			}
		})
	}
}

// Ollama drops what is over its context without a word, so a request over
// it is cut before it is sent: options.num_ctx, else the configured
// context; one within it goes as it came.
func TestOllamaIsCutBeforeItIsSent(t *testing.T) {
	for name, c := range map[string]struct {
		extra string
		cut   bool
	}{
		"over the default context": {"", true},
		"within its num_ctx":       {`,"options":{"num_ctx":32768}`, false},
	} {
		t.Run(name, func(t *testing.T) {
			r, up := newRescue(t), openAI(1<<20) // Ollama refuses nothing
			body := conversation(c.extra)
			r.send(t, up, inject.Ollama, body)
			if len(up.got) != 1 {
				t.Fatalf("the upstream was asked %d times, want once", len(up.got))
			}
			sent := up.got[0]
			if !c.cut {
				if string(sent) != string(body) || len(r.counted) != 0 {
					t.Errorf("a request within num_ctx was changed (counted %v)", r.counted)
				}
				return
			}
			if n := inject.Ollama.PromptTokens(sent); n > overflow.DefaultOllamaCtx {
				t.Errorf("the request sent is %d tokens, over the context of %d", n, overflow.DefaultOllamaCtx)
			}
			if !strings.Contains(string(sent), "Ingrid") || fmt.Sprint(r.counted) != "[rescued]" {
				t.Errorf("counted %v; the cut request:\n%s", r.counted, sent)
			}
		})
	}
}

// An answer that is no refusal reaches the client as it comes: each flush
// the upstream makes is the client's at once.
func TestAnAnswerStreamsThrough(t *testing.T) {
	r := newRescue(t)
	rec := httptest.NewRecorder()
	var seenBeforeEnd string
	up := nextFunc(func(w http.ResponseWriter, _ *http.Request) error {
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		io.WriteString(w, "data: {\"choices\":[{\"delta\":{\"content\":\"Ingrid\"}}]}\n\n")
		if err := http.NewResponseController(w).Flush(); err != nil {
			return err
		}
		seenBeforeEnd = rec.Body.String()
		_, err := io.WriteString(w, "data: [DONE]\n\n")
		return err
	})
	next := r.Wrap(up, overflow.Request{Dialect: inject.OpenAIChat, Owner: "o", Query: "q"})
	if err := next.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/v1/chat/completions", strings.NewReader(`{"messages":[]}`))); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(seenBeforeEnd, "Ingrid") || !rec.Flushed {
		t.Errorf("the client had %q when the upstream flushed, want its first event", seenBeforeEnd)
	}
}

type nextFunc func(http.ResponseWriter, *http.Request) error

func (f nextFunc) ServeHTTP(w http.ResponseWriter, r *http.Request) error { return f(w, r) }

// What the cut request's block brings back of the conversation comes
// from this conversation alone: turns stored of it earlier (a client that
// no longer sends them), never the owner's other conversations.
func TestCutTurnsRecallThisConversationOnly(t *testing.T) {
	r, up := newRescue(t), openAI(2000)
	owner := r.Engine.OwnerID("k")
	for session, said := range map[string]string{
		"s":     "My sister plays the cello in the Oslo Philharmonic.",
		"other": "My sister keeps bees on the roof of her flat.",
	} {
		if _, err := r.Engine.Ingest(context.Background(), owner, session, []extract.Said{{Role: "user", Content: said}}, false, false); err != nil {
			t.Fatal(err)
		}
	}
	r.send(t, up, inject.OpenAIChat, conversation(""))
	if len(up.got) != 2 {
		t.Fatalf("the upstream was asked %d times, want 2", len(up.got))
	}
	cut := string(up.got[1])
	if !strings.Contains(cut, "cello") {
		t.Errorf("a turn stored of this conversation is not in the cut request's block:\n%s", cut)
	}
	if strings.Contains(cut, "bees") {
		t.Errorf("another conversation's turn is in the cut request's block:\n%s", cut)
	}
}
