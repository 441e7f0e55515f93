package extract

import (
	"encoding/json"
	"strconv"

	"github.com/tidwall/gjson"
)

// responsesEditor edits OpenAI responses: a JSON response whose output
// items are messages and function calls, or the SSE events of one, which
// name their item by output_index.
type responsesEditor struct{ a *answer }

func (c *responsesEditor) answer() *answer { return c.a }

func (c *responsesEditor) observe(ev []byte) State {
	r := gjson.ParseBytes(ev)
	state := Undecided
	item := func(index int, it gjson.Result) {
		if it.Get("type").String() != "function_call" {
			return
		}
		cl := c.a.call(index)
		cl.id, cl.name = it.Get("call_id").String(), it.Get("name").String()
		if args := it.Get("arguments").String(); args != "" && cl.args.Len() == 0 {
			cl.args.WriteString(args)
		}
		state = Held
	}
	whole := func(resp gjson.Result) {
		text := false
		resp.Get("output").ForEach(func(i, it gjson.Result) bool {
			item(int(i.Int()), it)
			if it.Get("type").String() == "message" {
				it.Get("content").ForEach(func(_, p gjson.Result) bool {
					if t := p.Get("text").String(); t != "" && p.Get("type").String() == "output_text" {
						text = true
						if c.a.text.Len() == 0 {
							c.a.text.WriteString(t)
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
	case t == "response.output_item.added":
		item(int(r.Get("output_index").Int()), r.Get("item"))
	case t == "response.function_call_arguments.delta":
		c.a.call(int(r.Get("output_index").Int())).args.WriteString(r.Get("delta").String())
	case t == "response.output_text.delta":
		if d := r.Get("delta").String(); d != "" {
			c.a.text.WriteString(d)
			state = Final
		}
	case t == "response.completed" || t == "response.incomplete":
		resp := r.Get("response")
		c.a.usage = Usage{int(resp.Get("usage.input_tokens").Int()), int(resp.Get("usage.output_tokens").Int())}
	}
	return state
}

// shift is how many of the proxy's calls come before output index.
func (c *responsesEditor) shift(index int) int {
	n := 0
	for _, cl := range c.a.calls {
		if cl.index < index && c.a.isMemory(cl.name) {
			n++
		}
	}
	return n
}

func (c *responsesEditor) edit(ev []byte) []byte {
	return editJSON(ev, func(v map[string]any) bool {
		response := func(resp map[string]any) {
			var kept []any
			for i, it := range list(resp["output"]) {
				if str(obj(it)["type"]) == "function_call" && c.a.memory(i) {
					continue
				}
				kept = append(kept, it)
			}
			if resp["output"] != nil {
				resp["output"] = kept
			}
			addUsage(obj(resp["usage"]), "input_tokens", "output_tokens", c.a.prior)
		}
		if str(v["type"]) == "" && str(v["object"]) == "response" {
			response(v)
			return true
		}
		if x, ok := v["output_index"]; ok {
			index := num(x)
			if c.a.memory(index) {
				return false
			}
			v["output_index"] = json.Number(strconv.Itoa(index - c.shift(index)))
		}
		switch str(v["type"]) {
		case "response.completed", "response.incomplete":
			response(obj(v["response"]))
		}
		return true
	})
}
