package inject

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
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
	Dialect  string
	Model    string
	Stream   bool
	Messages []Message

	body   []byte
	inject func(block string, p Placement) ([]byte, error)
}

// Body is the request body as received.
func (r *Request) Body() []byte { return r.body }

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
		return Strip(r.Messages[i].Text)
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
	var sys, user string
	for _, m := range r.Messages {
		switch {
		case sys == "" && (m.Role == "system" || m.Role == "developer"):
			sys = Strip(m.Text)
		case user == "" && m.Role == "user":
			user = Strip(m.Text)
		}
	}
	if user == "" {
		return ""
	}
	h := sha256.Sum256([]byte(r.Dialect + "\x00" + sys + "\x00" + user))
	return "c-" + hex.EncodeToString(h[:8])
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
