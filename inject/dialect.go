package inject

import "strings"

// Dialect is the request side of one wire format.
type Dialect interface {
	// Name is the format's name as used in configuration and in jobs.
	Name() string
	// Parse reads a request body; ErrNotJSON or ErrNotChat mean "pass it on".
	Parse(body []byte) (*Request, error)
}

// Dialect names, as used in configuration (the format subdirective).
const (
	NameOpenAIChat      = "openai_chat"
	NameAnthropic       = "anthropic"
	NameOllama          = "ollama"
	NameOpenAIResponses = "openai_responses"
)

// OpenAIChat is the OpenAI chat completions format (POST .../chat/completions),
// spoken by OpenAI and by most compatible servers (vLLM, LM Studio, llama.cpp,
// Ollama's /v1, OpenRouter, Groq, ...).
var OpenAIChat Dialect = chat{name: NameOpenAIChat}

// Ollama is Ollama's native chat format (POST .../api/chat), which streams
// unless "stream": false.
var Ollama Dialect = chat{name: NameOllama, streamByDefault: true}

// Anthropic is the Anthropic messages format (POST .../v1/messages).
var Anthropic Dialect = anthropic{}

// OpenAIResponses is the OpenAI responses format (POST .../responses).
var OpenAIResponses Dialect = responses{}

// Dialects lists every dialect.
var Dialects = []Dialect{OpenAIChat, Anthropic, Ollama, OpenAIResponses}

// ForPath returns the dialect a request path speaks by its suffix, or nil.
func ForPath(path string) Dialect {
	switch {
	case strings.HasSuffix(path, "/chat/completions"):
		return OpenAIChat
	case strings.HasSuffix(path, "/v1/messages"):
		return Anthropic
	case strings.HasSuffix(path, "/api/chat"):
		return Ollama
	case strings.HasSuffix(path, "/responses"):
		return OpenAIResponses
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
