package inject

import (
	"bytes"
	"errors"
	"fmt"
	"strings"

	"github.com/tidwall/gjson"
)

// The proxy can offer the model tools of its own (save_memory,
// recall_memory) and run them itself. This file is the request side: which
// tools a request defines, adding the proxy's in the request's own format,
// and appending a round of calls and their results to the conversation.

// Tool is a function tool the proxy offers the model.
type Tool struct {
	Name        string
	Description string
	// Parameters is the JSON schema of the arguments, an object.
	Parameters string
}

// ToolCall is a call of a function tool the model made.
type ToolCall struct {
	// ID is the call's id in its format (empty for Ollama, which has none).
	ID   string
	Name string
	// Arguments is a JSON object (as a string, the way OpenAI's formats
	// carry it; Anthropic's and Ollama's objects are written as one).
	Arguments string
}

// ErrNoTools is returned for a body of a dialect that cannot carry tools.
var ErrNoTools = errors.New("this request cannot carry tools")

// ToolNames returns the names of the function tools a request body defines.
func ToolNames(dialect string, body []byte) []string {
	var names []string
	gjson.GetBytes(body, "tools").ForEach(func(_, t gjson.Result) bool {
		name := t.Get("name").String() // Anthropic, responses
		if f := t.Get("function"); f.Exists() {
			name = f.Get("name").String() // chat completions, Ollama
		}
		if name != "" {
			names = append(names, name)
		}
		return true
	})
	return names
}

// AddTools returns body with tools added to its "tools" array (made when it
// has none), in the dialect's shape.
func AddTools(dialect string, body []byte, tools []Tool) ([]byte, error) {
	if len(tools) == 0 {
		return body, nil
	}
	if !ValidJSON(body) {
		return nil, ErrNotJSON
	}
	defs := make([][]byte, len(tools))
	for i, t := range tools {
		name, desc := jsonString(t.Name), jsonString(t.Description)
		switch dialect {
		case NameOpenAIChat, NameOllama:
			defs[i] = []byte(`{"type":"function","function":{"name":` + string(name) + `,"description":` + string(desc) + `,"parameters":` + t.Parameters + `}}`)
		case NameAnthropic:
			defs[i] = []byte(`{"name":` + string(name) + `,"description":` + string(desc) + `,"input_schema":` + t.Parameters + `}`)
		case NameOpenAIResponses:
			defs[i] = []byte(`{"type":"function","name":` + string(name) + `,"description":` + string(desc) + `,"parameters":` + t.Parameters + `}`)
		default:
			return nil, ErrNoTools
		}
	}
	joined := bytes.Join(defs, []byte(","))
	root := gjson.ParseBytes(body)
	switch arr := root.Get("tools"); {
	case !arr.Exists() || arr.Type == gjson.Null:
		if arr.Exists() && spanOK(body, arr) {
			return replace(body, arr.Index, arr.Index+len(arr.Raw), append(append([]byte{'['}, joined...), ']')), nil
		}
		return addField(body, "tools", append(append([]byte{'['}, joined...), ']'))
	case arr.IsArray() && spanOK(body, arr):
		end := arr.Index + len(arr.Raw) - 1
		if len(arr.Array()) == 0 {
			return splice(body, end, joined), nil
		}
		return splice(body, end, []byte(","), joined), nil
	}
	return nil, fmt.Errorf("tools is not an array")
}

// AppendRound returns body with one round of tool use appended to its
// conversation: the assistant's message (what it said, text, and its calls)
// and each call's result, in the dialect's shape, so the model, asked
// again, sees what the tools returned.
func AppendRound(dialect string, body []byte, text string, calls []ToolCall, results []string) ([]byte, error) {
	if len(calls) != len(results) {
		return nil, errors.New("a result for each call")
	}
	if !ValidJSON(body) {
		return nil, ErrNotJSON
	}
	var items []string
	switch dialect {
	case NameOpenAIChat:
		var cs []string
		for _, c := range calls {
			cs = append(cs, `{"id":`+string(jsonString(c.ID))+`,"type":"function","function":{"name":`+string(jsonString(c.Name))+
				`,"arguments":`+string(jsonString(c.Arguments))+`}}`)
		}
		content := "null"
		if text != "" {
			content = string(jsonString(text))
		}
		items = append(items, `{"role":"assistant","content":`+content+`,"tool_calls":[`+strings.Join(cs, ",")+`]}`)
		for i, c := range calls {
			items = append(items, `{"role":"tool","tool_call_id":`+string(jsonString(c.ID))+`,"content":`+string(jsonString(results[i]))+`}`)
		}
	case NameOllama:
		var cs []string
		for _, c := range calls {
			cs = append(cs, `{"function":{"name":`+string(jsonString(c.Name))+`,"arguments":`+object(c.Arguments)+`}}`)
		}
		items = append(items, `{"role":"assistant","content":`+string(jsonString(text))+`,"tool_calls":[`+strings.Join(cs, ",")+`]}`)
		for i, c := range calls {
			items = append(items, `{"role":"tool","tool_name":`+string(jsonString(c.Name))+`,"content":`+string(jsonString(results[i]))+`}`)
		}
	case NameAnthropic:
		var blocks, outs []string
		if text != "" {
			blocks = append(blocks, string(textPart(text)))
		}
		for i, c := range calls {
			blocks = append(blocks, `{"type":"tool_use","id":`+string(jsonString(c.ID))+`,"name":`+string(jsonString(c.Name))+`,"input":`+object(c.Arguments)+`}`)
			outs = append(outs, `{"type":"tool_result","tool_use_id":`+string(jsonString(c.ID))+`,"content":`+string(jsonString(results[i]))+`}`)
		}
		items = append(items, `{"role":"assistant","content":[`+strings.Join(blocks, ",")+`]}`, `{"role":"user","content":[`+strings.Join(outs, ",")+`]}`)
	case NameOpenAIResponses:
		if text != "" {
			items = append(items, `{"role":"assistant","content":[{"type":"output_text","text":`+string(jsonString(text))+`}]}`)
		}
		for i, c := range calls {
			items = append(items, `{"type":"function_call","call_id":`+string(jsonString(c.ID))+`,"name":`+string(jsonString(c.Name))+
				`,"arguments":`+string(jsonString(c.Arguments))+`}`, CallOutput(c.ID, results[i]))
		}
	default:
		return nil, ErrNoTools
	}
	joined := []byte(strings.Join(items, ","))
	field := "messages"
	if dialect == NameOpenAIResponses {
		field = "input"
	}
	arr := gjson.GetBytes(body, field)
	switch {
	case arr.Type == gjson.String && dialect == NameOpenAIResponses && spanOK(body, arr):
		// The string becomes the equivalent list, then the round.
		user := `{"role":"user","content":` + arr.Raw + `}`
		return replace(body, arr.Index, arr.Index+len(arr.Raw), []byte("["+user+","+string(joined)+"]")), nil
	case arr.IsArray() && spanOK(body, arr):
		end := arr.Index + len(arr.Raw) - 1
		if len(arr.Array()) == 0 {
			return splice(body, end, joined), nil
		}
		return splice(body, end, []byte(","), joined), nil
	}
	return nil, fmt.Errorf("%s is not an array", field)
}

// CallOutput is the responses API's input item carrying a call's result.
func CallOutput(callID, output string) string {
	return `{"type":"function_call_output","call_id":` + string(jsonString(callID)) + `,"output":` + string(jsonString(output)) + `}`
}

// object is arguments as a JSON object: itself when it is one, else {}.
func object(arguments string) string {
	if r := gjson.Parse(arguments); r.IsObject() && ValidJSON([]byte(arguments)) {
		return arguments
	}
	return "{}"
}

// PrependInput returns a responses API body with items (JSON objects)
// before its input: for outputs the conversation owes to calls of the
// response it continues (previous_response_id). A string input becomes the
// equivalent user item after them.
func PrependInput(body []byte, items []string) ([]byte, error) {
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
