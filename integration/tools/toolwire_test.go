package tools

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/caddy-memory/memory/internal/harness"
	"github.com/caddy-memory/memory/internal/memtools"
)

// What the proxy's tool rounds do to the HTTP answer itself, through real
// Caddy: a long answer, and the headers of the handlers before memory.

// TestMemoryToolsLongAnswer: with tools on, an answer longer than
// max_capture is not held: it reaches the client byte for byte while the
// upstream is still writing it, the proxy asks no second round (the answer
// calls save_memory), and Caddy allocates a fraction of its size for it.
func TestMemoryToolsLongAnswer(t *testing.T) {
	const size = 4 << 20
	long := strings.Repeat("The user wrote a very long story. ", size/34)
	cases := []struct {
		name, path, ctype string
		answer            []byte
		length            bool // the upstream says its Content-Length
	}{
		{"openai_chat", "/v1/chat/completions", "application/json", harness.MustBytes(map[string]any{"id": "chatcmpl-long", "object": "chat.completion",
			"choices": []any{map[string]any{"index": 0, "finish_reason": "tool_calls", "message": map[string]any{"role": "assistant", "content": nil,
				"tool_calls": []any{map[string]any{"id": "call_1", "type": "function", "function": map[string]any{"name": "save_memory",
					"arguments": harness.MustJSON(map[string]any{"content": long})}}}}}},
			"usage": map[string]any{"prompt_tokens": 10, "completion_tokens": 3, "total_tokens": 13}}), false},
		{"ollama", "/api/chat", "application/json; charset=utf-8", harness.MustBytes(map[string]any{"model": "llama-fake", "done": true, "done_reason": "stop",
			"message": map[string]any{"role": "assistant", "content": "", "tool_calls": []any{map[string]any{"function": map[string]any{
				"name": "save_memory", "arguments": map[string]any{"content": long}}}}}}), false},
	}
	for i := range len(cases) {
		c := cases[i]
		c.name, c.length = c.name+"/content-length", true
		cases = append(cases, c)
	}
	release := map[string]chan struct{}{}
	asked := map[string]*atomic.Int32{}
	for _, c := range cases {
		release[c.name], asked[c.name] = make(chan struct{}), new(atomic.Int32)
	}
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		name := r.Header.Get("X-Case")
		for _, c := range cases {
			if c.name != name {
				continue
			}
			w.Header().Set("Content-Type", c.ctype)
			if asked[name].Add(1) > 1 {
				_, _ = w.Write([]byte(`{"choices":[{"index":0,"message":{"role":"assistant","content":"a second round"}}]}`))
				return
			}
			if c.length {
				w.Header().Set("Content-Length", strconv.Itoa(len(c.answer)))
			}
			half := len(c.answer) / 2
			_, _ = w.Write(c.answer[:half])
			_ = http.NewResponseController(w).Flush()
			select {
			case <-release[name]:
			case <-time.After(10 * time.Second):
			}
			_, _ = w.Write(c.answer[half:])
		}
	}))
	defer up.Close()
	storage := t.TempDir()
	tester := harness.StartCaddy(t, harness.SiteConfig(storage, strings.TrimPrefix(up.URL, "http://"), "tools\n\t\tmax_capture 64KiB"))
	// A first request of each format, not measured: what the process sets
	// up once (tables read on first use) is no part of an answer's cost.
	for _, c := range cases {
		harness.SendChat(t, tester.Client, c.path, "key-long-answer", map[string]string{"X-Case": "warm-up"},
			[]byte(`{"model":"m","stream":false,"messages":[{"role":"user","content":"Tell me a long story."}]}`))
	}

	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			body := `{"model":"m","stream":false,"messages":[{"role":"user","content":"Tell me a long story."}]}`
			req, _ := http.NewRequest(http.MethodPost, harness.CaddyAddr+c.path, strings.NewReader(body))
			req.Header.Set("Authorization", "Bearer key-long-answer")
			req.Header.Set("X-Case", c.name)
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			first := make(chan struct{})
			type result struct {
				sum [32]byte
				n   int64
				err error
			}
			done := make(chan result, 1)
			go func() {
				resp, err := tester.Client.Do(req)
				if err != nil {
					close(first)
					done <- result{err: err}
					return
				}
				defer resp.Body.Close()
				b := make([]byte, 1)
				_, err = io.ReadFull(resp.Body, b)
				close(first)
				h := sha256.New()
				h.Write(b)
				n, err2 := io.Copy(h, resp.Body)
				if err == nil {
					err = err2
				}
				var sum [32]byte
				copy(sum[:], h.Sum(nil))
				done <- result{sum, n + 1, err}
			}()
			select {
			case <-first:
			case <-time.After(10 * time.Second):
				t.Error("no byte of the answer reached the client while the upstream was still writing it")
			}
			close(release[c.name])
			var res result
			select {
			case res = <-done:
			case <-time.After(20 * time.Second):
				t.Fatal("the answer never ended")
			}
			runtime.ReadMemStats(&after)
			if res.err != nil {
				t.Fatal(res.err)
			}
			if res.sum != sha256.Sum256(c.answer) {
				t.Errorf("the client got %d bytes, not the upstream's %d as they came", res.n, len(c.answer))
			}
			if n := asked[c.name].Load(); n != 1 {
				t.Errorf("the upstream was asked %d times, want once: past max_capture the rounds stop", n)
			}
			// Holding the answer takes at least its size; the process's
			// other work in the window (learning the turn before, under the
			// race detector) has been seen to take up to half of it.
			alloc := after.TotalAlloc - before.TotalAlloc
			t.Logf("%d bytes allocated for an answer of %d", alloc, len(c.answer))
			if alloc > uint64(len(c.answer))*3/4 {
				t.Errorf("%d bytes allocated for an answer of %d: it was held", alloc, len(c.answer))
			}
		})
	}
}

// TestMemoryToolsKeepHeaders: with tools on, the headers the handlers
// before memory set (Caddy's header directive, memory's diagnostics) reach
// the client, JSON and streamed, with and without a tool round; the
// upstream's headers are its last round's only, and a JSON answer's
// Content-Length is its length.
func TestMemoryToolsKeepHeaders(t *testing.T) {
	storage := t.TempDir()
	up := harness.NewFakeLLM(t)
	up.Answer = func(body []byte) string {
		if toolOutputs(body) == "" && bytes.Contains(body, []byte("look it up")) {
			return harness.ToolPrefix + `recall_memory {"query":"dog"}`
		}
		return "Your dog is called Biscuit."
	}
	var rounds atomic.Int32
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Upstream-Round", strconv.Itoa(int(rounds.Add(1))))
		up.Serve(w, r)
	}))
	defer front.Close()
	tester := harness.StartCaddy(t, harness.WithStorage(storage, "")+fmt.Sprintf(`http://localhost {
	header {
		Strict-Transport-Security "max-age=31536000"
		Access-Control-Allow-Origin https://app.example
		X-Frame-Options DENY
	}
	memory {
		tools
		diagnostics
	}
	reverse_proxy %s
}
`, strings.TrimPrefix(front.URL, "http://")))
	want := map[string]string{"Strict-Transport-Security": "max-age=31536000",
		"Access-Control-Allow-Origin": "https://app.example", "X-Frame-Options": "DENY"}
	for _, w := range harness.Wires {
		for _, stream := range []bool{false, true} {
			for _, toolRound := range []bool{false, true} {
				t.Run(fmt.Sprintf("%s/stream=%v/tool_round=%v", w.Name, stream, toolRound), func(t *testing.T) {
					q := "What is my dog called?"
					if toolRound {
						q += " Please look it up."
					}
					before := rounds.Load()
					resp, body := harness.Post(t, tester, w.Path, fmt.Sprintf("key-headers-%s-%v-%v", w.Name, stream, toolRound), w.Body(stream, "sys", q))
					if !bytes.Contains(body, []byte("Biscuit")) {
						t.Fatalf("answer: %s", body)
					}
					if n := rounds.Load() - before; n != map[bool]int32{false: 1, true: 2}[toolRound] {
						t.Errorf("the upstream was asked %d times", n)
					}
					for k, v := range want {
						if got := resp.Header.Values(k); len(got) != 1 || got[0] != v {
							t.Errorf("%s: %q, want %q", k, got, v)
						}
					}
					if resp.Header.Get("X-Memory-Status") == "" || resp.Header.Get("X-Memory-Injected") == "" {
						t.Errorf("the diagnostics headers are gone: %v", resp.Header)
					}
					if got := resp.Header.Values("X-Upstream-Round"); len(got) != 1 || got[0] != strconv.Itoa(int(rounds.Load())) {
						t.Errorf("X-Upstream-Round %q, want the last round's alone (%d)", got, rounds.Load())
					}
					if got := resp.Header.Values("Via"); len(got) != 1 {
						t.Errorf("Via %q, want reverse_proxy's one", got)
					}
					if cl := resp.Header.Values("Content-Length"); !stream && (len(cl) != 1 || cl[0] != strconv.Itoa(len(body))) {
						t.Errorf("Content-Length %q for a body of %d", cl, len(body))
					}
				})
			}
		}
	}
}

// TestMemoryToolAfterLongText: a stream that talks past max_capture, then
// calls the proxy's tools, has reached the client event by event; the
// proxy does not keep all it said to ask again with it: past max_capture
// the rest of the stream goes as it came, the call with it, and the rounds
// stop.
func TestMemoryToolAfterLongText(t *testing.T) {
	storage := t.TempDir()
	long := strings.Repeat("The user told a very long story. ", 2<<10) // 66 KiB, word by word
	up := harness.NewFakeLLM(t)
	up.Answer = func([]byte) string {
		return long + harness.ToolPrefix + `save_memory {"content":"The user tells long stories."}`
	}
	tester := harness.StartCaddy(t, harness.WithStorage(storage, "")+fmt.Sprintf(`http://localhost {
	memory {
		tools
		max_capture 16KiB
	}
	reverse_proxy %s
}
`, up.Addr()))
	for _, w := range harness.Wires {
		t.Run(w.Name, func(t *testing.T) {
			before := len(up.All())
			c := toolClient{t: t, tester: tester, up: up, key: "key-long-talk", stream: true}
			r := c.ask(w, "Tell me a long story.")
			if r.text != long || len(r.calls) != 1 || r.calls[0] != memtools.Save || r.done != spent[w.Name] {
				t.Errorf("client got %d bytes of text, calls %v, end %q; want the %d bytes said, then the call as it came (end %q)",
					len(r.text), r.calls, r.done, len(long), spent[w.Name])
			}
			rounds(t, up, before, r, 1)
		})
	}
}

// TestMemoryToolParallelCallsInterleaved: a stream whose parallel tool
// calls interleave their arguments (OpenAI's chunks name each call by
// index, in any order) reaches the client's SDK with its own call whole,
// and the proxy's call beside it is run.
func TestMemoryToolParallelCallsInterleaved(t *testing.T) {
	storage := t.TempDir()
	chunk := func(delta string) string {
		return `data: {"id":"chatcmpl-par","object":"chat.completion.chunk","created":1,"model":"fake","choices":[{"index":0,"delta":` + delta + `,"finish_reason":null}]}` + "\n\n"
	}
	args := func(index int, args string) string {
		return chunk(fmt.Sprintf(`{"tool_calls":[{"index":%d,"function":{"arguments":%q}}]}`, index, args))
	}
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		parts := []string{
			chunk(`{"role":"assistant","content":null}`),
			chunk(`{"tool_calls":[{"index":0,"id":"call_m","type":"function","function":{"name":"save_memory","arguments":""}}]}`),
			chunk(`{"tool_calls":[{"index":1,"id":"call_w","type":"function","function":{"name":"get_weather","arguments":""}}]}`),
			args(0, `{"content":"The user hikes `),
			args(1, `{"city":`),
			args(0, `near Oslo."}`),
			args(1, `"Oslo"}`),
			`data: {"id":"chatcmpl-par","object":"chat.completion.chunk","created":1,"model":"fake","choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}` + "\n\n",
			`data: {"id":"chatcmpl-par","object":"chat.completion.chunk","created":1,"model":"fake","choices":[],"usage":{"prompt_tokens":10,"completion_tokens":3,"total_tokens":13}}` + "\n\n",
			"data: [DONE]\n\n",
		}
		for _, p := range parts {
			_, _ = io.WriteString(w, p)
			_ = http.NewResponseController(w).Flush()
		}
	}))
	defer up.Close()
	tester := harness.StartCaddy(t, toolsConfig(storage, strings.TrimPrefix(up.URL, "http://")))
	c := toolClient{t: t, tester: tester, key: "key-parallel", stream: true, weather: true}
	r := c.ask(harness.Wires[0], "I hike near Oslo. How is the weather?")
	if len(r.calls) != 1 || r.calls[0] != "get_weather" || r.callID != "call_w" || r.done != "tool_calls" {
		t.Fatalf("client got %+v, want its own get_weather call", r)
	}
	api := harness.APICall{T: t, Client: tester.Client}
	var got []string
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		_, out := api.Do("GET", "/memory/memories?source=tool", c.key, nil)
		if got = harness.ListContents(out); len(got) > 0 {
			break
		}
	}
	if len(got) != 1 || got[0] != "The user hikes near Oslo." {
		t.Errorf("saved by the tool: %q", got)
	}
}
