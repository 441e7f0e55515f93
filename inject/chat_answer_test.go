package inject

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

// quotedBlock is an injected memory block as a model might quote it back.
var quotedBlock = BlockStart + "\n- [2024-03-05] User lives in Oslo.\n- User loves coffee.\n" + BlockEnd

// jsonStr encodes s for embedding in a hand-written JSON body.
func jsonStr(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`, "\r", `\r`, "\t", `\t`)
	return `"` + r.Replace(s) + `"`
}

func TestDecodeJSON(t *testing.T) {
	tests := []struct {
		name  string
		body  string
		text  string
		id    string
		tools int
	}{
		{
			name: "plain answer",
			body: `{"id":"chatcmpl-9abc","object":"chat.completion","created":1710000000,"model":"gpt-4o",` +
				`"choices":[{"index":0,"message":{"role":"assistant","content":"Oslo is cold in January.","refusal":null},"logprobs":null,"finish_reason":"stop"}],` +
				`"usage":{"prompt_tokens":10,"completion_tokens":7,"total_tokens":17}}`,
			text: "Oslo is cold in January.",
			id:   "chatcmpl-9abc",
		},
		{
			name: "tool calls with null content",
			body: `{"id":"chatcmpl-tools","choices":[{"index":0,"message":{"role":"assistant","content":null,"tool_calls":[` +
				`{"id":"call_1","type":"function","function":{"name":"get_weather","arguments":"{\"city\":\"Oslo\"}"}},` +
				`{"id":"call_2","type":"function","function":{"name":"get_time","arguments":"{}"}}]},"finish_reason":"tool_calls"}]}`,
			text:  "",
			id:    "chatcmpl-tools",
			tools: 2,
		},
		{
			name: "text and a tool call",
			body: `{"id":"x","choices":[{"index":0,"message":{"role":"assistant","content":"Let me check.","tool_calls":[{"id":"c","type":"function","function":{"name":"f","arguments":"{}"}}]}}]}`,
			text: "Let me check.", id: "x", tools: 1,
		},
		{
			name: "n>1 uses the first choice",
			body: `{"id":"y","choices":[{"index":0,"message":{"role":"assistant","content":"first"}},{"index":1,"message":{"role":"assistant","content":"second"}}]}`,
			text: "first", id: "y",
		},
		{
			name: "quoted memory block is stripped",
			body: `{"id":"z","choices":[{"index":0,"message":{"role":"assistant","content":` + jsonStr("Here is what I know:\n"+quotedBlock+"\nYou live in Oslo.") + `}}]}`,
			text: "Here is what I know:\n\nYou live in Oslo.", id: "z",
		},
		{
			name: "surrounding whitespace trimmed",
			body: `{"id":"w","choices":[{"index":0,"message":{"role":"assistant","content":"\n\n  Hello.  \n"}}]}`,
			text: "Hello.", id: "w",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, ct := range []string{"application/json", "application/json; charset=utf-8", "Application/JSON"} {
				a, err := Decode(OpenAIChat, ct, []byte(tt.body))
				if err != nil {
					t.Fatalf("Decode(%s): %v", ct, err)
				}
				if a.Text != tt.text || a.ID != tt.id || a.ToolCalls != tt.tools {
					t.Errorf("Decode(%s) = %+v, want {Text:%q ID:%q ToolCalls:%d}", ct, a, tt.text, tt.id, tt.tools)
				}
			}
		})
	}
}

func TestDecodeJSONInvalid(t *testing.T) {
	for _, body := range []string{``, `{"id":"x","choices":[`, `<html>502 Bad Gateway</html>`} {
		a, err := Decode(OpenAIChat, "application/json", []byte(body))
		if err == nil {
			t.Errorf("Decode(%q) = %+v, want an error", body, a)
		}
		if a.Text != "" {
			t.Errorf("Decode(%q) returned text %q with an error", body, a.Text)
		}
	}
}

// sse builds an event stream from data payloads.
func sse(datas ...string) string {
	var b strings.Builder
	for _, d := range datas {
		b.WriteString("data: " + d + "\n\n")
	}
	return b.String()
}

func chunk(id string, index int, delta string) string {
	return fmt.Sprintf(`{"id":%q,"object":"chat.completion.chunk","created":1710000000,"model":"gpt-4o","choices":[{"index":%d,"delta":%s,"finish_reason":null}]}`, id, index, delta)
}

func TestDecodeStream(t *testing.T) {
	const ct = "text/event-stream; charset=utf-8"
	hello := []string{
		chunk("chatcmpl-1", 0, `{"role":"assistant","content":""}`),
		chunk("chatcmpl-1", 0, `{"content":"Hello"}`),
		chunk("chatcmpl-1", 0, `{"content":", wor"}`),
		chunk("chatcmpl-1", 0, `{"content":"ld!"}`),
		chunk("chatcmpl-1", 0, `{}`),
	}
	usage := `{"id":"chatcmpl-1","object":"chat.completion.chunk","choices":[],"usage":{"prompt_tokens":5,"completion_tokens":3,"total_tokens":8}}`
	tests := []struct {
		name  string
		body  string
		text  string
		id    string
		tools int
	}{
		{"joins deltas and ignores [DONE]", sse(append(hello, usage, "[DONE]")...), "Hello, world!", "chatcmpl-1", 0},
		{"comments and keep-alives", ": keep-alive\n\n" + sse(hello[:2]...) + ": ping\n\n" + sse(hello[2:]...) + "data: [DONE]\n\n", "Hello, world!", "chatcmpl-1", 0},
		{"CRLF line endings", strings.ReplaceAll(sse(append(hello, "[DONE]")...), "\n", "\r\n"), "Hello, world!", "chatcmpl-1", 0},
		{"event names and no space after colon", "event: message\ndata:" + hello[1] + "\n\nevent: message\nid: 7\nretry: 1000\ndata:" + hello[2] + "\n\n", "Hello, wor", "chatcmpl-1", 0},
		{"multi-line data event",
			"data: {\"id\":\"chatcmpl-1\",\n" +
				"data: \"choices\":[{\"index\":0,\n" +
				"data: \"delta\":{\"content\":\"split \"}}]}\n\n" +
				sse(hello[1], "[DONE]"),
			"split Hello", "chatcmpl-1", 0},
		{"n>1 keeps only choice 0",
			sse(chunk("c", 0, `{"content":"Yes"}`), chunk("c", 1, `{"content":"No"}`), chunk("c", 1, `{"content":" way"}`), chunk("c", 0, `{"content":" indeed"}`),
				`{"id":"c","choices":[{"index":1,"delta":{"content":"!"}},{"index":0,"delta":{"content":"."}}]}`, "[DONE]"),
			"Yes indeed.", "c", 0},
		{"tool calls counted by index",
			sse(
				chunk("t", 0, `{"role":"assistant","content":null,"tool_calls":[{"index":0,"id":"call_a","type":"function","function":{"name":"get_weather","arguments":""}}]}`),
				chunk("t", 0, `{"tool_calls":[{"index":0,"function":{"arguments":"{\"city\":"}}]}`),
				chunk("t", 0, `{"tool_calls":[{"index":0,"function":{"arguments":"\"Oslo\"}"}}]}`),
				chunk("t", 0, `{"tool_calls":[{"index":1,"id":"call_b","type":"function","function":{"name":"get_time","arguments":"{}"}}]}`),
				chunk("t", 1, `{"tool_calls":[{"index":2,"id":"call_other_choice","type":"function","function":{"name":"x","arguments":"{}"}}]}`),
				"[DONE]"),
			"", "t", 2},
		{"truncated mid-event keeps earlier text",
			sse(hello[:3]...) + `data: {"id":"chatcmpl-1","choices":[{"index":0,"delta":{"content":"ld`,
			"Hello, wor", "chatcmpl-1", 0},
		{"truncated after a complete line without blank line",
			sse(hello[:2]...) + "data: " + hello[2] + "\n",
			"Hello, wor", "chatcmpl-1", 0},
		{"invalid chunk skipped", sse(hello[1], `{"id":`, hello[3]), "Hellold!", "chatcmpl-1", 0},
		{"quoted block split across chunks is stripped",
			sse(
				chunk("q", 0, `{"content":"I recall:\n`+strings.ReplaceAll(BlockStart[:20], `"`, `\"`)+`"}`),
				chunk("q", 0, `{"content":`+jsonStr(BlockStart[20:]+"\n- User lives in Oslo.\n"+BlockEnd[:5])+`}`),
				chunk("q", 0, `{"content":`+jsonStr(BlockEnd[5:]+"\nYou live in Oslo.")+`}`),
				"[DONE]"),
			"I recall:\n\nYou live in Oslo.", "q", 0},
		{"quoted block cut short by the end of the stream",
			sse(chunk("q", 0, `{"content":`+jsonStr("Sure. "+BlockStart+"\n- User lives in")+`}`)),
			"Sure.", "q", 0},
		{"empty body", "", "", "", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, err := Decode(OpenAIChat, ct, []byte(tt.body))
			if err != nil {
				t.Fatalf("Decode: %v", err)
			}
			if a.Text != tt.text || a.ID != tt.id || a.ToolCalls != tt.tools {
				t.Errorf("Decode = %+v, want {Text:%q ID:%q ToolCalls:%d}", a, tt.text, tt.id, tt.tools)
			}
		})
	}
}

func TestDecodeLongStreamLine(t *testing.T) {
	long := strings.Repeat("word ", 40000) // one 200 kB data line, beyond bufio's default 64 kB
	body := sse(chunk("l", 0, `{"content":"`+long+`"}`), chunk("l", 0, `{"content":"end"}`), "[DONE]")
	a, err := Decode(OpenAIChat, "text/event-stream", []byte(body))
	if err != nil {
		t.Fatalf("Decode: %v", err)
	}
	if a.Text != strings.TrimSpace(long+"end") {
		t.Errorf("long line lost: got %d bytes, want %d", len(a.Text), len(long)+3)
	}
}

func TestDecodeUnknownFormat(t *testing.T) {
	tests := []struct{ dialect, ct string }{
		{"openai_chat", "text/plain"},
		{"openai_chat", "text/html; charset=utf-8"},
		{"openai_chat", ""},
		{"openai_chat", "application/x-ndjson"},
		{"anthropic_messages", "application/json"},
		{"", "text/event-stream"},
	}
	body := []byte(`{"id":"x","choices":[{"index":0,"message":{"role":"assistant","content":"hi"}}]}`)
	for _, tt := range tests {
		a, err := Decode(ByName(tt.dialect), tt.ct, body)
		if !errors.Is(err, ErrUnknownFormat) {
			t.Errorf("Decode(%q, %q) error = %v, want ErrUnknownFormat", tt.dialect, tt.ct, err)
		}
		if a.Text != "" {
			t.Errorf("Decode(%q, %q) returned text %q", tt.dialect, tt.ct, a.Text)
		}
	}
}
