package storage

import (
	"fmt"
	"strings"
	"testing"

	"github.com/caddy-memory/memory/internal/harness"
	"github.com/caddy-memory/memory/internal/llm/llmtest"
)

// TestRefusedReloadChangesNothing: a reload that Caddy refuses (here a
// handler naming a storage that does not exist) leaves the running
// storage as it was, although the refused configuration gave it another
// key and no llm: the key stays the running one (the storage is not
// re-encrypted to a key the running configuration does not have) and the
// model still learns. Before, the storage took the refused configuration's
// settings while it was provisioned.
func TestRefusedReloadChangesNothing(t *testing.T) {
	model := llmtest.NewServer()
	defer model.Close()
	storage := t.TempDir()
	up := harness.NewFakeLLM(t)
	t.Setenv("MEMORY_TEST_KEY", keyA)
	t.Setenv("MEMORY_TEST_KEY_B", keyB)
	llm := fmt.Sprintf(`llm {
				url %s
				model distiller-1
				debounce 100ms
			}`, model.Endpoint())
	running := harness.StorageConfig(storage, encryptionBlock("key {env.MEMORY_TEST_KEY}")+"\n\t\t\t"+llm, up.Addr(), "")
	tester := harness.StartCaddy(t, running)

	refused := harness.StorageConfig(storage, encryptionBlock("key {env.MEMORY_TEST_KEY_B}\n\t\t\t\told_keys {env.MEMORY_TEST_KEY}"), up.Addr(), "") +
		fmt.Sprintf("http://127.0.0.1 {\n\tmemory {\n\t\tstorage nosuch\n\t}\n\treverse_proxy %s\n}\n", up.Addr())
	if status, body := harness.LoadConfig(t, refused); status == 200 || !strings.Contains(body, `no memory storage is named \"nosuch\"`) {
		t.Fatalf("a handler naming no storage: %d %s", status, body)
	}

	if got, want := harness.EngineAt(storage).Encryption().KeyID, keyID(t, keyA); got != want {
		t.Errorf("after a refused reload the storage is sealed with key id %s, want the running key's %s", got, want)
	}
	harness.Post(t, tester, "/v1/chat/completions", "sk-refused", harness.ChatBody(false, harness.Msg("user", "My sister is called Zofia.")))
	harness.Settle(t, storage, 1)
	waitForCall(t, model, "the model was never called after a refused reload: the refused configuration turned llm off")
}
