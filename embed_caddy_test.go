package memory

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/caddy-memory/memory/internal/embed/embedtest"
)

// TestEmbeddingRecallThroughCaddy: with an embed block, a question that
// shares no word with a memory still recalls it; when the embeddings
// endpoint fails, requests go on with lexical recall and the failure is
// counted.
func TestEmbeddingRecallThroughCaddy(t *testing.T) {
	storage := t.TempDir()
	up := newFakeLLM(t)
	emb := embedtest.NewServer()
	t.Cleanup(emb.Close)
	// The profile off: it would carry the fact whatever the embeddings do.
	tester := startCaddy(t, storageConfig(storage, `embed {
				url `+emb.Endpoint()+`
				model test-embedder
				api_key {env.MEMORY_TEST_EMBED_KEY}
				timeout 2s
				min_similarity 0.5
			}`, up.addr(), "profile off"))

	post(t, tester, "/v1/chat/completions", "sk-emb", chatBody(false, msg("user", "I bike to my job every morning.")))
	settle(t, storage, 1)
	e := engineAt(storage)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := e.WaitEmbedded(ctx); err != nil {
		t.Fatal(err)
	}

	post(t, tester, "/v1/chat/completions", "sk-emb", chatBody(false, msg("user", "How long is my commute to the office?")))
	if body := string(up.last("/chat/completions").Body); !strings.Contains(body, "bike to my job") {
		t.Fatalf("a question sharing no word with the memory did not recall it: %s", body)
	}

	emb.Fail.Store(true)
	before := metric("caddy_memory_embedding_failures_total", "")
	resp, _ := post(t, tester, "/v1/chat/completions", "sk-emb", chatBody(false, msg("user", "Do I bike to my job?")))
	if resp.StatusCode != 200 || !strings.Contains(string(up.last("/chat/completions").Body), "bike to my job") {
		t.Errorf("with the embeddings endpoint down, lexical recall should still work")
	}
	if metric("caddy_memory_embedding_failures_total", "") <= before {
		t.Errorf("the embedding failure was not counted")
	}
}
