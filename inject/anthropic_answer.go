package inject

import (
	"encoding/json"
	"errors"
	"strconv"
	"strings"

	"github.com/tidwall/gjson"
)

// The answers of Anthropic messages: decoded into the assistant's turn for learning,
// and edited for the client in tool rounds.

// decoder reads a JSON message or its SSE events.
func (anthropic) decoder(mediaType string) decoder {
	return jsonOrSSE(mediaType, anthropicJSON, anthropicSSE)
}

// editor reads the answer as its media type frames it.
func (anthropic) editor(a *answer, f framing) (dialectEditor, framing) {
	return &anthropicEditor{a: a}, f
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

// anthropicEditor edits Anthropic messages: a JSON message whose content
// holds text and tool_use blocks, or the SSE events of one, whose blocks
// are numbered by index.
type anthropicEditor struct {
	a *answer
	// blocks counts the content blocks the client has been given, over
	// the rounds of one stream; offset is where this round's begin.
	blocks, offset int
	resumed        bool
	// told is the input the client's message_start said.
	told int
}

func (c *anthropicEditor) terminal(ev []byte) bool {
	switch gjson.GetBytes(ev, "type").String() {
	case "message_delta", "message_stop":
		return true
	}
	return false
}

func (c *anthropicEditor) resume(prev dialectEditor) {
	if p, ok := prev.(*anthropicEditor); ok {
		c.blocks, c.offset, c.resumed, c.told = p.blocks, p.blocks, true, p.told
	}
}

func (c *anthropicEditor) answer() *answer { return c.a }

func (c *anthropicEditor) observe(ev []byte) State {
	r := gjson.ParseBytes(ev)
	state := Undecided
	block := func(index int, b gjson.Result) {
		switch b.Get("type").String() {
		case "text":
			if t := b.Get("text").String(); t != "" {
				c.a.say(t)
				state = Final
			}
		case "tool_use":
			cl := c.a.call(index)
			cl.id = b.Get("id").String()
			cl.named(b.Get("name").String())
			if in := b.Get("input"); in.IsObject() && len(in.Map()) > 0 {
				cl.add(in.Raw)
			}
			state = Held
		}
	}
	switch r.Get("type").String() {
	case "message": // a whole answer
		r.Get("content").ForEach(func(i, b gjson.Result) bool {
			block(int(i.Int()), b)
			return true
		})
		c.a.usage = Usage{int(r.Get("usage.input_tokens").Int()), int(r.Get("usage.output_tokens").Int())}
		if state == Final && len(c.a.calls) > 0 {
			state = Held // text beside calls: decided once read whole
		}
	case "message_start":
		c.a.usage.Input = int(r.Get("message.usage.input_tokens").Int())
	case "content_block_start":
		block(int(r.Get("index").Int()), r.Get("content_block"))
	case "content_block_delta":
		d := r.Get("delta")
		switch d.Get("type").String() {
		case "text_delta":
			if t := d.Get("text").String(); t != "" {
				c.a.say(t)
				state = Final
			}
		case "input_json_delta":
			c.a.call(int(r.Get("index").Int())).add(d.Get("partial_json").String())
		}
	case "message_delta":
		c.a.usage.Output = int(r.Get("usage.output_tokens").Int())
	}
	return state
}

func (c *anthropicEditor) edit(ev []byte) []byte {
	return editJSON(ev, func(v map[string]any) bool {
		prior := c.a.prior
		switch str(v["type"]) {
		case "message":
			var kept []any
			for i, b := range list(v["content"]) {
				if str(obj(b)["type"]) == "tool_use" && c.a.memory(i) {
					continue
				}
				kept = append(kept, b)
			}
			v["content"] = kept
			c.fixStop(v)
			addUsage(obj(v["usage"]), "input_tokens", "output_tokens", prior)
		case "message_start":
			if c.resumed {
				return false // the client's message has started
			}
			u := obj(obj(v["message"])["usage"])
			addUsage(u, "input_tokens", "output_tokens", Usage{Input: prior.Input})
			c.told = num(u["input_tokens"])
		case "content_block_start", "content_block_delta", "content_block_stop":
			index := num(v["index"])
			if c.a.memory(index) {
				return false
			}
			if str(v["type"]) == "content_block_start" {
				c.blocks++
			}
			v["index"] = json.Number(strconv.Itoa(c.offset + index - c.a.shift(index)))
		case "message_delta":
			c.fixStop(obj(v["delta"]))
			u := obj(v["usage"])
			add := Usage{Output: prior.Output}
			_, said := u["input_tokens"]
			if said {
				add.Input = prior.Input
			}
			addUsage(u, "input_tokens", "output_tokens", add)
			if u != nil && !said && prior.Input+c.a.usage.Input != c.told {
				// The client's message_start did not say every round's
				// input: rounds came after it, or this round's was dropped.
				u["input_tokens"] = json.Number(strconv.Itoa(prior.Input + c.a.usage.Input))
			}
		}
		return true
	})
}

// fixStop makes a stop reason of tool_use end_turn when no call is left.
func (c *anthropicEditor) fixStop(m map[string]any) {
	if m != nil && str(m["stop_reason"]) == "tool_use" && c.a.clientCalls() == 0 {
		m["stop_reason"] = "end_turn"
	}
}
