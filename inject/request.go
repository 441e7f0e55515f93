package inject

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/tidwall/gjson"

	"github.com/caddy-memory/memory/internal/block"
	"github.com/caddy-memory/memory/internal/norm"
)

// Placement says where a memory block goes in a chat request.
type Placement string

// Placements.
const (
	// CacheSafe puts the block just before the latest user turn, so every
	// byte before it stays as the client sent it and provider prompt caches
	// keep hitting.
	CacheSafe Placement = "cache_safe"
	// System puts the block in the leading system message.
	System Placement = "system"
	// User prepends the block to the latest user turn, for models and
	// templates that reject system messages in the middle of a conversation.
	User Placement = "user"
)

// ParsePlacement validates a placement name.
func ParsePlacement(s string) (Placement, error) {
	switch p := Placement(s); p {
	case CacheSafe, System, User:
		return p, nil
	}
	return "", fmt.Errorf("unknown placement %q: use cache_safe, system or user", s)
}

// ErrNotJSON and ErrNotChat mean the body is not something this dialect
// rewrites; the caller passes it through untouched.
var (
	ErrNotJSON = errors.New("body is not valid JSON")
	ErrNotChat = errors.New("body is not a chat request")
)

// Message is one message of a parsed request.
type Message struct {
	Role string
	// Text is the message's text content (text parts joined by newlines);
	// images, audio and other parts are not text and are left out.
	Text string
}

// Request is a parsed chat request. Its body is never modified; Inject
// returns a new body.
type Request struct {
	Dialect string
	Model   string
	Stream  bool
	// Messages are the conversation's messages with roles normalised to
	// system, developer, user, assistant and tool (tool results, whatever
	// the format calls them).
	Messages []Message
	// System is instructions given outside the messages (Anthropic's
	// "system", the responses API's "instructions").
	System string
	// Thread is an id the request itself gives its conversation: the
	// responses API's "conversation", or "previous_response_id", which
	// names the response this request continues.
	Thread       string
	ThreadIsPrev bool // Thread is a previous response id

	body   []byte
	inject func(block string, p Placement) ([]byte, error)
}

// LatestUser is the index of the latest user message, or -1.
func (r *Request) LatestUser() int {
	for i := len(r.Messages) - 1; i >= 0; i-- {
		if r.Messages[i].Role == "user" {
			return i
		}
	}
	return -1
}

// Query is the text to search memories with: the latest user turn.
func (r *Request) Query() string {
	if i := r.LatestUser(); i >= 0 {
		return block.Strip(r.Messages[i].Text)
	}
	return ""
}

// NewTurn reports whether the latest user message is new in this request, that
// is, no assistant message follows it. Clients resend the whole history every
// time; only a new user turn holds facts not yet extracted.
func (r *Request) NewTurn() bool {
	i := r.LatestUser()
	if i < 0 {
		return false
	}
	for _, m := range r.Messages[i+1:] {
		if m.Role == "assistant" {
			return false
		}
	}
	return true
}

// Before returns the texts of up to n messages before the latest user
// message, oldest first: what the user's words answer.
func (r *Request) Before(n int) []string {
	i := r.LatestUser()
	var out []string
	for j := max(0, i-n); j >= 0 && j < i; j++ {
		if t := block.Strip(r.Messages[j].Text); strings.TrimSpace(t) != "" {
			out = append(out, t)
		}
	}
	return out
}

// EarlierUser is the end (up to n bytes) of the user message before the
// latest one, "" for none: what a correction in the latest ("Sorry, I
// meant Munich") corrects is what that message said last.
func (r *Request) EarlierUser(n int) string {
	for j := r.LatestUser() - 1; j >= 0; j-- {
		if r.Messages[j].Role != "user" {
			continue
		}
		t := block.Strip(r.Messages[j].Text)
		if len(t) > n {
			t = t[len(t)-n:]
			for t != "" && !utf8.RuneStart(t[0]) {
				t = t[1:]
			}
		}
		return t
	}
	return ""
}

// EarlierUsers returns the texts of the last n user messages before the
// latest, oldest first (as sent: a learner that reads them strips what it
// must).
func (r *Request) EarlierUsers(n int) []string {
	var out []string
	for j := r.LatestUser() - 1; j >= 0 && len(out) < n; j-- {
		if r.Messages[j].Role == "user" {
			out = append(out, r.Messages[j].Text)
		}
	}
	slices.Reverse(out)
	return out
}

// UserTurns counts the user messages: the position of the latest turn in the
// conversation.
func (r *Request) UserTurns() int {
	n := 0
	for _, m := range r.Messages {
		if m.Role == "user" {
			n++
		}
	}
	return n
}

// Conversation is a stable id for the conversation this request continues,
// derived from its first system and first user message: clients resend them
// unchanged every turn, so every request of one conversation gets the same id
// without the client sending one.
func (r *Request) Conversation() string {
	sys, user := block.Strip(r.System), ""
	for _, m := range r.Messages {
		switch {
		case sys == "" && (m.Role == "system" || m.Role == "developer"):
			sys = block.Strip(m.Text)
		case user == "" && m.Role == "user":
			user = block.Strip(m.Text)
		}
	}
	if user == "" {
		return ""
	}
	return "c-" + norm.Short(r.Dialect+"\x00"+sys+"\x00"+user, 8)
}

// Inject returns a copy of the body with block placed per p.
func (r *Request) Inject(block string, p Placement) ([]byte, error) {
	if block == "" {
		return r.body, nil
	}
	return r.inject(block, p)
}

// splice returns body with ins inserted at offset at.
func splice(body []byte, at int, ins ...[]byte) []byte {
	n := len(body)
	for _, b := range ins {
		n += len(b)
	}
	out := make([]byte, 0, n)
	out = append(out, body[:at]...)
	for _, b := range ins {
		out = append(out, b...)
	}
	return append(out, body[at:]...)
}

// replace returns body with body[from:to] replaced by with.
func replace(body []byte, from, to int, with []byte) []byte {
	out := make([]byte, 0, len(body)-(to-from)+len(with))
	out = append(out, body[:from]...)
	out = append(out, with...)
	return append(out, body[to:]...)
}

// addField adds "name": value as the first field of the body's top-level object.
func addField(body []byte, name string, value []byte) ([]byte, error) {
	at := bytes.IndexByte(body, '{')
	if at < 0 {
		return nil, fmt.Errorf("body is not an object")
	}
	field := append(append(jsonString(name), ':'), value...)
	return splice(body, at+1, field, []byte(",")), nil
}

// jsonString encodes s as a JSON string without HTML escaping, so the block
// reads the same in the body as it does in logs.
func jsonString(s string) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s)
	return bytes.TrimRight(b.Bytes(), "\n")
}

// joinText joins non-empty text parts with newlines.
func joinText(parts []string) string {
	var kept []string
	for _, p := range parts {
		if strings.TrimSpace(p) != "" {
			kept = append(kept, p)
		}
	}
	return strings.Join(kept, "\n")
}

// parseObject validates body and returns its top-level object.
func parseObject(body []byte) (gjson.Result, error) {
	if !ValidJSON(body) {
		return gjson.Result{}, ErrNotJSON
	}
	root := gjson.ParseBytes(body)
	if !root.IsObject() {
		return gjson.Result{}, ErrNotChat
	}
	return root, nil
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

// contentText reads a content value: a string, or an array of parts of which
// the text parts count (images, audio, files and tool results do not).
func contentText(c gjson.Result) string {
	if c.Type == gjson.String {
		return c.String()
	}
	if !c.IsArray() {
		return ""
	}
	var parts []string
	c.ForEach(func(_, p gjson.Result) bool {
		switch p.Get("type").String() {
		case "text", "input_text", "output_text":
			parts = append(parts, p.Get("text").String())
		}
		return true
	})
	return joinText(parts)
}

// appendToContent adds block after a string content, or as a last part of an
// array content.
func appendToContent(body []byte, c gjson.Result, block string, part func(string) []byte) ([]byte, bool) {
	if !spanOK(body, c) {
		return nil, false
	}
	switch {
	case c.Type == gjson.String:
		return replace(body, c.Index, c.Index+len(c.Raw), jsonString(c.String()+"\n\n"+block)), true
	case c.IsArray():
		end := c.Index + len(c.Raw) - 1 // the closing ']'
		if len(c.Array()) == 0 {
			return splice(body, end, part(block)), true
		}
		return splice(body, end, []byte(","), part(block)), true
	}
	return nil, false
}

// prependToContent puts block before a string content, or as a first part
// of an array content.
func prependToContent(body []byte, c gjson.Result, block string, part func(string) []byte) ([]byte, bool) {
	if !spanOK(body, c) {
		return nil, false
	}
	switch {
	case c.Type == gjson.String:
		return replace(body, c.Index, c.Index+len(c.Raw), jsonString(block+"\n\n"+c.String())), true
	case c.IsArray():
		return insertPart(body, c, 0, part(block)), true
	}
	return nil, false
}

// insertPart inserts a part into the array arr before its element at, or at
// the end when at is past the last element.
func insertPart(body []byte, arr gjson.Result, at int, part []byte) []byte {
	elems := arr.Array()
	switch {
	case len(elems) == 0:
		return splice(body, arr.Index+1, part)
	case at < len(elems):
		return splice(body, elementStart(arr, at), part, []byte(","))
	default:
		return splice(body, arr.Index+len(arr.Raw)-1, []byte(","), part)
	}
}

// elementStart is the offset of element i of an array value.
func elementStart(arr gjson.Result, i int) int {
	at, n := -1, 0
	arr.ForEach(func(_, v gjson.Result) bool {
		if n == i {
			at = v.Index
			return false
		}
		n++
		return true
	})
	return at
}

// spanOK checks that a value's recorded offset really points at its bytes; we
// only ever splice at offsets we have verified.
func spanOK(body []byte, v gjson.Result) bool {
	return v.Index > 0 && v.Index+len(v.Raw) <= len(body) && string(body[v.Index:v.Index+len(v.Raw)]) == v.Raw
}
