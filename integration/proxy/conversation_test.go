package proxy

import (
	"bufio"
	"bytes"
	"net/http"
	"strings"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/caddy-memory/memory/inject"
	"github.com/caddy-memory/memory/internal/harness"
)

const (
	turn1 = "Hi! My name is Ana and I live in Lisbon. I'm allergic to peanuts."
	turn2 = "Where do I live again? And suggest a snack without peanuts."
)

// TestTwoTurnConversation is the product in one test: a fact told in turn 1
// reaches the upstream in turn 2, where the placement says, while the client
// sees the upstream's bytes unchanged.
func TestTwoTurnConversation(t *testing.T) {
	for _, stream := range []bool{false, true} {
		for _, placement := range []string{"cache_safe", "system", "user"} {
			name := placement + "/json"
			if stream {
				name = placement + "/sse"
			}
			t.Run(name, func(t *testing.T) { testTwoTurns(t, stream, placement) })
		}
	}
}

func testTwoTurns(t *testing.T, stream bool, placement string) {
	storage := t.TempDir()
	up := harness.NewFakeOpenAI(t)
	up.Answer = func(body []byte) string {
		if strings.Contains(string(body), "Where do I live") {
			return "You live in Lisbon. Try roasted chickpeas."
		}
		return "Nice to meet you, Ana."
	}
	tester := harness.StartCaddy(t, harness.SiteConfig(storage, up.Addr(), "placement "+placement))
	const key = "sk-ana-0001"

	sys := harness.Msg("system", "You are a helpful assistant.")
	u1 := harness.Msg("user", turn1)
	_, got := harness.Post(t, tester, "/v1/chat/completions", key, harness.ChatBody(stream, sys, u1))
	first := up.Last("/chat/completions")
	if !bytes.Equal(got, first.Response) {
		t.Fatalf("client did not get the upstream's bytes\nclient:   %q\nupstream: %q", got, first.Response)
	}
	if harness.HasBlock(first.Body) {
		t.Fatalf("turn 1 had nothing to remember yet, but a block was injected: %s", first.Body)
	}
	harness.Settle(t, storage, 1)

	a1 := harness.Msg("assistant", "Nice to meet you, Ana.")
	u2 := harness.Msg("user", turn2)
	clientBody := harness.ChatBody(stream, sys, u1, a1, u2)
	resp, got := harness.Post(t, tester, "/v1/chat/completions", key, clientBody)
	second := up.Last("/chat/completions")
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("turn 2 status %d", resp.StatusCode)
	}
	if !bytes.Equal(got, second.Response) {
		t.Fatalf("client did not get the upstream's bytes\nclient:   %q\nupstream: %q", got, second.Response)
	}
	if ae := second.Header.Get("Accept-Encoding"); ae != "identity" {
		t.Errorf("upstream Accept-Encoding = %q, want identity so the copy is readable", ae)
	}
	if stream && !strings.Contains(string(got), "data: [DONE]") {
		t.Errorf("stream not complete: %q", got)
	}

	msgs := harness.Messages(t, second.Body)
	var block string
	switch placement {
	case "cache_safe":
		if len(msgs) != 5 || msgs[3]["role"] != "system" || msgs[4]["role"] != "user" {
			t.Fatalf("want the block as a system message just before the latest user turn, got %v", msgs)
		}
		block = harness.ContentString(t, msgs[3])
		// Everything before the latest user turn is byte-identical, so the
		// provider's prompt cache keeps hitting.
		at := lastMessageOffset(t, clientBody)
		if !bytes.HasPrefix(second.Body, clientBody[:at]) || !bytes.HasSuffix(second.Body, clientBody[at:]) {
			t.Errorf("bytes around the injected message changed\nclient:   %s\nupstream: %s", clientBody, second.Body)
		}
	case "system":
		if len(msgs) != 4 || msgs[0]["role"] != "system" {
			t.Fatalf("want the block in the leading system message, got %v", msgs)
		}
		block = harness.ContentString(t, msgs[0])
		if !strings.HasPrefix(block, "You are a helpful assistant.") {
			t.Errorf("the client's system prompt was not kept first: %q", block)
		}
	case "user":
		if len(msgs) != 4 || msgs[3]["role"] != "user" {
			t.Fatalf("want no new message, got %v", msgs)
		}
		block = harness.ContentString(t, msgs[3])
		if !strings.HasPrefix(block, inject.BlockStart) || !strings.HasSuffix(block, turn2) {
			t.Errorf("want the block prepended to the user's words, got %q", block)
		}
	}
	for _, want := range []string{inject.BlockStart, inject.BlockEnd, "User lives in Lisbon.", "User is allergic to peanuts."} {
		if !strings.Contains(block, want) {
			t.Errorf("injected block lacks %q:\n%s", want, block)
		}
	}
	for i, m := range msgs {
		if i != 3 && placement == "cache_safe" && strings.Contains(harness.ContentString(t, m), inject.BlockStart) {
			t.Errorf("block also appears in message %d", i)
		}
	}
}

// lastMessageOffset is where the last message object of a chat body starts.
func lastMessageOffset(t *testing.T, body []byte) int {
	t.Helper()
	at := -1
	gjson.GetBytes(body, "messages").ForEach(func(_, m gjson.Result) bool {
		at = m.Index
		return true
	})
	if at <= 0 {
		t.Fatal("no messages")
	}
	return at
}

// TestStreamArrivesChunkByChunk proves nothing between the upstream and the
// client holds a streamed chunk back: the upstream does not send the next
// chunk until the client has read the previous one, so any buffering
// deadlocks and fails the test.
func TestStreamArrivesChunkByChunk(t *testing.T) {
	storage := t.TempDir()
	up := harness.NewFakeOpenAI(t)
	up.Answer = func([]byte) string { return "one two three four five six seven eight" }
	up.Gate = make(chan struct{})
	tester := harness.StartCaddy(t, harness.SiteConfig(storage, up.Addr(), ""))

	resp := startStream(t, tester.Client, "sk-stream", harness.ChatBody(true, harness.Msg("user", "Count to eight for me, I love counting.")))
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("content type %q", ct)
	}
	var got bytes.Buffer
	events := 0
	r := bufio.NewReader(resp.Body)
	for {
		line, err := r.ReadBytes('\n')
		got.Write(line)
		if err != nil {
			break
		}
		if len(bytes.TrimSpace(line)) == 0 { // end of one event: let the next one go
			events++
			up.Gate <- struct{}{}
		}
	}
	if want := up.Last("/chat/completions").Response; !bytes.Equal(got.Bytes(), want) {
		t.Errorf("stream differs from the upstream's\nclient:   %q\nupstream: %q", got.Bytes(), want)
	}
	if events != 11 { // role, eight words, finish, [DONE]
		t.Errorf("%d events arrived, want 11", events)
	}

	// The streamed turn was remembered from the copy.
	harness.Settle(t, storage, 1)
	e := harness.EngineAt(storage)
	res := harness.SearchFor(t, e, "sk-stream", "counting")
	if !strings.Contains(res, "User loves counting.") || !strings.Contains(res, "Assistant: one two three four five six seven eight") {
		t.Errorf("streamed turn not remembered: %q", res)
	}
}

// startStream posts a streamed chat request through Caddy with key as a
// bearer token and returns the response, its body still to be read.
func startStream(t *testing.T, c *http.Client, key string, body []byte) *http.Response {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, harness.CaddyAddr+"/v1/chat/completions", bytes.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}
