package docstest_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// answer is what the fake model says to everything.
const answer = "Noted."

// fakeUpstream answers chat requests in OpenAI chat completions,
// Anthropic messages, Ollama chat and OpenAI responses format with one
// short assistant message, as JSON or as the format's stream; anything
// else gets 404, so a doc pointing a request at the wrong path fails.
func fakeUpstream(t *testing.T) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Model  string `json:"model"`
			Stream *bool  `json:"stream"`
		}
		body, _ := io.ReadAll(r.Body)
		if r.Method != http.MethodPost || json.Unmarshal(body, &req) != nil {
			http.Error(w, `{"error":"the fake upstream takes POSTed JSON chat requests"}`, http.StatusBadRequest)
			return
		}
		stream := req.Stream != nil && *req.Stream
		switch p := r.URL.Path; {
		case strings.HasSuffix(p, "/chat/completions"):
			openAIChat(w, req.Model, stream)
		case strings.HasSuffix(p, "/v1/messages"):
			anthropic(w, req.Model, stream)
		case p == "/api/chat":
			ollama(w, req.Model, req.Stream == nil || stream) // Ollama streams unless told not to
		case strings.HasSuffix(p, "/responses"):
			responses(w, req.Model, stream)
		default:
			http.Error(w, `{"error":"no such endpoint on the fake upstream"}`, http.StatusNotFound)
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}

func sse(w http.ResponseWriter, events ...string) {
	w.Header().Set("Content-Type", "text/event-stream")
	for _, e := range events {
		fmt.Fprint(w, e+"\n\n")
	}
}

func openAIChat(w http.ResponseWriter, model string, stream bool) {
	if stream {
		sse(w,
			`data: {"id":"chatcmpl-doc","object":"chat.completion.chunk","model":"`+model+`","choices":[{"index":0,"delta":{"role":"assistant","content":"`+answer+`"},"finish_reason":null}]}`,
			`data: {"id":"chatcmpl-doc","object":"chat.completion.chunk","model":"`+model+`","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`,
			`data: [DONE]`)
		return
	}
	writeJSON(w, map[string]any{
		"id": "chatcmpl-doc", "object": "chat.completion", "created": 1, "model": model,
		"choices": []any{map[string]any{"index": 0, "finish_reason": "stop",
			"message": map[string]any{"role": "assistant", "content": answer}}},
		"usage": map[string]int{"prompt_tokens": 10, "completion_tokens": 2, "total_tokens": 12},
	})
}

func anthropic(w http.ResponseWriter, model string, stream bool) {
	if stream {
		sse(w,
			"event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_doc\",\"type\":\"message\",\"role\":\"assistant\",\"model\":\""+model+"\",\"content\":[],\"usage\":{\"input_tokens\":10,\"output_tokens\":0}}}",
			"event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}",
			"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\""+answer+"\"}}",
			"event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}",
			"event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\"},\"usage\":{\"output_tokens\":2}}",
			"event: message_stop\ndata: {\"type\":\"message_stop\"}")
		return
	}
	writeJSON(w, map[string]any{
		"id": "msg_doc", "type": "message", "role": "assistant", "model": model,
		"content":     []any{map[string]string{"type": "text", "text": answer}},
		"stop_reason": "end_turn", "usage": map[string]int{"input_tokens": 10, "output_tokens": 2},
	})
}

func ollama(w http.ResponseWriter, model string, stream bool) {
	last := map[string]any{"model": model, "created_at": "2026-01-01T00:00:00Z",
		"message": map[string]string{"role": "assistant", "content": ""}, "done": true, "done_reason": "stop"}
	if stream {
		w.Header().Set("Content-Type", "application/x-ndjson")
		enc := json.NewEncoder(w)
		_ = enc.Encode(map[string]any{"model": model, "created_at": "2026-01-01T00:00:00Z",
			"message": map[string]string{"role": "assistant", "content": answer}, "done": false})
		_ = enc.Encode(last)
		return
	}
	last["message"] = map[string]string{"role": "assistant", "content": answer}
	writeJSON(w, last)
}

func responses(w http.ResponseWriter, model string, stream bool) {
	resp := map[string]any{
		"id": "resp_doc", "object": "response", "status": "completed", "model": model,
		"output": []any{map[string]any{"type": "message", "id": "msg_doc", "role": "assistant", "status": "completed",
			"content": []any{map[string]any{"type": "output_text", "text": answer, "annotations": []any{}}}}},
		"usage": map[string]int{"input_tokens": 10, "output_tokens": 2, "total_tokens": 12},
	}
	if stream {
		done, _ := json.Marshal(map[string]any{"type": "response.completed", "response": resp})
		sse(w,
			`event: response.output_text.delta`+"\n"+`data: {"type":"response.output_text.delta","item_id":"msg_doc","output_index":0,"content_index":0,"delta":"`+answer+`"}`,
			"event: response.completed\ndata: "+string(done))
		return
	}
	writeJSON(w, resp)
}
