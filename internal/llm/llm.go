// Package llm owns the client of an OpenAI-compatible chat completions
// endpoint (OpenAI, Ollama's /v1, vLLM, LM Studio, llama.cpp, OpenRouter),
// as the session distiller calls it: one request, a JSON answer when the
// server can be asked for one, and errors that say which side failed. It is
// one POST, so it is written here rather than pulling a provider's SDK into
// every Caddy binary.
package llm

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
)

// Client calls one model at one endpoint.
type Client struct {
	// URL is the chat completions endpoint, e.g.
	// http://127.0.0.1:11434/v1/chat/completions.
	URL   string
	Model string
	// APIKey is sent as a bearer token when not empty.
	APIKey string
	HTTP   *http.Client
}

// Message is one message of a conversation with the model.
type Message struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

// maxAnswer bounds an answer read from the endpoint.
const maxAnswer = 4 << 20

// ErrStatus is wrapped by the error for an answer with an HTTP error
// status; StatusError says which.
var ErrStatus = errors.New("chat endpoint answered with an error status")

// StatusError is an answer the endpoint refused or failed.
type StatusError struct {
	Code int
	Body string
}

func (e *StatusError) Error() string {
	return fmt.Sprintf("chat endpoint answered %d %s: %.300s", e.Code, http.StatusText(e.Code), e.Body)
}

func (e *StatusError) Unwrap() error { return ErrStatus }

// Complete sends messages and returns the text of the model's answer. With
// jsonMode it asks for a JSON object (response_format), which servers that
// do not know the field ignore; the caller parses the answer either way.
func (c *Client) Complete(ctx context.Context, messages []Message, jsonMode bool) (string, error) {
	req := map[string]any{"model": c.Model, "messages": messages, "stream": false, "temperature": 0}
	if jsonMode {
		req["response_format"] = map[string]string{"type": "json_object"}
	}
	body, err := json.Marshal(req)
	if err != nil {
		return "", err
	}
	hr, err := http.NewRequestWithContext(ctx, http.MethodPost, c.URL, bytes.NewReader(body))
	if err != nil {
		return "", err
	}
	hr.Header.Set("Content-Type", "application/json")
	if c.APIKey != "" {
		hr.Header.Set("Authorization", "Bearer "+c.APIKey)
	}
	client := c.HTTP
	if client == nil {
		client = &http.Client{Timeout: 5 * time.Minute}
	}
	resp, err := client.Do(hr)
	if err != nil {
		return "", fmt.Errorf("chat endpoint: %w", err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxAnswer))
	if err != nil {
		return "", fmt.Errorf("chat endpoint: %w", err)
	}
	if resp.StatusCode != http.StatusOK {
		return "", &StatusError{Code: resp.StatusCode, Body: strings.TrimSpace(string(raw))}
	}
	var out struct {
		Choices []struct {
			Message struct {
				Content string `json:"content"`
			} `json:"message"`
		} `json:"choices"`
	}
	if err := json.Unmarshal(raw, &out); err != nil {
		return "", fmt.Errorf("chat endpoint sent something that is not a chat completion: %w", err)
	}
	if len(out.Choices) == 0 {
		return "", errors.New("chat endpoint answered with no choices")
	}
	return out.Choices[0].Message.Content, nil
}
