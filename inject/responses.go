package inject

import (
	"fmt"
	"strings"

	"github.com/tidwall/gjson"
)

// responses is the OpenAI responses format: "input" is a string or a list of
// items (messages with a role, function calls and their outputs, reasoning,
// references), "instructions" is the system prompt, and the conversation may
// live on the server ("previous_response_id", "conversation").
type responses struct{}

// NameOpenAIResponses is OpenAIResponses' name in configuration and in jobs.
const NameOpenAIResponses = "openai_responses"

// OpenAIResponses is the OpenAI responses format (POST .../responses).
var OpenAIResponses Dialect = responses{}

func (responses) Name() string { return NameOpenAIResponses }

func (responses) ServesPath(path string) bool { return strings.HasSuffix(path, "/responses") }

func (d responses) Parse(body []byte) (*Request, error) {
	root, err := parseObject(body)
	if err != nil {
		return nil, err
	}
	if duplicateKeys(root, "input", "instructions") {
		return nil, ErrNotChat
	}
	input := root.Get("input")
	if input.Index <= 0 || (input.Type != gjson.String && !input.IsArray()) {
		return nil, ErrNotChat
	}
	instructions := root.Get("instructions")
	r := &Request{
		Dialect: NameOpenAIResponses,
		Model:   root.Get("model").String(),
		Stream:  root.Get("stream").Bool(),
		System:  instructions.String(),
		body:    body,
	}
	switch conv := root.Get("conversation"); {
	case conv.Type == gjson.String:
		r.Thread = conv.String()
	case conv.IsObject():
		r.Thread = conv.Get("id").String()
	}
	if prev := root.Get("previous_response_id").String(); r.Thread == "" && prev != "" {
		r.Thread, r.ThreadIsPrev = prev, true
	}

	var contents []gjson.Result
	if input.Type == gjson.String {
		r.Messages = []Message{{Role: "user", Text: input.String()}}
		contents = []gjson.Result{input}
	} else {
		ok := true
		input.ForEach(func(_, it gjson.Result) bool {
			if !it.IsObject() || it.Index <= 0 || duplicateKeys(it, "role", "content") {
				ok = false
				return false
			}
			c := it.Get("content")
			r.Messages = append(r.Messages, Message{Role: itemRole(it), Text: contentText(c)})
			contents = append(contents, c)
			return true
		})
		if !ok || len(r.Messages) == 0 {
			return nil, ErrNotChat
		}
	}
	r.inject = func(block string, p Placement) ([]byte, error) {
		return d.place(r, input, instructions, contents, block, p)
	}
	return r, nil
}

// itemRole normalises an input item to a message role.
func itemRole(it gjson.Result) string {
	if role := it.Get("role").String(); role != "" {
		return role
	}
	switch it.Get("type").String() {
	case "function_call", "custom_tool_call", "reasoning", "web_search_call", "file_search_call", "computer_call":
		return "assistant"
	case "function_call_output", "custom_tool_call_output", "computer_call_output":
		return "tool"
	}
	return "other"
}

func (responses) place(r *Request, input, instructions gjson.Result, contents []gjson.Result, block string, p Placement) ([]byte, error) {
	body := r.body
	systemItem := append(append([]byte(`{"role":"system","content":`), jsonString(block)...), '}')
	switch p {
	case System:
		switch {
		case !instructions.Exists():
			return addField(body, "instructions", jsonString(block))
		case instructions.Type == gjson.Null && spanOK(body, instructions):
			return replace(body, instructions.Index, instructions.Index+len(instructions.Raw), jsonString(block)), nil
		}
		if out, ok := appendToContent(body, instructions, block, inputText); ok {
			return out, nil
		}
		return nil, fmt.Errorf("instructions is not a string")
	case CacheSafe:
		if !spanOK(body, input) {
			return nil, fmt.Errorf("input offset mismatch")
		}
		if input.Type == gjson.String {
			// The string becomes the equivalent list, with the block first.
			user := append(append([]byte(`{"role":"user","content":`), input.Raw...), '}')
			list := append(append(append(append([]byte{'['}, systemItem...), ','), user...), ']')
			return replace(body, input.Index, input.Index+len(input.Raw), list), nil
		}
		i := r.LatestUser()
		if i < 0 {
			return nil, fmt.Errorf("no user input to place memories before")
		}
		return insertPart(body, input, i, systemItem), nil
	case User:
		i := r.LatestUser()
		if i < 0 {
			return nil, fmt.Errorf("no user input to place memories in")
		}
		if out, ok := prependToContent(body, contents[i], block, inputText); ok {
			return out, nil
		}
		return nil, fmt.Errorf("latest user input has no string or array content")
	}
	return nil, fmt.Errorf("unknown placement %q", p)
}

// inputText is the content part the responses API uses for text.
func inputText(text string) []byte {
	return []byte(`{"type":"input_text","text":` + string(jsonString(text)) + `}`)
}

// toolDef is {"type":"function", "name", "description", "parameters"}.
func (responses) toolDef(t Tool) string {
	return `{"type":"function","name":` + string(jsonString(t.Name)) + `,"description":` + string(jsonString(t.Description)) +
		`,"parameters":` + t.Parameters + `}`
}

// appendRound adds the assistant's message when it said something, then
// a function_call item and its function_call_output for each call. A
// string input becomes the equivalent list first.
func (d responses) appendRound(body []byte, text string, calls []ToolCall, results []string) ([]byte, error) {
	var items []string
	if text != "" {
		items = append(items, `{"role":"assistant","content":[{"type":"output_text","text":`+string(jsonString(text))+`}]}`)
	}
	for i, c := range calls {
		items = append(items, `{"type":"function_call","call_id":`+string(jsonString(c.ID))+`,"name":`+string(jsonString(c.Name))+
			`,"arguments":`+string(jsonString(c.Arguments))+`}`, d.Owed(c, results[i]))
	}
	if in := gjson.GetBytes(body, "input"); in.Type == gjson.String && spanOK(body, in) {
		user := `{"role":"user","content":` + in.Raw + `}`
		return replace(body, in.Index, in.Index+len(in.Raw), []byte("["+user+","+strings.Join(items, ",")+"]")), nil
	}
	return appendItems(body, "input", items)
}

// The responses API keeps each answer (unless "store": false), and a
// request continues one by previous_response_id: responses is Storing.

// Previous is the previous_response_id of a request body.
func (responses) Previous(body []byte) string {
	return gjson.GetBytes(body, "previous_response_id").String()
}

// Owed is the function_call_output item carrying a call's result.
func (responses) Owed(call ToolCall, result string) string {
	return `{"type":"function_call_output","call_id":` + string(jsonString(call.ID)) + `,"output":` + string(jsonString(result)) + `}`
}

// PrependInput returns a body with items (JSON objects) before its input:
// for outputs the conversation owes to calls of the response it continues.
// A string input becomes the equivalent user item after them.
func (responses) PrependInput(body []byte, items []string) ([]byte, error) {
	if len(items) == 0 {
		return body, nil
	}
	if !ValidJSON(body) {
		return nil, ErrNotJSON
	}
	joined := []byte(strings.Join(items, ","))
	in := gjson.GetBytes(body, "input")
	switch {
	case !in.Exists():
		return addField(body, "input", append(append([]byte{'['}, joined...), ']'))
	case in.Type == gjson.String && spanOK(body, in):
		user := `{"role":"user","content":` + in.Raw + `}`
		return replace(body, in.Index, in.Index+len(in.Raw), []byte("["+string(joined)+","+user+"]")), nil
	case in.IsArray() && spanOK(body, in):
		if len(in.Array()) == 0 {
			return splice(body, in.Index+1, joined), nil
		}
		return splice(body, in.Index+1, joined, []byte(",")), nil
	}
	return nil, fmt.Errorf("input is neither a string nor an array")
}

var _ Storing = responses{}

func (responses) turns() turns { return responsesTurns }

// refusal is OpenAI's context_length_exceeded (see openAIRefusal).
func (responses) refusal(body []byte) (int, bool) { return openAIRefusal(body) }
