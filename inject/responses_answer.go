package inject

import (
	"encoding/json"
	"errors"
	"strconv"
	"strings"

	"github.com/tidwall/gjson"
)

// The answers of OpenAI responses: decoded into the assistant's turn for learning,
// and edited for the client in tool rounds.

// decoder reads a JSON response or its SSE events.
func (responses) decoder(mediaType string) decoder {
	return jsonOrSSE(mediaType, responsesJSON, responsesSSE)
}

// editor reads the answer as its media type frames it.
func (responses) editor(a *answer, f framing) (dialectEditor, framing) {
	return &responsesEditor{a: a}, f
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

// responsesEditor edits OpenAI responses: a JSON response whose output
// items are messages and function calls, or the SSE events of one, which
// name their item by output_index.
type responsesEditor struct {
	a *answer
	// Over the rounds of one stream: the response id the client knows,
	// the output items it has been given (a carried-on stream's last
	// response lists them all), the next sequence number, and where this
	// round's items begin.
	id      string
	items   []any
	seq     int
	offset  int
	resumed bool
}

func (c *responsesEditor) terminal(ev []byte) bool {
	switch gjson.GetBytes(ev, "type").String() {
	case "response.completed", "response.incomplete", "response.failed":
		return true
	}
	return false
}

func (c *responsesEditor) resume(prev dialectEditor) {
	if p, ok := prev.(*responsesEditor); ok {
		c.id, c.items, c.seq, c.offset, c.resumed = p.id, p.items, p.seq, len(p.items), true
	}
}

func (c *responsesEditor) answer() *answer { return c.a }

// keptID is the response's id as the client knows it.
func (c *responsesEditor) keptID() string { return c.id }

func (c *responsesEditor) observe(ev []byte) State {
	r := gjson.ParseBytes(ev)
	state := Undecided
	item := func(index int, it gjson.Result) {
		if it.Get("type").String() != "function_call" {
			return
		}
		cl := c.a.call(index)
		cl.id = it.Get("call_id").String()
		cl.named(it.Get("name").String())
		if args := it.Get("arguments").String(); args != "" && cl.args.Len() == 0 {
			cl.add(args)
		}
		state = Held
	}
	whole := func(resp gjson.Result) {
		if c.id == "" {
			c.id = resp.Get("id").String()
		}
		text := false
		resp.Get("output").ForEach(func(i, it gjson.Result) bool {
			item(int(i.Int()), it)
			if it.Get("type").String() == "message" {
				it.Get("content").ForEach(func(_, p gjson.Result) bool {
					if t := p.Get("text").String(); t != "" && p.Get("type").String() == "output_text" {
						text = true
						if c.a.text.Len() == 0 {
							c.a.say(t)
						}
					}
					return true
				})
			}
			return true
		})
		c.a.usage = Usage{int(resp.Get("usage.input_tokens").Int()), int(resp.Get("usage.output_tokens").Int())}
		if text && len(c.a.calls) == 0 {
			state = Final
		}
	}
	switch t := r.Get("type").String(); {
	case t == "" && r.Get("object").String() == "response":
		whole(r)
	case t == "response.created":
		if c.id == "" {
			c.id = r.Get("response.id").String()
		}
	case t == "response.output_item.added":
		item(int(r.Get("output_index").Int()), r.Get("item"))
	case t == "response.function_call_arguments.delta":
		c.a.call(int(r.Get("output_index").Int())).add(r.Get("delta").String())
	case t == "response.output_text.delta":
		if d := r.Get("delta").String(); d != "" {
			c.a.say(d)
			state = Final
		}
	case t == "response.completed" || t == "response.incomplete":
		resp := r.Get("response")
		c.a.usage = Usage{int(resp.Get("usage.input_tokens").Int()), int(resp.Get("usage.output_tokens").Int())}
	}
	return state
}

func (c *responsesEditor) edit(ev []byte) []byte {
	return editJSON(ev, func(v map[string]any) bool {
		response := func(resp map[string]any) {
			if resp == nil {
				return
			}
			var kept []any
			for i, it := range list(resp["output"]) {
				if str(obj(it)["type"]) == "function_call" && c.a.memory(i) {
					continue
				}
				kept = append(kept, it)
			}
			if c.resumed {
				kept = append(append([]any{}, c.items[:c.offset]...), kept...)
				resp["id"] = c.id
			}
			if resp["output"] != nil || c.resumed {
				resp["output"] = kept
			}
			addUsage(obj(resp["usage"]), "input_tokens", "output_tokens", c.a.prior)
		}
		if str(v["type"]) == "" && str(v["object"]) == "response" {
			response(v)
			return true
		}
		switch str(v["type"]) {
		case "response.created", "response.in_progress":
			if c.resumed {
				return false // the client's response has started
			}
			if c.id == "" {
				c.id = str(obj(v["response"])["id"])
			}
		}
		if x, ok := v["output_index"]; ok {
			index := num(x)
			if c.a.memory(index) {
				return false
			}
			v["output_index"] = json.Number(strconv.Itoa(c.offset + index - c.a.shift(index)))
			if str(v["type"]) == "response.output_item.done" {
				c.items = append(c.items, v["item"])
				if t := str(obj(v["item"])["type"]); t != "message" && t != "function_call" {
					// Kept for the rounds after; a message's text and a
					// call's arguments are counted as they were read.
					c.a.read += len(ev)
				}
			}
		}
		if _, ok := v["sequence_number"]; ok {
			// Numbered on over the rounds, gaps closed.
			v["sequence_number"] = json.Number(strconv.Itoa(c.seq))
			c.seq++
		}
		switch str(v["type"]) {
		case "response.completed", "response.incomplete", "response.failed":
			response(obj(v["response"]))
		}
		return true
	})
}
