package inject

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"mime"
	"strings"

	"github.com/tidwall/gjson"
)

// Assistant is the assistant's side of one turn.
type Assistant struct {
	Text      string
	ID        string // the provider's response id, used as a reference
	ToolCalls int
}

// ErrUnknownFormat means the body is in a format this dialect does not decode.
var ErrUnknownFormat = errors.New("unknown response format")

// decoder reads one dialect's body of one media type.
type decoder func(body []byte) (Assistant, error)

var decoders = map[string]map[string]decoder{
	NameOpenAIChat: {
		"application/json":  openAIChatJSON,
		"text/event-stream": openAIChatSSE,
	},
	NameAnthropic: {
		"application/json":  anthropicJSON,
		"text/event-stream": anthropicSSE,
	},
	NameOllama: {
		"application/json":     ollamaNDJSON, // one object is one line
		"application/x-ndjson": ollamaNDJSON,
	},
	NameOpenAIResponses: {
		"application/json":  responsesJSON,
		"text/event-stream": responsesSSE,
	},
}

// Decodes reports whether Decode reads responses of this media type for
// some dialect.
func Decodes(contentType string) bool {
	mt, _, _ := mime.ParseMediaType(contentType)
	for _, byType := range decoders {
		if byType[mt] != nil {
			return true
		}
	}
	return false
}

// Decode reads the assistant turn from a response body of the named dialect.
// A stream cut short decodes to what arrived. Injected memory blocks the
// model quoted back are removed from the text.
func Decode(dialect, contentType string, body []byte) (Assistant, error) {
	mt, _, _ := mime.ParseMediaType(contentType)
	dec := decoders[dialect][strings.ToLower(mt)]
	if dec == nil {
		return Assistant{}, fmt.Errorf("%w: %s for %q", ErrUnknownFormat, mt, dialect)
	}
	a, err := dec(body)
	a.Text = strings.TrimSpace(Strip(a.Text))
	return a, err
}

func openAIChatJSON(body []byte) (Assistant, error) {
	if !ValidJSON(body) {
		return Assistant{}, errors.New("response is not valid JSON")
	}
	r := gjson.ParseBytes(body)
	msg := r.Get("choices.0.message")
	return Assistant{
		ID:        r.Get("id").String(),
		Text:      msg.Get("content").String(),
		ToolCalls: len(msg.Get("tool_calls").Array()),
	}, nil
}

func openAIChatSSE(body []byte) (Assistant, error) {
	var a Assistant
	var text strings.Builder
	tools := map[int64]bool{}
	err := events(body, func(_, data string) bool {
		if data == "[DONE]" {
			return false
		}
		if !ValidJSON([]byte(data)) {
			return true
		}
		r := gjson.Parse(data)
		if a.ID == "" {
			a.ID = r.Get("id").String()
		}
		r.Get("choices").ForEach(func(_, c gjson.Result) bool {
			if c.Get("index").Int() != 0 {
				return true // n > 1: the first choice is the one the client shows
			}
			d := c.Get("delta")
			text.WriteString(d.Get("content").String())
			d.Get("tool_calls").ForEach(func(_, t gjson.Result) bool {
				tools[t.Get("index").Int()] = true
				return true
			})
			return true
		})
		return true
	})
	a.Text = text.String()
	a.ToolCalls = len(tools)
	return a, err
}

func anthropicJSON(body []byte) (Assistant, error) {
	if !ValidJSON(body) {
		return Assistant{}, errors.New("response is not valid JSON")
	}
	r := gjson.ParseBytes(body)
	a := Assistant{ID: r.Get("id").String()}
	var parts []string
	r.Get("content").ForEach(func(_, b gjson.Result) bool {
		switch b.Get("type").String() {
		case "text":
			parts = append(parts, b.Get("text").String())
		case "tool_use", "server_tool_use":
			a.ToolCalls++
		}
		return true // thinking blocks are not the answer
	})
	a.Text = strings.Join(parts, "")
	return a, nil
}

func anthropicSSE(body []byte) (Assistant, error) {
	var a Assistant
	var text strings.Builder
	err := events(body, func(_, data string) bool {
		if !ValidJSON([]byte(data)) {
			return true
		}
		r := gjson.Parse(data)
		switch r.Get("type").String() {
		case "message_start":
			a.ID = r.Get("message.id").String()
		case "content_block_start":
			switch r.Get("content_block.type").String() {
			case "tool_use", "server_tool_use":
				a.ToolCalls++
			case "text":
				text.WriteString(r.Get("content_block.text").String())
			}
		case "content_block_delta":
			if r.Get("delta.type").String() == "text_delta" {
				text.WriteString(r.Get("delta.text").String())
			}
		case "message_stop":
			return false
		}
		return true
	})
	a.Text = text.String()
	return a, err
}

// ollamaNDJSON reads Ollama's answers: one JSON object, or one per line when
// streaming. Ollama gives no response id.
func ollamaNDJSON(body []byte) (Assistant, error) {
	var a Assistant
	var text strings.Builder
	sc := bufio.NewScanner(bytes.NewReader(body))
	sc.Buffer(make([]byte, 0, 64*1024), len(body)+1)
	valid := 0
	for sc.Scan() {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 || !ValidJSON(line) {
			continue // a line cut off at the end of a capped copy
		}
		valid++
		m := gjson.GetBytes(line, "message")
		text.WriteString(m.Get("content").String())
		a.ToolCalls += len(m.Get("tool_calls").Array())
	}
	a.Text = text.String()
	if valid == 0 && len(bytes.TrimSpace(body)) > 0 {
		return a, errors.New("response holds no JSON object")
	}
	return a, sc.Err()
}

func responsesJSON(body []byte) (Assistant, error) {
	if !ValidJSON(body) {
		return Assistant{}, errors.New("response is not valid JSON")
	}
	return responseObject(gjson.ParseBytes(body)), nil
}

// responseObject reads a response object's output items.
func responseObject(r gjson.Result) Assistant {
	a := Assistant{ID: r.Get("id").String()}
	var parts []string
	r.Get("output").ForEach(func(_, it gjson.Result) bool {
		switch it.Get("type").String() {
		case "message":
			it.Get("content").ForEach(func(_, c gjson.Result) bool {
				if c.Get("type").String() == "output_text" {
					parts = append(parts, c.Get("text").String())
				}
				return true
			})
		case "function_call", "custom_tool_call", "computer_call":
			a.ToolCalls++
		}
		return true
	})
	a.Text = strings.Join(parts, "\n")
	return a
}

func responsesSSE(body []byte) (Assistant, error) {
	var a Assistant
	var text strings.Builder
	var final *Assistant
	err := events(body, func(_, data string) bool {
		if !ValidJSON([]byte(data)) {
			return true
		}
		r := gjson.Parse(data)
		switch r.Get("type").String() {
		case "response.created", "response.in_progress":
			if a.ID == "" {
				a.ID = r.Get("response.id").String()
			}
		case "response.output_text.delta":
			text.WriteString(r.Get("delta").String())
		case "response.output_item.added":
			switch r.Get("item.type").String() {
			case "function_call", "custom_tool_call", "computer_call":
				a.ToolCalls++
			}
		case "response.completed", "response.incomplete":
			f := responseObject(r.Get("response"))
			final = &f
			return false
		}
		return true
	})
	if final != nil && (final.Text != "" || text.Len() == 0) {
		// The completed response is authoritative when the stream got that far.
		if final.ID == "" {
			final.ID = a.ID
		}
		return *final, err
	}
	a.Text = text.String()
	return a, err
}

// events calls fn for each server-sent event in body, with its event name and
// its data lines joined by newlines, until fn returns false. An event cut off
// at the end of a truncated body is still delivered; fn skips it if its data
// does not parse.
func events(body []byte, fn func(event, data string) bool) error {
	sc := bufio.NewScanner(bytes.NewReader(body))
	sc.Buffer(make([]byte, 0, 64*1024), len(body)+1)
	var name string
	var data []string
	dispatch := func() bool {
		if len(data) == 0 {
			name = ""
			return true
		}
		ok := fn(name, strings.Join(data, "\n"))
		name, data = "", data[:0]
		return ok
	}
	for sc.Scan() {
		line := strings.TrimSuffix(sc.Text(), "\r")
		switch {
		case line == "":
			if !dispatch() {
				return nil
			}
		case strings.HasPrefix(line, ":"):
			// comment / keep-alive
		default:
			field, value, _ := strings.Cut(line, ":")
			value = strings.TrimPrefix(value, " ")
			switch field {
			case "event":
				name = value
			case "data":
				data = append(data, value)
			}
		}
	}
	dispatch()
	return sc.Err()
}
