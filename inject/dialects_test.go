package inject

import (
	"bytes"
	"encoding/json"
	"errors"
	"regexp"
	"strings"
	"testing"
)

func parseAs(t *testing.T, d Dialect, body string) *Request {
	t.Helper()
	r, err := d.Parse([]byte(body))
	if err != nil {
		t.Fatalf("%s.Parse(%s): %v", d.Name(), body, err)
	}
	if r.Dialect != d.Name() {
		t.Errorf("Dialect = %q, want %q", r.Dialect, d.Name())
	}
	return r
}

// spanOf is the offset range of the n-th (0-based) occurrence of sub in body.
func spanOf(t *testing.T, body, sub string, n int) (int, int) {
	t.Helper()
	at := -1
	for i := 0; i <= n; i++ {
		j := strings.Index(body[at+1:], sub)
		if j < 0 {
			t.Fatalf("%q occurs fewer than %d times in %s", sub, n+1, body)
		}
		at += 1 + j
	}
	return at, at + len(sub)
}

// replaced checks that out is body with exactly body[from:to] replaced and
// returns what replaced it.
func replaced(t *testing.T, body string, out []byte, from, to int) []byte {
	t.Helper()
	return splitAround(t, []byte(body), out, from, to)
}

func decodeJSON(t *testing.T, out []byte, v any) {
	t.Helper()
	if err := json.Unmarshal(out, v); err != nil {
		t.Fatalf("decoding %s: %v", out, err)
	}
}

type msg struct{ role, text string }

func checkMessages(t *testing.T, r *Request, want []msg) {
	t.Helper()
	if len(r.Messages) != len(want) {
		t.Fatalf("got %d messages %+v, want %d %+v", len(r.Messages), r.Messages, len(want), want)
	}
	for i, m := range want {
		if r.Messages[i].Role != m.role || r.Messages[i].Text != m.text {
			t.Errorf("message %d = {%q %q}, want {%q %q}", i, r.Messages[i].Role, r.Messages[i].Text, m.role, m.text)
		}
	}
}

func TestForPath(t *testing.T) {
	tests := []struct {
		path string
		want Dialect
	}{
		{"/v1/chat/completions", OpenAIChat},
		{"/openai/v1/chat/completions", OpenAIChat},
		{"/chat/completions", OpenAIChat},
		{"/v1/messages", Anthropic},
		{"/anthropic/v1/messages", Anthropic},
		{"/api/chat", Ollama},
		{"/ollama/api/chat", Ollama},
		{"/v1/responses", OpenAIResponses},
		{"/openai/v1/responses", OpenAIResponses},
		{"/v1/messages/count_tokens", nil},
		{"/v1/messages/batches", nil},
		{"/v1/embeddings", nil},
		{"/api/generate", nil},
		{"/api/embed", nil},
		{"/v1/threads/x/messages", nil},
		{"/v1/responses/resp_123", nil},
		{"/v1/responses/resp_123/input_items", nil},
		{"/v1/completions", nil},
		{"/", nil},
		{"", nil},
	}
	for _, tt := range tests {
		got := ForPath(tt.path)
		if got != tt.want {
			t.Errorf("ForPath(%q) = %v, want %v", tt.path, got, tt.want)
		}
	}
}

func TestByName(t *testing.T) {
	names := map[string]Dialect{
		"openai_chat":      OpenAIChat,
		"anthropic":        Anthropic,
		"ollama":           Ollama,
		"openai_responses": OpenAIResponses,
	}
	for name, d := range names {
		if d.Name() != name {
			t.Errorf("%v.Name() = %q, want %q", d, d.Name(), name)
		}
		if got := ByName(name); got != d {
			t.Errorf("ByName(%q) = %v, want %v", name, got, d)
		}
	}
	if len(Dialects) != len(names) {
		t.Errorf("Dialects has %d entries, want %d", len(Dialects), len(names))
	}
	for _, name := range []string{"", "Anthropic", "openai", "responses", "anthropic_messages"} {
		if d := ByName(name); d != nil {
			t.Errorf("ByName(%q) = %v, want nil", name, d)
		}
	}
}

// ---- Anthropic ----

// anthBody is a realistic Anthropic request: cached system blocks, a tool
// loop, and fields a proxy must never touch.
const anthBody = `{"model":"claude-sonnet-4-5","max_tokens":1024,` +
	`"system":[{"type":"text","text":"You are a travel agent.","cache_control":{"type":"ephemeral"}},{"type":"text","text":"Be brief."}],` +
	`"messages":[` +
	`{"role":"user","content":"I want to visit Japan."},` +
	`{"role":"assistant","content":[{"type":"thinking","thinking":"hmm","signature":"sig=="},{"type":"text","text":"Let me check."},{"type":"tool_use","id":"toolu_1","name":"calendar","input":{"month":"April"}}]},` +
	`{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":[{"type":"text","text":"free in April"}]},{"type":"text","text":"Book it, \u00e9 \/ ok?"}]}],` +
	`"tools":[{"name":"calendar","input_schema":{"type":"object"}}],"stream":true,"metadata":{"user_id":"u-1"},"seed":12345678901234567890}`

func TestAnthropicParse(t *testing.T) {
	tests := []struct {
		name   string
		body   string
		system string
		stream bool
		msgs   []msg
		query  string
	}{
		{
			name:   "system string, user string",
			body:   `{"model":"claude-haiku-4-5","max_tokens":100,"system":"You are X.","messages":[{"role":"user","content":"Hi there"}]}`,
			system: "You are X.",
			msgs:   []msg{{"user", "Hi there"}},
			query:  "Hi there",
		},
		{
			name:   "system blocks with cache_control, tool loop",
			body:   anthBody,
			system: "You are a travel agent.\nBe brief.",
			stream: true,
			msgs:   []msg{{"user", "I want to visit Japan."}, {"assistant", "Let me check."}, {"user", "Book it, é / ok?"}},
			query:  "Book it, é / ok?",
		},
		{
			name: "user blocks: text, image and tool_result",
			body: `{"messages":[{"role":"user","content":[{"type":"text","text":"What is this?"},` +
				`{"type":"image","source":{"type":"base64","media_type":"image/png","data":"iVBORw0KGgo="}},` +
				`{"type":"tool_result","tool_use_id":"t","content":"result text"},{"type":"text","text":"Be short."}]}]}`,
			msgs:  []msg{{"user", "What is this?\nBe short."}},
			query: "What is this?\nBe short.",
		},
		{
			name: "a user turn with only tool results is a tool turn",
			body: `{"messages":[{"role":"user","content":"Weather in Oslo?"},` +
				`{"role":"assistant","content":[{"type":"tool_use","id":"t1","name":"w","input":{}},{"type":"tool_use","id":"t2","name":"w","input":{}}]},` +
				`{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"-3C"},{"type":"tool_result","tool_use_id":"t2","content":[{"type":"text","text":"snow"}],"is_error":false}]}]}`,
			msgs:  []msg{{"user", "Weather in Oslo?"}, {"assistant", ""}, {"tool", ""}},
			query: "Weather in Oslo?",
		},
		{
			name:  "no system",
			body:  `{"messages":[{"role":"user","content":"a"},{"role":"assistant","content":"b"},{"role":"user","content":"c"}],"stream":false}`,
			msgs:  []msg{{"user", "a"}, {"assistant", "b"}, {"user", "c"}},
			query: "c",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := parseAs(t, Anthropic, tt.body)
			if r.System != tt.system {
				t.Errorf("System = %q, want %q", r.System, tt.system)
			}
			if r.Stream != tt.stream {
				t.Errorf("Stream = %v, want %v", r.Stream, tt.stream)
			}
			checkMessages(t, r, tt.msgs)
			if got := r.Query(); got != tt.query {
				t.Errorf("Query() = %q, want %q", got, tt.query)
			}
		})
	}
	t.Run("tool turn is not the latest user turn", func(t *testing.T) {
		r := parseAs(t, Anthropic, tests[3].body)
		if r.LatestUser() != 0 {
			t.Errorf("LatestUser() = %d, want 0", r.LatestUser())
		}
		if r.NewTurn() {
			t.Error("NewTurn() = true in the middle of a tool loop")
		}
		if r.UserTurns() != 1 {
			t.Errorf("UserTurns() = %d, want 1", r.UserTurns())
		}
	})
}

func TestAnthropicParseRejects(t *testing.T) {
	tests := []struct {
		body string
		want error
	}{
		{`{"messages":[{"role":"user","content":"hi"}]`, ErrNotJSON},
		{`not json`, ErrNotJSON},
		{``, ErrNotJSON},
		{`{"messages":[{"role":"user","content":"a"}],"messages":[{"role":"user","content":"b"}]}`, ErrNotChat},
		{`{"system":"a","system":"b","messages":[{"role":"user","content":"hi"}]}`, ErrNotChat},
		{`{"system":"a","messages":[{"role":"user","content":"hi"}],"sys\u0074em":"b"}`, ErrNotChat},
		{`{"messages":[{"role":"user","content":"a","content":"b"}]}`, ErrNotChat},
		{`{"messages":[{"role":"user","role":"assistant","content":"a"}]}`, ErrNotChat},
		{`{"messages":[]}`, ErrNotChat},
		{`{"messages":"hi"}`, ErrNotChat},
		{`{"messages":[1]}`, ErrNotChat},
		{`{"prompt":"\n\nHuman: hi\n\nAssistant:"}`, ErrNotChat},
		{`[{"role":"user","content":"hi"}]`, ErrNotChat},
	}
	for _, tt := range tests {
		r, err := Anthropic.Parse([]byte(tt.body))
		if !errors.Is(err, tt.want) || r != nil {
			t.Errorf("Parse(%s) = %v, %v; want nil, %v", tt.body, r, err, tt.want)
		}
	}
}

// anthWire is an Anthropic body as the upstream decodes it.
type anthWire struct {
	System   json.RawMessage `json:"system"`
	Messages []wireMessage   `json:"messages"`
}

type anthBlock struct {
	Type         string          `json:"type"`
	Text         string          `json:"text"`
	CacheControl json.RawMessage `json:"cache_control"`
}

func anthBlocks(t *testing.T, raw json.RawMessage) []anthBlock {
	t.Helper()
	var b []anthBlock
	if err := json.Unmarshal(raw, &b); err != nil {
		t.Fatalf("%s is not an array of blocks: %v", raw, err)
	}
	return b
}

func TestAnthropicInjectSystem(t *testing.T) {
	t.Run("no system field", func(t *testing.T) {
		body := `{"model":"claude-haiku-4-5","max_tokens":100,"messages":[{"role":"user","content":"Hi"}],"stream":true}`
		out := mustInject(t, parseAs(t, Anthropic, body), testBlock, System)
		mid := replaced(t, body, out, 1, 1)
		if want := `"system":` + string(jsonString(testBlock)) + `,`; string(mid) != want {
			t.Errorf("inserted %s, want %s", mid, want)
		}
		var w anthWire
		decodeJSON(t, out, &w)
		if stringContent(t, w.System) != testBlock || len(w.Messages) != 1 {
			t.Errorf("upstream reads system %s, %d messages", w.System, len(w.Messages))
		}
		assertNoHTMLEscapes(t, out)
	})
	t.Run("no system field, pretty printed", func(t *testing.T) {
		body := "\n  {\n  \"messages\" : [ {\"role\":\"user\",\"content\":\"Hi\"} ]\n}\n"
		out := mustInject(t, parseAs(t, Anthropic, body), testBlock, System)
		at := strings.Index(body, "{") + 1
		replaced(t, body, out, at, at)
		var w anthWire
		decodeJSON(t, out, &w)
		if stringContent(t, w.System) != testBlock {
			t.Errorf("system = %s", w.System)
		}
	})
	t.Run("string system", func(t *testing.T) {
		body := `{"model":"m","system":"You are X. \u00e9","messages":[{"role":"user","content":"Hi"}]}`
		out := mustInject(t, parseAs(t, Anthropic, body), testBlock, System)
		from, to := spanOf(t, body, `"You are X. \u00e9"`, 0)
		mid := replaced(t, body, out, from, to)
		var got string
		decodeJSON(t, mid, &got)
		if want := "You are X. é\n\n" + testBlock; got != want {
			t.Errorf("system = %q, want %q", got, want)
		}
		assertNoHTMLEscapes(t, out)
	})
	t.Run("block array", func(t *testing.T) {
		body := anthBody
		out := mustInject(t, parseAs(t, Anthropic, body), testBlock, System)
		// Everything up to the array's closing bracket is the client's,
		// byte for byte, so its cache_control prefix still hits.
		at, _ := spanOf(t, body, `}],"messages"`, 0)
		at++ // the ']'
		mid := replaced(t, body, out, at, at)
		if want := `,{"type":"text","text":` + string(jsonString(testBlock)) + `}`; string(mid) != want {
			t.Errorf("inserted %s, want %s", mid, want)
		}
		var w anthWire
		decodeJSON(t, out, &w)
		blocks := anthBlocks(t, w.System)
		if len(blocks) != 3 || blocks[0].Text != "You are a travel agent." || len(blocks[0].CacheControl) == 0 ||
			blocks[1].Text != "Be brief." || blocks[2].Type != "text" || blocks[2].Text != testBlock {
			t.Errorf("system blocks = %+v", blocks)
		}
		// The request still reads the same.
		again := parseAs(t, Anthropic, string(out))
		if again.Query() != "Book it, é / ok?" || again.Conversation() != parseAs(t, Anthropic, body).Conversation() {
			t.Errorf("re-parsed: query %q", again.Query())
		}
	})
	t.Run("empty block array", func(t *testing.T) {
		body := `{"system":[],"messages":[{"role":"user","content":"Hi"}]}`
		out := mustInject(t, parseAs(t, Anthropic, body), testBlock, System)
		var w anthWire
		decodeJSON(t, out, &w)
		if b := anthBlocks(t, w.System); len(b) != 1 || b[0].Text != testBlock {
			t.Errorf("system = %s", w.System)
		}
	})
}

func TestAnthropicInjectLatestUser(t *testing.T) {
	t.Run("cache_safe, string content", func(t *testing.T) {
		body := `{"model":"m","system":"S","messages":[{"role":"user","content":"first"},{"role":"assistant","content":"ok"},{"role":"user","content":"Tell me \"more\" \u00e9"}],"max_tokens":10}`
		out := mustInject(t, parseAs(t, Anthropic, body), testBlock, CacheSafe)
		from, to := spanOf(t, body, `"Tell me \"more\" \u00e9"`, 0)
		mid := replaced(t, body, out, from, to)
		blocks := anthBlocks(t, mid)
		if len(blocks) != 2 || blocks[0].Type != "text" || blocks[0].Text != testBlock || blocks[1].Type != "text" || blocks[1].Text != `Tell me "more" é` {
			t.Errorf("content = %s, want [block, original text]", mid)
		}
		assertNoHTMLEscapes(t, out)
		if q := parseAs(t, Anthropic, string(out)).Query(); q != `Tell me "more" é` {
			t.Errorf("re-parsed Query() = %q", q)
		}
	})
	t.Run("cache_safe, tool results lead the content", func(t *testing.T) {
		body := `{"messages":[{"role":"user","content":"Weather?"},{"role":"assistant","content":[{"type":"tool_use","id":"a","name":"w","input":{}},{"type":"tool_use","id":"b","name":"w","input":{}}]},` +
			`{"role":"user","content":[{"type":"tool_result","tool_use_id":"a","content":"sun"},{"type":"tool_result","tool_use_id":"b","content":"rain"},{"type":"text","text":"And tomorrow?"}]}]}`
		out := mustInject(t, parseAs(t, Anthropic, body), testBlock, CacheSafe)
		at, _ := spanOf(t, body, `{"type":"text","text":"And tomorrow?"}`, 0)
		mid := replaced(t, body, out, at, at)
		if want := string(textPart(testBlock)) + ","; string(mid) != want {
			t.Errorf("inserted %s, want %s", mid, want)
		}
		var w anthWire
		decodeJSON(t, out, &w)
		blocks := anthBlocks(t, w.Messages[2].Content)
		if len(blocks) != 4 || blocks[0].Type != "tool_result" || blocks[1].Type != "tool_result" || blocks[2].Text != testBlock || blocks[3].Text != "And tomorrow?" {
			t.Errorf("blocks = %+v", blocks)
		}
	})
	t.Run("cache_safe, array without tool results", func(t *testing.T) {
		body := `{"messages":[{"role":"user","content":[{"type":"image","source":{"type":"url","url":"https://x/y.png"}},{"type":"text","text":"Who?","cache_control":{"type":"ephemeral"}}]}]}`
		out := mustInject(t, parseAs(t, Anthropic, body), testBlock, CacheSafe)
		at := strings.Index(body, `"content":[`) + len(`"content":[`)
		mid := replaced(t, body, out, at, at)
		if want := string(textPart(testBlock)) + ","; string(mid) != want {
			t.Errorf("inserted %s, want %s", mid, want)
		}
	})
	t.Run("user, string content", func(t *testing.T) {
		body := `{"messages":[{"role":"user","content":"old"},{"role":"assistant","content":"x"},{"role":"user","content":"How cold is Oslo?"}],"stream":true}`
		out := mustInject(t, parseAs(t, Anthropic, body), testBlock, User)
		from, to := spanOf(t, body, `"How cold is Oslo?"`, 0)
		mid := replaced(t, body, out, from, to)
		var got string
		decodeJSON(t, mid, &got)
		if want := testBlock + "\n\nHow cold is Oslo?"; got != want {
			t.Errorf("content = %q, want %q", got, want)
		}
		again := parseAs(t, Anthropic, string(out))
		if again.Query() != "How cold is Oslo?" || again.Messages[0].Text != "old" {
			t.Errorf("re-parsed = %+v", again.Messages)
		}
	})
	t.Run("user, array content", func(t *testing.T) {
		body := `{"messages":[{"role":"user","content":[{"type":"text","text":"Look:"},{"type":"image","source":{"type":"base64","media_type":"image/png","data":"AAAA"}}]}]}`
		out := mustInject(t, parseAs(t, Anthropic, body), testBlock, User)
		at := strings.Index(body, `"content":[`) + len(`"content":[`)
		mid := replaced(t, body, out, at, at)
		if want := string(textPart(testBlock)) + ","; string(mid) != want {
			t.Errorf("inserted %s, want %s", mid, want)
		}
	})
	t.Run("user, tool results lead the content", func(t *testing.T) {
		body := `{"messages":[{"role":"user","content":[{"type":"tool_result","tool_use_id":"a","content":"sun"},{"type":"text","text":"Thanks. Tomorrow?"}]}]}`
		out := mustInject(t, parseAs(t, Anthropic, body), testBlock, User)
		at, _ := spanOf(t, body, `{"type":"text"`, 0)
		mid := replaced(t, body, out, at, at)
		if want := string(textPart(testBlock)) + ","; string(mid) != want {
			t.Errorf("inserted %s, want %s", mid, want)
		}
	})
	t.Run("no user turn", func(t *testing.T) {
		body := `{"messages":[{"role":"assistant","content":"prefill"}]}`
		r := parseAs(t, Anthropic, body)
		for _, p := range []Placement{CacheSafe, User} {
			if out, err := r.Inject(testBlock, p); err == nil {
				t.Errorf("Inject(%s) = %s, want an error", p, out)
			}
		}
	})
	t.Run("unusable content is an error", func(t *testing.T) {
		body := `{"messages":[{"role":"user","content":null}]}`
		r := parseAs(t, Anthropic, body)
		for _, p := range []Placement{CacheSafe, User} {
			if out, err := r.Inject(testBlock, p); err == nil {
				t.Errorf("Inject(%s) = %s, want an error", p, out)
			}
		}
	})
	t.Run("empty block leaves the body alone", func(t *testing.T) {
		r := parseAs(t, Anthropic, anthBody)
		for _, p := range []Placement{CacheSafe, System, User} {
			if out, err := r.Inject("", p); err != nil || string(out) != anthBody {
				t.Errorf("Inject(\"\", %s) changed the body: %v", p, err)
			}
		}
	})
}

// Every placement changes one value only; the rest of the body is the
// client's, byte for byte.
func TestAnthropicInjectPreservesEverythingElse(t *testing.T) {
	for _, p := range []Placement{CacheSafe, System, User} {
		out := mustInject(t, parseAs(t, Anthropic, anthBody), testBlock, p)
		changed := changedRegion([]byte(anthBody), out)
		for _, keep := range []string{`"tools":`, `"metadata":`, `"seed":12345678901234567890`, `"signature":"sig=="`, `"cache_control":{"type":"ephemeral"}`, `"free in April"`, `"I want to visit Japan."`} {
			if strings.Contains(changed, keep) {
				t.Errorf("%s: the changed region %q includes %s", p, changed, keep)
			}
		}
	}
}

// changedRegion is the part of in that out does not share as a common prefix
// or suffix.
func changedRegion(in, out []byte) string {
	pre := 0
	for pre < len(in) && pre < len(out) && in[pre] == out[pre] {
		pre++
	}
	suf := 0
	for suf < len(in)-pre && suf < len(out)-pre && in[len(in)-1-suf] == out[len(out)-1-suf] {
		suf++
	}
	return string(in[pre : len(in)-suf])
}

// ---- Ollama ----

const ollamaBody = `{"model":"llama3.2","messages":[` +
	`{"role":"system","content":"You are terse."},` +
	`{"role":"user","content":"What is in this picture?","images":["iVBORw0KGgo="]},` +
	`{"role":"assistant","content":"A cat.","thinking":"looks like a cat"},` +
	`{"role":"user","content":"What colour?"}],` +
	`"options":{"temperature":0.2,"num_ctx":8192},"keep_alive":"5m","format":"json"}`

func TestOllamaParse(t *testing.T) {
	tests := []struct {
		body   string
		stream bool
	}{
		{`{"model":"llama3.2","messages":[{"role":"user","content":"hi"}]}`, true},
		{`{"model":"llama3.2","messages":[{"role":"user","content":"hi"}],"stream":false}`, false},
		{`{"model":"llama3.2","messages":[{"role":"user","content":"hi"}],"stream":true}`, true},
		{`{"stream":false,"model":"llama3.2","messages":[{"role":"user","content":"hi"}]}`, false},
	}
	for _, tt := range tests {
		r := parseAs(t, Ollama, tt.body)
		if r.Stream != tt.stream {
			t.Errorf("Parse(%s).Stream = %v, want %v", tt.body, r.Stream, tt.stream)
		}
		if r.Model != "llama3.2" || r.Query() != "hi" {
			t.Errorf("Parse(%s) = model %q query %q", tt.body, r.Model, r.Query())
		}
	}
	// The OpenAI dialect does not stream by default.
	if r := parseAs(t, OpenAIChat, tests[0].body); r.Stream {
		t.Error("openai_chat without a stream field: Stream = true")
	}
	r := parseAs(t, Ollama, ollamaBody)
	checkMessages(t, r, []msg{{"system", "You are terse."}, {"user", "What is in this picture?"}, {"assistant", "A cat."}, {"user", "What colour?"}})
	if !r.Stream {
		t.Error("Stream = false without a stream field")
	}
	if _, err := Ollama.Parse([]byte(`{"model":"llama3.2","prompt":"hi"}`)); !errors.Is(err, ErrNotChat) {
		t.Errorf("an /api/generate body parsed: %v", err)
	}
}

func TestOllamaInject(t *testing.T) {
	body := ollamaBody
	t.Run("cache_safe", func(t *testing.T) {
		out := mustInject(t, parseAs(t, Ollama, body), testBlock, CacheSafe)
		at, _ := spanOf(t, body, `{"role":"user"`, 1)
		mid := replaced(t, body, out, at, at)
		if want := `{"role":"system","content":` + string(jsonString(testBlock)) + `},`; string(mid) != want {
			t.Errorf("inserted %s, want %s", mid, want)
		}
		msgs := decodeMessages(t, out)
		roles := []string{}
		for _, m := range msgs {
			roles = append(roles, m.Role)
		}
		if got := strings.Join(roles, ","); got != "system,user,assistant,system,user" {
			t.Errorf("roles = %s", got)
		}
		again := parseAs(t, Ollama, string(out))
		if again.Query() != "What colour?" || !again.Stream {
			t.Errorf("re-parsed: %+v", again)
		}
	})
	t.Run("system", func(t *testing.T) {
		out := mustInject(t, parseAs(t, Ollama, body), testBlock, System)
		from, to := spanOf(t, body, `"You are terse."`, 0)
		mid := replaced(t, body, out, from, to)
		var got string
		decodeJSON(t, mid, &got)
		if got != "You are terse.\n\n"+testBlock {
			t.Errorf("system content = %q", got)
		}
	})
	t.Run("system, none yet", func(t *testing.T) {
		body := `{"model":"llama3.2","messages":[{"role":"user","content":"hi"}],"stream":false}`
		out := mustInject(t, parseAs(t, Ollama, body), testBlock, System)
		at := strings.Index(body, "[") + 1
		mid := replaced(t, body, out, at, at)
		if want := `{"role":"system","content":` + string(jsonString(testBlock)) + `},`; string(mid) != want {
			t.Errorf("inserted %s, want %s", mid, want)
		}
	})
	t.Run("user", func(t *testing.T) {
		out := mustInject(t, parseAs(t, Ollama, body), testBlock, User)
		from, to := spanOf(t, body, `"What colour?"`, 0)
		mid := replaced(t, body, out, from, to)
		var got string
		decodeJSON(t, mid, &got)
		if got != testBlock+"\n\nWhat colour?" {
			t.Errorf("user content = %q", got)
		}
		assertNoHTMLEscapes(t, out)
	})
}

// ---- OpenAI responses ----

func TestResponsesParse(t *testing.T) {
	tests := []struct {
		name    string
		body    string
		system  string
		stream  bool
		msgs    []msg
		query   string
		thread  string
		prevRef bool
	}{
		{
			name:  "input string",
			body:  `{"model":"gpt-4.1","input":"Tell me a joke about \u00e9clairs."}`,
			msgs:  []msg{{"user", "Tell me a joke about éclairs."}},
			query: "Tell me a joke about éclairs.",
		},
		{
			name: "items with roles, content string or parts",
			body: `{"model":"gpt-4.1","instructions":"Be kind.","stream":true,"input":[` +
				`{"role":"developer","content":"Answer in English."},` +
				`{"role":"user","content":[{"type":"input_text","text":"What is this?"},{"type":"input_image","image_url":"https://x/y.png"}]},` +
				`{"type":"message","role":"assistant","id":"msg_1","status":"completed","content":[{"type":"output_text","text":"A cat.","annotations":[]}]},` +
				`{"type":"message","role":"user","content":"What colour?"}]}`,
			system: "Be kind.",
			stream: true,
			msgs:   []msg{{"developer", "Answer in English."}, {"user", "What is this?"}, {"assistant", "A cat."}, {"user", "What colour?"}},
			query:  "What colour?",
		},
		{
			name: "items without role",
			body: `{"input":[{"role":"user","content":"Weather in Oslo?"},` +
				`{"type":"reasoning","id":"rs_1","summary":[{"type":"summary_text","text":"need weather"}]},` +
				`{"type":"function_call","call_id":"c1","name":"weather","arguments":"{\"city\":\"Oslo\"}"},` +
				`{"type":"function_call_output","call_id":"c1","output":"-3C"},` +
				`{"type":"item_reference","id":"msg_9"}]}`,
			msgs:  []msg{{"user", "Weather in Oslo?"}, {"assistant", ""}, {"assistant", ""}, {"tool", ""}, {"other", ""}},
			query: "Weather in Oslo?",
		},
		{
			name:   "conversation as a string",
			body:   `{"conversation":"conv_abc","instructions":null,"input":"hi"}`,
			msgs:   []msg{{"user", "hi"}},
			query:  "hi",
			thread: "conv_abc",
		},
		{
			name:   "conversation as an object",
			body:   `{"conversation":{"id":"conv_def"},"input":[{"role":"user","content":"hi"}]}`,
			msgs:   []msg{{"user", "hi"}},
			query:  "hi",
			thread: "conv_def",
		},
		{
			name:    "previous_response_id",
			body:    `{"previous_response_id":"resp_123","input":[{"role":"user","content":"and then?"}]}`,
			msgs:    []msg{{"user", "and then?"}},
			query:   "and then?",
			thread:  "resp_123",
			prevRef: true,
		},
		{
			name:   "conversation wins over previous_response_id",
			body:   `{"previous_response_id":"resp_123","conversation":"conv_abc","input":"hi"}`,
			msgs:   []msg{{"user", "hi"}},
			query:  "hi",
			thread: "conv_abc",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := parseAs(t, OpenAIResponses, tt.body)
			if r.System != tt.system {
				t.Errorf("System = %q, want %q", r.System, tt.system)
			}
			if r.Stream != tt.stream {
				t.Errorf("Stream = %v, want %v", r.Stream, tt.stream)
			}
			checkMessages(t, r, tt.msgs)
			if got := r.Query(); got != tt.query {
				t.Errorf("Query() = %q, want %q", got, tt.query)
			}
			if r.Thread != tt.thread || r.ThreadIsPrev != tt.prevRef {
				t.Errorf("Thread = %q (prev %v), want %q (prev %v)", r.Thread, r.ThreadIsPrev, tt.thread, tt.prevRef)
			}
		})
	}
}

func TestResponsesParseRejects(t *testing.T) {
	tests := []struct {
		body string
		want error
	}{
		{`{"input":"hi"`, ErrNotJSON},
		{`{"model":"gpt-4.1"}`, ErrNotChat},
		{`{"input":null}`, ErrNotChat},
		{`{"input":42}`, ErrNotChat},
		{`{"input":true}`, ErrNotChat},
		{`{"input":{"role":"user","content":"hi"}}`, ErrNotChat},
		{`{"input":[]}`, ErrNotChat},
		{`{"input":["hi"]}`, ErrNotChat},
		{`{"input":"a","input":"b"}`, ErrNotChat},
		{`{"instructions":"a","instructions":"b","input":"hi"}`, ErrNotChat},
		{`{"input":[{"role":"user","content":"a","content":"b"}]}`, ErrNotChat},
		{`"hi"`, ErrNotChat},
	}
	for _, tt := range tests {
		r, err := OpenAIResponses.Parse([]byte(tt.body))
		if !errors.Is(err, tt.want) || r != nil {
			t.Errorf("Parse(%s) = %v, %v; want nil, %v", tt.body, r, err, tt.want)
		}
	}
}

// respWire is a responses body as the upstream decodes it.
type respWire struct {
	Instructions json.RawMessage   `json:"instructions"`
	Input        json.RawMessage   `json:"input"`
	Items        []json.RawMessage `json:"-"`
}

func decodeResponses(t *testing.T, out []byte) respWire {
	t.Helper()
	var w respWire
	decodeJSON(t, out, &w)
	if len(w.Input) > 0 && w.Input[0] == '[' {
		decodeJSON(t, w.Input, &w.Items)
	}
	return w
}

func TestResponsesInjectSystem(t *testing.T) {
	t.Run("instructions absent", func(t *testing.T) {
		body := `{"model":"gpt-4.1","input":"hi","store":false}`
		out := mustInject(t, parseAs(t, OpenAIResponses, body), testBlock, System)
		mid := replaced(t, body, out, 1, 1)
		if want := `"instructions":` + string(jsonString(testBlock)) + `,`; string(mid) != want {
			t.Errorf("inserted %s, want %s", mid, want)
		}
		if w := decodeResponses(t, out); stringContent(t, w.Instructions) != testBlock {
			t.Errorf("instructions = %s", w.Instructions)
		}
		assertNoHTMLEscapes(t, out)
	})
	t.Run("instructions null", func(t *testing.T) {
		body := `{"model":"gpt-4.1","instructions":null,"input":"hi"}`
		out := mustInject(t, parseAs(t, OpenAIResponses, body), testBlock, System)
		from, to := spanOf(t, body, `null`, 0)
		mid := replaced(t, body, out, from, to)
		if string(mid) != string(jsonString(testBlock)) {
			t.Errorf("null replaced by %s", mid)
		}
	})
	t.Run("instructions string", func(t *testing.T) {
		body := `{"model":"gpt-4.1","instructions":"Talk like a pirate.","input":"hi"}`
		out := mustInject(t, parseAs(t, OpenAIResponses, body), testBlock, System)
		from, to := spanOf(t, body, `"Talk like a pirate."`, 0)
		mid := replaced(t, body, out, from, to)
		var got string
		decodeJSON(t, mid, &got)
		if got != "Talk like a pirate.\n\n"+testBlock {
			t.Errorf("instructions = %q", got)
		}
	})
	t.Run("instructions a number", func(t *testing.T) {
		r := parseAs(t, OpenAIResponses, `{"instructions":5,"input":"hi"}`)
		if out, err := r.Inject(testBlock, System); err == nil {
			t.Errorf("Inject = %s, want an error", out)
		}
	})
}

func TestResponsesInjectCacheSafe(t *testing.T) {
	t.Run("string input", func(t *testing.T) {
		body := `{"model":"gpt-4.1","input":"Tell me \"one\" joke \u00e9","stream":true}`
		out := mustInject(t, parseAs(t, OpenAIResponses, body), testBlock, CacheSafe)
		raw := `"Tell me \"one\" joke \u00e9"`
		from, to := spanOf(t, body, raw, 0)
		mid := replaced(t, body, out, from, to)
		want := `[{"role":"system","content":` + string(jsonString(testBlock)) + `},{"role":"user","content":` + raw + `}]`
		if string(mid) != want {
			t.Errorf("input = %s\nwant    %s", mid, want)
		}
		again := parseAs(t, OpenAIResponses, string(out))
		checkMessages(t, again, []msg{{"system", testBlock}, {"user", `Tell me "one" joke é`}})
	})
	t.Run("list input", func(t *testing.T) {
		body := `{"model":"gpt-4.1","input":[` +
			`{"role":"user","content":"Weather in Oslo?"},` +
			`{"type":"function_call","call_id":"c1","name":"weather","arguments":"{\"city\":\"Oslo\"}"},` +
			`{"type":"function_call_output","call_id":"c1","output":"-3C"},` +
			`{"type":"message","role":"assistant","content":[{"type":"output_text","text":"Cold."}]},` +
			`{"role":"user","content":[{"type":"input_text","text":"And tomorrow?"}]},` +
			`{"type":"function_call","call_id":"c2","name":"weather","arguments":"{}"},` +
			`{"type":"function_call_output","call_id":"c2","output":"-5C"}]}`
		out := mustInject(t, parseAs(t, OpenAIResponses, body), testBlock, CacheSafe)
		at, _ := spanOf(t, body, `{"role":"user"`, 1)
		mid := replaced(t, body, out, at, at)
		if want := `{"role":"system","content":` + string(jsonString(testBlock)) + `},`; string(mid) != want {
			t.Errorf("inserted %s, want %s", mid, want)
		}
		w := decodeResponses(t, out)
		if len(w.Items) != 8 {
			t.Fatalf("%d items, want 8", len(w.Items))
		}
		again := parseAs(t, OpenAIResponses, string(out))
		roles := []string{}
		for _, m := range again.Messages {
			roles = append(roles, m.Role)
		}
		if got := strings.Join(roles, ","); got != "user,assistant,tool,assistant,system,user,assistant,tool" {
			t.Errorf("roles = %s", got)
		}
	})
}

func TestResponsesInjectUser(t *testing.T) {
	t.Run("string input", func(t *testing.T) {
		body := `{"model":"gpt-4.1","input":"How cold is Oslo?"}`
		out := mustInject(t, parseAs(t, OpenAIResponses, body), testBlock, User)
		from, to := spanOf(t, body, `"How cold is Oslo?"`, 0)
		mid := replaced(t, body, out, from, to)
		var got string
		decodeJSON(t, mid, &got)
		if got != testBlock+"\n\nHow cold is Oslo?" {
			t.Errorf("input = %q", got)
		}
		if q := parseAs(t, OpenAIResponses, string(out)).Query(); q != "How cold is Oslo?" {
			t.Errorf("re-parsed Query() = %q", q)
		}
	})
	t.Run("input_text parts", func(t *testing.T) {
		body := `{"input":[{"role":"user","content":"old"},{"role":"user","content":[{"type":"input_image","image_url":"https://x/y.png"},{"type":"input_text","text":"Who?"}]}]}`
		out := mustInject(t, parseAs(t, OpenAIResponses, body), testBlock, User)
		at, _ := spanOf(t, body, `{"type":"input_image"`, 0)
		mid := replaced(t, body, out, at, at)
		if want := `{"type":"input_text","text":` + string(jsonString(testBlock)) + `},`; string(mid) != want {
			t.Errorf("inserted %s, want %s", mid, want)
		}
	})
	t.Run("no user item", func(t *testing.T) {
		r := parseAs(t, OpenAIResponses, `{"input":[{"type":"function_call_output","call_id":"c","output":"x"}]}`)
		for _, p := range []Placement{CacheSafe, User} {
			if out, err := r.Inject(testBlock, p); err == nil {
				t.Errorf("Inject(%s) = %s, want an error", p, out)
			}
		}
	})
}

// ---- Conversation ----

func TestConversationDialects(t *testing.T) {
	idRE := regexp.MustCompile(`^c-[0-9a-f]{16}$`)
	tests := []struct {
		name   string
		d      Dialect
		turns  []string // successive requests of one conversation
		others []string // first turns of other conversations
	}{
		{
			name: "anthropic",
			d:    Anthropic,
			turns: []string{
				`{"system":"You are a travel agent.","messages":[{"role":"user","content":"I want to visit Japan."}]}`,
				`{"system":"You are a travel agent.","messages":[{"role":"user","content":"I want to visit Japan."},{"role":"assistant","content":"When?"},{"role":"user","content":"In April."}]}`,
				`{"system":[{"type":"text","text":"You are a travel agent.","cache_control":{"type":"ephemeral"}}],"messages":[{"role":"user","content":[{"type":"text","text":"I want to visit Japan.","cache_control":{"type":"ephemeral"}}]},{"role":"assistant","content":"When?"},{"role":"user","content":"In April."},{"role":"assistant","content":[{"type":"tool_use","id":"t","name":"book","input":{}}]},{"role":"user","content":[{"type":"tool_result","tool_use_id":"t","content":"ok"}]}]}`,
			},
			others: []string{
				`{"system":"You are a travel agent.","messages":[{"role":"user","content":"I want to visit Peru."}]}`,
			},
		},
		{
			name: "ollama",
			d:    Ollama,
			turns: []string{
				`{"model":"llama3.2","messages":[{"role":"system","content":"You are a travel agent."},{"role":"user","content":"I want to visit Japan."}]}`,
				`{"model":"llama3.2","messages":[{"role":"system","content":"You are a travel agent."},{"role":"user","content":"I want to visit Japan."},{"role":"assistant","content":"When?"},{"role":"user","content":"In April."}]}`,
			},
			others: []string{
				`{"model":"llama3.2","messages":[{"role":"system","content":"You are a travel agent."},{"role":"user","content":"I want to visit Peru."}]}`,
			},
		},
		{
			name: "openai_responses",
			d:    OpenAIResponses,
			turns: []string{
				`{"instructions":"You are a travel agent.","input":"I want to visit Japan."}`,
				`{"instructions":"You are a travel agent.","input":[{"role":"user","content":"I want to visit Japan."},{"type":"message","role":"assistant","content":[{"type":"output_text","text":"When?"}]},{"role":"user","content":[{"type":"input_text","text":"In April."}]}]}`,
			},
			others: []string{
				`{"instructions":"You are a travel agent.","input":"I want to visit Peru."}`,
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			first := parseAs(t, tt.d, tt.turns[0]).Conversation()
			if !idRE.MatchString(first) {
				t.Fatalf("Conversation() = %q", first)
			}
			for i, body := range tt.turns[1:] {
				if got := parseAs(t, tt.d, body).Conversation(); got != first {
					t.Errorf("turn %d: Conversation() = %s, want %s", i+2, got, first)
				}
			}
			for _, body := range tt.others {
				if got := parseAs(t, tt.d, body).Conversation(); got == first {
					t.Errorf("another conversation got the same id %s: %s", got, body)
				}
			}
			// Each placement's output, sent again as the history of the next
			// turn, is still the same conversation.
			for _, p := range []Placement{CacheSafe, System, User} {
				out := mustInject(t, parseAs(t, tt.d, tt.turns[0]), testBlock, p)
				if got := parseAs(t, tt.d, string(out)).Conversation(); got != first {
					t.Errorf("after %s injection: Conversation() = %s, want %s", p, got, first)
				}
			}
		})
	}
	t.Run("responses thread", func(t *testing.T) {
		// The request names its conversation: Thread carries it, whatever
		// the content.
		a := parseAs(t, OpenAIResponses, `{"conversation":"conv_1","input":"I want to visit Japan."}`)
		b := parseAs(t, OpenAIResponses, `{"conversation":{"id":"conv_1"},"input":"In April."}`)
		if a.Thread != "conv_1" || b.Thread != "conv_1" || a.ThreadIsPrev || b.ThreadIsPrev {
			t.Errorf("Thread = %q/%v and %q/%v, want conv_1", a.Thread, a.ThreadIsPrev, b.Thread, b.ThreadIsPrev)
		}
		c := parseAs(t, OpenAIResponses, `{"previous_response_id":"resp_9","input":"In April."}`)
		if c.Thread != "resp_9" || !c.ThreadIsPrev {
			t.Errorf("Thread = %q/%v, want resp_9 as a previous response", c.Thread, c.ThreadIsPrev)
		}
		d := parseAs(t, OpenAIResponses, `{"input":"I want to visit Japan."}`)
		if d.Thread != "" || d.ThreadIsPrev {
			t.Errorf("Thread = %q without conversation or previous_response_id", d.Thread)
		}
	})
}

// ---- Fuzzing every dialect ----

var dialectFuzzSeeds = []string{
	anthBody,
	ollamaBody,
	`{"system":"s","messages":[{"role":"user","content":"hi"}]}`,
	`{"system":[],"messages":[{"role":"user","content":[]}]}`,
	`{"system":null,"messages":[{"role":"user","content":[{"type":"tool_result","tool_use_id":"a","content":"x"},{"type":"text","text":"t"}]}]}`,
	`{"messages":[{"role":"user","content":[{"type":"tool_result","tool_use_id":"a","content":"x"}]}]}`,
	`{"model":"gpt-4.1","input":"hi"}`,
	`{"instructions":null,"input":[{"role":"user","content":[{"type":"input_text","text":"x"}]},{"type":"function_call","call_id":"c","name":"f","arguments":"{}"}]}`,
	`{"instructions":"i","conversation":{"id":"c"},"previous_response_id":"r","input":[{"type":"reasoning","id":"rs"},{"role":"user","content":"u"}]}`,
	" \n{ \"input\" : \"h\\u00e9\" , \"instructions\" : [ ] }\n",
	`{"messages":[{"role":"user","content":"a"}],"input":"b","system":"c"}`,
}

func FuzzInjectDialects(f *testing.F) {
	for _, s := range append(append([]string{}, fuzzSeeds...), dialectFuzzSeeds...) {
		f.Add([]byte(s), "<memory> & \"quoted\"\n\u2028 日本")
	}
	f.Fuzz(func(t *testing.T, body []byte, block string) {
		if block == "" {
			block = testBlock
		}
		orig := bytes.Clone(body)
		for _, d := range Dialects {
			r, err := d.Parse(body)
			if err != nil {
				if !errors.Is(err, ErrNotJSON) && !errors.Is(err, ErrNotChat) {
					t.Fatalf("%s.Parse error %v is neither ErrNotJSON nor ErrNotChat", d.Name(), err)
				}
				continue
			}
			_, _, _, _ = r.Query(), r.NewTurn(), r.UserTurns(), r.Conversation()
			if n := countTurns(t, d, body); n != len(r.Messages) {
				t.Fatalf("%s.Parse found %d messages, encoding/json %d:\n%s", d.Name(), len(r.Messages), n, body)
			}
			for _, p := range []Placement{CacheSafe, System, User} {
				for _, b := range []string{block, testBlock} {
					out, err := r.Inject(b, p)
					if err != nil {
						continue
					}
					if !json.Valid(out) {
						t.Fatalf("%s Inject(%s) produced invalid JSON:\nin:  %s\nout: %s", d.Name(), p, body, out)
					}
					if !bytes.Equal(body, orig) {
						t.Fatalf("%s Inject(%s) modified the parsed body", d.Name(), p)
					}
					if b != testBlock {
						continue
					}
					// The rewritten body is still a chat request of the same
					// dialect asking the same thing.
					again, err := d.Parse(out)
					if err != nil {
						t.Fatalf("%s Inject(%s) output does not parse: %v\nin:  %s\nout: %s", d.Name(), p, err, body, out)
					}
					// Invalid UTF-8 (invalid JSON, strictly) may come back as
					// U+FFFD, one per byte, where a value is re-encoded.
					if q0, q1 := strings.TrimSpace(string([]rune(r.Query()))), strings.TrimSpace(string([]rune(again.Query()))); q0 != q1 {
						t.Fatalf("%s Inject(%s) changed the query %q to %q\nin:  %s\nout: %s", d.Name(), p, q0, q1, body, out)
					}
					if !bytes.Contains(out, []byte(`Tom & Jerry <cartoons>`)) {
						t.Fatalf("%s Inject(%s) output lacks the block:\n%s", d.Name(), p, out)
					}
				}
			}
		}
	})
}

// countTurns counts a body's messages (or input items) as encoding/json reads
// them.
func countTurns(t *testing.T, d Dialect, body []byte) int {
	t.Helper()
	var top map[string]json.RawMessage
	if err := json.Unmarshal(body, &top); err != nil {
		t.Fatalf("encoding/json rejects a body %s.Parse accepted: %v\n%s", d.Name(), err, body)
	}
	key := "messages"
	if d == OpenAIResponses {
		key = "input"
		if v := bytes.TrimSpace(top[key]); len(v) > 0 && v[0] == '"' {
			return 1
		}
	}
	var items []json.RawMessage
	if err := json.Unmarshal(top[key], &items); err != nil {
		t.Fatalf("encoding/json reads %s as %s: %v", key, top[key], err)
	}
	return len(items)
}
