package learning

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/caddy-memory/memory/internal/embed/embedtest"
	"github.com/caddy-memory/memory/internal/harness"
)

// TestEmbeddingRecallThroughCaddy: with an embed block, a question that
// shares no word with a memory still recalls it; when the embeddings
// endpoint fails, requests go on with lexical recall and the failure is
// counted.
func TestEmbeddingRecallThroughCaddy(t *testing.T) {
	storage := t.TempDir()
	up := harness.NewFakeLLM(t)
	emb := embedtest.NewServer()
	t.Cleanup(emb.Close)
	// The profile off: it would carry the fact whatever the embeddings do.
	tester := harness.StartCaddy(t, harness.StorageConfig(storage, `embed {
				url `+emb.Endpoint()+`
				model test-embedder
				api_key {env.MEMORY_TEST_EMBED_KEY}
				timeout 2s
				min_similarity 0.5
			}`, up.Addr(), "profile off"))

	harness.Post(t, tester, "/v1/chat/completions", "sk-emb", harness.ChatBody(false, harness.Msg("user", "I bike to my job every morning.")))
	harness.Settle(t, storage, 1)
	e := harness.EngineAt(storage)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := e.WaitEmbedded(ctx); err != nil {
		t.Fatal(err)
	}

	harness.Post(t, tester, "/v1/chat/completions", "sk-emb", harness.ChatBody(false, harness.Msg("user", "How long is my commute to the office?")))
	if body := string(up.Last("/chat/completions").Body); !strings.Contains(body, "bike to my job") {
		t.Fatalf("a question sharing no word with the memory did not recall it: %s", body)
	}

	emb.Fail.Store(true)
	before := harness.Metric("caddy_memory_embedding_failures_total", "")
	resp, _ := harness.Post(t, tester, "/v1/chat/completions", "sk-emb", harness.ChatBody(false, harness.Msg("user", "Do I bike to my job?")))
	if resp.StatusCode != 200 || !strings.Contains(string(up.Last("/chat/completions").Body), "bike to my job") {
		t.Errorf("with the embeddings endpoint down, lexical recall should still work")
	}
	if harness.Metric("caddy_memory_embedding_failures_total", "") <= before {
		t.Errorf("the embedding failure was not counted")
	}
}
