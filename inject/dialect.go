// Package inject owns the LLM wire formats end to end, each one a Dialect:
// parsing a chat request, finding the text to search memories with and
// placing a memory block (internal/block renders it) in it without
// disturbing anything else; offering tools and appending
// a round of calls and results; decoding an answer into the assistant's
// turn, and editing answers in tool rounds. It does no I/O.
//
// It is public, not internal, because it is one of the units the design
// names (DESIGN.md). A user of it may rely on Dialects, ForPath and ByName
// naming the wire formats the proxy speaks, on Parse reading a request of
// one of them, and on the markers around every block it places
// (BlockStart, BlockEnd), which never change; the rest serves this
// module's own packages and may change with it.
package inject

import (
	"strings"

	"github.com/caddy-memory/memory/internal/block"
)

// BlockStart and BlockEnd are the markers around every block this package
// places (block.Start and block.End): they never change.
const (
	BlockStart = block.Start
	BlockEnd   = block.End
)

// EstimateTokens is the estimate of a text's tokens that the budgets of
// this package (Trim's, CompletionTokens') are counted in
// (block.EstimateTokens).
func EstimateTokens(s string) int { return block.EstimateTokens(s) }

// Dialect is one wire format, end to end. Each is a set of files of its
// own (chat.go and chat_answer.go, ollama.go, anthropic*.go, responses*.go)
// and one entry of Dialects; what every format shares is done by this
// package's functions that take a Dialect (AddTools, AppendRound, Decode,
// NewEditor), so a new format is its files and its line in Dialects.
type Dialect interface {
	// Name is the format's name as used in configuration and in jobs.
	Name() string
	// ServesPath reports whether a request path speaks the format, by its
	// suffix.
	ServesPath(path string) bool
	// Parse reads a request body; ErrNotJSON or ErrNotChat mean "pass it on".
	Parse(body []byte) (*Request, error)

	// toolDef is a tool's definition, a JSON object of the request's
	// "tools" array.
	toolDef(t Tool) string
	// appendRound appends a round of tool use to the conversation of body
	// (valid JSON, with a result for each call); see AppendRound.
	appendRound(body []byte, text string, calls []ToolCall, results []string) ([]byte, error)
	// decoder reads the format's answers of a media type (lower case), or
	// is nil for a type it does not answer in.
	decoder(mediaType string) decoder
	// editor edits an answer read into a, framed as its media type says,
	// and returns the framing the format reads it with.
	editor(a *answer, f framing) (dialectEditor, framing)

	// refusal reads an error answer's JSON body: whether it refuses the
	// request for its length, and the limit it names (see LengthRefusal).
	refusal(body []byte) (limit int, ok bool)
	// turns says how the format's conversation divides into turns (see
	// Trim).
	turns() turns
}

// Storing is a Dialect whose server keeps each answer, for a later request
// to continue it by its id (the responses API's previous_response_id). An
// answer that called the proxy's tools beside the client's own reaches the
// client with the client's calls alone but is kept whole, so the request
// that continues it owes an output for each of the proxy's calls: the
// proxy keeps them and adds them to that request.
type Storing interface {
	Dialect
	// Previous is the id of the kept answer a request body continues, or "".
	Previous(body []byte) string
	// Owed is the input item that carries the result of a call.
	Owed(call ToolCall, result string) string
	// PrependInput returns body with items (JSON objects) before its input.
	PrependInput(body []byte, items []string) ([]byte, error)
}

// Truncating is a Dialect whose server never refuses a request for its
// length (see LengthRefusal): it drops the oldest tokens of a prompt over
// its context itself, wherever they fall, as Ollama does. A request over
// that context is better cut, by turns, before it is sent.
type Truncating interface {
	Dialect
	// Context is the context size a request body sets, or 0 when it sets
	// none (the server's own default applies).
	Context(body []byte) int
	// PromptTokens estimates a request's prompt as the server measures it
	// against its context.
	PromptTokens(body []byte) int
}

// Dialects lists every dialect, in the order ForPath tries them. A new
// format is its files and its entry here.
var Dialects = []Dialect{OpenAIChat, Anthropic, Ollama, OpenAIResponses}

// ForPath returns the dialect a request path speaks, or nil.
func ForPath(path string) Dialect {
	for _, d := range Dialects {
		if d.ServesPath(path) {
			return d
		}
	}
	return nil
}

// ByName returns the dialect with the given name, or nil.
func ByName(name string) Dialect {
	for _, d := range Dialects {
		if d.Name() == name {
			return d
		}
	}
	return nil
}

// Names lists the dialects' names for a message: "a, b or c".
func Names() string {
	names := make([]string, len(Dialects))
	for i, d := range Dialects {
		names[i] = d.Name()
	}
	last := len(names) - 1
	return strings.Join(names[:last], ", ") + " or " + names[last]
}
