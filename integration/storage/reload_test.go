package storage

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/caddy-memory/memory/internal/harness"
	"github.com/caddy-memory/memory/internal/llm/llmtest"
)

// TestReloadKeepsMemories: a config reload provisions the new handler while
// the old one still holds the database; both must share it, and nothing
// stored before the reload may be lost.
func TestReloadKeepsMemories(t *testing.T) {
	storage := t.TempDir()
	up := harness.NewFakeOpenAI(t)
	tester := harness.StartCaddy(t, harness.SiteConfig(storage, up.Addr(), "placement cache_safe"))
	harness.Post(t, tester, "/v1/chat/completions", "sk-reload", harness.ChatBody(false, harness.Msg("user", "I live in Reykjavik.")))
	harness.Settle(t, storage, 1)
	before := harness.EngineAt(storage)

	// Second load on the same storage: other settings, and two sites whose
	// handlers both use it.
	harness.Reload(t, tester, harness.WithStorage(storage, "")+fmt.Sprintf(`http://localhost {
	memory {
		placement user
	}
	reverse_proxy %[1]s
}
http://127.0.0.1 {
	memory
	reverse_proxy %[1]s
}
`, up.Addr()))
	if harness.EngineAt(storage) != before {
		t.Errorf("the reload opened a second engine instead of sharing the first")
	}
	harness.Post(t, tester, "/v1/chat/completions", "sk-reload", harness.ChatBody(false, harness.Msg("user", "Where do I live?")))
	msgs := harness.Messages(t, up.Last("/chat/completions").Body)
	if len(msgs) != 1 || !strings.Contains(harness.ContentString(t, msgs[0]), "User lives in Reykjavik.") {
		t.Fatalf("after reload, want the memory prepended to the user turn (placement user), got %v", msgs)
	}

	// And back: a third load still has everything.
	harness.Reload(t, tester, harness.SiteConfig(storage, up.Addr(), ""))
	harness.Post(t, tester, "/v1/chat/completions", "sk-reload", harness.ChatBody(true, harness.Msg("user", "Remind me where I live.")))
	if !harness.HasBlock(up.Last("/chat/completions").Body) {
		t.Errorf("after the second reload the memory is gone")
	}
}

// TestLostIndexRecoversThroughCaddy: stop using a storage, delete its index,
// load it again; the memories come back from the store.
func TestLostIndexRecoversThroughCaddy(t *testing.T) {
	storage := t.TempDir()
	up := harness.NewFakeOpenAI(t)
	tester := harness.StartCaddy(t, harness.SiteConfig(storage, up.Addr(), ""))
	harness.Post(t, tester, "/v1/chat/completions", "sk-lost", harness.ChatBody(false, harness.Msg("user", "My favorite band is Zqmelodics.")))
	harness.Settle(t, storage, 1)

	harness.UnloadCaddy(t) // the last user of the engine is gone: it closes
	if harness.EngineAt(storage) != nil {
		t.Fatal("engine still open after its config was unloaded")
	}
	if err := os.RemoveAll(filepath.Join(storage, "index")); err != nil {
		t.Fatal(err)
	}
	harness.Reload(t, tester, harness.SiteConfig(storage, up.Addr(), ""))
	harness.Settle(t, storage, 0)
	harness.Post(t, tester, "/v1/chat/completions", "sk-lost", harness.ChatBody(false, harness.Msg("user", "Which band is my favorite?")))
	if body := up.Last("/chat/completions").Body; !strings.Contains(string(body), "Zqmelodics") {
		t.Errorf("memory not recovered after the index was deleted: %s", body)
	}
}

// TestReloadWithoutLLMMakesNoCalls: a reload that removes the storage's
// llm block turns learning with a model off: turns after it make no calls.
// Before the memory app, the distiller kept running until a restart.
func TestReloadWithoutLLMMakesNoCalls(t *testing.T) {
	model := llmtest.NewServer()
	defer model.Close()
	storage := t.TempDir()
	up := harness.NewFakeLLM(t)
	const debounce = 200 * time.Millisecond
	llm := fmt.Sprintf(`llm {
				url %s
				model distiller-1
				debounce %s
			}`, model.Endpoint(), debounce)
	tester := harness.StartCaddy(t, harness.StorageConfig(storage, llm, up.Addr(), ""))
	harness.Post(t, tester, "/v1/chat/completions", "sk-llm-off", harness.ChatBody(false, harness.Msg("user", "My sister is called Zofia.")))
	harness.Settle(t, storage, 1)
	waitForCall(t, model, "the model was never called: the test would not show that a reload stops it")

	harness.Reload(t, tester, harness.StorageConfig(storage, "", up.Addr(), ""))
	harness.TurnsAtStart = harness.HandedOver()
	harness.Post(t, tester, "/v1/chat/completions", "sk-llm-off", harness.ChatBody(false, harness.Msg("user", "My brother is called Tomas.")))
	harness.Post(t, tester, "/v1/chat/completions", "sk-llm-off", harness.ChatBody(false, harness.Msg("system", "Another conversation."), harness.Msg("user", "I keep bees.")))
	harness.Settle(t, storage, 2)
	time.Sleep(5 * debounce)
	if n := len(model.Calls()); n != 1 {
		t.Errorf("%d calls to the model after a reload without llm, want the 1 before", n)
	}
}

// waitForCall waits until the model has been called, or fails with why.
func waitForCall(t *testing.T, model *llmtest.Server, why string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for len(model.Calls()) == 0 {
		if time.Now().After(deadline) {
			t.Fatal(why)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestTwoSitesTwoStorages: two sites, each naming a storage of its own for
// its proxy and its API, keep their memories apart; a handler that names
// no storage where there are two and neither is named default is a
// configuration error that says so. Before the memory app, a bare
// memory_api there served Caddy's default storage with only a warning.
func TestTwoSitesTwoStorages(t *testing.T) {
	a, b := t.TempDir(), t.TempDir()
	up := harness.NewFakeLLM(t)
	storages := fmt.Sprintf(`	memory {
		storage a {
			path %s
			index_shards 2
		}
		storage b {
			path %s
			index_shards 2
		}
	}
}
`, a, b)
	cfg := strings.TrimSuffix(harness.GlobalOptions, "}\n") + storages + fmt.Sprintf(`http://localhost {
	memory {
		storage a
	}
	handle /memory/* {
		memory_api {
			storage a
		}
	}
	reverse_proxy %[1]s
}
http://127.0.0.1 {
	memory {
		storage b
	}
	handle /memory/* {
		memory_api {
			storage b
		}
	}
	reverse_proxy %[1]s
}
`, up.Addr())
	tester := harness.StartCaddy(t, cfg)
	harness.Post(t, tester, "/v1/chat/completions", "sk-two", harness.ChatBody(false, harness.Msg("user", "I live in Zqvilnius.")))
	harness.Settle(t, a, 1)
	if got := harness.SearchFor(t, harness.EngineAt(a), "sk-two", "Where do I live?"); !strings.Contains(got, "Zqvilnius") {
		t.Errorf("storage a: %q", got)
	}
	if got := harness.SearchFor(t, harness.EngineAt(b), "sk-two", "Where do I live?"); got != "" {
		t.Errorf("storage b holds site a's memory: %q", got)
	}
	api := harness.APICall{T: t, Client: tester.Client}
	if _, out := api.Do("GET", "/memory/memories", "sk-two", nil); len(harness.ListContents(out)) == 0 {
		t.Errorf("site a's API does not serve storage a: %v", out)
	}

	bare := strings.Replace(cfg, "\t\tmemory_api {\n\t\t\tstorage b\n\t\t}", "\t\tmemory_api", 1)
	if status, body := harness.LoadConfig(t, bare); status == 200 || !strings.Contains(body, "names no memory storage and the memory app has several (a, b)") {
		t.Errorf("a bare memory_api among two storages: %d %s", status, body)
	}
}
