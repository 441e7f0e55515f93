package tools

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/anthropics/anthropic-sdk-go"
	aoption "github.com/anthropics/anthropic-sdk-go/option"
	"github.com/caddy-memory/memory/inject"
	"github.com/caddy-memory/memory/internal/harness"
	"github.com/caddyserver/caddy/v2/caddytest"
	"github.com/openai/openai-go/v3"
	ooption "github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/responses"
	"github.com/openai/openai-go/v3/shared"
	"github.com/tidwall/gjson"
)

// The model's memory tools, through real Caddy: a scripted upstream calls
// save_memory or recall_memory; the proxy runs the calls for the request's
// owner and asks again; the official SDKs, as clients, see one ordinary
// answer.

// toolsConfig is a site whose memory offers both tools, with memory_api in
// self mode at /memory/ to see what they stored.
func toolsConfig(storage, upstream string) string {
	return harness.WithStorage(storage, "") + fmt.Sprintf(`http://localhost {
	memory {
		tools
		max_tool_rounds 2
	}
	handle /memory/* {
		memory_api
	}
	reverse_proxy %s
}
`, upstream)
}

// toolOutputs is what the tool results of a request body say, in any of
// the four formats.
func toolOutputs(body []byte) string {
	var out []string
	for _, path := range []string{
		`messages.#(role=="tool")#.content`,                           // OpenAI chat, Ollama
		`messages.#.content.#(type=="tool_result")#.content|@flatten`, // Anthropic
		`input.#(type=="function_call_output")#.output`,               // responses
	} {
		gjson.GetBytes(body, path).ForEach(func(_, v gjson.Result) bool {
			out = append(out, v.String())
			return true
		})
	}
	return strings.Join(out, "\n")
}

// toolAnswer is what a client of one of the formats made of an answer.
type toolReply struct {
	text          string
	calls         []string // the names of the tool calls the client got
	callID        string   // the first call's id
	done          string   // finish or stop reason
	input, output int64    // usage
}

// toolClient sends a user turn, with the client's own tools when weather,
// and returns what the client made of the answer; next continues the
// conversation with the client's tool result for the call it received.
type toolClient struct {
	t       *testing.T
	tester  *caddytest.Tester
	up      *harness.FakeLLM
	key     string
	stream  bool
	weather bool // the client defines get_weather
}

const weatherResult = "3°C, sunny"

func (c toolClient) ask(w harness.Wire, question string) toolReply {
	c.t.Helper()
	switch w.Name {
	case "openai_chat":
		return c.chat(question, nil)
	case "anthropic":
		return c.anthropic(question, nil)
	case "openai_responses":
		return c.responses(question, nil)
	}
	return c.ollama(question, nil)
}

// next sends the same question again with the client's call and its result.
func (c toolClient) next(w harness.Wire, question string, prev toolReply) toolReply {
	c.t.Helper()
	switch w.Name {
	case "openai_chat":
		return c.chat(question, &prev)
	case "anthropic":
		return c.anthropic(question, &prev)
	case "openai_responses":
		return c.responses(question, &prev)
	}
	return c.ollama(question, &prev)
}

func (c toolClient) chat(question string, prev *toolReply) toolReply {
	c.t.Helper()
	client := openai.NewClient(ooption.WithBaseURL(harness.CaddyAddr+"/v1/"), ooption.WithAPIKey(c.key),
		ooption.WithHTTPClient(c.tester.Client), ooption.WithMaxRetries(0))
	p := openai.ChatCompletionNewParams{Model: openai.ChatModelGPT4oMini,
		Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage(question)}}
	if c.weather {
		p.Tools = []openai.ChatCompletionToolUnionParam{openai.ChatCompletionFunctionTool(shared.FunctionDefinitionParam{
			Name: "get_weather", Parameters: shared.FunctionParameters{"type": "object"}})}
	}
	if prev != nil {
		p.Messages = append(p.Messages, openai.ChatCompletionMessageParamUnion{OfAssistant: &openai.ChatCompletionAssistantMessageParam{
			ToolCalls: []openai.ChatCompletionMessageToolCallUnionParam{{OfFunction: &openai.ChatCompletionMessageFunctionToolCallParam{
				ID: prev.callID, Function: openai.ChatCompletionMessageFunctionToolCallFunctionParam{Name: "get_weather", Arguments: `{"city":"Oslo"}`}}}}}},
			openai.ToolMessage(weatherResult, prev.callID))
	}
	var msg openai.ChatCompletionMessage
	var r toolReply
	if c.stream {
		p.StreamOptions = openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)}
		s := client.Chat.Completions.NewStreaming(c.t.Context(), p)
		var acc openai.ChatCompletionAccumulator
		for s.Next() {
			if !acc.AddChunk(s.Current()) {
				c.t.Fatalf("the SDK refused a chunk: %s", s.Current().RawJSON())
			}
		}
		if err := s.Err(); err != nil {
			c.t.Fatalf("chat stream through Caddy: %v", err)
		}
		msg, r.done = acc.Choices[0].Message, acc.Choices[0].FinishReason
		r.input, r.output = acc.Usage.PromptTokens, acc.Usage.CompletionTokens
	} else {
		res, err := client.Chat.Completions.New(c.t.Context(), p)
		if err != nil {
			c.t.Fatalf("chat completion through Caddy: %v", err)
		}
		msg, r.done = res.Choices[0].Message, res.Choices[0].FinishReason
		r.input, r.output = res.Usage.PromptTokens, res.Usage.CompletionTokens
	}
	r.text = msg.Content
	for _, tc := range msg.ToolCalls {
		r.calls = append(r.calls, tc.Function.Name)
		if r.callID == "" {
			r.callID = tc.ID
		}
	}
	return r
}

func (c toolClient) anthropic(question string, prev *toolReply) toolReply {
	c.t.Helper()
	client := anthropic.NewClient(aoption.WithBaseURL(harness.CaddyAddr+"/"), aoption.WithAPIKey(c.key),
		aoption.WithHTTPClient(c.tester.Client), aoption.WithMaxRetries(0))
	p := anthropic.MessageNewParams{Model: anthropic.ModelClaudeSonnet4_5, MaxTokens: 256,
		Messages: []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock(question))}}
	if c.weather {
		p.Tools = []anthropic.ToolUnionParam{anthropic.ToolUnionParamOfTool(anthropic.ToolInputSchemaParam{}, "get_weather")}
	}
	if prev != nil {
		p.Messages = append(p.Messages,
			anthropic.NewAssistantMessage(anthropic.NewToolUseBlock(prev.callID, map[string]any{"city": "Oslo"}, "get_weather")),
			anthropic.NewUserMessage(anthropic.NewToolResultBlock(prev.callID, weatherResult, false)))
	}
	var m anthropic.Message
	if c.stream {
		s := client.Messages.NewStreaming(c.t.Context(), p)
		for s.Next() {
			if err := m.Accumulate(s.Current()); err != nil {
				c.t.Fatalf("accumulating the stream: %v", err)
			}
		}
		if err := s.Err(); err != nil {
			c.t.Fatalf("message stream through Caddy: %v", err)
		}
	} else {
		res, err := client.Messages.New(c.t.Context(), p)
		if err != nil {
			c.t.Fatalf("message through Caddy: %v", err)
		}
		m = *res
	}
	r := toolReply{done: string(m.StopReason), input: m.Usage.InputTokens, output: m.Usage.OutputTokens}
	for _, b := range m.Content {
		switch b.Type {
		case "text":
			r.text += b.Text
		case "tool_use":
			r.calls = append(r.calls, b.Name)
			if r.callID == "" {
				r.callID = b.ID
			}
		}
	}
	return r
}

func (c toolClient) responses(question string, prev *toolReply) toolReply {
	c.t.Helper()
	client := openai.NewClient(ooption.WithBaseURL(harness.CaddyAddr+"/v1/"), ooption.WithAPIKey(c.key),
		ooption.WithHTTPClient(c.tester.Client), ooption.WithMaxRetries(0))
	input := responses.ResponseInputParam{responses.ResponseInputItemParamOfMessage(question, responses.EasyInputMessageRoleUser)}
	if prev != nil {
		out := responses.ResponseInputItemParamOfFunctionCallOutput(weatherResult)
		out.OfFunctionCallOutput.CallID = openai.String(prev.callID)
		input = append(input, responses.ResponseInputItemParamOfFunctionCall(`{"city":"Oslo"}`, prev.callID, "get_weather"), out)
	}
	p := responses.ResponseNewParams{Model: "gpt-4.1-mini", Store: openai.Bool(false),
		Input: responses.ResponseNewParamsInputUnion{OfInputItemList: input}}
	if c.weather {
		p.Tools = []responses.ToolUnionParam{responses.ToolParamOfFunction("get_weather", map[string]any{"type": "object"}, false)}
	}
	var res *responses.Response
	var deltas strings.Builder
	if c.stream {
		s := client.Responses.NewStreaming(c.t.Context(), p)
		for s.Next() {
			switch ev := s.Current(); ev.Type {
			case "response.output_text.delta":
				deltas.WriteString(ev.Delta)
			case "response.completed":
				done := ev.Response
				res = &done
			}
		}
		if err := s.Err(); err != nil {
			c.t.Fatalf("response stream through Caddy: %v", err)
		}
		if res == nil {
			c.t.Fatal("the stream had no response.completed")
		}
	} else {
		var err error
		if res, err = client.Responses.New(c.t.Context(), p); err != nil {
			c.t.Fatalf("response through Caddy: %v", err)
		}
	}
	r := toolReply{text: res.OutputText(), done: string(res.Status), input: res.Usage.InputTokens, output: res.Usage.OutputTokens}
	if c.stream && deltas.String() != r.text {
		c.t.Errorf("the deltas said %q, the completed response %q", deltas.String(), r.text)
	}
	for _, it := range res.Output {
		if it.Type == "function_call" {
			r.calls = append(r.calls, it.Name)
			if r.callID == "" {
				r.callID = it.CallID
			}
		}
	}
	return r
}

// ollama is a client of Ollama's chat API, which has no official Go SDK
// apart from Ollama itself: plain HTTP, one JSON object per line.
func (c toolClient) ollama(question string, prev *toolReply) toolReply {
	c.t.Helper()
	msgs := []any{map[string]any{"role": "user", "content": question}}
	if prev != nil {
		msgs = append(msgs, map[string]any{"role": "assistant", "content": "", "tool_calls": []any{
			map[string]any{"function": map[string]any{"name": "get_weather", "arguments": map[string]any{"city": "Oslo"}}}}},
			map[string]any{"role": "tool", "tool_name": "get_weather", "content": weatherResult})
	}
	body := map[string]any{"model": "llama3.2", "stream": c.stream, "messages": msgs}
	if c.weather {
		body["tools"] = []any{map[string]any{"type": "function", "function": map[string]any{"name": "get_weather"}}}
	}
	req, _ := http.NewRequest(http.MethodPost, harness.CaddyAddr+"/api/chat", bytes.NewReader(harness.MustBytes(body)))
	req.Header.Set("Authorization", "Bearer "+c.key)
	resp, err := c.tester.Client.Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	defer resp.Body.Close()
	var r toolReply
	sc := bufio.NewScanner(resp.Body)
	lines := 0
	for sc.Scan() {
		var line struct {
			Message struct {
				Content   string
				ToolCalls []struct{ Function struct{ Name string } } `json:"tool_calls"`
			}
			Done            bool
			DoneReason      string `json:"done_reason"`
			PromptEvalCount int64  `json:"prompt_eval_count"`
			EvalCount       int64  `json:"eval_count"`
		}
		if err := json.Unmarshal(sc.Bytes(), &line); err != nil {
			c.t.Fatalf("Ollama answer line is not JSON: %v: %q", err, sc.Bytes())
		}
		lines++
		r.text += line.Message.Content
		for _, tc := range line.Message.ToolCalls {
			r.calls = append(r.calls, tc.Function.Name)
		}
		if line.Done {
			r.done, r.input, r.output = line.DoneReason, line.PromptEvalCount, line.EvalCount
		}
	}
	if !c.stream && lines != 1 {
		c.t.Errorf("a non-streamed Ollama answer came as %d lines", lines)
	}
	return r
}

// seed stores a memory for key through the API.
func seed(t *testing.T, api harness.APICall, key, content string) {
	t.Helper()
	if status, out := api.Do("POST", "/memory/memories", key, map[string]any{"kind": "note", "content": content}); status != http.StatusCreated {
		t.Fatalf("seeding %q: %d %v", content, status, out)
	}
}

// finished is the reason each format gives for an ordinary last answer.
var finished = map[string]string{"openai_chat": "stop", "anthropic": "end_turn", "openai_responses": "completed", "ollama": "stop"}

func TestMemoryToolRecall(t *testing.T) {
	storage := t.TempDir()
	up := harness.NewFakeLLM(t)
	up.Answer = func(body []byte) string {
		out := toolOutputs(body)
		switch {
		case out == "":
			return harness.ToolPrefix + `recall_memory {"query":"dog"}`
		case strings.Contains(out, "Biscuit"):
			return "Your dog is called Biscuit."
		case strings.Contains(out, "Rex"):
			return "Your dog is called Rex."
		}
		return "I do not know your dog's name."
	}
	tester := harness.StartCaddy(t, toolsConfig(storage, up.Addr()))
	api := harness.APICall{T: t, Client: tester.Client}
	seed(t, api, "key-dog-a", "The user's dog is called Biscuit.")
	seed(t, api, "key-dog-b", "The user's dog is called Rex.")

	for _, w := range harness.Wires {
		for _, stream := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/stream=%v", w.Name, stream), func(t *testing.T) {
				before := len(up.All())
				c := toolClient{t: t, tester: tester, up: up, key: "key-dog-a", stream: stream}
				r := c.ask(w, "What is my dog called?")
				if r.text != "Your dog is called Biscuit." || len(r.calls) != 0 || r.done != finished[w.Name] {
					t.Errorf("client got %+v, want one ordinary answer naming Biscuit", r)
				}
				sent := rounds(t, up, before, r, 2) // the call, then the answer
				if names := strings.Join(inject.ToolNames(sent[0].Body), ","); !strings.Contains(names, "recall_memory") || !strings.Contains(names, "save_memory") {
					t.Errorf("the request offered tools %q, want both memory tools", names)
				}
				out := toolOutputs(sent[1].Body)
				if !strings.Contains(out, "Biscuit") || !strings.Contains(out, `"relevance"`) || !strings.Contains(out, `"created_at"`) {
					t.Errorf("the tool result the model read: %s", out)
				}
				for _, s := range sent {
					if bytes.Contains(s.Body, []byte("Rex")) {
						t.Errorf("owner A's request carried owner B's memory:\n%s", s.Body)
					}
				}
			})
		}
	}

	// Owner B's own recall finds only B's dog.
	c := toolClient{t: t, tester: tester, up: up, key: "key-dog-b"}
	if r := c.ask(harness.Wires[0], "What is my dog called?"); r.text != "Your dog is called Rex." {
		t.Errorf("owner B got %+v", r)
	}
}

// colourSaid finds the colours the user named.
var colourSaid = regexp.MustCompile(`My favourite colour is (\w+)`)

func TestMemoryToolSave(t *testing.T) {
	storage := t.TempDir()
	up := harness.NewFakeLLM(t)
	up.Answer = func(body []byte) string {
		if out := toolOutputs(body); strings.Contains(out, `"saved":true`) {
			return "I will remember that."
		}
		// The latest turn is the last; injected memories come before it.
		said := colourSaid.FindAllSubmatch(body, -1)
		color := said[len(said)-1][1]
		return harness.ToolPrefix + fmt.Sprintf(`save_memory {"content":"The user's favourite colour is %s","category":"preference"}`, color)
	}
	tester := harness.StartCaddy(t, toolsConfig(storage, up.Addr()))
	api := harness.APICall{T: t, Client: tester.Client}

	colors := map[string]string{"openai_chat": "teal", "anthropic": "amber", "openai_responses": "crimson", "ollama": "olive"}
	for i, w := range harness.Wires {
		t.Run(w.Name, func(t *testing.T) {
			c := toolClient{t: t, tester: tester, up: up, key: "key-colour", stream: i%2 == 0}
			r := c.ask(w, "My favourite colour is "+colors[w.Name])
			if r.text != "I will remember that." || len(r.calls) != 0 {
				t.Errorf("client got %+v", r)
			}
		})
	}
	harness.Settle(t, storage, len(harness.Wires))
	status, out := api.Do("GET", "/memory/memories?source=tool", "key-colour", nil)
	got := strings.Join(harness.ListContents(out), "\n")
	for _, color := range colors {
		if !strings.Contains(got, "The user's favourite colour is "+color) {
			t.Errorf("the API (%d) lists as saved by the tool:\n%s\nwant the %s one", status, got, color)
		}
	}
	for _, m := range out["memories"].([]any) {
		if m := m.(map[string]any); m["source"] != "tool" || m["kind"] != "preference" {
			t.Errorf("saved as %v / %v, want source tool, kind preference", m["source"], m["kind"])
		}
	}
	// The tool's result is not learned as something the user said.
	_, all := api.Do("GET", "/memory/memories?"+url.Values{"limit": {"100"}}.Encode(), "key-colour", nil)
	for _, c := range harness.ListContents(all) {
		if strings.Contains(c, `"saved"`) {
			t.Errorf("a tool result was learned: %q", c)
		}
	}
	if _, other := api.Do("GET", "/memory/memories", "key-someone-else", nil); len(harness.ListContents(other)) != 0 {
		t.Errorf("another owner sees %v", harness.ListContents(other))
	}
}

// TestMemoryToolBesideClientTool: an answer that calls save_memory and the
// client's own get_weather reaches the client with get_weather alone, as a
// valid answer of its format; the client's next request, with its result,
// gets the final answer; the memory was saved.
func TestMemoryToolBesideClientTool(t *testing.T) {
	storage := t.TempDir()
	up := harness.NewFakeLLM(t)
	up.Answer = func(body []byte) string {
		if strings.Contains(toolOutputs(body), "sunny") {
			return "It is 3°C and sunny in Oslo: good hiking weather."
		}
		return harness.ToolPrefix + `save_memory {"content":"The user plans to hike near Oslo."}|get_weather {"city":"Oslo"}`
	}
	tester := harness.StartCaddy(t, toolsConfig(storage, up.Addr()))
	api := harness.APICall{T: t, Client: tester.Client}
	for _, w := range harness.Wires {
		for _, stream := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/stream=%v", w.Name, stream), func(t *testing.T) {
				key := fmt.Sprintf("key-hike-%s-%v", w.Name, stream)
				c := toolClient{t: t, tester: tester, up: up, key: key, stream: stream, weather: true}
				q := "I plan to hike near Oslo. How is the weather?"
				r := c.ask(w, q)
				if len(r.calls) != 1 || r.calls[0] != "get_weather" || r.text != "" {
					t.Fatalf("client got %+v, want only its own get_weather call", r)
				}
				if w.Name != "ollama" && r.callID == "" {
					t.Fatalf("the client's call has no id: %+v", r)
				}
				r = c.next(w, q, r)
				if r.text != "It is 3°C and sunny in Oslo: good hiking weather." || len(r.calls) != 0 {
					t.Errorf("after its tool result the client got %+v", r)
				}
				_, out := api.Do("GET", "/memory/memories?source=tool", key, nil)
				if got := harness.ListContents(out); len(got) != 1 || got[0] != "The user plans to hike near Oslo." {
					t.Errorf("saved by the tool: %q", got)
				}
			})
		}
	}
}

// TestClientsOwnToolWins: a client that defines save_memory itself keeps
// it: the proxy adds only recall_memory and leaves the client's calls of
// save_memory to the client.
func TestClientsOwnToolWins(t *testing.T) {
	storage := t.TempDir()
	up := harness.NewFakeLLM(t)
	up.Answer = func([]byte) string { return harness.ToolPrefix + `save_memory {"content":"mine"}` }
	tester := harness.StartCaddy(t, toolsConfig(storage, up.Addr()))
	body := `{"model":"gpt-4o","messages":[{"role":"user","content":"Remember that I like tea."}],` +
		`"tools":[{"type":"function","function":{"name":"save_memory","parameters":{"type":"object"}}}]}`
	_, out := harness.Post(t, tester, "/v1/chat/completions", "key-own-tool", []byte(body))
	if calls := gjson.GetBytes(out, "choices.0.message.tool_calls.#.function.name").String(); calls != `["save_memory"]` {
		t.Errorf("the client got calls %s, want its own save_memory call: %s", calls, out)
	}
	sent := up.All()
	if len(sent) != 1 {
		t.Fatalf("the upstream was asked %d times, want once", len(sent))
	}
	if names := strings.Join(inject.ToolNames(sent[0].Body), ","); names != "save_memory,recall_memory" {
		t.Errorf("the upstream was offered %q, want the client's save_memory and the proxy's recall_memory", names)
	}
	if _, got := (harness.APICall{T: t, Client: tester.Client}).Do("GET", "/memory/memories?source=tool", "key-own-tool", nil); len(harness.ListContents(got)) != 0 {
		t.Errorf("the proxy ran the client's save_memory: %v", harness.ListContents(got))
	}
}

// TestMemoryToolAfterText: a model that says something before it calls
// recall_memory (as Claude often does). A stream has passed the words on
// by the time the call comes: the client's stream carries on with the next
// round, as one answer its SDK assembles; a JSON answer is simply the
// final round's.
func TestMemoryToolAfterText(t *testing.T) {
	storage := t.TempDir()
	up := harness.NewFakeLLM(t)
	up.Answer = func(body []byte) string {
		if strings.Contains(toolOutputs(body), "Biscuit") {
			return "Your dog is called Biscuit."
		}
		return "Let me check. " + harness.ToolPrefix + `recall_memory {"query":"dog"}`
	}
	tester := harness.StartCaddy(t, toolsConfig(storage, up.Addr()))
	seed(t, harness.APICall{T: t, Client: tester.Client}, "key-dog-talk", "The user's dog is called Biscuit.")
	for _, w := range harness.Wires {
		for _, stream := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/stream=%v", w.Name, stream), func(t *testing.T) {
				c := toolClient{t: t, tester: tester, up: up, key: "key-dog-talk", stream: stream}
				r := c.ask(w, "What is my dog called?")
				want := "Your dog is called Biscuit."
				if stream {
					want = "Let me check. " + want
				}
				if r.text != want || len(r.calls) != 0 || r.done != finished[w.Name] {
					t.Errorf("client got %+v, want one answer %q", r, want)
				}
				if r.input != 20 || r.output != 6 {
					t.Errorf("usage %d in / %d out, want the two rounds' sum 20 / 6", r.input, r.output)
				}
			})
		}
	}
}

// TestMemoryCallOwedToStoredResponse: OpenAI stores a responses answer
// whole, with the proxy's call the client never saw. The client's next
// request, continuing it by previous_response_id with its own call's
// output, must also bring an output for the proxy's call, or OpenAI refuses
// it: the proxy adds it, for that owner only, once, even after a reload.
func TestMemoryCallOwedToStoredResponse(t *testing.T) {
	storage := t.TempDir()
	up := harness.NewFakeLLM(t)
	up.Answer = func(body []byte) string {
		if strings.Contains(toolOutputs(body), "sunny") {
			return "It is sunny in Oslo."
		}
		return harness.ToolPrefix + `recall_memory {"query":"hike"}|get_weather {"city":"Oslo"}`
	}
	tester := harness.StartCaddy(t, toolsConfig(storage, up.Addr()))
	ask := func(key string, p responses.ResponseNewParams) *responses.Response {
		t.Helper()
		client := openai.NewClient(ooption.WithBaseURL(harness.CaddyAddr+"/v1/"), ooption.WithAPIKey(key),
			ooption.WithHTTPClient(tester.Client), ooption.WithMaxRetries(0))
		p.Model = "gpt-4.1-mini"
		p.Tools = []responses.ToolUnionParam{responses.ToolParamOfFunction("get_weather", map[string]any{"type": "object"}, false)}
		res, err := client.Responses.New(t.Context(), p)
		if err != nil {
			t.Fatalf("response through Caddy: %v", err)
		}
		return res
	}
	first := ask("key-stored", responses.ResponseNewParams{Input: responses.ResponseNewParamsInputUnion{OfString: openai.String("I plan to hike near Oslo. How is the weather?")}})
	var call string
	for _, it := range first.Output {
		if it.Type == "function_call" {
			if it.Name != "get_weather" || call != "" {
				t.Fatalf("the client got calls %+v, want its get_weather alone", first.Output)
			}
			call = it.CallID
		}
	}
	next := func(key string) []byte {
		out := responses.ResponseInputItemParamOfFunctionCallOutput(weatherResult)
		out.OfFunctionCallOutput.CallID = openai.String(call)
		ask(key, responses.ResponseNewParams{PreviousResponseID: openai.String(first.ID),
			Input: responses.ResponseNewParamsInputUnion{OfInputItemList: responses.ResponseInputParam{out}}})
		return up.Last("/responses").Body
	}
	// A reload between the answer and its continuation keeps what is owed:
	// it belongs to the storage, not to the handler.
	// (Another setting, or Caddy would find the configuration unchanged.)
	harness.Reload(t, tester, strings.Replace(toolsConfig(storage, up.Addr()), "tools\n", "tools\n\t\ttimeout 2s\n", 1))
	// Another owner naming the same response gets nothing of this one's.
	if got := gjson.GetBytes(next("key-other"), `input.#(type=="function_call_output")#.call_id`).String(); got != `["`+call+`"]` {
		t.Errorf("another owner's request carries outputs for %s", got)
	}
	sent := next("key-stored")
	if got := gjson.GetBytes(sent, `input.#(type=="function_call_output")#.call_id`).String(); got != `["call_1","`+call+`"]` {
		t.Errorf("the continuing request carries outputs for %s, want the proxy's call_1 and the client's %s:\n%s", got, call, sent)
	}
	if !strings.Contains(toolOutputs(sent), `"memories"`) {
		t.Errorf("the proxy's call has no recall result: %s", toolOutputs(sent))
	}
	// Once.
	if got := gjson.GetBytes(next("key-stored"), `input.#(type=="function_call_output")#.call_id`).String(); got != `["`+call+`"]` {
		t.Errorf("a second continuation carries outputs for %s again", got)
	}
}
