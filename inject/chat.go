package inject

import (
	"fmt"
	"strings"

	"github.com/tidwall/gjson"
)

// chat is the request side OpenAI chat completions and Ollama share, the
// messages array: {"messages": [{"role": ..., "content": string |
// [parts]}, ...]}, and their tool definitions. Their rounds of tool use
// and their answers differ (openAIChat here and in chat_answer.go, ollama
// in ollama.go).
type chat struct {
	name            string
	streamByDefault bool
}

// openAIChat is OpenAI chat completions; its answers are in chat_answer.go.
type openAIChat struct{ chat }

// NameOpenAIChat is OpenAIChat's name in configuration (the format
// subdirective) and in jobs.
const NameOpenAIChat = "openai_chat"

// OpenAIChat is the OpenAI chat completions format (POST .../chat/completions),
// spoken by OpenAI and by most compatible servers (vLLM, LM Studio, llama.cpp,
// Ollama's /v1, OpenRouter, Groq, ...).
var OpenAIChat Dialect = openAIChat{chat{name: NameOpenAIChat}}

func (openAIChat) ServesPath(path string) bool { return strings.HasSuffix(path, "/chat/completions") }

// appendRound adds the assistant's message with its tool_calls, then a
// "tool" message with each result.
func (openAIChat) appendRound(body []byte, text string, calls []ToolCall, results []string) ([]byte, error) {
	var cs, items []string
	for _, c := range calls {
		cs = append(cs, `{"id":`+string(jsonString(c.ID))+`,"type":"function","function":{"name":`+string(jsonString(c.Name))+
			`,"arguments":`+string(jsonString(c.Arguments))+`}}`)
	}
	content := "null"
	if text != "" {
		content = string(jsonString(text))
	}
	items = append(items, `{"role":"assistant","content":`+content+`,"tool_calls":[`+strings.Join(cs, ",")+`]}`)
	for i, c := range calls {
		items = append(items, `{"role":"tool","tool_call_id":`+string(jsonString(c.ID))+`,"content":`+string(jsonString(results[i]))+`}`)
	}
	return appendItems(body, "messages", items)
}

// toolDef is a function tool: {"type":"function","function":{...}}.
func (chat) toolDef(t Tool) string {
	return `{"type":"function","function":{"name":` + string(jsonString(t.Name)) + `,"description":` + string(jsonString(t.Description)) +
		`,"parameters":` + t.Parameters + `}}`
}

func (d chat) Name() string { return d.name }

// chatMessage remembers where a message sits in the body.
type chatMessage struct {
	start   int          // offset of the message object
	content gjson.Result // its "content" value, with absolute Index
}

func (d chat) Parse(body []byte) (*Request, error) {
	root, err := parseObject(body)
	if err != nil {
		return nil, err
	}
	if duplicateKeys(root, "messages") {
		return nil, ErrNotChat
	}
	msgs := root.Get("messages")
	if !msgs.IsArray() || msgs.Index <= 0 {
		return nil, ErrNotChat
	}
	r := &Request{
		Dialect: d.name,
		Model:   root.Get("model").String(),
		Stream:  d.streamByDefault,
		body:    body,
	}
	if s := root.Get("stream"); s.Exists() {
		r.Stream = s.Bool()
	}
	var spans []chatMessage
	ok := true
	msgs.ForEach(func(_, m gjson.Result) bool {
		if !m.IsObject() || m.Index <= 0 || duplicateKeys(m, "role", "content") {
			ok = false
			return false
		}
		c := m.Get("content")
		role := m.Get("role").String()
		if role == "function" {
			role = "tool"
		}
		r.Messages = append(r.Messages, Message{Role: role, Text: contentText(c)})
		spans = append(spans, chatMessage{start: m.Index, content: c})
		return true
	})
	if !ok || len(r.Messages) == 0 {
		return nil, ErrNotChat
	}
	r.inject = func(block string, p Placement) ([]byte, error) {
		return d.place(r, msgs, spans, block, p)
	}
	return r, nil
}

func (d chat) place(r *Request, msgs gjson.Result, spans []chatMessage, block string, p Placement) ([]byte, error) {
	body := r.body
	systemMsg := append(append([]byte(`{"role":"system","content":`), jsonString(block)...), '}')
	switch p {
	case CacheSafe:
		i := r.LatestUser()
		if i < 0 {
			return nil, fmt.Errorf("no user message to place memories before")
		}
		if body[spans[i].start] != '{' {
			return nil, fmt.Errorf("message offset mismatch")
		}
		return splice(body, spans[i].start, systemMsg, []byte(",")), nil
	case System:
		if role := r.Messages[0].Role; role == "system" || role == "developer" {
			if out, ok := appendToContent(body, spans[0].content, block, textPart); ok {
				return out, nil
			}
		}
		if body[msgs.Index] != '[' {
			return nil, fmt.Errorf("messages offset mismatch")
		}
		return splice(body, msgs.Index+1, systemMsg, []byte(",")), nil
	case User:
		i := r.LatestUser()
		if i < 0 {
			return nil, fmt.Errorf("no user message to place memories in")
		}
		if out, ok := prependToContent(body, spans[i].content, block, textPart); ok {
			return out, nil
		}
		return nil, fmt.Errorf("latest user message has no string or array content")
	}
	return nil, fmt.Errorf("unknown placement %q", p)
}

// textPart is the content part chat formats use for text.
func textPart(text string) []byte {
	return []byte(`{"type":"text","text":` + string(jsonString(text)) + `}`)
}

func (chat) turns() turns { return chatTurns }

// refusal is OpenAI's context_length_exceeded (see openAIRefusal).
func (openAIChat) refusal(body []byte) (int, bool) { return openAIRefusal(body) }
