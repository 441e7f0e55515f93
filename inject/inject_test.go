package inject

import (
	"bytes"
	"encoding/json"
	"errors"
	"regexp"
	"strings"
	"testing"
)

// testBlock is what Render produces in shape: markers, HTML-ish characters
// and an ampersand that a naive encoder would escape.
var testBlock = BlockStart + "\nMemories.\n- [2024-03-05] User likes Tom & Jerry <cartoons>\n" + BlockEnd

// fullBody is a realistic request: system prompt, a multimodal user turn, an
// assistant answer, the latest user turn, and the fields a proxy must never
// touch (tools, response_format, stream_options, unknown vendor fields, a
// number too big for float64 and escaped characters).
const fullBody = `{"model":"gpt-4o","seed":12345678901234567890,"temperature":0.2,"messages":[` +
	`{"role":"system","content":"You are helpful. Use \u00e9 and \/ as-is."},` +
	`{"role":"user","content":[{"type":"text","text":"What is in this image?"},{"type":"image_url","image_url":{"url":"data:image/png;base64,iVBORw0KGgo=","detail":"high"}}]},` +
	`{"role":"assistant","content":"A cat on a sofa."},` +
	`{"role":"user","content":"And what colour is it?"}],` +
	`"tools":[{"type":"function","function":{"name":"get_weather","parameters":{"type":"object","properties":{"city":{"type":"string"}}}}}],` +
	`"response_format":{"type":"json_schema","json_schema":{"name":"x","schema":{"type":"object"}}},` +
	`"stream":true,"stream_options":{"include_usage":true},"x_vendor":{"nested":[1,2.50,-0e3,"<b>&amp;</b>"]}}`

func mustParse(t *testing.T, body string) *Request {
	t.Helper()
	r, err := OpenAIChat.Parse([]byte(body))
	if err != nil {
		t.Fatalf("Parse(%s): %v", body, err)
	}
	return r
}

func mustInject(t *testing.T, r *Request, block string, p Placement) []byte {
	t.Helper()
	out, err := r.Inject(block, p)
	if err != nil {
		t.Fatalf("Inject(%s): %v", p, err)
	}
	if !json.Valid(out) {
		t.Fatalf("Inject(%s) produced invalid JSON:\n%s", p, out)
	}
	return out
}

// wireMessage is a message as the upstream server decodes it.
type wireMessage struct {
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"`
}

func decodeMessages(t *testing.T, body []byte) []wireMessage {
	t.Helper()
	var v struct {
		Messages []wireMessage `json:"messages"`
	}
	if err := json.Unmarshal(body, &v); err != nil {
		t.Fatalf("decoding messages: %v\n%s", err, body)
	}
	return v.Messages
}

func stringContent(t *testing.T, raw json.RawMessage) string {
	t.Helper()
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		t.Fatalf("content %s is not a string: %v", raw, err)
	}
	return s
}

type wirePart struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

func partsContent(t *testing.T, raw json.RawMessage) []wirePart {
	t.Helper()
	var p []wirePart
	if err := json.Unmarshal(raw, &p); err != nil {
		t.Fatalf("content %s is not an array of parts: %v", raw, err)
	}
	return p
}

// splitAround checks out == body[:from] + mid + body[to:] and returns mid.
func splitAround(t *testing.T, body, out []byte, from, to int) []byte {
	t.Helper()
	if from < 0 || to < from || to > len(body) {
		t.Fatalf("bad span %d..%d", from, to)
	}
	if !bytes.HasPrefix(out, body[:from]) {
		t.Fatalf("bytes before offset %d changed:\n in: %s\nout: %s", from, body[:from], out[:min(from, len(out))])
	}
	if !bytes.HasSuffix(out[from:], body[to:]) {
		t.Fatalf("bytes after offset %d changed:\n in: %s\nout: %s", to, body[to:], out[from:])
	}
	return out[from : len(out)-(len(body)-to)]
}

func assertNoHTMLEscapes(t *testing.T, out []byte) {
	t.Helper()
	for _, esc := range []string{`\u003c`, `\u003e`, `\u0026`} {
		if bytes.Contains(out, []byte(esc)) {
			t.Errorf("output contains HTML escape %s:\n%s", esc, out)
		}
	}
	if !bytes.Contains(out, []byte(`<memory-context source=\"caddy-memory\">`)) {
		t.Errorf("output does not carry the start marker literally:\n%s", out)
	}
	if !bytes.Contains(out, []byte(`Tom & Jerry <cartoons>`)) {
		t.Errorf("output does not carry the block text literally:\n%s", out)
	}
}

func TestParsePlacement(t *testing.T) {
	for _, s := range []string{"cache_safe", "system", "user"} {
		p, err := ParsePlacement(s)
		if err != nil || string(p) != s {
			t.Errorf("ParsePlacement(%q) = %q, %v", s, p, err)
		}
	}
	for _, s := range []string{"", "System", "before_user"} {
		if _, err := ParsePlacement(s); err == nil {
			t.Errorf("ParsePlacement(%q) accepted", s)
		}
	}
}

func TestDialectLookup(t *testing.T) {
	if d := ForPath("/v1/chat/completions"); d == nil || d.Name() != "openai_chat" {
		t.Errorf("ForPath(/v1/chat/completions) = %v", d)
	}
	if d := ForPath("/v1/embeddings"); d != nil {
		t.Errorf("ForPath(/v1/embeddings) = %v, want nil", d)
	}
	if d := ByName("openai_chat"); d == nil {
		t.Error("ByName(openai_chat) = nil")
	}
	if d := ByName("gemini"); d != nil {
		t.Errorf("ByName(gemini) = %v, want nil", d)
	}
}

func TestParseValid(t *testing.T) {
	type msg struct{ role, text string }
	tests := []struct {
		name   string
		body   string
		model  string
		stream bool
		msgs   []msg
	}{
		{
			name:  "string content",
			body:  `{"model":"gpt-4o-mini","messages":[{"role":"system","content":"Be brief."},{"role":"user","content":"Hello there"}]}`,
			model: "gpt-4o-mini",
			msgs:  []msg{{"system", "Be brief."}, {"user", "Hello there"}},
		},
		{
			name:   "full body with multimodal parts and unknown fields",
			body:   fullBody,
			model:  "gpt-4o",
			stream: true,
			msgs: []msg{
				{"system", "You are helpful. Use é and / as-is."},
				{"user", "What is in this image?"},
				{"assistant", "A cat on a sofa."},
				{"user", "And what colour is it?"},
			},
		},
		{
			name:  "several text parts joined, non-text parts dropped",
			body:  `{"model":"m","messages":[{"role":"user","content":[{"type":"text","text":"first"},{"type":"image_url","image_url":{"url":"https://x/y.png"}},{"type":"input_audio","input_audio":{"data":"AAA","format":"wav"}},{"type":"text","text":"second"},{"type":"input_text","text":"third"},{"type":"text","text":"   "}]}]}`,
			model: "m",
			msgs:  []msg{{"user", "first\nsecond\nthird"}},
		},
		{
			name:  "developer role",
			body:  `{"model":"o3","messages":[{"role":"developer","content":"Answer in French."},{"role":"user","content":"Hi"}]}`,
			model: "o3",
			msgs:  []msg{{"developer", "Answer in French."}, {"user", "Hi"}},
		},
		{
			name: "tool and function messages",
			body: `{"model":"m","messages":[{"role":"user","content":"Weather in Oslo?"},` +
				`{"role":"assistant","content":null,"tool_calls":[{"id":"call_1","type":"function","function":{"name":"get_weather","arguments":"{\"city\":\"Oslo\"}"}}]},` +
				`{"role":"tool","tool_call_id":"call_1","content":"{\"temp\":-3}"},` +
				`{"role":"function","name":"legacy","content":"ok"}]}`,
			model: "m",
			msgs:  []msg{{"user", "Weather in Oslo?"}, {"assistant", ""}, {"tool", `{"temp":-3}`}, {"tool", "ok"}},
		},
		{
			name:  "big numbers and response_format",
			body:  `{"messages":[{"role":"user","content":"x"}],"seed":12345678901234567890,"max_tokens":1e400,"response_format":{"type":"json_object"},"stream":false}`,
			model: "",
			msgs:  []msg{{"user", "x"}},
		},
		{
			name:  "pretty printed",
			body:  "{\r\n  \"model\" : \"m\",\n\t\"messages\" : [\n    {\n      \"role\" : \"user\",\n      \"content\" : \"hi\"\n    }\n  ]\n}\n",
			model: "m",
			msgs:  []msg{{"user", "hi"}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := mustParse(t, tt.body)
			if r.Dialect != "openai_chat" {
				t.Errorf("Dialect = %q", r.Dialect)
			}
			if r.Model != tt.model {
				t.Errorf("Model = %q, want %q", r.Model, tt.model)
			}
			if r.Stream != tt.stream {
				t.Errorf("Stream = %v, want %v", r.Stream, tt.stream)
			}
			if len(r.Messages) != len(tt.msgs) {
				t.Fatalf("got %d messages %+v, want %d", len(r.Messages), r.Messages, len(tt.msgs))
			}
			for i, m := range tt.msgs {
				if r.Messages[i].Role != m.role || r.Messages[i].Text != m.text {
					t.Errorf("message %d = {%q %q}, want {%q %q}", i, r.Messages[i].Role, r.Messages[i].Text, m.role, m.text)
				}
			}
		})
	}
}

func TestParseRejects(t *testing.T) {
	tests := []struct {
		body string
		want error
	}{
		{``, ErrNotJSON},
		{`not json`, ErrNotJSON},
		{`{"messages":[{"role":"user","content":"hi"}]`, ErrNotJSON},
		{`{"messages":[{"role":"user","content":"hi"},]}`, ErrNotJSON},
		{`{"messages":[{"role":"user","content":"hi"}]} trailing`, ErrNotJSON},
		{`{'messages':[]}`, ErrNotJSON},
		{`[{"role":"user","content":"hi"}]`, ErrNotChat},
		{`"messages"`, ErrNotChat},
		{`42`, ErrNotChat},
		{`null`, ErrNotChat},
		{`{}`, ErrNotChat},
		{`{"model":"gpt-4o","prompt":"hi"}`, ErrNotChat},
		{`{"messages":null}`, ErrNotChat},
		{`{"messages":"hi"}`, ErrNotChat},
		{`{"messages":{"role":"user","content":"hi"}}`, ErrNotChat},
		{`{"messages":[]}`, ErrNotChat},
		{`{"messages":[ ]}`, ErrNotChat},
		{`{"messages":[1]}`, ErrNotChat},
		{`{"messages":["hi"]}`, ErrNotChat},
		{`{"messages":[{"role":"user","content":"hi"},null]}`, ErrNotChat},
		{`{"messages":[{"role":"user","content":"hi"},[{"role":"user"}]]}`, ErrNotChat},
	}
	for _, tt := range tests {
		r, err := OpenAIChat.Parse([]byte(tt.body))
		if !errors.Is(err, tt.want) || r != nil {
			t.Errorf("Parse(%s) = %v, %v; want nil, %v", tt.body, r, err, tt.want)
		}
	}
}

func TestQuery(t *testing.T) {
	tests := []struct{ name, body, want string }{
		{"latest user string", fullBody, "And what colour is it?"},
		{"latest user parts, text only",
			`{"messages":[{"role":"user","content":"old question"},{"role":"assistant","content":"old answer"},` +
				`{"role":"user","content":[{"type":"image_url","image_url":{"url":"https://x/cat.png"}},{"type":"text","text":"Who is this?"},{"type":"text","text":"Be short."}]}]}`,
			"Who is this?\nBe short."},
		{"tool loop still queries the user turn",
			`{"messages":[{"role":"system","content":"s"},{"role":"user","content":"Weather in Oslo?"},{"role":"assistant","content":null,"tool_calls":[{"id":"c","type":"function","function":{"name":"w","arguments":"{}"}}]},{"role":"tool","tool_call_id":"c","content":"-3C"}]}`,
			"Weather in Oslo?"},
		{"no user message", `{"messages":[{"role":"system","content":"s"}]}`, ""},
		{"injected block quoted back is not part of the query",
			`{"messages":[{"role":"user","content":"` + strings.ReplaceAll(BlockStart, `"`, `\"`) + `\n- User lives in Oslo\n` + BlockEnd + ` How cold is it?"}]}`,
			"How cold is it?"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := mustParse(t, tt.body).Query()
			if strings.TrimSpace(got) != tt.want || strings.Contains(got, "User lives in") {
				t.Errorf("Query() = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestNewTurnAndUserTurns(t *testing.T) {
	tests := []struct {
		name    string
		body    string
		newTurn bool
		turns   int
	}{
		{"first turn", `{"messages":[{"role":"system","content":"s"},{"role":"user","content":"hi"}]}`, true, 1},
		{"third turn", `{"messages":[{"role":"user","content":"a"},{"role":"assistant","content":"b"},{"role":"user","content":"c"},{"role":"assistant","content":"d"},{"role":"user","content":"e"}]}`, true, 3},
		{"tool-call loop", `{"messages":[{"role":"system","content":"s"},{"role":"user","content":"Weather?"},{"role":"assistant","content":null,"tool_calls":[{"id":"c","type":"function","function":{"name":"w","arguments":"{}"}}]},{"role":"tool","tool_call_id":"c","content":"sunny"}]}`, false, 1},
		{"assistant prefill after user", `{"messages":[{"role":"user","content":"Write a poem"},{"role":"assistant","content":"Roses"}]}`, false, 1},
		{"no user", `{"messages":[{"role":"system","content":"s"},{"role":"assistant","content":"hello"}]}`, false, 0},
		{"tool result without assistant", `{"messages":[{"role":"user","content":"a"},{"role":"tool","content":"x"}]}`, true, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := mustParse(t, tt.body)
			if got := r.NewTurn(); got != tt.newTurn {
				t.Errorf("NewTurn() = %v, want %v", got, tt.newTurn)
			}
			if got := r.UserTurns(); got != tt.turns {
				t.Errorf("UserTurns() = %d, want %d", got, tt.turns)
			}
		})
	}
}

func TestConversation(t *testing.T) {
	conv := func(t *testing.T, msgs string) string {
		t.Helper()
		return mustParse(t, `{"model":"m","messages":[`+msgs+`]}`).Conversation()
	}
	turn1 := `{"role":"system","content":"You are a travel agent."},{"role":"user","content":"I want to visit Japan."}`
	turn2 := turn1 + `,{"role":"assistant","content":"When?"},{"role":"user","content":"In April."}`
	turn3 := turn2 + `,{"role":"assistant","content":"Great."},{"role":"user","content":[{"type":"text","text":"Book it"},{"type":"image_url","image_url":{"url":"https://x/p.png"}}]}`

	c1 := conv(t, turn1)
	if !regexp.MustCompile(`^c-[0-9a-f]{16}$`).MatchString(c1) {
		t.Fatalf("Conversation() = %q, want c- and 16 hex digits", c1)
	}
	if c2, c3 := conv(t, turn2), conv(t, turn3); c2 != c1 || c3 != c1 {
		t.Errorf("conversation id changed as turns were appended: %s %s %s", c1, c2, c3)
	}
	if other := conv(t, `{"role":"system","content":"You are a travel agent."},{"role":"user","content":"I want to visit Peru."}`); other == c1 {
		t.Errorf("a different first user message gave the same id %s", other)
	}
	if other := conv(t, `{"role":"system","content":"You are a chef."},{"role":"user","content":"I want to visit Japan."}`); other == c1 {
		t.Errorf("a different system prompt gave the same id %s", other)
	}
	if got := conv(t, `{"role":"system","content":"s"}`); got != "" {
		t.Errorf("Conversation() without a user message = %q, want empty", got)
	}

	// The block a memory proxy injected into the first turn (User placement
	// prepends it to the first user message; System appends it to the
	// system message) must not make a resent history look like a new
	// conversation.
	t.Run("block in first user message", func(t *testing.T) {
		first := mustParse(t, `{"messages":[`+turn1+`]}`)
		injected := mustInject(t, first, testBlock, User)
		again := mustParse(t, string(injected))
		if got := again.Conversation(); got != c1 {
			t.Errorf("Conversation() with the injected block = %s, want %s (first user text %q)", got, c1, again.Messages[1].Text)
		}
	})
	t.Run("block in system message", func(t *testing.T) {
		first := mustParse(t, `{"messages":[`+turn1+`]}`)
		injected := mustInject(t, first, testBlock, System)
		again := mustParse(t, string(injected))
		if got := again.Conversation(); got != c1 {
			t.Errorf("Conversation() with the injected block = %s, want %s (system text %q)", got, c1, again.Messages[0].Text)
		}
	})
}

func TestInjectEmptyBlockReturnsBodyUnchanged(t *testing.T) {
	r := mustParse(t, fullBody)
	for _, p := range []Placement{CacheSafe, System, User} {
		out, err := r.Inject("", p)
		if err != nil || string(out) != fullBody {
			t.Errorf("Inject(\"\", %s) = %s, %v; want the body unchanged", p, out, err)
		}
	}
}

func TestInjectCacheSafe(t *testing.T) {
	body := []byte(fullBody)
	r := mustParse(t, fullBody)
	out := mustInject(t, r, testBlock, CacheSafe)

	at := bytes.LastIndex(body, []byte(`{"role":"user"`))
	mid := splitAround(t, body, out, at, at)
	if !bytes.HasSuffix(mid, []byte(",")) {
		t.Fatalf("inserted bytes %s do not end with a comma", mid)
	}
	var ins wireMessage
	if err := json.Unmarshal(mid[:len(mid)-1], &ins); err != nil {
		t.Fatalf("inserted bytes %s are not one message: %v", mid, err)
	}
	if ins.Role != "system" || stringContent(t, ins.Content) != testBlock {
		t.Errorf("inserted message = %s, want a system message with the block", mid)
	}
	assertNoHTMLEscapes(t, out)

	msgs := decodeMessages(t, out)
	roles := []string{}
	for _, m := range msgs {
		roles = append(roles, m.Role)
	}
	if got := strings.Join(roles, ","); got != "system,user,assistant,system,user" {
		t.Errorf("roles = %s, want the block just before the latest user turn", got)
	}
	if !bytes.Contains(out, []byte(`"seed":12345678901234567890`)) {
		t.Errorf("big number not preserved")
	}
	// The body as parsed again: still a chat with the same query.
	again := mustParse(t, string(out))
	if again.Query() != "And what colour is it?" || again.Model != "gpt-4o" || !again.Stream {
		t.Errorf("re-parsed request changed: %+v", again)
	}
}

func TestInjectCacheSafeToolLoop(t *testing.T) {
	body := `{"messages":[{"role":"system","content":"s"},{"role":"user","content":"Weather?"},{"role":"assistant","content":null,"tool_calls":[{"id":"c","type":"function","function":{"name":"w","arguments":"{}"}}]},{"role":"tool","tool_call_id":"c","content":"sunny"}]}`
	out := mustInject(t, mustParse(t, body), testBlock, CacheSafe)
	at := strings.Index(body, `{"role":"user"`)
	splitAround(t, []byte(body), out, at, at)
	msgs := decodeMessages(t, out)
	if len(msgs) != 5 || msgs[1].Role != "system" || msgs[2].Role != "user" || msgs[4].Role != "tool" {
		t.Errorf("messages = %+v", msgs)
	}
}

func TestInjectSystem(t *testing.T) {
	t.Run("merges into leading system string", func(t *testing.T) {
		body := []byte(fullBody)
		out := mustInject(t, mustParse(t, fullBody), testBlock, System)
		raw := []byte(`"You are helpful. Use \u00e9 and \/ as-is."`)
		from := bytes.Index(body, raw)
		mid := splitAround(t, body, out, from, from+len(raw))
		var got string
		if err := json.Unmarshal(mid, &got); err != nil {
			t.Fatalf("replaced content %s is not a string: %v", mid, err)
		}
		if want := "You are helpful. Use é and / as-is.\n\n" + testBlock; got != want {
			t.Errorf("system content = %q, want %q", got, want)
		}
		assertNoHTMLEscapes(t, out)
		if n := len(decodeMessages(t, out)); n != 4 {
			t.Errorf("%d messages, want 4 (merged, not added)", n)
		}
	})
	t.Run("merges into leading developer string", func(t *testing.T) {
		body := `{"model":"o3","messages":[{"role":"developer","content":"Answer in French."},{"role":"user","content":"Hi"}],"reasoning_effort":"high"}`
		out := mustInject(t, mustParse(t, body), testBlock, System)
		from := strings.Index(body, `"Answer in French."`)
		splitAround(t, []byte(body), out, from, from+len(`"Answer in French."`))
		msgs := decodeMessages(t, out)
		if len(msgs) != 2 || msgs[0].Role != "developer" || stringContent(t, msgs[0].Content) != "Answer in French.\n\n"+testBlock {
			t.Errorf("messages = %+v", msgs)
		}
	})
	t.Run("appends a text part to array system content", func(t *testing.T) {
		body := `{"messages":[{"role":"system","content":[{"type":"text","text":"Rule one.","cache_control":{"type":"ephemeral"}}]},{"role":"user","content":"Hi"}]}`
		out := mustInject(t, mustParse(t, body), testBlock, System)
		at := strings.Index(body, `}]},{"role":"user"`) + 1 // just before the array's ']'
		mid := splitAround(t, []byte(body), out, at, at)
		if !bytes.HasPrefix(mid, []byte(",")) {
			t.Fatalf("inserted %s, want a comma and a part", mid)
		}
		parts := partsContent(t, decodeMessages(t, out)[0].Content)
		if len(parts) != 2 || parts[0].Text != "Rule one." || parts[1].Type != "text" || parts[1].Text != testBlock {
			t.Errorf("parts = %+v", parts)
		}
		assertNoHTMLEscapes(t, out)
	})
	t.Run("appends a text part to an empty array", func(t *testing.T) {
		body := `{"messages":[{"role":"system","content":[]},{"role":"user","content":"Hi"}]}`
		out := mustInject(t, mustParse(t, body), testBlock, System)
		parts := partsContent(t, decodeMessages(t, out)[0].Content)
		if len(parts) != 1 || parts[0].Text != testBlock {
			t.Errorf("parts = %+v", parts)
		}
	})
	t.Run("inserts a leading system message when there is none", func(t *testing.T) {
		body := `{"model":"m","messages":[{"role":"user","content":"Hi"},{"role":"assistant","content":"Hello"},{"role":"user","content":"Again"}],"tools":[]}`
		out := mustInject(t, mustParse(t, body), testBlock, System)
		at := strings.Index(body, "[") + 1
		mid := splitAround(t, []byte(body), out, at, at)
		if !bytes.HasSuffix(mid, []byte(",")) {
			t.Fatalf("inserted %s", mid)
		}
		msgs := decodeMessages(t, out)
		if len(msgs) != 4 || msgs[0].Role != "system" || stringContent(t, msgs[0].Content) != testBlock || msgs[1].Role != "user" {
			t.Errorf("messages = %+v", msgs)
		}
		assertNoHTMLEscapes(t, out)
	})
	t.Run("system message that is not first does not count", func(t *testing.T) {
		body := `{"messages":[{"role":"user","content":"Hi"},{"role":"system","content":"late"}]}`
		out := mustInject(t, mustParse(t, body), testBlock, System)
		msgs := decodeMessages(t, out)
		if len(msgs) != 3 || msgs[0].Role != "system" || stringContent(t, msgs[2].Content) != "late" {
			t.Errorf("messages = %+v", msgs)
		}
	})
	t.Run("leading system with null content gets a new message", func(t *testing.T) {
		body := `{"messages":[{"role":"system","content":null},{"role":"user","content":"Hi"}]}`
		out := mustInject(t, mustParse(t, body), testBlock, System)
		msgs := decodeMessages(t, out)
		if len(msgs) != 3 || stringContent(t, msgs[0].Content) != testBlock || string(msgs[1].Content) != "null" {
			t.Errorf("messages = %+v", msgs)
		}
	})
}

func TestInjectUser(t *testing.T) {
	t.Run("prepends to string content", func(t *testing.T) {
		body := []byte(fullBody)
		out := mustInject(t, mustParse(t, fullBody), testBlock, User)
		raw := []byte(`"And what colour is it?"`)
		from := bytes.Index(body, raw)
		mid := splitAround(t, body, out, from, from+len(raw))
		var got string
		if err := json.Unmarshal(mid, &got); err != nil {
			t.Fatalf("%s: %v", mid, err)
		}
		if want := testBlock + "\n\nAnd what colour is it?"; got != want {
			t.Errorf("user content = %q, want %q", got, want)
		}
		assertNoHTMLEscapes(t, out)
		if n := len(decodeMessages(t, out)); n != 4 {
			t.Errorf("%d messages, want 4", n)
		}
	})
	t.Run("inserts a leading text part into array content", func(t *testing.T) {
		body := `{"messages":[{"role":"user","content":"old"},{"role":"assistant","content":"ok"},{"role":"user","content":[{"type":"image_url","image_url":{"url":"https://x/cat.png"}},{"type":"text","text":"Who?"}]}],"n":1}`
		out := mustInject(t, mustParse(t, body), testBlock, User)
		at := strings.LastIndex(body, `"content":[`) + len(`"content":[`)
		mid := splitAround(t, []byte(body), out, at, at)
		if !bytes.HasSuffix(mid, []byte(",")) {
			t.Fatalf("inserted %s", mid)
		}
		msgs := decodeMessages(t, out)
		if stringContent(t, msgs[0].Content) != "old" {
			t.Errorf("an older user message was changed: %s", msgs[0].Content)
		}
		parts := partsContent(t, msgs[2].Content)
		if len(parts) != 3 || parts[0].Type != "text" || parts[0].Text != testBlock || parts[1].Type != "image_url" || parts[2].Text != "Who?" {
			t.Errorf("parts = %+v", parts)
		}
	})
	t.Run("empty array content", func(t *testing.T) {
		body := `{"messages":[{"role":"user","content":[]}]}`
		out := mustInject(t, mustParse(t, body), testBlock, User)
		parts := partsContent(t, decodeMessages(t, out)[0].Content)
		if len(parts) != 1 || parts[0].Text != testBlock {
			t.Errorf("parts = %+v", parts)
		}
	})
	t.Run("no usable content is an error", func(t *testing.T) {
		for _, body := range []string{
			`{"messages":[{"role":"user","content":null}]}`,
			`{"messages":[{"role":"user"}]}`,
			`{"messages":[{"role":"user","content":{"text":"x"}}]}`,
		} {
			if out, err := mustParse(t, body).Inject(testBlock, User); err == nil {
				t.Errorf("Inject(User) on %s = %s, want an error", body, out)
			}
		}
	})
}

func TestInjectWithoutUserMessage(t *testing.T) {
	body := `{"messages":[{"role":"system","content":"s"},{"role":"assistant","content":"a"}]}`
	r := mustParse(t, body)
	for _, p := range []Placement{CacheSafe, User} {
		if out, err := r.Inject(testBlock, p); err == nil {
			t.Errorf("Inject(%s) without a user message = %s, want an error", p, out)
		}
	}
	// System placement does not need a user message.
	out := mustInject(t, r, testBlock, System)
	if !strings.HasSuffix(stringContent(t, decodeMessages(t, out)[0].Content), testBlock) {
		t.Errorf("System placement did not merge: %s", out)
	}
	if _, err := r.Inject(testBlock, Placement("middle")); err == nil {
		t.Error("unknown placement accepted")
	}
}

func TestInjectPrettyPrinted(t *testing.T) {
	var v any
	dec := json.NewDecoder(strings.NewReader(fullBody))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		t.Fatal(err)
	}
	for _, indent := range []string{"  ", "\t", "\r\n  "} {
		pretty, err := json.MarshalIndent(v, "", indent)
		if err != nil {
			t.Fatal(err)
		}
		body := "\n  " + string(pretty) + "\r\n\t"
		r := mustParse(t, body)
		for _, p := range []Placement{CacheSafe, System, User} {
			out := mustInject(t, r, testBlock, p)
			msgs := decodeMessages(t, out)
			switch p {
			case CacheSafe:
				if len(msgs) != 5 || msgs[3].Role != "system" || stringContent(t, msgs[3].Content) != testBlock {
					t.Errorf("indent %q, %s: messages = %+v", indent, p, msgs)
				}
				// Everything before the latest user message is untouched.
				at := strings.LastIndex(body[:strings.LastIndex(body, `"role": "user"`)], "{")
				splitAround(t, []byte(body), out, at, at)
			case System:
				if len(msgs) != 4 || stringContent(t, msgs[0].Content) != "You are helpful. Use é and / as-is.\n\n"+testBlock {
					t.Errorf("indent %q, %s: messages = %+v", indent, p, msgs)
				}
			case User:
				if len(msgs) != 4 || stringContent(t, msgs[3].Content) != testBlock+"\n\nAnd what colour is it?" {
					t.Errorf("indent %q, %s: messages = %+v", indent, p, msgs)
				}
			}
			if !bytes.Contains(out, []byte("12345678901234567890")) {
				t.Errorf("indent %q, %s: big number lost", indent, p)
			}
		}
	}
}

// Every field other than the one the placement targets is byte-identical:
// removing the inserted bytes gives the input back exactly.
func TestInjectPreservesEverythingElse(t *testing.T) {
	body := []byte(fullBody)
	for _, p := range []Placement{CacheSafe, System, User} {
		out := mustInject(t, mustParse(t, fullBody), testBlock, p)
		// Common prefix and suffix must cover everything but one region.
		pre := 0
		for pre < len(body) && pre < len(out) && body[pre] == out[pre] {
			pre++
		}
		suf := 0
		for suf < len(body)-pre && suf < len(out)-pre && body[len(body)-1-suf] == out[len(out)-1-suf] {
			suf++
		}
		changed := string(body[pre : len(body)-suf])
		for _, keep := range []string{`"tools":`, `"response_format":`, `"stream_options":`, `"x_vendor":`, `"seed":12345678901234567890`, `iVBORw0KGgo=`, `"A cat on a sofa."`} {
			if strings.Contains(changed, keep) {
				t.Errorf("%s: the changed region %q includes %s", p, changed, keep)
			}
		}
		for _, key := range []string{`"model"`, `"seed"`, `"temperature"`, `"messages"`, `"tools"`, `"response_format"`, `"stream"`, `"stream_options"`, `"x_vendor"`} {
			if bytes.Index(out, []byte(key)) < 0 {
				t.Errorf("%s: key %s lost", p, key)
			}
		}
		// Keys stay in order.
		last := -1
		for _, key := range []string{`"model"`, `"seed"`, `"messages"`, `"tools"`, `"response_format"`, `"stream_options"`, `"x_vendor"`} {
			i := bytes.Index(out, []byte(key))
			if i < last {
				t.Errorf("%s: key %s moved", p, key)
			}
			last = i
		}
	}
}

// fuzzSeeds are request bodies the fuzzer starts from.
var fuzzSeeds = []string{
	fullBody,
	`{"messages":[{"role":"user","content":"hi"}]}`,
	`{"messages":[{"role":"system","content":"s"},{"role":"user","content":"hi"}]}`,
	`{"messages":[{"role":"developer","content":[{"type":"text","text":"d"}]},{"role":"user","content":[]}]}`,
	`{"messages":[{"role":"system","content":"s"},{"role":"user","content":"Weather?"},{"role":"assistant","content":null,"tool_calls":[{"id":"c","type":"function","function":{"name":"w","arguments":"{}"}}]},{"role":"tool","tool_call_id":"c","content":"sunny"}]}`,
	"{\n  \"messages\" : [\n    { \"role\" : \"user\" , \"content\" : \"h\\u00e9\\\"llo\" }\n  ]\n}\n",
	`{"messages":[{"role":"assistant","content":"only"}]}`,
	`{"messages":[{"role":"user","content":{"weird":true}}]}`,
	`{"messages":[{"content":"no role"},{"role":"user"}]}`,
	`{"messages":[]}`,
	`[1,2,3]`,
	`not json`,
	// Nested past MaxDepth: passed through, never recursed into.
	`{"messages":[{"role":"user","content":"hi"}],"x":` + strings.Repeat("[", 200) + strings.Repeat("]", 200) + `}`,
	`{"messages":` + strings.Repeat("[{\"a\":", 150),
}

func FuzzInject(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add([]byte(s), "<memory> & \"quoted\"\n\u2028 日本")
	}
	f.Add([]byte(fuzzSeeds[1]), "")
	f.Fuzz(func(t *testing.T, body []byte, block string) {
		orig := bytes.Clone(body)
		r, err := OpenAIChat.Parse(body)
		if err != nil {
			if !errors.Is(err, ErrNotJSON) && !errors.Is(err, ErrNotChat) {
				t.Fatalf("Parse error %v is neither ErrNotJSON nor ErrNotChat", err)
			}
			return
		}
		_, _, _, _ = r.Query(), r.NewTurn(), r.UserTurns(), r.Conversation()
		before := countMessages(t, body)
		if before != len(r.Messages) {
			t.Fatalf("Parse found %d messages, encoding/json %d:\n%s", len(r.Messages), before, body)
		}
		if block == "" {
			block = testBlock
		}
		for _, p := range []Placement{CacheSafe, System, User} {
			out, err := r.Inject(block, p)
			if err != nil {
				continue
			}
			if !json.Valid(out) {
				t.Fatalf("Inject(%s) produced invalid JSON:\nin:  %s\nout: %s", p, body, out)
			}
			after := countMessages(t, out)
			want := before
			if p == CacheSafe || (p == System && !mergeable(t, body, r.Messages[0].Role)) {
				want++
			}
			if after != want {
				t.Fatalf("Inject(%s): %d messages, want %d:\nin:  %s\nout: %s", p, after, want, body, out)
			}
			if !bytes.Equal(body, orig) {
				t.Fatalf("Inject(%s) modified the parsed body", p)
			}
		}
	})
}

// mergeable reports whether System placement merges into the leading
// message of body: a system or developer message whose content is a string
// or an array.
func mergeable(t *testing.T, body []byte, role0 string) bool {
	if role0 != "system" && role0 != "developer" {
		return false
	}
	var v struct {
		Messages []struct {
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(body, &v); err != nil || len(v.Messages) == 0 {
		t.Fatalf("cannot decode %s: %v", body, err)
	}
	c := bytes.TrimSpace(v.Messages[0].Content)
	return len(c) > 0 && (c[0] == '"' || c[0] == '[')
}

func countMessages(t *testing.T, body []byte) int {
	t.Helper()
	var v struct {
		Messages []json.RawMessage `json:"messages"`
	}
	if err := json.Unmarshal(body, &v); err != nil {
		t.Fatalf("encoding/json rejects a body: %v\n%s", err, body)
	}
	return len(v.Messages)
}
