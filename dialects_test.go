package memory

import (
	"bufio"
	"bytes"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/caddy-memory/memory/inject"
)

// wire describes how a test speaks one format: the path, how to build a
// request, and where cache_safe placement must put the block.
type wire struct {
	name   string
	path   string
	ndjson bool // streams are newline-delimited JSON rather than SSE
	// body builds a request: a system prompt, then alternating user and
	// assistant texts ending with a user text.
	body func(stream bool, system string, turns ...string) []byte
	// latest returns the byte offset of the latest user message in a body
	// the client sent, and the block cache_safe placed in the upstream's
	// version of it (failing the test when it is not where it belongs).
	cacheSafe func(t *testing.T, client, upstream []byte) (offset int, block string)
}

func roles(turns []string) func(i int) string {
	return func(i int) string {
		if i%2 == 0 {
			return "user"
		}
		return "assistant"
	}
}

var wires = []wire{
	{
		name: "openai_chat", path: "/v1/chat/completions",
		body: func(stream bool, system string, turns ...string) []byte {
			msgs := []any{map[string]any{"role": "system", "content": system}}
			role := roles(turns)
			for i, t := range turns {
				msgs = append(msgs, map[string]any{"role": role(i), "content": t})
			}
			return mustBytes(map[string]any{"model": "gpt-4o-mini", "stream": stream, "messages": msgs})
		},
		cacheSafe: chatCacheSafe("messages"),
	},
	{
		name: "ollama", path: "/api/chat", ndjson: true,
		body: func(stream bool, system string, turns ...string) []byte {
			msgs := []any{map[string]any{"role": "system", "content": system}}
			role := roles(turns)
			for i, t := range turns {
				msgs = append(msgs, map[string]any{"role": role(i), "content": t})
			}
			return mustBytes(map[string]any{"model": "llama3.2", "stream": stream, "messages": msgs,
				"options": map[string]any{"temperature": 0.1}})
		},
		cacheSafe: chatCacheSafe("messages"),
	},
	{
		name: "anthropic", path: "/v1/messages",
		body: func(stream bool, system string, turns ...string) []byte {
			var msgs []any
			role := roles(turns)
			for i, t := range turns {
				msgs = append(msgs, map[string]any{"role": role(i), "content": t})
			}
			return mustBytes(map[string]any{"model": "claude-sonnet-4-5", "max_tokens": 1024, "stream": stream,
				"system": system, "messages": msgs})
		},
		cacheSafe: func(t *testing.T, client, upstream []byte) (int, string) {
			t.Helper()
			at := lastElementOffset(t, client, "messages")
			// The latest user turn became blocks: ours first, then the user's words.
			last := lastElement(t, upstream, "messages")
			c := last.Get("content")
			if !c.IsArray() || len(c.Array()) != 2 || c.Get("0.type").String() != "text" {
				t.Fatalf("want the latest user turn as [block, text], got %s", last.Raw)
			}
			want := lastElement(t, client, "messages").Get("content").String()
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
		name: "openai_responses", path: "/v1/responses",
		body: func(stream bool, system string, turns ...string) []byte {
			var items []any
			role := roles(turns)
			for i, t := range turns {
				items = append(items, map[string]any{"role": role(i), "content": t})
			}
			return mustBytes(map[string]any{"model": "gpt-4.1-mini", "stream": stream, "instructions": system,
				"input": items, "store": false})
		},
		cacheSafe: chatCacheSafe("input"),
	},
}

// chatCacheSafe checks the block went in as a system message right before
// the latest user message of the named array.
func chatCacheSafe(array string) func(t *testing.T, client, upstream []byte) (int, string) {
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
		return lastElementOffset(t, client, array), sys.Get("content").String()
	}
}

func mustBytes(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

func lastElement(t *testing.T, body []byte, array string) gjson.Result {
	t.Helper()
	a := gjson.GetBytes(body, array).Array()
	if len(a) == 0 {
		t.Fatalf("no %s in %s", array, body)
	}
	return a[len(a)-1]
}

func lastElementOffset(t *testing.T, body []byte, array string) int {
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

// send posts a request through Caddy with an API key (Authorization for all
// but Anthropic, whose SDKs send x-api-key) and reads the answer the way a
// streaming client does, releasing the upstream's gate after each chunk.
func send(t *testing.T, tester interface {
	Do(*http.Request) (*http.Response, error)
}, up *fakeLLM, w wire, key string, body []byte) []byte {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, caddyAddr+w.path, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	if w.name == "anthropic" {
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
		if up.gate != nil && (w.ndjson || len(bytes.TrimSpace(line)) == 0) {
			up.gate <- struct{}{}
		}
	}
	return got.Bytes()
}

type doer struct{ c *http.Client }

func (d doer) Do(r *http.Request) (*http.Response, error) { return d.c.Do(r) }

// TestEveryDialectRemembers: for each wire format, streamed and not, a fact
// told in turn 1 reaches the upstream in turn 2 where that format's
// cache_safe placement puts it, every byte before it unchanged, while the
// client receives the upstream's answer byte for byte and chunk by chunk.
func TestEveryDialectRemembers(t *testing.T) {
	for _, w := range wires {
		for _, stream := range []bool{false, true} {
			name := w.name + "/json"
			if stream {
				name = w.name + "/stream"
			}
			t.Run(name, func(t *testing.T) { testDialect(t, w, stream) })
		}
	}
}

func testDialect(t *testing.T, w wire, stream bool) {
	storage := t.TempDir()
	up := newFakeLLM(t)
	up.answer = func(body []byte) string {
		if strings.Contains(string(body), "Where do I live") {
			return "You live in Lisbon, so try a pastel de nata without peanuts."
		}
		return "Nice to meet you, Ana."
	}
	if stream {
		up.gate = make(chan struct{})
	}
	tester := startCaddy(t, siteConfig(storage, up.addr(), ""))
	client := doer{tester.Client}
	key := "key-" + w.name

	const system = "You are a helpful assistant."
	got := send(t, client, up, w, key, w.body(stream, system, turn1))
	first := up.last(w.path)
	if !bytes.Equal(got, first.Response) {
		t.Fatalf("client did not get the upstream's bytes\nclient:   %q\nupstream: %q", got, first.Response)
	}
	if hasBlock(first.Body) {
		t.Fatalf("turn 1 had nothing to remember yet, but a block was injected")
	}
	settle(t, storage, 1)

	clientBody := w.body(stream, system, turn1, "Nice to meet you, Ana.", turn2)
	got = send(t, client, up, w, key, clientBody)
	second := up.last(w.path)
	if !bytes.Equal(got, second.Response) {
		t.Fatalf("client did not get the upstream's bytes\nclient:   %q\nupstream: %q", got, second.Response)
	}
	at, block := w.cacheSafe(t, clientBody, second.Body)
	if !bytes.HasPrefix(second.Body, clientBody[:at]) {
		t.Errorf("bytes before the latest user turn changed\nclient:   %s\nupstream: %s", clientBody, second.Body)
	}
	if !gjson.ValidBytes(second.Body) {
		t.Fatalf("upstream received invalid JSON: %s", second.Body)
	}
	for _, want := range []string{inject.BlockStart, inject.BlockEnd, "User lives in Lisbon.", "User is allergic to peanuts."} {
		if !strings.Contains(block, want) {
			t.Errorf("injected block lacks %q:\n%s", want, block)
		}
	}
	if n := strings.Count(string(second.Body), inject.BlockEnd); n != 1 {
		t.Errorf("the block appears %d times", n)
	}

	// The answer was learned from the copy of this format's response.
	settle(t, storage, 2)
	if res := searchFor(t, engineAt(storage), key, "pastel nata"); !strings.Contains(res, "Assistant: You live in Lisbon, so try a pastel de nata") {
		t.Errorf("the %s answer was not remembered: %q", w.name, res)
	}
}
