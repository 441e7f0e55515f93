package inject

import (
	"encoding/json"
	"strconv"

	"github.com/tidwall/gjson"
)

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
			c.a.text.WriteString(t)
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
				cl.name = n
			}
			cl.args.WriteString(tc.Get("function.arguments").String())
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

// addUsage adds prior to a usage object's input and output fields (and
// total_tokens, when it has one), touching only the fields it adds to.
func addUsage(u map[string]any, input, output string, prior Usage) {
	if u == nil {
		return
	}
	for _, f := range []struct {
		name string
		n    int
	}{{input, prior.Input}, {output, prior.Output}, {"total_tokens", prior.Input + prior.Output}} {
		if _, ok := u[f.name]; f.n != 0 && (ok || f.name != "total_tokens") {
			u[f.name] = json.Number(strconv.Itoa(num(u[f.name]) + f.n))
		}
	}
}

// ollamaEditor edits Ollama's chat answers: one JSON object, or one per
// line, whose message carries text and whole tool calls; the last says
// done, with the token counts.
type ollamaEditor struct {
	a     *answer
	calls int // calls seen so far: Ollama's have no index
	// edited counts the calls already edited, line by line, to find each
	// call's index again.
	edited int
}

func (o *ollamaEditor) answer() *answer { return o.a }

func (o *ollamaEditor) terminal(ev []byte) bool { return gjson.GetBytes(ev, "done").Bool() }

// resume has nothing to carry: Ollama's lines are not numbered.
func (o *ollamaEditor) resume(dialectEditor) {}

func (o *ollamaEditor) observe(ev []byte) State {
	r := gjson.ParseBytes(ev)
	if r.Get("done").Bool() {
		o.a.usage = Usage{int(r.Get("prompt_eval_count").Int()), int(r.Get("eval_count").Int())}
	}
	state := Undecided
	m := r.Get("message")
	if t := m.Get("content").String(); t != "" {
		o.a.text.WriteString(t)
		state = Final
	}
	m.Get("tool_calls").ForEach(func(_, tc gjson.Result) bool {
		cl := o.a.call(o.calls)
		o.calls++
		cl.name = tc.Get("function.name").String()
		cl.args.WriteString(tc.Get("function.arguments").Raw)
		if state == Undecided {
			state = Held
		}
		return true
	})
	return state
}

func (o *ollamaEditor) edit(ev []byte) []byte {
	return editJSON(ev, func(v map[string]any) bool {
		if v["done"] == true && o.a.prior != (Usage{}) {
			v["prompt_eval_count"] = json.Number(strconv.Itoa(num(v["prompt_eval_count"]) + o.a.prior.Input))
			v["eval_count"] = json.Number(strconv.Itoa(num(v["eval_count"]) + o.a.prior.Output))
		}
		m := obj(v["message"])
		calls := list(m["tool_calls"])
		if calls == nil {
			return true
		}
		var kept []any
		for _, tc := range calls {
			index := o.edited
			o.edited++
			if !o.a.memory(index) {
				kept = append(kept, tc)
			}
		}
		if len(kept) > 0 {
			m["tool_calls"] = kept
			return true
		}
		delete(m, "tool_calls")
		return v["done"] == true || str(m["content"]) != ""
	})
}
