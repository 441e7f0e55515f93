package proxy

import (
	"strings"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/caddy-memory/memory/inject"
	"github.com/caddy-memory/memory/internal/harness"
)

// remembered starts Caddy with the given memory directives, teaches the
// owner one fact through the chat endpoint, and returns a client, the
// upstream and the owner's key.
func remembered(t *testing.T, directives string) (harness.Doer, *harness.FakeLLM, string) {
	t.Helper()
	storage := t.TempDir()
	up := harness.NewFakeLLM(t)
	tester := harness.StartCaddy(t, harness.SiteConfig(storage, up.Addr(), directives))
	const key = "key-placement"
	harness.Send(t, harness.Doer{C: tester.Client}, up, harness.Wires[0], key, harness.Wires[0].Body(false, "sys", "I live in Lisbon."))
	harness.Settle(t, storage, 1)
	return harness.Doer{C: tester.Client}, up, key
}

var anthropicWire = harness.Wires[2]

var responsesWire = harness.Wires[3]

func TestAnthropicSystemPlacementKeepsCacheControlFirst(t *testing.T) {
	c, up, key := remembered(t, "placement system")
	body := `{"model":"claude-sonnet-4-5","max_tokens":100,` +
		`"system":[{"type":"text","text":"You are terse.","cache_control":{"type":"ephemeral"}}],` +
		`"messages":[{"role":"user","content":"Where do I live?"}]}`
	harness.Send(t, c, up, anthropicWire, key, []byte(body))
	got := up.Last("/v1/messages").Body
	sys := gjson.GetBytes(got, "system").Array()
	if len(sys) != 2 || sys[0].Raw != `{"type":"text","text":"You are terse.","cache_control":{"type":"ephemeral"}}` {
		t.Fatalf("the client's cache_control block must stay first and unchanged: %s", gjson.GetBytes(got, "system").Raw)
	}
	if !strings.Contains(sys[1].Get("text").String(), "User lives in Lisbon.") {
		t.Errorf("block not appended to system: %s", sys[1].Raw)
	}
	if gjson.GetBytes(got, "messages").Raw != `[{"role":"user","content":"Where do I live?"}]` {
		t.Errorf("messages changed under system placement: %s", gjson.GetBytes(got, "messages").Raw)
	}

	// Without a system field, one is added.
	harness.Send(t, c, up, anthropicWire, key, []byte(`{"model":"claude-sonnet-4-5","max_tokens":100,"messages":[{"role":"user","content":"Where do I live?"}]}`))
	if s := gjson.GetBytes(up.Last("/v1/messages").Body, "system").String(); !strings.HasPrefix(s, inject.BlockStart) {
		t.Errorf("no system field added: %q", s)
	}
}

func TestAnthropicBlockGoesAfterToolResults(t *testing.T) {
	c, up, key := remembered(t, "")
	// The user answers a tool call and asks something in the same turn.
	body := `{"model":"claude-sonnet-4-5","max_tokens":100,"messages":[` +
		`{"role":"user","content":"What's the weather?"},` +
		`{"role":"assistant","content":[{"type":"tool_use","id":"toolu_1","name":"weather","input":{}}]},` +
		`{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":"Sunny"},{"type":"text","text":"And where do I live?"}]}]}`
	harness.Send(t, c, up, anthropicWire, key, []byte(body))
	got := up.Last("/v1/messages").Body
	blocks := gjson.GetBytes(got, "messages.2.content").Array()
	if len(blocks) != 3 || blocks[0].Get("type").String() != "tool_result" ||
		!strings.Contains(blocks[1].Get("text").String(), "User lives in Lisbon.") || blocks[2].Get("text").String() != "And where do I live?" {
		t.Fatalf("want [tool_result, block, text], got %s", gjson.GetBytes(got, "messages.2.content").Raw)
	}
	if gjson.GetBytes(got, "messages.1").Raw != `{"role":"assistant","content":[{"type":"tool_use","id":"toolu_1","name":"weather","input":{}}]}` {
		t.Errorf("the tool call changed")
	}
}

func TestAnthropicUserPlacementPrependsToText(t *testing.T) {
	c, up, key := remembered(t, "placement user")
	harness.Send(t, c, up, anthropicWire, key, []byte(`{"model":"claude-sonnet-4-5","max_tokens":100,"messages":[{"role":"user","content":"Where do I live?"}]}`))
	content := gjson.GetBytes(up.Last("/v1/messages").Body, "messages.0.content")
	if content.Type != gjson.String || !strings.HasPrefix(content.String(), inject.BlockStart) || !strings.HasSuffix(content.String(), "\n\nWhere do I live?") {
		t.Errorf("want the block prepended to the string content, got %s", content.Raw)
	}
}

func TestResponsesPlacements(t *testing.T) {
	t.Run("cache_safe turns a string input into items", func(t *testing.T) {
		c, up, key := remembered(t, "")
		harness.Send(t, c, up, responsesWire, key, []byte(`{"model":"gpt-4.1","input":"Where do I live?","instructions":"Be brief."}`))
		got := up.Last("/v1/responses").Body
		items := gjson.GetBytes(got, "input").Array()
		if len(items) != 2 || items[0].Get("role").String() != "system" || items[1].Raw != `{"role":"user","content":"Where do I live?"}` {
			t.Fatalf("want [system block, user], got %s", gjson.GetBytes(got, "input").Raw)
		}
		if gjson.GetBytes(got, "instructions").String() != "Be brief." {
			t.Errorf("instructions changed")
		}
	})
	t.Run("system goes into instructions", func(t *testing.T) {
		c, up, key := remembered(t, "placement system")
		harness.Send(t, c, up, responsesWire, key, []byte(`{"model":"gpt-4.1","input":"Where do I live?","instructions":"Be brief."}`))
		got := up.Last("/v1/responses").Body
		if in := gjson.GetBytes(got, "instructions").String(); !strings.HasPrefix(in, "Be brief.\n\n"+inject.BlockStart) {
			t.Errorf("instructions = %q", in)
		}
		if gjson.GetBytes(got, "input").Raw != `"Where do I live?"` {
			t.Errorf("input changed under system placement")
		}
	})
	t.Run("user prepends an input_text part", func(t *testing.T) {
		c, up, key := remembered(t, "placement user")
		harness.Send(t, c, up, responsesWire, key, []byte(`{"model":"gpt-4.1","input":[{"type":"message","role":"user","content":[{"type":"input_text","text":"Where do I live?"}]}]}`))
		parts := gjson.GetBytes(up.Last("/v1/responses").Body, "input.0.content").Array()
		if len(parts) != 2 || parts[0].Get("type").String() != "input_text" || !strings.Contains(parts[0].Get("text").String(), "User lives in Lisbon.") {
			t.Errorf("want a leading input_text block, got %v", parts)
		}
	})
}

// TestModelsWithoutSystemRoleGetUserPlacement: o1-mini rejects system
// messages; its requests carry the block in the user turn instead.
func TestModelsWithoutSystemRoleGetUserPlacement(t *testing.T) {
	c, up, key := remembered(t, "")
	for model, wantUser := range map[string]bool{"o1-mini": true, "openai/o1-preview-2024-09-12": true, "gpt-4o": false} {
		harness.Send(t, c, up, harness.Wires[0], key, harness.MustBytes(map[string]any{"model": model,
			"messages": []any{map[string]any{"role": "user", "content": "Where do I live?"}}}))
		msgs := gjson.GetBytes(up.Last("/chat/completions").Body, "messages").Array()
		if wantUser {
			if len(msgs) != 1 || !strings.HasPrefix(msgs[0].Get("content").String(), inject.BlockStart) {
				t.Errorf("%s: want the block in the user message, got %v", model, msgs)
			}
		} else if len(msgs) != 2 || msgs[0].Get("role").String() != "system" {
			t.Errorf("%s: want cache_safe placement, got %v", model, msgs)
		}
	}
}

// TestFormatOverride: a route on an unusual path says what it speaks.
func TestFormatOverride(t *testing.T) {
	storage := t.TempDir()
	up := harness.NewFakeLLM(t)
	tester := harness.StartCaddy(t, harness.WithStorage(storage, "")+`http://localhost {
	memory /claude/* {
		format anthropic
	}
	reverse_proxy `+up.Addr()+` {
		rewrite /v1/messages
	}
}`)
	c := harness.Doer{C: tester.Client}
	w := anthropicWire
	w.Path = "/claude/send"
	harness.Send(t, c, up, w, "key-format", w.Body(false, "sys", "I live in Lisbon."))
	harness.Settle(t, storage, 1)
	harness.Send(t, c, up, w, "key-format", w.Body(false, "sys", "Where do I live?"))
	if !strings.Contains(string(up.Last("/v1/messages").Body), "User lives in Lisbon.") {
		t.Errorf("a request on /claude/send was not handled as anthropic")
	}
}
