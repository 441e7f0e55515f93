package harness

import (
	"bufio"
	"bytes"
	"encoding/json"
	"net/http"
	"testing"

	"github.com/tidwall/gjson"
)

// Wire describes how a test speaks one format: the path, how to build a
// request, and where cache_safe placement must put the block.
type Wire struct {
	Name   string
	Path   string
	NDJSON bool // streams are newline-delimited JSON rather than SSE
	// Body builds a request: a system prompt, then alternating user and
	// assistant texts ending with a user text.
	Body func(stream bool, system string, turns ...string) []byte
	// latest returns the byte offset of the latest user message in a body
	// the client sent, and the block cache_safe placed in the upstream's
	// version of it (failing the test when it is not where it belongs).
	CacheSafe func(t *testing.T, client, upstream []byte) (offset int, block string)
}

func Roles(turns []string) func(i int) string {
	return func(i int) string {
		if i%2 == 0 {
			return "user"
		}
		return "assistant"
	}
}

var Wires = []Wire{
	{
		Name: "openai_chat", Path: "/v1/chat/completions",
		Body: func(stream bool, system string, turns ...string) []byte {
			msgs := []any{map[string]any{"role": "system", "content": system}}
			role := Roles(turns)
			for i, t := range turns {
				msgs = append(msgs, map[string]any{"role": role(i), "content": t})
			}
			return MustBytes(map[string]any{"model": "gpt-4o-mini", "stream": stream, "messages": msgs})
		},
		CacheSafe: ChatCacheSafe("messages"),
	},
	{
		Name: "ollama", Path: "/api/chat", NDJSON: true,
		Body: func(stream bool, system string, turns ...string) []byte {
			msgs := []any{map[string]any{"role": "system", "content": system}}
			role := Roles(turns)
			for i, t := range turns {
				msgs = append(msgs, map[string]any{"role": role(i), "content": t})
			}
			return MustBytes(map[string]any{"model": "llama3.2", "stream": stream, "messages": msgs,
				"options": map[string]any{"temperature": 0.1}})
		},
		CacheSafe: ChatCacheSafe("messages"),
	},
	{
		Name: "anthropic", Path: "/v1/messages",
		Body: func(stream bool, system string, turns ...string) []byte {
			var msgs []any
			role := Roles(turns)
			for i, t := range turns {
				msgs = append(msgs, map[string]any{"role": role(i), "content": t})
			}
			return MustBytes(map[string]any{"model": "claude-sonnet-4-5", "max_tokens": 1024, "stream": stream,
				"system": system, "messages": msgs})
		},
		CacheSafe: func(t *testing.T, client, upstream []byte) (int, string) {
			t.Helper()
			at := LastElementOffset(t, client, "messages")
			// The latest user turn became blocks: ours first, then the user's words.
			last := LastElement(t, upstream, "messages")
			c := last.Get("content")
			if !c.IsArray() || len(c.Array()) != 2 || c.Get("0.type").String() != "text" {
				t.Fatalf("want the latest user turn as [block, text], got %s", last.Raw)
			}
			want := LastElement(t, client, "messages").Get("content").String()
			if c.Get("1.text").String() != want {
				t.Errorf("the user's words changed: %s", c.Get("1.text"))
			}
			if gjson.GetBytes(upstream, "system").Raw != gjson.GetBytes(client, "system").Raw {
				t.Errorf("system changed under cache_safe placement")
			}
			return at, c.Get("0.text").String()
		},
	},
	{
		Name: "openai_responses", Path: "/v1/responses",
		Body: func(stream bool, system string, turns ...string) []byte {
			var items []any
			role := Roles(turns)
			for i, t := range turns {
				items = append(items, map[string]any{"role": role(i), "content": t})
			}
			return MustBytes(map[string]any{"model": "gpt-4.1-mini", "stream": stream, "instructions": system,
				"input": items, "store": false})
		},
		CacheSafe: ChatCacheSafe("input"),
	},
}

// ChatCacheSafe checks the block went in as a system message right before
// the latest user message of the named array.
func ChatCacheSafe(array string) func(t *testing.T, client, upstream []byte) (int, string) {
	return func(t *testing.T, client, upstream []byte) (int, string) {
		t.Helper()
		items := gjson.GetBytes(upstream, array).Array()
		if n := len(gjson.GetBytes(client, array).Array()); len(items) != n+1 {
			t.Fatalf("want one more %s entry than the client sent, got %s", array, gjson.GetBytes(upstream, array).Raw)
		}
		sys := items[len(items)-2]
		if sys.Get("role").String() != "system" || items[len(items)-1].Get("role").String() != "user" {
			t.Fatalf("want the block as a system message just before the latest user turn, got %s", gjson.GetBytes(upstream, array).Raw)
		}
		return LastElementOffset(t, client, array), sys.Get("content").String()
	}
}

func MustBytes(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

func LastElement(t *testing.T, body []byte, array string) gjson.Result {
	t.Helper()
	a := gjson.GetBytes(body, array).Array()
	if len(a) == 0 {
		t.Fatalf("no %s in %s", array, body)
	}
	return a[len(a)-1]
}

func LastElementOffset(t *testing.T, body []byte, array string) int {
	t.Helper()
	at := -1
	gjson.GetBytes(body, array).ForEach(func(_, v gjson.Result) bool {
		at = v.Index
		return true
	})
	if at <= 0 {
		t.Fatalf("no %s in %s", array, body)
	}
	return at
}

// Send posts a request through Caddy with an API key (Authorization for all
// but Anthropic, whose SDKs send x-api-key) and reads the answer the way a
// streaming client does, releasing the upstream's gate after each chunk.
func Send(t *testing.T, tester interface {
	Do(*http.Request) (*http.Response, error)
}, up *FakeLLM, w Wire, key string, body []byte) []byte {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, CaddyAddr+w.Path, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	if w.Name == "anthropic" {
		req.Header.Set("x-api-key", key)
		req.Header.Set("anthropic-version", "2023-06-01")
	} else {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	resp, err := tester.Do(req)
	if err != nil {
		t.Fatalf("request through Caddy: %v", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d", resp.StatusCode)
	}
	var got bytes.Buffer
	r := bufio.NewReader(resp.Body)
	for {
		line, err := r.ReadBytes('\n')
		got.Write(line)
		if err != nil {
			break
		}
		// One chunk read: an SSE event ends with a blank line, an NDJSON
		// object with its newline.
		if up.Gate != nil && (w.NDJSON || len(bytes.TrimSpace(line)) == 0) {
			up.Gate <- struct{}{}
		}
	}
	return got.Bytes()
}

type Doer struct{ C *http.Client }

func (d Doer) Do(r *http.Request) (*http.Response, error) { return d.C.Do(r) }
