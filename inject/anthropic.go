package inject

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/tidwall/gjson"
)

// anthropic is the Anthropic messages format: a top-level "system" (a string
// or text blocks, possibly with cache_control), and "messages" of user and
// assistant turns whose content is a string or blocks (text, image,
// tool_use, tool_result, ...). There is no system role inside messages.
type anthropic struct{}

// NameAnthropic is Anthropic's name in configuration and in jobs.
const NameAnthropic = "anthropic"

// Anthropic is the Anthropic messages format (POST .../v1/messages).
var Anthropic Dialect = anthropic{}

func (anthropic) Name() string { return NameAnthropic }

func (anthropic) ServesPath(path string) bool { return strings.HasSuffix(path, "/v1/messages") }

// toolDef is {"name", "description", "input_schema"}.
func (anthropic) toolDef(t Tool) string {
	return `{"name":` + string(jsonString(t.Name)) + `,"description":` + string(jsonString(t.Description)) + `,"input_schema":` + t.Parameters + `}`
}

// appendRound adds the assistant's turn (its text and tool_use blocks),
// then a user turn of tool_result blocks.
func (anthropic) appendRound(body []byte, text string, calls []ToolCall, results []string) ([]byte, error) {
	var blocks, outs []string
	if text != "" {
		blocks = append(blocks, string(textPart(text)))
	}
	for i, c := range calls {
		blocks = append(blocks, `{"type":"tool_use","id":`+string(jsonString(c.ID))+`,"name":`+string(jsonString(c.Name))+`,"input":`+object(c.Arguments)+`}`)
		outs = append(outs, `{"type":"tool_result","tool_use_id":`+string(jsonString(c.ID))+`,"content":`+string(jsonString(results[i]))+`}`)
	}
	items := []string{`{"role":"assistant","content":[` + strings.Join(blocks, ",") + `]}`, `{"role":"user","content":[` + strings.Join(outs, ",") + `]}`}
	return appendItems(body, "messages", items)
}

func (d anthropic) Parse(body []byte) (*Request, error) {
	root, err := parseObject(body)
	if err != nil {
		return nil, err
	}
	if duplicateKeys(root, "messages", "system") {
		return nil, ErrNotChat
	}
	msgs := root.Get("messages")
	if !msgs.IsArray() || msgs.Index <= 0 {
		return nil, ErrNotChat
	}
	system := root.Get("system")
	r := &Request{
		Dialect: NameAnthropic,
		Model:   root.Get("model").String(),
		Stream:  root.Get("stream").Bool(),
		System:  contentText(system),
		body:    body,
	}
	var contents []gjson.Result
	ok := true
	msgs.ForEach(func(_, m gjson.Result) bool {
		if !m.IsObject() || m.Index <= 0 || duplicateKeys(m, "role", "content") {
			ok = false
			return false
		}
		c := m.Get("content")
		role, text := m.Get("role").String(), contentText(c)
		if role == "user" && text == "" && hasBlock(c, "tool_result") {
			role = "tool" // a user turn that only carries tool results
		}
		r.Messages = append(r.Messages, Message{Role: role, Text: text})
		contents = append(contents, c)
		return true
	})
	if !ok || len(r.Messages) == 0 {
		return nil, ErrNotChat
	}
	r.inject = func(block string, p Placement) ([]byte, error) {
		return d.place(r, system, contents, block, p)
	}
	return r, nil
}

func (anthropic) place(r *Request, system gjson.Result, contents []gjson.Result, block string, p Placement) ([]byte, error) {
	body := r.body
	switch p {
	case System:
		// The system field: appended after what is there, so the client's
		// cache_control blocks stay first and byte-identical.
		if !system.Exists() {
			return addField(body, "system", jsonString(block))
		}
		if system.Type == gjson.Null && spanOK(body, system) {
			return replace(body, system.Index, system.Index+len(system.Raw), jsonString(block)), nil
		}
		if out, ok := appendToContent(body, system, block, textPart); ok {
			return out, nil
		}
		return nil, fmt.Errorf("system is neither a string nor blocks")
	case CacheSafe, User:
		i := r.LatestUser()
		if i < 0 {
			return nil, fmt.Errorf("no user message to place memories in")
		}
		c := contents[i]
		if !spanOK(body, c) {
			return nil, fmt.Errorf("content offset mismatch")
		}
		if c.Type == gjson.String {
			if p == User {
				return replace(body, c.Index, c.Index+len(c.Raw), jsonString(block+"\n\n"+c.String())), nil
			}
			// Its own block, ahead of the user's words.
			blocks := append(append(append([]byte{'['}, textPart(block)...), ','), textPart(c.String())...)
			return replace(body, c.Index, c.Index+len(c.Raw), append(blocks, ']')), nil
		}
		if c.IsArray() {
			// Tool results must lead a user turn; the block goes after them.
			return insertPart(body, c, leadingToolResults(c), textPart(block)), nil
		}
		return nil, fmt.Errorf("latest user message has no string or block content")
	}
	return nil, fmt.Errorf("unknown placement %q", p)
}

// hasBlock reports whether a content array holds a block of type typ.
func hasBlock(c gjson.Result, typ string) bool {
	found := false
	c.ForEach(func(_, b gjson.Result) bool {
		found = b.Get("type").String() == typ
		return !found
	})
	return found
}

// leadingToolResults counts the tool_result blocks at the start of a content array.
func leadingToolResults(c gjson.Result) int {
	n := 0
	c.ForEach(func(_, b gjson.Result) bool {
		if b.Get("type").String() != "tool_result" {
			return false
		}
		n++
		return true
	})
	return n
}

func (anthropic) turns() turns { return anthropicTurns }

// refusal is Anthropic's {"type": "error", "error": {"type":
// "invalid_request_error", "message": "prompt is too long: 208310 tokens >
// 200000 maximum"}}, or its "input length and `max_tokens` exceed context
// limit: 178959 + 64000 > 200000, ...". The limit is the context's, shared
// with the answer's room as for the other formats (the cut leaves
// max_tokens out of it); when max_tokens alone takes it all, no cut helps.
func (anthropic) refusal(body []byte) (int, bool) {
	e := gjson.GetBytes(body, "error")
	msg := e.Get("message").String()
	if e.Get("type").String() != "invalid_request_error" {
		return 0, false
	}
	if strings.HasPrefix(msg, "prompt is too long") {
		return limitIn(msg), true
	}
	if m := inputAndMaxTokens.FindStringSubmatch(msg); m != nil {
		room, _ := strconv.Atoi(m[1])
		limit, _ := strconv.Atoi(m[2])
		if room <= 0 || limit <= room {
			return 0, false
		}
		return limit, true
	}
	return 0, false
}

var inputAndMaxTokens = regexp.MustCompile(`^input length and ` + "`max_tokens`" + ` exceed context limit: \d+ \+ (\d{1,9}) > (\d{1,9})\b`)
