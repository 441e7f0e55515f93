package proxy

import (
	"bytes"
	"strings"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/caddy-memory/memory/inject"
	"github.com/caddy-memory/memory/internal/harness"
)

// TestEveryDialectRemembers: for each wire format, streamed and not, a fact
// told in turn 1 reaches the upstream in turn 2 where that format's
// cache_safe placement puts it, every byte before it unchanged, while the
// client receives the upstream's answer byte for byte and chunk by chunk.
func TestEveryDialectRemembers(t *testing.T) {
	for _, w := range harness.Wires {
		for _, stream := range []bool{false, true} {
			name := w.Name + "/json"
			if stream {
				name = w.Name + "/stream"
			}
			t.Run(name, func(t *testing.T) { testDialect(t, w, stream) })
		}
	}
}

func testDialect(t *testing.T, w harness.Wire, stream bool) {
	storage := t.TempDir()
	up := harness.NewFakeLLM(t)
	up.Answer = func(body []byte) string {
		if strings.Contains(string(body), "Where do I live") {
			return "You live in Lisbon, so try a pastel de nata without peanuts."
		}
		return "Nice to meet you, Ana."
	}
	if stream {
		up.Gate = make(chan struct{})
	}
	tester := harness.StartCaddy(t, harness.SiteConfig(storage, up.Addr(), ""))
	client := harness.Doer{C: tester.Client}
	key := "key-" + w.Name

	const system = "You are a helpful assistant."
	got := harness.Send(t, client, up, w, key, w.Body(stream, system, turn1))
	first := up.Last(w.Path)
	if !bytes.Equal(got, first.Response) {
		t.Fatalf("client did not get the upstream's bytes\nclient:   %q\nupstream: %q", got, first.Response)
	}
	if harness.HasBlock(first.Body) {
		t.Fatalf("turn 1 had nothing to remember yet, but a block was injected")
	}
	harness.Settle(t, storage, 1)

	clientBody := w.Body(stream, system, turn1, "Nice to meet you, Ana.", turn2)
	got = harness.Send(t, client, up, w, key, clientBody)
	second := up.Last(w.Path)
	if !bytes.Equal(got, second.Response) {
		t.Fatalf("client did not get the upstream's bytes\nclient:   %q\nupstream: %q", got, second.Response)
	}
	at, block := w.CacheSafe(t, clientBody, second.Body)
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
	harness.Settle(t, storage, 2)
	if res := harness.SearchFor(t, harness.EngineAt(storage), key, "pastel nata"); !strings.Contains(res, "Assistant: You live in Lisbon, so try a pastel de nata") {
		t.Errorf("the %s answer was not remembered: %q", w.Name, res)
	}
}
