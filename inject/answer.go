package inject

import (
	"bytes"
	"errors"
	"fmt"
	"mime"
	"strings"

	"github.com/caddy-memory/memory/internal/block"
)

// The answer side every format shares: decoding an answer, whole or
// streamed, into the assistant's turn, for learning. Each Dialect gives
// its decoders by media type.

// Assistant is the assistant's side of one turn.
type Assistant struct {
	Text      string
	ID        string // the provider's response id, used as a reference
	ToolCalls int
}

// ErrUnknownFormat means the body is in a format this dialect does not decode.
var ErrUnknownFormat = errors.New("unknown response format")

// decoder reads an answer of one dialect and media type.
type decoder func(body []byte) (Assistant, error)

// jsonOrSSE is the decoder of a format that answers in JSON, or in
// server-sent events when streaming.
func jsonOrSSE(mediaType string, whole, stream decoder) decoder {
	switch mediaType {
	case "application/json":
		return whole
	case "text/event-stream":
		return stream
	}
	return nil
}

// Decodes reports whether Decode reads answers of this media type for
// some dialect.
func Decodes(contentType string) bool {
	mt, _, _ := mime.ParseMediaType(contentType)
	for _, d := range Dialects {
		if d.decoder(mt) != nil {
			return true
		}
	}
	return false
}

// Decode reads the assistant turn from an answer of dialect d (nil: of no
// dialect known, which decodes nothing). A stream cut short decodes to
// what arrived. Injected memory blocks the model quoted back are removed
// from the text.
func Decode(d Dialect, contentType string, body []byte) (Assistant, error) {
	mt, _, _ := mime.ParseMediaType(contentType)
	if d == nil {
		return Assistant{}, fmt.Errorf("%w: %s of no known dialect", ErrUnknownFormat, mt)
	}
	dec := d.decoder(strings.ToLower(mt))
	if dec == nil {
		return Assistant{}, fmt.Errorf("%w: %s for %q", ErrUnknownFormat, mt, d.Name())
	}
	a, err := dec(body)
	a.Text = strings.TrimSpace(block.Strip(a.Text))
	return a, err
}

// events calls fn for each server-sent event in body, with its event name and
// its data lines joined by newlines, until fn returns false. An event cut off
// at the end of a truncated body is still delivered; fn skips it if its data
// does not parse.
func events(body []byte, fn func(event, data string) bool) error {
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
	// The body is whole in memory: its lines are sliced out of it, as
	// bufio.ScanLines would cut them (a final line without its newline
	// included), without a scanner's buffer.
	for len(body) > 0 {
		line := body
		if i := bytes.IndexByte(body, '\n'); i >= 0 {
			line, body = body[:i], body[i+1:]
		} else {
			body = nil
		}
		// A carriage return before the newline goes, as ScanLines drops
		// it, and then one more, as this reader always did.
		line = bytes.TrimSuffix(bytes.TrimSuffix(line, []byte("\r")), []byte("\r"))
		switch {
		case len(line) == 0:
			if !dispatch() {
				return nil
			}
		case line[0] == ':':
			// comment / keep-alive
		default:
			field, value, _ := bytes.Cut(line, []byte(":"))
			value = bytes.TrimPrefix(value, []byte(" "))
			switch string(field) {
			case "event":
				name = string(value)
			case "data":
				data = append(data, string(value))
			}
		}
	}
	dispatch()
	return nil
}
