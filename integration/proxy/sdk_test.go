package proxy

import (
	"context"
	"strings"
	"testing"

	"github.com/anthropics/anthropic-sdk-go"
	aoption "github.com/anthropics/anthropic-sdk-go/option"
	"github.com/openai/openai-go/v3"
	ooption "github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/responses"

	"github.com/caddy-memory/memory/inject"
	"github.com/caddy-memory/memory/internal/harness"
)

// The official SDKs are the clients here: they send through Caddy, parse
// what comes back (streams included) and must not notice the proxy, while
// the upstream sees the memory they never sent.

const sdkAnswer = "You live in Lisbon; bring sunscreen."

func sdkUpstream(t *testing.T) (*harness.FakeLLM, string, context.Context) {
	storage := t.TempDir()
	up := harness.NewFakeLLM(t)
	up.Answer = func(body []byte) string {
		if strings.Contains(string(body), "Where do I live") {
			return sdkAnswer
		}
		return "Noted."
	}
	return up, storage, t.Context()
}

func TestOpenAISDKChatCompletions(t *testing.T) {
	up, storage, ctx := sdkUpstream(t)
	tester := harness.StartCaddy(t, harness.SiteConfig(storage, up.Addr(), ""))
	client := openai.NewClient(ooption.WithBaseURL(harness.CaddyAddr+"/v1/"), ooption.WithAPIKey("sk-sdk-chat"),
		ooption.WithHTTPClient(tester.Client), ooption.WithMaxRetries(0))

	first, err := client.Chat.Completions.New(ctx, openai.ChatCompletionNewParams{
		Model:    openai.ChatModelGPT4oMini,
		Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage(turn1)},
	})
	if err != nil || first.Choices[0].Message.Content != "Noted." {
		t.Fatalf("SDK chat completion through Caddy: %v %+v", err, first)
	}
	harness.Settle(t, storage, 1)

	stream := client.Chat.Completions.NewStreaming(ctx, openai.ChatCompletionNewParams{
		Model: openai.ChatModelGPT4oMini,
		Messages: []openai.ChatCompletionMessageParamUnion{
			openai.SystemMessage("Be brief."), openai.UserMessage("Where do I live? Suggest a snack without peanuts."),
		},
	})
	var acc openai.ChatCompletionAccumulator
	for stream.Next() {
		acc.AddChunk(stream.Current())
	}
	if err := stream.Err(); err != nil {
		t.Fatalf("SDK stream through Caddy: %v", err)
	}
	if got := acc.Choices[0].Message.Content; got != sdkAnswer {
		t.Errorf("SDK assembled %q, want %q", got, sdkAnswer)
	}
	assertRemembered(t, up.Last("/chat/completions").Body)
}

func TestOpenAISDKResponses(t *testing.T) {
	up, storage, ctx := sdkUpstream(t)
	tester := harness.StartCaddy(t, harness.SiteConfig(storage, up.Addr(), ""))
	client := openai.NewClient(ooption.WithBaseURL(harness.CaddyAddr+"/v1/"), ooption.WithAPIKey("sk-sdk-resp"),
		ooption.WithHTTPClient(tester.Client), ooption.WithMaxRetries(0))

	first, err := client.Responses.New(ctx, responses.ResponseNewParams{
		Model: "gpt-4.1-mini",
		Input: responses.ResponseNewParamsInputUnion{OfString: openai.String(turn1)},
	})
	if err != nil || first.OutputText() != "Noted." {
		t.Fatalf("SDK response through Caddy: %v %+v", err, first)
	}
	harness.Settle(t, storage, 1)

	stream := client.Responses.NewStreaming(ctx, responses.ResponseNewParams{
		Model:        "gpt-4.1-mini",
		Instructions: openai.String("Be brief."),
		Input:        responses.ResponseNewParamsInputUnion{OfString: openai.String("Where do I live? Suggest a snack without peanuts.")},
	})
	var text strings.Builder
	completed := ""
	for stream.Next() {
		ev := stream.Current()
		switch ev.Type {
		case "response.output_text.delta":
			text.WriteString(ev.Delta)
		case "response.completed":
			completed = ev.Response.OutputText()
		}
	}
	if err := stream.Err(); err != nil {
		t.Fatalf("SDK stream through Caddy: %v", err)
	}
	if text.String() != sdkAnswer || completed != sdkAnswer {
		t.Errorf("SDK got deltas %q and completed %q, want %q", text.String(), completed, sdkAnswer)
	}
	assertRemembered(t, up.Last("/responses").Body)
}

func TestAnthropicSDKMessages(t *testing.T) {
	up, storage, ctx := sdkUpstream(t)
	tester := harness.StartCaddy(t, harness.SiteConfig(storage, up.Addr(), ""))
	client := anthropic.NewClient(aoption.WithBaseURL(harness.CaddyAddr+"/"), aoption.WithAPIKey("sk-ant-sdk"),
		aoption.WithHTTPClient(tester.Client), aoption.WithMaxRetries(0))

	first, err := client.Messages.New(ctx, anthropic.MessageNewParams{
		Model: anthropic.ModelClaudeSonnet4_5, MaxTokens: 256,
		Messages: []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock(turn1))},
	})
	if err != nil || len(first.Content) != 1 || first.Content[0].Text != "Noted." {
		t.Fatalf("SDK message through Caddy: %v %+v", err, first)
	}
	harness.Settle(t, storage, 1)

	stream := client.Messages.NewStreaming(ctx, anthropic.MessageNewParams{
		Model: anthropic.ModelClaudeSonnet4_5, MaxTokens: 256,
		System:   []anthropic.TextBlockParam{{Text: "Be brief."}},
		Messages: []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("Where do I live? Suggest a snack without peanuts."))},
	})
	var message anthropic.Message
	for stream.Next() {
		if err := message.Accumulate(stream.Current()); err != nil {
			t.Fatalf("accumulating the stream: %v", err)
		}
	}
	if err := stream.Err(); err != nil {
		t.Fatalf("SDK stream through Caddy: %v", err)
	}
	if len(message.Content) != 1 || message.Content[0].Text != sdkAnswer || message.ID != "msg_sse" {
		t.Errorf("SDK assembled %+v, want %q", message.Content, sdkAnswer)
	}
	assertRemembered(t, up.Last("/v1/messages").Body)
}

// assertRemembered checks the upstream's copy of the second request carried
// the facts the SDK's first request stated.
func assertRemembered(t *testing.T, body []byte) {
	t.Helper()
	for _, want := range []string{inject.BlockEnd, "User lives in Lisbon.", "User is allergic to peanuts."} {
		if !strings.Contains(string(body), want) {
			t.Errorf("upstream request lacks %q:\n%s", want, body)
		}
	}
}
