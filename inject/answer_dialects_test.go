package inject

import (
	"errors"
	"strings"
	"testing"
)

// event builds one named server-sent event.
func event(name, data string) string {
	return "event: " + name + "\ndata: " + data + "\n\n"
}

type decodeCase struct {
	name  string
	ct    string
	body  string
	text  string
	id    string
	tools int
}

func runDecodeCases(t *testing.T, dialect string, tests []decodeCase) {
	t.Helper()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, err := Decode(ByName(dialect), tt.ct, []byte(tt.body))
			if err != nil {
				t.Fatalf("Decode(%s, %s): %v", dialect, tt.ct, err)
			}
			if a.Text != tt.text || a.ID != tt.id || a.ToolCalls != tt.tools {
				t.Errorf("Decode = %+v, want {Text:%q ID:%q ToolCalls:%d}", a, tt.text, tt.id, tt.tools)
			}
		})
	}
}

// ---- Anthropic ----

func TestDecodeAnthropicJSON(t *testing.T) {
	runDecodeCases(t, "anthropic", []decodeCase{
		{
			name: "text",
			ct:   "application/json",
			body: `{"id":"msg_01","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[{"type":"text","text":"Oslo is cold in January."}],"stop_reason":"end_turn","usage":{"input_tokens":10,"output_tokens":7}}`,
			text: "Oslo is cold in January.", id: "msg_01",
		},
		{
			// Citations split one answer into adjacent text blocks.
			name: "text blocks joined, thinking ignored",
			ct:   "application/json; charset=utf-8",
			body: `{"id":"msg_02","type":"message","content":[` +
				`{"type":"thinking","thinking":"The user asks about Oslo.","signature":"EqQB"},` +
				`{"type":"redacted_thinking","data":"xyz"},` +
				`{"type":"text","text":"The capital of Norway is "},` +
				`{"type":"text","text":"Oslo","citations":[{"type":"char_location","cited_text":"Oslo"}]},` +
				`{"type":"text","text":"."}]}`,
			text: "The capital of Norway is Oslo.", id: "msg_02",
		},
		{
			name: "tool use counted",
			ct:   "application/json",
			body: `{"id":"msg_03","content":[{"type":"text","text":"Let me check."},` +
				`{"type":"tool_use","id":"toolu_1","name":"get_weather","input":{"city":"Oslo"}},` +
				`{"type":"tool_use","id":"toolu_2","name":"get_time","input":{}}],"stop_reason":"tool_use"}`,
			text: "Let me check.", id: "msg_03", tools: 2,
		},
		{
			name: "quoted memory block stripped",
			ct:   "application/json",
			body: `{"id":"msg_04","content":[{"type":"text","text":` + jsonStr("I know this:\n"+quotedBlock+"\nYou live in Oslo.") + `}]}`,
			text: "I know this:\n\nYou live in Oslo.", id: "msg_04",
		},
	})
	if a, err := Decode(Anthropic, "application/json", []byte(`{"type":"error","error":{"type":"overloaded_error"`)); err == nil {
		t.Errorf("Decode of invalid JSON = %+v, nil error", a)
	}
}

// anthStream is a streamed Anthropic answer with thinking, text and a tool call.
var anthStream = []string{
	event("message_start", `{"type":"message_start","message":{"id":"msg_s1","type":"message","role":"assistant","content":[],"model":"claude-sonnet-4-5","usage":{"input_tokens":25,"output_tokens":1}}}`),
	event("content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"thinking","thinking":""}}`),
	event("content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"The user wants weather."}}`),
	event("content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"signature_delta","signature":"EqQB"}}`),
	event("content_block_stop", `{"type":"content_block_stop","index":0}`),
	event("content_block_start", `{"type":"content_block_start","index":1,"content_block":{"type":"text","text":""}}`),
	event("ping", `{"type":"ping"}`),
	event("content_block_delta", `{"type":"content_block_delta","index":1,"delta":{"type":"text_delta","text":"Hello"}}`),
	event("content_block_delta", `{"type":"content_block_delta","index":1,"delta":{"type":"text_delta","text":", Oslo"}}`),
	event("content_block_delta", `{"type":"content_block_delta","index":1,"delta":{"type":"text_delta","text":" is cold."}}`),
	event("content_block_stop", `{"type":"content_block_stop","index":1}`),
	event("content_block_start", `{"type":"content_block_start","index":2,"content_block":{"type":"tool_use","id":"toolu_1","name":"get_weather","input":{}}}`),
	event("content_block_delta", `{"type":"content_block_delta","index":2,"delta":{"type":"input_json_delta","partial_json":"{\"city\": \"Oslo\"}"}}`),
	event("content_block_stop", `{"type":"content_block_stop","index":2}`),
	event("message_delta", `{"type":"message_delta","delta":{"stop_reason":"tool_use","stop_sequence":null},"usage":{"output_tokens":15}}`),
	event("message_stop", `{"type":"message_stop"}`),
}

func TestDecodeAnthropicSSE(t *testing.T) {
	all := strings.Join(anthStream, "")
	textEnd := strings.Join(anthStream[:9], "") // through ", Oslo"
	runDecodeCases(t, "anthropic", []decodeCase{
		{name: "whole stream", ct: "text/event-stream; charset=utf-8", body: all, text: "Hello, Oslo is cold.", id: "msg_s1", tools: 1},
		{name: "CRLF", ct: "text/event-stream", body: strings.ReplaceAll(all, "\n", "\r\n"), text: "Hello, Oslo is cold.", id: "msg_s1", tools: 1},
		{name: "stops at message_stop", ct: "text/event-stream",
			body: all + event("content_block_delta", `{"type":"content_block_delta","index":1,"delta":{"type":"text_delta","text":" EXTRA"}}`) +
				event("content_block_start", `{"type":"content_block_start","index":3,"content_block":{"type":"tool_use","id":"toolu_2","name":"x","input":{}}}`),
			text: "Hello, Oslo is cold.", id: "msg_s1", tools: 1},
		{name: "truncated stream returns the text so far", ct: "text/event-stream",
			body: textEnd + `event: content_block_delta` + "\n" + `data: {"type":"content_block_delta","index":1,"delta":{"type":"text_de`,
			text: "Hello, Oslo", id: "msg_s1"},
		{name: "text in content_block_start", ct: "text/event-stream",
			body: anthStream[0] + event("content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":"Hi. "}}`) +
				event("content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Bye."}}`),
			text: "Hi. Bye.", id: "msg_s1"},
		{name: "quoted block stripped", ct: "text/event-stream",
			body: anthStream[0] + anthStream[5] +
				event("content_block_delta", `{"type":"content_block_delta","index":1,"delta":{"type":"text_delta","text":`+jsonStr("Noted. "+BlockStart[:10])+`}}`) +
				event("content_block_delta", `{"type":"content_block_delta","index":1,"delta":{"type":"text_delta","text":`+jsonStr(BlockStart[10:]+"\n- User lives in Oslo.\n"+BlockEnd+"\nBye.")+`}}`),
			text: "Noted.\n\nBye.", id: "msg_s1"},
		{name: "empty", ct: "text/event-stream", body: ""},
	})
}

// ---- Ollama ----

func TestDecodeOllama(t *testing.T) {
	line := func(content string, done bool) string {
		return `{"model":"llama3.2","created_at":"2024-07-22T20:33:28.123Z","message":{"role":"assistant","content":` + jsonStr(content) + `},"done":` + map[bool]string{true: "true", false: "false"}[done] + "}\n"
	}
	final := `{"model":"llama3.2","created_at":"2024-07-22T20:33:29Z","message":{"role":"assistant","content":""},"done_reason":"stop","done":true,"total_duration":4883583458,"eval_count":11}` + "\n"
	stream := line("Hello", false) + line(", Oslo", false) + line(" is cold.", false) + final
	runDecodeCases(t, "ollama", []decodeCase{
		{
			name: "single object",
			ct:   "application/json; charset=utf-8",
			body: `{"model":"llama3.2","created_at":"2024-07-22T20:33:28Z","message":{"role":"assistant","content":"Oslo is cold.","thinking":"hmm"},"done_reason":"stop","done":true}`,
			text: "Oslo is cold.",
		},
		{
			name:  "single object with tool calls",
			ct:    "application/json",
			body:  `{"model":"llama3.2","message":{"role":"assistant","content":"","tool_calls":[{"function":{"name":"get_weather","arguments":{"city":"Oslo"}}},{"function":{"name":"get_time","arguments":{}}}]},"done":true}`,
			tools: 2,
		},
		{name: "NDJSON stream", ct: "application/x-ndjson", body: stream, text: "Hello, Oslo is cold."},
		{name: "NDJSON stream without trailing newline", ct: "application/x-ndjson", body: strings.TrimSuffix(stream, "\n"), text: "Hello, Oslo is cold."},
		{name: "CRLF lines", ct: "application/x-ndjson", body: strings.ReplaceAll(stream, "\n", "\r\n"), text: "Hello, Oslo is cold."},
		{name: "truncated last line ignored", ct: "application/x-ndjson",
			body: line("Hello", false) + line(", Oslo", false) + `{"model":"llama3.2","message":{"role":"assistant","content":" is co`,
			text: "Hello, Oslo"},
		{name: "tool calls in a stream", ct: "application/x-ndjson",
			body:  `{"message":{"role":"assistant","content":"","tool_calls":[{"function":{"name":"w","arguments":{}}}]},"done":false}` + "\n" + final,
			tools: 1},
		{name: "quoted block stripped", ct: "application/x-ndjson",
			body: line("Noted.\n"+BlockStart, false) + line("\n- User lives in Oslo.\n"+BlockEnd+"\nBye.", false) + final,
			text: "Noted.\n\nBye."},
		{name: "empty body", ct: "application/x-ndjson", body: ""},
	})
	for _, body := range []string{`{"message":{"content":"cut`, "<html>502</html>", "not json\nat all\n"} {
		if a, err := Decode(Ollama, "application/x-ndjson", []byte(body)); err == nil {
			t.Errorf("Decode(%q) = %+v, nil error", body, a)
		}
	}
	if _, err := Decode(Ollama, "text/event-stream", []byte(stream)); err == nil {
		t.Error("ollama decoded text/event-stream")
	}
}

// ---- OpenAI responses ----

const responsesJSONBody = `{"id":"resp_01","object":"response","status":"completed","model":"gpt-4.1","output":[` +
	`{"type":"reasoning","id":"rs_1","summary":[{"type":"summary_text","text":"Thinking about Oslo."}]},` +
	`{"type":"message","id":"msg_1","role":"assistant","status":"completed","content":[` +
	`{"type":"output_text","text":"Oslo is cold.","annotations":[]},{"type":"refusal","refusal":"no"},{"type":"output_text","text":"Pack a coat.","annotations":[]}]},` +
	`{"type":"function_call","id":"fc_1","call_id":"call_1","name":"get_weather","arguments":"{}"}],` +
	`"usage":{"input_tokens":10,"output_tokens":20}}`

func TestDecodeResponsesJSON(t *testing.T) {
	runDecodeCases(t, "openai_responses", []decodeCase{
		{name: "message, reasoning and a function call", ct: "application/json", body: responsesJSONBody,
			text: "Oslo is cold.\nPack a coat.", id: "resp_01", tools: 1},
		{name: "function calls only", ct: "application/json; charset=utf-8",
			body: `{"id":"resp_02","output":[{"type":"function_call","call_id":"a","name":"f","arguments":"{}"},{"type":"function_call","call_id":"b","name":"g","arguments":"{}"}]}`,
			id:   "resp_02", tools: 2},
	})
}

// responsesStream is a streamed responses answer: reasoning, a message of two
// text parts and a function call, cut after the first n events.
var responsesStream = []string{
	event("response.created", `{"type":"response.created","sequence_number":0,"response":{"id":"resp_s1","object":"response","status":"in_progress","output":[]}}`),
	event("response.in_progress", `{"type":"response.in_progress","sequence_number":1,"response":{"id":"resp_s1","status":"in_progress","output":[]}}`),
	event("response.output_item.added", `{"type":"response.output_item.added","output_index":0,"item":{"type":"reasoning","id":"rs_1","summary":[]}}`),
	event("response.reasoning_summary_text.delta", `{"type":"response.reasoning_summary_text.delta","item_id":"rs_1","delta":"Thinking."}`),
	event("response.output_item.added", `{"type":"response.output_item.added","output_index":1,"item":{"type":"message","id":"msg_1","role":"assistant","content":[]}}`),
	event("response.content_part.added", `{"type":"response.content_part.added","item_id":"msg_1","content_index":0,"part":{"type":"output_text","text":""}}`),
	event("response.output_text.delta", `{"type":"response.output_text.delta","item_id":"msg_1","content_index":0,"delta":"Oslo is "}`),
	event("response.output_text.delta", `{"type":"response.output_text.delta","item_id":"msg_1","content_index":0,"delta":"cold."}`),
	event("response.output_text.done", `{"type":"response.output_text.done","item_id":"msg_1","content_index":0,"text":"Oslo is cold."}`),
	event("response.output_item.added", `{"type":"response.output_item.added","output_index":2,"item":{"type":"function_call","id":"fc_1","call_id":"call_1","name":"get_weather","arguments":""}}`),
	event("response.function_call_arguments.delta", `{"type":"response.function_call_arguments.delta","item_id":"fc_1","delta":"{}"}`),
	// 11: a second text part, then the completed response.
	event("response.content_part.added", `{"type":"response.content_part.added","item_id":"msg_1","content_index":1,"part":{"type":"output_text","text":""}}`),
	event("response.output_text.delta", `{"type":"response.output_text.delta","item_id":"msg_1","content_index":1,"delta":"Pack a coat."}`),
	event("response.completed", `{"type":"response.completed","sequence_number":20,"response":`+strings.Replace(responsesJSONBody, `"id":"resp_01"`, `"id":"resp_s1"`, 1)+`}`),
}

func TestDecodeResponsesSSE(t *testing.T) {
	upTo := func(n int) string { return strings.Join(responsesStream[:n], "") }
	runDecodeCases(t, "openai_responses", []decodeCase{
		// The completed response is authoritative: its two text parts are
		// separate lines, where the deltas ran them together.
		{name: "completed", ct: "text/event-stream", body: upTo(14), text: "Oslo is cold.\nPack a coat.", id: "resp_s1", tools: 1},
		{name: "nothing after response.completed", ct: "text/event-stream",
			body: upTo(14) + event("response.output_text.delta", `{"type":"response.output_text.delta","delta":" EXTRA"}`),
			text: "Oslo is cold.\nPack a coat.", id: "resp_s1", tools: 1},
		{name: "cut before response.completed", ct: "text/event-stream", body: upTo(11), text: "Oslo is cold.", id: "resp_s1", tools: 1},
		{name: "cut mid-event", ct: "text/event-stream",
			body: upTo(7) + responsesStream[7][:len(responsesStream[7])-12],
			text: "Oslo is", id: "resp_s1"},
		{name: "only deltas, no created event", ct: "text/event-stream",
			body: event("response.output_text.delta", `{"type":"response.output_text.delta","delta":"Hi"}`),
			text: "Hi"},
		{name: "incomplete response", ct: "text/event-stream",
			body: upTo(9) + event("response.incomplete", `{"type":"response.incomplete","response":{"id":"resp_s1","status":"incomplete","output":[{"type":"message","content":[{"type":"output_text","text":"Oslo is cold."}]}]}}`),
			text: "Oslo is cold.", id: "resp_s1"},
		{name: "completed without text keeps the deltas", ct: "text/event-stream",
			body: event("response.created", `{"type":"response.created","response":{"id":"resp_x"}}`) +
				event("response.output_text.delta", `{"type":"response.output_text.delta","delta":"Streamed."}`) +
				event("response.completed", `{"type":"response.completed","response":{"id":"resp_x","output":[]}}`),
			text: "Streamed.", id: "resp_x"},
	})
}

func TestDecodes(t *testing.T) {
	for _, ct := range []string{"application/json", "application/json; charset=utf-8", "text/event-stream", "text/event-stream; charset=utf-8", "application/x-ndjson", "Application/JSON", "TEXT/EVENT-STREAM"} {
		if !Decodes(ct) {
			t.Errorf("Decodes(%q) = false", ct)
		}
	}
	for _, ct := range []string{"text/html", "text/html; charset=utf-8", "text/plain", "", "application/octet-stream", "application/problem+json", "garbage;;"} {
		if Decodes(ct) {
			t.Errorf("Decodes(%q) = true", ct)
		}
	}
}

func TestDecodeDialectsKnownFormats(t *testing.T) {
	// Each dialect decodes what its servers send and nothing else.
	tests := []struct {
		dialect, ct string
		ok          bool
	}{
		{"anthropic", "application/json", true},
		{"anthropic", "text/event-stream", true},
		{"anthropic", "application/x-ndjson", false},
		{"ollama", "application/json", true},
		{"ollama", "application/x-ndjson", true},
		{"openai_responses", "application/json", true},
		{"openai_responses", "text/event-stream", true},
		{"openai_responses", "application/x-ndjson", false},
		{"ollama", "text/html", false},
	}
	for _, tt := range tests {
		_, err := Decode(ByName(tt.dialect), tt.ct, []byte(`{}`))
		if unknown := errors.Is(err, ErrUnknownFormat); unknown == tt.ok {
			t.Errorf("Decode(%q, %q) error = %v", tt.dialect, tt.ct, err)
		}
	}
}
