package inject

import (
	"errors"
	"regexp"
	"strconv"
	"strings"

	"github.com/tidwall/gjson"

	"github.com/caddy-memory/memory/internal/block"
)

// A conversation longer than the model takes: the upstream refuses it for
// its length (each provider in its own words), and the request can be
// asked again with the conversation cut (Trim). The formats describe their
// refusal and how their conversation divides into turns; the cutting is
// the same for all.

// ErrNotTrimmable means the conversation cannot be cut to fit: nothing
// but its latest turn (and the instructions) is left, it is not a list
// of turns, or the provider keeps the part before it.
var ErrNotTrimmable = errors.New("the conversation cannot be cut to fit")

// turns describes how a format's conversation divides into turns.
type turns struct {
	// field is the top-level array of the conversation.
	field string
	// kept reports an item that is kept wherever it is (instructions).
	kept func(item gjson.Result) bool
	// starts reports an item that begins a turn: a message the user said
	// (not a tool's result). A turn runs to the next one, so tool calls
	// always stay with their results.
	starts func(item gjson.Result) bool
	// stored reports a request that continues a conversation the
	// provider keeps (nil: none does). Its items are only the newest
	// part, after what the provider keeps: cutting them would lose them
	// from that conversation and part the stored calls from their
	// outputs, so it is not cut.
	stored func(body []byte) bool
	// cost is an item's estimated tokens as the model counts them; nil:
	// EstimateTokens of its JSON.
	cost func(item gjson.Result) int
}

// costOf is an item's estimated tokens (see turns.cost).
func (t turns) costOf(it gjson.Result) int {
	if t.cost != nil {
		return t.cost(it)
	}
	return block.EstimateTokens(it.Raw)
}

// LengthRefusal reports whether an answer (its status and body) is d's
// refusal of a request for its length, and the most tokens the refusal
// says the model takes (0 when it names none).
func LengthRefusal(d Dialect, status int, body []byte) (limit int, ok bool) {
	if status != 400 && status != 413 || !ValidJSON(body) {
		return 0, false
	}
	return d.refusal(body)
}

// openAIRefusal is the refusal of OpenAI's formats, chat completions and
// responses: {"error": {"code": "context_length_exceeded", "message":
// "This model's maximum context length is 8192 tokens. ..."}}.
func openAIRefusal(body []byte) (int, bool) {
	e := gjson.GetBytes(body, "error")
	if e.Get("code").String() != "context_length_exceeded" {
		return 0, false
	}
	return limitIn(e.Get("message").String()), true
}

var limitPatterns = []*regexp.Regexp{
	regexp.MustCompile(`maximum context length is (\d+) tokens`),
	regexp.MustCompile(`limit of (\d+) tokens`),
	regexp.MustCompile(`context window of (\d+) tokens`),
	regexp.MustCompile(`(\d+) tokens? > (\d+) maximum`),
}

// limitIn reads the model's limit from a refusal's message, or 0.
func limitIn(msg string) int {
	for _, re := range limitPatterns {
		if m := re.FindStringSubmatch(msg); m != nil {
			n, _ := strconv.Atoi(m[len(m)-1])
			return n
		}
	}
	return 0
}

// Trim returns body with its conversation cut to about budget estimated
// tokens: the instructions kept wherever they are, the newest turns kept
// whole, the turns before them dropped; and how many items it dropped.
// budget 0 means half of the body's size.
func Trim(d Dialect, body []byte, budget int) ([]byte, int, error) {
	t := d.turns()
	arr := gjson.GetBytes(body, t.field)
	if t.field == "" || !arr.IsArray() || !spanOK(body, arr) || t.stored != nil && t.stored(body) {
		return nil, 0, ErrNotTrimmable
	}
	items := arr.Array()
	if budget <= 0 {
		budget = block.EstimateTokens(string(body)) / 2
	}
	// Everything outside the conversation, and the items kept anyway.
	left := budget - block.EstimateTokens(string(body[:arr.Index])) - block.EstimateTokens(string(body[arr.Index+len(arr.Raw):]))
	keep := make([]bool, len(items))
	for i, it := range items {
		if t.kept(it) {
			keep[i] = true
			left -= t.costOf(it)
		}
	}
	// The newest turns, whole, while they fit; the latest always.
	end := len(items)
	for start := len(items) - 1; start >= 0; start-- {
		if keep[start] || !t.starts(items[start]) {
			continue
		}
		cost := 0
		for i := start; i < end; i++ {
			if !keep[i] {
				cost += t.costOf(items[i])
			}
		}
		if cost > left && end < len(items) {
			break
		}
		for i := start; i < end; i++ {
			keep[i] = true
		}
		left -= cost
		end = start
	}
	if end == len(items) {
		return nil, 0, ErrNotTrimmable // no turn begins with the user
	}
	var raws []string
	dropped := 0
	for i, it := range items {
		if keep[i] {
			raws = append(raws, it.Raw)
		} else {
			dropped++
		}
	}
	if dropped == 0 {
		return nil, 0, ErrNotTrimmable
	}
	out := replace(body, arr.Index, arr.Index+len(arr.Raw), []byte("["+strings.Join(raws, ",")+"]"))
	return out, dropped, nil
}

// CompletionTokens is what a request body asks of the answer's length
// (max_tokens, max_completion_tokens, max_output_tokens, or Ollama's
// options.num_predict), 0 when it asks nothing: the refusals' limits count
// it with the prompt.
func CompletionTokens(body []byte) int {
	for _, f := range []string{"max_completion_tokens", "max_tokens", "max_output_tokens", "options.num_predict"} {
		if n := gjson.GetBytes(body, f).Int(); n > 0 {
			return int(n)
		}
	}
	return 0
}

// roleIs reports whether an item's role is one of roles.
func roleIs(it gjson.Result, roles ...string) bool {
	r := it.Get("role").String()
	for _, want := range roles {
		if r == want {
			return true
		}
	}
	return false
}

// chatTurns are the messages of OpenAI chat completions and Ollama: system
// and developer messages are instructions, a user message begins a turn,
// and an assistant's tool calls are followed by "tool" messages.
var chatTurns = turns{
	field:  "messages",
	kept:   func(it gjson.Result) bool { return roleIs(it, "system", "developer") },
	starts: func(it gjson.Result) bool { return roleIs(it, "user") },
}

// anthropicTurns are Anthropic's messages: the instructions are the
// top-level system, outside them; a user message begins a turn unless it
// carries tool results (it answers the tool_use before it), and the turn
// kept first is always a user message, as Anthropic requires.
var anthropicTurns = turns{
	field: "messages",
	kept:  func(gjson.Result) bool { return false },
	starts: func(it gjson.Result) bool {
		if !roleIs(it, "user") {
			return false
		}
		results := false
		it.Get("content").ForEach(func(_, b gjson.Result) bool {
			results = b.Get("type").String() == "tool_result"
			return !results
		})
		return !results
	},
}

// responsesTurns are the responses API's input items: system and
// developer messages are instructions (beside the top-level
// instructions), a user message begins a turn, and reasoning, function
// calls and their outputs follow within it.
var responsesTurns = turns{
	field: "input",
	kept: func(it gjson.Result) bool {
		return itemRole(it) == "system" || itemRole(it) == "developer"
	},
	starts: func(it gjson.Result) bool { return itemRole(it) == "user" },
	stored: func(body []byte) bool {
		r := gjson.GetManyBytes(body, "previous_response_id", "conversation")
		return r[0].String() != "" || r[1].Exists() && r[1].Type != gjson.Null
	},
}

// ollamaImageTokens is what Ollama counts an image as when it fits a
// conversation to num_ctx (server/prompt.go: a CLIP image is 768
// embeddings), whatever the size of its base64.
const ollamaImageTokens = 768

// ollamaTurns are chat's, each image counted as Ollama counts it.
var ollamaTurns = turns{field: chatTurns.field, kept: chatTurns.kept, starts: chatTurns.starts, cost: ollamaCost}

// ollamaCost is a message's estimated tokens with its images as Ollama
// counts them.
func ollamaCost(m gjson.Result) int {
	n := block.EstimateTokens(m.Raw)
	m.Get("images").ForEach(func(_, img gjson.Result) bool {
		n += ollamaImageTokens - block.EstimateTokens(img.Raw)
		return true
	})
	return n
}

// ollamaPromptTokens estimates the prompt of an Ollama chat request as
// Ollama measures it against num_ctx: the request without the answer it
// asks for (num_predict), each image 768 tokens.
func ollamaPromptTokens(body []byte) int {
	n := block.EstimateTokens(string(body))
	gjson.GetBytes(body, "messages").ForEach(func(_, m gjson.Result) bool {
		n += ollamaCost(m) - block.EstimateTokens(m.Raw)
		return true
	})
	return n
}
