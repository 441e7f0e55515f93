package inject

import (
	"fmt"
	"strings"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/caddy-memory/memory/internal/block"
)

func TestLengthRefusal(t *testing.T) {
	for _, c := range []struct {
		d      Dialect
		status int
		body   string
		limit  int
		ok     bool
	}{
		{OpenAIChat, 400, `{"error":{"message":"This model's maximum context length is 8192 tokens. However, your messages resulted in 9000 tokens. Please reduce the length of the messages.","type":"invalid_request_error","param":"messages","code":"context_length_exceeded"}}`, 8192, true},
		{OpenAIChat, 400, `{"error":{"message":"Input tokens exceed the configured limit of 272000 tokens. Your messages resulted in 300000 tokens.","type":"invalid_request_error","param":"messages","code":"context_length_exceeded"}}`, 272000, true},
		{OpenAIResponses, 400, `{"error":{"message":"Your input exceeds the context window of this model. Please adjust your input and try again.","type":"invalid_request_error","param":"input","code":"context_length_exceeded"}}`, 0, true},
		{Anthropic, 400, `{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 208310 tokens > 200000 maximum"}}`, 200000, true},
		// The input fits, but not with the answer it asks room for: the
		// context's limit, which the cut shares with max_tokens.
		{Anthropic, 400, "{\"type\":\"error\",\"error\":{\"type\":\"invalid_request_error\",\"message\":\"input length and `max_tokens` exceed context limit: 178959 + 64000 > 200000, decrease input length or `max_tokens` and try again\"}}", 200000, true},
		{Anthropic, 400, "{\"type\":\"error\",\"error\":{\"type\":\"invalid_request_error\",\"message\":\"input length and `max_tokens` exceed context limit: 1000 + 300000 > 200000, decrease input length or `max_tokens` and try again\"}}", 0, false},
		// Not a length refusal: another error, another status, another format's.
		{OpenAIChat, 400, `{"error":{"message":"Invalid 'messages[1].role'","type":"invalid_request_error","code":"invalid_value"}}`, 0, false},
		{OpenAIChat, 429, `{"error":{"code":"context_length_exceeded"}}`, 0, false},
		{Anthropic, 400, `{"error":{"message":"x","code":"context_length_exceeded"}}`, 0, false},
		{Anthropic, 400, `{"type":"error","error":{"type":"invalid_request_error","message":"messages: roles must alternate"}}`, 0, false},
		{Ollama, 400, `{"error":"the input length exceeds the context length"}`, 0, false},
		{OpenAIChat, 400, `not json`, 0, false},
	} {
		limit, ok := LengthRefusal(c.d, c.status, []byte(c.body))
		if limit != c.limit || ok != c.ok {
			t.Errorf("%s %d %s: %d %v, want %d %v", c.d.Name(), c.status, c.body, limit, ok, c.limit, c.ok)
		}
	}
}

// longChat is a chat of n user/assistant exchanges after a system message,
// a tool call and its result in the middle.
func longChat(n int) string {
	msgs := []string{`{"role":"system","content":"You are helpful."}`}
	for i := range n {
		msgs = append(msgs, fmt.Sprintf(`{"role":"user","content":"question %d %s"}`, i, strings.Repeat("word ", 40)))
		if i == n/2 {
			msgs = append(msgs, `{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"f","arguments":"{}"}}]}`,
				`{"role":"tool","tool_call_id":"c1","content":"result"}`)
		}
		msgs = append(msgs, fmt.Sprintf(`{"role":"assistant","content":"answer %d %s"}`, i, strings.Repeat("word ", 40)))
	}
	msgs = append(msgs, `{"role":"user","content":"and the last question?"}`)
	return `{"model":"m","messages":[` + strings.Join(msgs, ",") + `],"stream":true}`
}

func TestTrimKeepsInstructionsAndNewestTurns(t *testing.T) {
	body := longChat(100)
	out, dropped, err := Trim(OpenAIChat, []byte(body), 2000)
	if err != nil {
		t.Fatal(err)
	}
	if EstimateTokens(string(out)) > 2000 || dropped == 0 {
		t.Errorf("trimmed to %d tokens, %d dropped; want under 2000", EstimateTokens(string(out)), dropped)
	}
	msgs := gjson.GetBytes(out, "messages").Array()
	if msgs[0].Get("role").String() != "system" || msgs[len(msgs)-1].Get("content").String() != "and the last question?" {
		t.Errorf("first %s, last %s", msgs[0].Raw, msgs[len(msgs)-1].Raw)
	}
	if msgs[1].Get("role").String() != "user" {
		t.Errorf("the kept turns begin with %s, not a user message", msgs[1].Raw)
	}
	if len(msgs)+dropped != len(gjson.Get(body, "messages").Array()) || !gjson.GetBytes(out, "stream").Bool() {
		t.Errorf("%d kept + %d dropped, or the rest of the body changed: %s", len(msgs), dropped, out[len(out)-40:])
	}
	// Without a limit, half.
	out, _, err = Trim(OpenAIChat, []byte(body), 0)
	if err != nil || EstimateTokens(string(out)) > EstimateTokens(body)/2 {
		t.Errorf("without a budget: %d tokens of %d, %v", EstimateTokens(string(out)), EstimateTokens(body), err)
	}
}

// TestTrimNeverSplitsToolCalls: whatever the budget, a kept tool result
// has its call before it, and a kept call its results after it.
func TestTrimNeverSplitsToolCalls(t *testing.T) {
	for _, c := range []struct {
		d    Dialect
		body string
	}{
		{OpenAIChat, longChat(20)},
		{Ollama, strings.ReplaceAll(longChat(20), `"tool_call_id":"c1",`, `"tool_name":"f",`)},
		{Anthropic, anthropicChat(20)},
		{OpenAIResponses, responsesChat(20)},
	} {
		total := EstimateTokens(c.body)
		for budget := 50; budget < total; budget += 37 {
			out, _, err := Trim(c.d, []byte(c.body), budget)
			if err != nil {
				continue
			}
			s := string(out)
			call, result := strings.Contains(s, `"c1"`) && (strings.Contains(s, "tool_calls") || strings.Contains(s, "tool_use") || strings.Contains(s, `"function_call"`)),
				strings.Contains(s, "result")
			if call != result {
				t.Errorf("%s, budget %d: a call without its result or the reverse:\n%s", c.d.Name(), budget, s)
			}
			first := gjson.GetBytes(out, c.d.turns().field).Array()
			if c.d == Anthropic && first[0].Get("role").String() != "user" {
				t.Errorf("anthropic, budget %d: the messages begin with %s", budget, first[0].Raw)
			}
		}
	}
	if _, _, err := Trim(OpenAIChat, []byte(`{"messages":[{"role":"user","content":"only this"}]}`), 1); err != ErrNotTrimmable {
		t.Errorf("one turn: %v, want ErrNotTrimmable", err)
	}
	// The provider keeps what comes before: the input is not cut.
	for _, field := range []string{`"previous_response_id":"resp_1",`, `"conversation":"conv_1",`, `"conversation":{"id":"conv_1"},`} {
		if _, _, err := Trim(OpenAIResponses, []byte(`{`+field+responsesChat(20)[1:]), 50); err != ErrNotTrimmable {
			t.Errorf("%s: %v, want ErrNotTrimmable", field, err)
		}
	}
}

func anthropicChat(n int) string {
	var msgs []string
	for i := range n {
		msgs = append(msgs, fmt.Sprintf(`{"role":"user","content":"question %d %s"}`, i, strings.Repeat("word ", 40)))
		if i == n/2 {
			msgs = append(msgs, `{"role":"assistant","content":[{"type":"tool_use","id":"c1","name":"f","input":{}}]}`,
				`{"role":"user","content":[{"type":"tool_result","tool_use_id":"c1","content":"result"}]}`)
		}
		msgs = append(msgs, fmt.Sprintf(`{"role":"assistant","content":"answer %d %s"}`, i, strings.Repeat("word ", 40)))
	}
	msgs = append(msgs, `{"role":"user","content":"and the last question?"}`)
	return `{"model":"m","system":"You are helpful.","max_tokens":100,"messages":[` + strings.Join(msgs, ",") + `]}`
}

func responsesChat(n int) string {
	items := []string{`{"role":"developer","content":"Be brief."}`}
	for i := range n {
		items = append(items, fmt.Sprintf(`{"role":"user","content":"question %d %s"}`, i, strings.Repeat("word ", 40)))
		if i == n/2 {
			items = append(items, `{"type":"function_call","call_id":"c1","name":"f","arguments":"{}"}`,
				`{"type":"function_call_output","call_id":"c1","output":"result"}`)
		}
		items = append(items, fmt.Sprintf(`{"type":"message","role":"assistant","content":[{"type":"output_text","text":"answer %d %s"}]}`, i, strings.Repeat("word ", 40)))
	}
	items = append(items, `{"role":"user","content":"and the last question?"}`)
	return `{"model":"m","input":[` + strings.Join(items, ",") + `]}`
}

func TestCompletionTokens(t *testing.T) {
	for body, want := range map[string]int{
		`{"max_tokens":100}`: 100, `{"max_completion_tokens":7}`: 7, `{"max_output_tokens":9}`: 9,
		`{"options":{"num_predict":5,"num_ctx":4096}}`: 5, `{}`: 0,
	} {
		if got := CompletionTokens([]byte(body)); got != want {
			t.Errorf("%s: %d, want %d", body, got, want)
		}
	}
	if Ollama.Context([]byte(`{"options":{"num_ctx":4096}}`)) != 4096 || Ollama.Context([]byte(`{}`)) != 0 {
		t.Error("Ollama.Context")
	}
}

func TestEarlierSectionGoesInTheBlock(t *testing.T) {
	blk, _, _ := block.Render([]block.Item{{Text: "User lives in Porto."}}, 800, 10)
	req, err := OpenAIChat.Parse([]byte(`{"messages":[{"role":"user","content":"What is my locker code?"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	body, err := req.Inject(blk, CacheSafe)
	if err != nil {
		t.Fatal(err)
	}
	section := block.RenderEarlier([]block.Earlier{{Text: "User: my locker code is 4711, \"the\" one."}}, 200)
	out, ok := WithEarlier(body, blk, section)
	if !ok {
		t.Fatal("the block was not found")
	}
	got, err := OpenAIChat.Parse(out)
	if err != nil {
		t.Fatalf("the body is no longer a chat request: %v\n%s", err, out)
	}
	text := got.Messages[0].Text
	if strings.Count(text, BlockStart) != 1 || !strings.Contains(text, "Porto") || !strings.Contains(text, `4711, "the" one.`) ||
		strings.Index(text, "4711") > strings.Index(text, BlockEnd) || strings.Index(text, "4711") < strings.Index(text, "Porto") {
		t.Errorf("the block with the section:\n%s", text)
	}
	if _, ok := WithEarlier(body, "", section); ok {
		t.Error("a body without a block took a section")
	}
	if block.RenderEarlier([]block.Earlier{{Text: strings.Repeat("long ", 400)}}, 50) != "" {
		t.Error("a section over its budget")
	}
}

// TestOllamaCountsImagesAsOllamaDoes: an image is 768 tokens to Ollama
// whatever its base64 size, in the size of a request and in a cut.
func TestOllamaCountsImagesAsOllamaDoes(t *testing.T) {
	img := strings.Repeat("QUJD", 8<<10) // 32 KiB of base64: 8,192 tokens by its length
	body := `{"model":"llava","options":{"num_predict":9000},"messages":[{"role":"user","content":"old question ` + strings.Repeat("word ", 400) + `"},` +
		`{"role":"assistant","content":"old answer"},{"role":"user","content":"What is this?","images":["` + img + `"]},` +
		`{"role":"assistant","content":"A cat."},{"role":"user","content":"What colour?"}]}`
	if n := Ollama.PromptTokens([]byte(body)); n < 768 || n > 1400 {
		t.Errorf("Ollama.PromptTokens %d, want about 768 for the image and 600 for the text", n)
	}
	out, dropped, err := Trim(Ollama, []byte(body), 1000)
	if err != nil || dropped != 2 || !strings.Contains(string(out), img) {
		t.Errorf("cut to 1000 tokens: %d dropped, image kept %v, %v; want the old turn dropped and the image's turn kept",
			dropped, strings.Contains(string(out), img), err)
	}
}
