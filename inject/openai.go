package inject

import (
	"fmt"
	"strings"

	"github.com/tidwall/gjson"
)

// Dialect is the request side of one wire format.
type Dialect interface {
	// Name is the format's name as used in configuration.
	Name() string
	// Parse reads a request body; ErrNotJSON or ErrNotChat mean "pass it on".
	Parse(body []byte) (*Request, error)
}

// OpenAIChat is the OpenAI chat completions format (POST .../chat/completions),
// spoken by OpenAI and by most compatible servers (vLLM, LM Studio, llama.cpp,
// Ollama's /v1, OpenRouter, Groq, ...).
type OpenAIChat struct{}

// Name implements Dialect.
func (OpenAIChat) Name() string { return "openai_chat" }

// ForPath returns the dialect a request path speaks, or nil.
func ForPath(path string) Dialect {
	if strings.HasSuffix(path, "/chat/completions") {
		return OpenAIChat{}
	}
	return nil
}

// ByName returns the dialect with the given configuration name, or nil.
func ByName(name string) Dialect {
	if name == (OpenAIChat{}).Name() {
		return OpenAIChat{}
	}
	return nil
}

// openAIMessage remembers where a message sits in the body.
type openAIMessage struct {
	start   int          // offset of the message object
	content gjson.Result // its "content" value, with absolute Index
}

// Parse implements Dialect.
func (d OpenAIChat) Parse(body []byte) (*Request, error) {
	if !gjson.ValidBytes(body) {
		return nil, ErrNotJSON
	}
	root := gjson.ParseBytes(body)
	if !root.IsObject() || duplicateKeys(root, "messages") {
		return nil, ErrNotChat
	}
	msgs := root.Get("messages")
	if !msgs.IsArray() || msgs.Index <= 0 {
		return nil, ErrNotChat
	}
	r := &Request{
		Dialect: d.Name(),
		Model:   root.Get("model").String(),
		Stream:  root.Get("stream").Bool(),
		body:    body,
	}
	var spans []openAIMessage
	ok := true
	msgs.ForEach(func(_, m gjson.Result) bool {
		if !m.IsObject() || m.Index <= 0 || duplicateKeys(m, "role", "content") {
			ok = false
			return false
		}
		c := m.Get("content")
		r.Messages = append(r.Messages, Message{Role: m.Get("role").String(), Text: contentText(c)})
		spans = append(spans, openAIMessage{start: m.Index, content: c})
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

// duplicateKeys reports whether obj repeats one of keys. gjson reads the
// first of duplicate keys and most servers the last; rather than rewrite a
// value the upstream may not read, such bodies pass through.
func duplicateKeys(obj gjson.Result, keys ...string) bool {
	seen := make(map[string]bool, len(keys))
	dup := false
	obj.ForEach(func(k, _ gjson.Result) bool {
		for _, want := range keys {
			if k.Str == want {
				if seen[want] {
					dup = true
					return false
				}
				seen[want] = true
			}
		}
		return true
	})
	return dup
}

// contentText reads a chat content value: a string, or an array of parts of
// which the text parts count.
func contentText(c gjson.Result) string {
	if c.Type == gjson.String {
		return c.String()
	}
	if !c.IsArray() {
		return ""
	}
	var parts []string
	c.ForEach(func(_, p gjson.Result) bool {
		if t := p.Get("type").String(); t == "text" || t == "input_text" {
			parts = append(parts, p.Get("text").String())
		}
		return true
	})
	return joinText(parts)
}

func (d OpenAIChat) place(r *Request, msgs gjson.Result, spans []openAIMessage, block string, p Placement) ([]byte, error) {
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
			if out, ok := appendToContent(body, spans[0].content, block); ok {
				return out, nil
			}
		}
		if body[msgs.Index] != '[' {
			return nil, fmt.Errorf("messages offset mismatch")
		}
		open := msgs.Index + 1 // just after '['
		return splice(body, open, systemMsg, []byte(",")), nil
	case User:
		i := r.LatestUser()
		if i < 0 {
			return nil, fmt.Errorf("no user message to place memories in")
		}
		if out, ok := prependToContent(body, spans[i].content, block); ok {
			return out, nil
		}
		return nil, fmt.Errorf("latest user message has no string or array content")
	}
	return nil, fmt.Errorf("unknown placement %q", p)
}

// appendToContent adds block after a string content or as a last text part of
// an array content.
func appendToContent(body []byte, c gjson.Result, block string) ([]byte, bool) {
	if !spanOK(body, c) {
		return nil, false
	}
	switch {
	case c.Type == gjson.String:
		return replace(body, c.Index, c.Index+len(c.Raw), jsonString(c.String()+"\n\n"+block)), true
	case c.IsArray():
		end := c.Index + len(c.Raw) - 1 // the closing ']'
		part := []byte(`{"type":"text","text":` + string(jsonString(block)) + `}`)
		if len(c.Array()) == 0 {
			return splice(body, end, part), true
		}
		return splice(body, end, []byte(","), part), true
	}
	return nil, false
}

// prependToContent puts block before a string content, or as a first text
// part of an array content.
func prependToContent(body []byte, c gjson.Result, block string) ([]byte, bool) {
	if !spanOK(body, c) {
		return nil, false
	}
	switch {
	case c.Type == gjson.String:
		return replace(body, c.Index, c.Index+len(c.Raw), jsonString(block+"\n\n"+c.String())), true
	case c.IsArray():
		open := c.Index + 1
		part := []byte(`{"type":"text","text":` + string(jsonString(block)) + `}`)
		if len(c.Array()) == 0 {
			return splice(body, open, part), true
		}
		return splice(body, open, part, []byte(",")), true
	}
	return nil, false
}

// spanOK checks that a value's recorded offset really points at its bytes; we
// only ever splice at offsets we have verified.
func spanOK(body []byte, v gjson.Result) bool {
	return v.Index > 0 && v.Index+len(v.Raw) <= len(body) && string(body[v.Index:v.Index+len(v.Raw)]) == v.Raw
}
