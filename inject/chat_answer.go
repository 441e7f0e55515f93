package inject

import (
	"encoding/json"
	"errors"
	"strconv"
	"strings"

	"github.com/tidwall/gjson"
)

// The answers of OpenAI chat completions: decoded into the assistant's turn for learning,
// and edited for the client in tool rounds.

// decoder reads a JSON completion or its SSE chunks.
func (openAIChat) decoder(mediaType string) decoder {
	return jsonOrSSE(mediaType, openAIChatJSON, openAIChatSSE)
}

// editor reads the answer as its media type frames it.
func (openAIChat) editor(a *answer, f framing) (dialectEditor, framing) {
	return &chatEditor{a: a}, f
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

// chatEditor edits OpenAI chat completions: a JSON completion, or SSE
// chunks whose choices[0].delta carry text and tool calls by index.
type chatEditor struct {
	a *answer
	// id is the completion's id as the client knows it: a stream carried
	// on keeps the first round's (SDKs refuse chunks of another).
	id      string
	resumed bool
}

func (c *chatEditor) terminal(ev []byte) bool {
	r := gjson.ParseBytes(ev)
	if f := r.Get("choices.0.finish_reason"); f.Exists() && f.Type != gjson.Null {
		return true
	}
	return len(r.Get("choices").Array()) == 0 && r.Get("usage").IsObject()
}

func (c *chatEditor) resume(prev dialectEditor) {
	if p, ok := prev.(*chatEditor); ok {
		c.id, c.resumed = p.id, true
	}
}

func (c *chatEditor) answer() *answer { return c.a }

func (c *chatEditor) observe(ev []byte) State {
	r := gjson.ParseBytes(ev)
	if u := r.Get("usage"); u.IsObject() {
		c.a.usage = Usage{int(u.Get("prompt_tokens").Int()), int(u.Get("completion_tokens").Int())}
	}
	state := Undecided
	r.Get("choices").ForEach(func(_, ch gjson.Result) bool {
		if ch.Get("index").Int() != 0 {
			return true // n > 1: the first choice is the one that counts
		}
		m := ch.Get("delta")
		if !m.Exists() {
			m = ch.Get("message")
		}
		if t := m.Get("content").String(); t != "" {
			c.a.say(t)
			state = Final
		}
		m.Get("tool_calls").ForEach(func(i, tc gjson.Result) bool {
			index := int(i.Int())
			if x := tc.Get("index"); x.Exists() {
				index = int(x.Int())
			}
			cl := c.a.call(index)
			if id := tc.Get("id").String(); id != "" {
				cl.id = id
			}
			if n := tc.Get("function.name").String(); n != "" {
				cl.named(n)
			}
			cl.add(tc.Get("function.arguments").String())
			if state == Undecided {
				state = Held
			}
			return true
		})
		return true
	})
	return state
}

func (c *chatEditor) edit(ev []byte) []byte {
	return editJSON(ev, func(v map[string]any) bool {
		if c.id == "" {
			c.id = str(v["id"])
		} else if c.resumed {
			v["id"] = c.id
		}
		addUsage(obj(v["usage"]), "prompt_tokens", "completion_tokens", c.a.prior)
		keep := true
		for _, ch := range list(v["choices"]) {
			ch := obj(ch)
			if num(ch["index"]) != 0 {
				continue
			}
			m, chunk := obj(ch["delta"]), true
			if m == nil {
				m, chunk = obj(ch["message"]), false
			}
			if calls := list(m["tool_calls"]); calls != nil {
				var kept []any
				for i, tc := range calls {
					tc := obj(tc)
					index := i
					if x, ok := tc["index"]; ok {
						index = num(x)
					}
					if c.a.memory(index) {
						continue
					}
					if _, ok := tc["index"]; ok {
						tc["index"] = json.Number(strconv.Itoa(c.a.kept(index)))
					}
					kept = append(kept, tc)
				}
				if len(kept) > 0 {
					m["tool_calls"] = kept
				} else {
					delete(m, "tool_calls")
					// A chunk that only carried the proxy's calls goes.
					keep = !chunk || len(m) > 0 || ch["finish_reason"] != nil || v["usage"] != nil
				}
			}
			if str(ch["finish_reason"]) == "tool_calls" && c.a.clientCalls() == 0 {
				ch["finish_reason"] = "stop"
			}
		}
		return keep
	})
}
