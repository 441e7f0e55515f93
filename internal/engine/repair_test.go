package engine

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/caddy-memory/memory/index"
)

// shardFiles lists the files of index shard i of the storage dir whose
// names end with suffix.
func shardFiles(t *testing.T, dir string, i int, suffix string) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "index", fmt.Sprintf("shard-%03d", i), "store", "*"+suffix))
	if err != nil || len(files) == 0 {
		t.Fatalf("no %s files in shard %d: %v", suffix, i, err)
	}
	return files
}

// overwrite writes n bytes of garbage over the file at off (n < 0: to its
// end), in place: a file mapped into memory sees the garbage at once.
func overwrite(t *testing.T, path string, off, n int64) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if n < 0 {
		fi, err := f.Stat()
		if err != nil {
			t.Fatal(err)
		}
		n = fi.Size() - off
	}
	if _, err := f.WriteAt(bytes.Repeat([]byte{0x5a}, int(n)), off); err != nil {
		t.Fatal(err)
	}
}

// TestDamagedShardIsRebuiltWhileSearchesUseRecords: index files damaged
// while the engine was stopped (found at open, or at the first search) or
// while it runs (found at a search) cost no search an error: the owners of
// the damaged shard are searched from their records, and the shard is
// rebuilt from the store on its own, without a reindex.
func TestDamagedShardIsRebuiltWhileSearchesUseRecords(t *testing.T) {
	for _, c := range []struct {
		name    string
		running bool // damaged while the engine is open
		damage  func(t *testing.T, dir string, shard int)
	}{
		{"segment heads at open", false, func(t *testing.T, dir string, shard int) {
			for _, f := range shardFiles(t, dir, shard, ".zap") {
				overwrite(t, f, 0, 64)
			}
		}},
		{"segments truncated at open", false, func(t *testing.T, dir string, shard int) {
			for _, f := range shardFiles(t, dir, shard, ".zap") {
				if err := os.Truncate(f, 100); err != nil {
					t.Fatal(err)
				}
			}
		}},
		{"root.bolt at open", false, func(t *testing.T, dir string, shard int) {
			overwrite(t, shardFiles(t, dir, shard, "root.bolt")[0], 0, -1)
		}},
		{"segments while open", true, func(t *testing.T, dir string, shard int) {
			for _, f := range shardFiles(t, dir, shard, ".zap") {
				overwrite(t, f, 0, -1)
			}
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			// Every owner through the index (no records, no postings), so
			// the damage is met.
			cfg := Config{Dir: dir, Shards: 2, LocalSearchMax: -1, PostingsBudget: -1}
			e, err := openConfig(t, cfg)
			if err != nil {
				t.Fatal(err)
			}
			words := seed(t, e, 6, 10)
			settle(t, e)
			shard := e.index.ShardOf(e.OwnerID("owner-0")) // damaged
			var victims []string                           // its owners
			for owner := range words {
				if e.index.ShardOf(owner) == shard {
					victims = append(victims, owner)
				}
			}
			assertAllSearchable(t, e, words)
			if !c.running {
				e.indexer.trim() // the shard must be rebuilt from the records, not replayed from the log
				closeEngine(t, e)
				c.damage(t, dir, shard)
				if e, err = openConfig(t, cfg); err != nil {
					t.Fatal(err)
				}
			} else {
				c.damage(t, dir, shard)
			}
			defer closeEngine(t, e)

			// No error, and the right memories, from the first search on.
			assertAllSearchable(t, e, words)
			if _, err := e.Recall(context.Background(), RecallRequest{SearchRequest: SearchRequest{Owner: victims[0], Query: "what do you know about me?", Limit: 5},
				MaxTokens: 800, MaxItems: 10, Profile: true}); err != nil {
				t.Fatalf("a recall of an owner of the damaged shard: %v", err)
			}
			if _, err := e.Health(context.Background()); err != nil {
				t.Errorf("health while a damaged shard is rebuilt: %v", err)
			}

			// The shard is rebuilt on its own, and the index answers again.
			waitFor(t, "the damaged shard to be rebuilt", func() bool {
				_, st := e.index.Applied(shard)
				held, err := e.index.Holds(victims[0])
				return st == index.Ready && held && err == nil
			})
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			if err := e.WaitIndexed(ctx, e.store.LastSeq()); err != nil {
				t.Fatal(err)
			}
			for _, owner := range victims {
				w := words[owner][3]
				hits, err := e.index.Search(ctx, index.Query{Owner: owner, Text: w})
				if err != nil || len(hits) != 1 {
					t.Fatalf("the rebuilt shard finds %v for %q: %v", hits, w, err)
				}
			}
			assertAllSearchable(t, e, words)
			st, err := e.Stats()
			if err != nil || len(st.Rebuilding) != 0 {
				t.Errorf("stats after the repair: rebuilding %v, %v", st.Rebuilding, err)
			}
			if st.IndexedDocs != 60 {
				t.Errorf("indexed %d memories after the repair, want 60", st.IndexedDocs)
			}
		})
	}
}
