// Package llmtest serves a scripted model for tests: an OpenAI-compatible
// /v1/chat/completions endpoint that records every call and answers each
// with the next of a script, so tests can show what the distiller sends and
// what it does with answers good, bad and failing, without a real model.
package llmtest

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
)

// Answer is one scripted answer: Status (default 200) and Content, the
// message the model answers with.
type Answer struct {
	Status  int
	Content string
}

// Call is what one request to the server asked.
type Call struct {
	Model          string
	Messages       []Message
	ResponseFormat string // "json_object" when JSON was asked for
	Authorization  string
}

// Message is one message of a call.
type Message struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

// Text is every message's content, joined.
func (c Call) Text() string {
	var b strings.Builder
	for _, m := range c.Messages {
		b.WriteString(m.Content)
		b.WriteByte('\n')
	}
	return b.String()
}

// Server is a running scripted model.
type Server struct {
	*httptest.Server

	mu     sync.Mutex
	script []Answer
	calls  []Call
	// fallback answers calls beyond the script (see Answer); by default an
	// empty distillation.
	fallback func(Call) Answer
}

// NewServer starts a server that answers with script, then Default; close
// it when done.
func NewServer(script ...Answer) *Server {
	s := &Server{script: script, fallback: func(Call) Answer { return Answer{Content: `{"episode": null, "facts": []}`} }}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	return s
}

// Endpoint is the URL of the chat completions endpoint.
func (s *Server) Endpoint() string { return s.URL + "/v1/chat/completions" }

// Answer makes fn answer the calls beyond the script, from what they ask.
func (s *Server) Answer(fn func(Call) Answer) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.fallback = fn
}

// Then adds answers to the script.
func (s *Server) Then(answers ...Answer) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.script = append(s.script, answers...)
}

// Calls returns the calls received so far.
func (s *Server) Calls() []Call {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Call(nil), s.calls...)
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Model          string    `json:"model"`
		Messages       []Message `json:"messages"`
		ResponseFormat struct {
			Type string `json:"type"`
		} `json:"response_format"`
	}
	if r.URL.Path != "/v1/chat/completions" || json.NewDecoder(r.Body).Decode(&req) != nil {
		http.Error(w, `{"error":{"message":"bad request"}}`, http.StatusBadRequest)
		return
	}
	s.mu.Lock()
	call := Call{Model: req.Model, Messages: req.Messages, ResponseFormat: req.ResponseFormat.Type,
		Authorization: r.Header.Get("Authorization")}
	s.calls = append(s.calls, call)
	var a Answer
	fn := s.fallback
	scripted := len(s.script) > 0
	if scripted {
		a, s.script = s.script[0], s.script[1:]
	}
	s.mu.Unlock()
	if !scripted {
		a = fn(call)
	}
	if a.Status != 0 && a.Status != http.StatusOK {
		http.Error(w, `{"error":{"message":"scripted failure"}}`, a.Status)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(map[string]any{
		"id": "chatcmpl-test", "object": "chat.completion", "model": req.Model,
		"choices": []any{map[string]any{"index": 0, "finish_reason": "stop",
			"message": map[string]any{"role": "assistant", "content": a.Content}}},
	})
}
