// Package extract owns the response side of each LLM wire format: decoding a
// JSON or streamed body into the assistant's turn, stripping any injected
// memory block, and the rule-based extractor that turns what a user says into
// standalone facts with stable keys. It writes nothing.
package extract

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"mime"
	"strings"

	"github.com/tidwall/gjson"

	"github.com/caddy-memory/memory/inject"
)

// Assistant is the assistant's side of one turn.
type Assistant struct {
	Text      string
	ID        string // the provider's response id, used as a reference
	ToolCalls int
}

// ErrUnknownFormat means the body is in a format this dialect does not decode.
var ErrUnknownFormat = errors.New("unknown response format")

// Decode reads the assistant turn from a response body of the named dialect.
// A stream cut short decodes to what arrived.
func Decode(dialect, contentType string, body []byte) (Assistant, error) {
	mt, _, _ := mime.ParseMediaType(contentType)
	var a Assistant
	var err error
	switch dialect {
	case inject.OpenAIChat{}.Name():
		switch mt {
		case "application/json":
			a, err = openAIChatJSON(body)
		case "text/event-stream":
			a, err = openAIChatSSE(body)
		default:
			return a, fmt.Errorf("%w: %s", ErrUnknownFormat, mt)
		}
	default:
		return a, fmt.Errorf("%w: dialect %q", ErrUnknownFormat, dialect)
	}
	a.Text = strings.TrimSpace(inject.Strip(a.Text))
	return a, err
}

func openAIChatJSON(body []byte) (Assistant, error) {
	if !gjson.ValidBytes(body) {
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
		if !gjson.Valid(data) {
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
