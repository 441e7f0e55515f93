package storage

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/caddy-memory/memory/index"
	"github.com/caddy-memory/memory/internal/engine"
	"github.com/caddy-memory/memory/internal/harness"
	"github.com/caddy-memory/memory/store"
)

// TestDamagedIndexShardIsRebuiltBehindCaddy: index files damaged while
// Caddy serves cost no request its memories and no API search a 500: the
// owner's memories are searched from the store meanwhile, and the shard is
// rebuilt on its own, without POST /memory/reindex.
func TestDamagedIndexShardIsRebuiltBehindCaddy(t *testing.T) {
	storage := t.TempDir()
	up := harness.NewFakeLLM(t)
	// Without the search cache, an owner past 256 memories is searched
	// through its Bleve shard, where the damage is.
	tester := harness.StartCaddy(t, strings.Replace(harness.WithStorage(storage, "search_cache off"), "index_shards 4", "index_shards 2", 1)+fmt.Sprintf(`http://localhost {
	memory
	handle /memory/* {
		memory_api
	}
	reverse_proxy %s
}
`, up.Addr()))
	a := harness.APICall{T: t, Client: tester.Client}
	e := harness.EngineAt(storage)
	if e == nil {
		t.Fatal("no engine open for the storage")
	}
	owner := e.OwnerID("sk-dana")
	puts := []engine.OwnedPut{{Owner: owner, Put: store.Put{Kind: "note", Content: "Dana's locker code is zqlocker4711."}}}
	for i := range 300 {
		puts = append(puts, engine.OwnedPut{Owner: owner, Put: store.Put{Kind: "note", Content: fmt.Sprintf("Dana noted item zqitem%d.", i)}})
	}
	if _, err := e.Remember(context.Background(), puts...); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := e.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	search := func(when string) {
		t.Helper()
		status, raw := a.Raw("POST", "/memory/search", "sk-dana", map[string]any{"query": "what is my locker code"})
		if status != http.StatusOK || !strings.Contains(string(raw), "zqlocker4711") {
			t.Fatalf("search %s: %d %s", when, status, raw)
		}
	}
	search("before the damage")

	segments, err := filepath.Glob(filepath.Join(storage, "index", fmt.Sprintf("shard-%03d", index.Shard(owner, 2)), "store", "*.zap"))
	if err != nil || len(segments) == 0 {
		t.Fatalf("no segments in the owner's shard: %v", err)
	}
	for _, f := range segments {
		garble(t, f)
	}

	search("with the shard damaged")
	harness.Post(t, tester, "/v1/chat/completions", "sk-dana", harness.ChatBody(false, harness.Msg("user", "What is my locker code?")))
	if sent := up.Last("/v1/chat/completions"); !bytes.Contains(sent.Body, []byte("zqlocker4711")) {
		t.Errorf("the proxied request went without the memory: %s", sent.Body)
	}

	for deadline := time.Now().Add(20 * time.Second); damaged(segments); {
		if time.Now().After(deadline) {
			t.Fatal("the damaged shard was not rebuilt")
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err := e.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	search("after the rebuild")
	// The 301 memories, and what the proxied turn taught.
	if st, err := e.Stats(); err != nil || st.IndexedDocs < 301 || len(st.Rebuilding) != 0 {
		t.Errorf("after the rebuild: %d memories indexed (want 301 or more), rebuilding %v, %v", st.IndexedDocs, st.Rebuilding, err)
	}
}

// garble writes garbage over the whole file, in place: the index, which
// maps it into memory, reads the garbage at once.
func garble(t *testing.T, path string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt(bytes.Repeat([]byte{0x5a}, int(fi.Size())), 0); err != nil {
		t.Fatal(err)
	}
}

// damaged reports whether any of the files is still there with garbage.
func damaged(files []string) bool {
	for _, f := range files {
		if b, err := os.ReadFile(f); err == nil && len(b) > 0 && bytes.Count(b, []byte{0x5a}) == len(b) {
			return true
		}
	}
	return false
}
