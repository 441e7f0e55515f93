package inject

import (
	"fmt"

	"github.com/tidwall/gjson"
)

// responses is the OpenAI responses format: "input" is a string or a list of
// items (messages with a role, function calls and their outputs, reasoning,
// references), "instructions" is the system prompt, and the conversation may
// live on the server ("previous_response_id", "conversation").
type responses struct{}

func (responses) Name() string { return NameOpenAIResponses }

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
