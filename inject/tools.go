package inject

import (
	"errors"
	"fmt"
	"strings"

	"github.com/tidwall/gjson"
)

// The proxy can offer the model tools of its own (save_memory,
// recall_memory) and run them itself. This file is what every format
// shares of the request side: which tools a request defines, adding the
// proxy's, and appending a round of calls and their results to the
// conversation; each Dialect gives the shapes (toolDef, appendRound).

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

// ToolNames returns the names of the function tools a request body
// defines, in any format's shape.
func ToolNames(body []byte) []string {
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
func AddTools(d Dialect, body []byte, tools []Tool) ([]byte, error) {
	if len(tools) == 0 {
		return body, nil
	}
	if !ValidJSON(body) {
		return nil, ErrNotJSON
	}
	if d == nil {
		return nil, ErrNoTools
	}
	defs := make([]string, len(tools))
	for i, t := range tools {
		defs[i] = d.toolDef(t)
	}
	joined := []byte(strings.Join(defs, ","))
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
func AppendRound(d Dialect, body []byte, text string, calls []ToolCall, results []string) ([]byte, error) {
	if len(calls) != len(results) {
		return nil, errors.New("a result for each call")
	}
	if !ValidJSON(body) {
		return nil, ErrNotJSON
	}
	if d == nil {
		return nil, ErrNoTools
	}
	return d.appendRound(body, text, calls, results)
}

// appendItems appends items (JSON objects) to the array field of body.
func appendItems(body []byte, field string, items []string) ([]byte, error) {
	joined := []byte(strings.Join(items, ","))
	arr := gjson.GetBytes(body, field)
	if arr.IsArray() && spanOK(body, arr) {
		end := arr.Index + len(arr.Raw) - 1
		if len(arr.Array()) == 0 {
			return splice(body, end, joined), nil
		}
		return splice(body, end, []byte(","), joined), nil
	}
	return nil, fmt.Errorf("%s is not an array", field)
}

// object is arguments as a JSON object: itself when it is one, else {}.
func object(arguments string) string {
	if r := gjson.Parse(arguments); r.IsObject() && ValidJSON([]byte(arguments)) {
		return arguments
	}
	return "{}"
}
