package inject

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"strconv"
	"strings"

	"github.com/tidwall/gjson"
)

// ollama is Ollama's native chat format. Its requests are chat's (in
// chat.go); its tool calls have no ids and their arguments are objects,
// and its answers are one JSON object, or one a line when streaming.
type ollama struct{ chat }

// NameOllama is Ollama's name in configuration and in jobs.
const NameOllama = "ollama"

// Ollama is Ollama's native chat format (POST .../api/chat), which streams
// unless "stream": false.
var Ollama Truncating = ollama{chat{name: NameOllama, streamByDefault: true}}

func (ollama) ServesPath(path string) bool { return strings.HasSuffix(path, "/api/chat") }

// appendRound adds the assistant's message with its tool_calls, then a
// "tool" message with each result, named by its tool.
func (ollama) appendRound(body []byte, text string, calls []ToolCall, results []string) ([]byte, error) {
	var cs, items []string
	for _, c := range calls {
		cs = append(cs, `{"function":{"name":`+string(jsonString(c.Name))+`,"arguments":`+object(c.Arguments)+`}}`)
	}
	items = append(items, `{"role":"assistant","content":`+string(jsonString(text))+`,"tool_calls":[`+strings.Join(cs, ",")+`]}`)
	for i, c := range calls {
		items = append(items, `{"role":"tool","tool_name":`+string(jsonString(c.Name))+`,"content":`+string(jsonString(results[i]))+`}`)
	}
	return appendItems(body, "messages", items)
}

func (ollama) decoder(mediaType string) decoder {
	switch mediaType {
	case "application/json", "application/x-ndjson": // one object is one line
		return ollamaNDJSON
	}
	return nil
}

// editor reads every answer as lines: one JSON object is one line.
func (ollama) editor(a *answer, _ framing) (dialectEditor, framing) {
	return &ollamaEditor{a: a}, jsonLines
}

// ollamaNDJSON reads Ollama's answers: one JSON object, or one per line when
// streaming. Ollama gives no response id.
func ollamaNDJSON(body []byte) (Assistant, error) {
	var a Assistant
	var text strings.Builder
	sc := bufio.NewScanner(bytes.NewReader(body))
	sc.Buffer(make([]byte, 0, 64*1024), len(body)+1)
	valid := 0
	for sc.Scan() {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 || !ValidJSON(line) {
			continue // a line cut off at the end of a capped copy
		}
		valid++
		m := gjson.GetBytes(line, "message")
		text.WriteString(m.Get("content").String())
		a.ToolCalls += len(m.Get("tool_calls").Array())
	}
	a.Text = text.String()
	if valid == 0 && len(bytes.TrimSpace(body)) > 0 {
		return a, errors.New("response holds no JSON object")
	}
	return a, sc.Err()
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
		o.a.say(t)
		state = Final
	}
	m.Get("tool_calls").ForEach(func(_, tc gjson.Result) bool {
		cl := o.a.call(o.calls)
		o.calls++
		cl.named(tc.Get("function.name").String())
		cl.add(tc.Get("function.arguments").Raw)
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

// turns are chat's, images counted as Ollama counts them.
func (ollama) turns() turns { return ollamaTurns }

// refusal: Ollama does not refuse a long request, it cuts its oldest
// tokens to its context (options.num_ctx): it is Truncating.
func (ollama) refusal([]byte) (int, bool) { return 0, false }

// Context is the context size a request body sets (options.num_ctx), or 0.
func (ollama) Context(body []byte) int {
	return int(gjson.GetBytes(body, "options.num_ctx").Int())
}

// PromptTokens is the prompt as Ollama measures it against num_ctx (see
// ollamaPromptTokens).
func (ollama) PromptTokens(body []byte) int { return ollamaPromptTokens(body) }
