package engine

import (
	"bytes"
	"crypto/rand"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/caddy-memory/memory/internal/seal"
	"github.com/caddy-memory/memory/store"
)

// TestRecallShowsWhatTheRecordSays: a recall renders its memories from
// what the postings keep of them, and never an earlier text: a memory
// edited (in other words, or in the same words differently written) shows
// its new text, a deleted one is gone, another owner's never comes. With
// an encrypted storage too, whose files never hold the text.
func TestRecallShowsWhatTheRecordSays(t *testing.T) {
	for _, encrypted := range []bool{false, true} {
		name := "plaintext"
		cfg := Config{Dir: t.TempDir(), Shards: 1, LockTimeout: 200 * time.Millisecond, LocalSearchMax: -1}
		if encrypted {
			name = "encrypted"
			raw := make([]byte, 32)
			rand.Read(raw)
			k, err := seal.NewKey(raw)
			if err != nil {
				t.Fatal(err)
			}
			cfg.Keys = seal.RingOf(k)
		}
		t.Run(name, func(t *testing.T) {
			e, err := openConfig(t, cfg)
			if err != nil {
				t.Fatal(err)
			}
			defer closeEngine(t, e)
			owner, other := e.OwnerID("alice"), e.OwnerID("bob")
			put := func(owner, content string) uint64 { return rememberNote(t, e, owner, content) }
			for _, c := range []string{"User keeps bees in the orchard", "User rides a green bicycle", "User bakes sourdough on Sundays"} {
				put(owner, c)
			}
			put(other, "User keeps zebras in the orchard")
			id := put(owner, "User's sister collects stamps from Peru")
			waitPostings(t, e, owner)
			recall := func(q string) string {
				t.Helper()
				if err := e.Sync(t.Context()); err != nil {
					t.Fatal(err)
				}
				rec, err := e.Recall(t.Context(), RecallRequest{SearchRequest: SearchRequest{Owner: owner, Query: q, Limit: 5, MinScore: DefaultMinScore}, MaxTokens: 400})
				if err != nil {
					t.Fatal(err)
				}
				if strings.Contains(rec.Block, "zebras") {
					t.Errorf("another owner's memory recalled: %q", rec.Block)
				}
				return rec.Block
			}
			if b := recall("what does my sister collect from Peru?"); !strings.Contains(b, "collects stamps from Peru") {
				t.Fatalf("the memory is not recalled: %q", b)
			}
			edit := func(content string) {
				t.Helper()
				if _, err := e.Edit(t.Context(), owner, id, func(m *store.Memory) error { m.Content = content; return nil }); err != nil {
					t.Fatal(err)
				}
			}
			edit("USER'S SISTER COLLECTS STAMPS FROM PERU") // the same words
			if b := recall("what does my sister collect from Peru?"); !strings.Contains(b, "USER'S SISTER COLLECTS STAMPS FROM PERU") {
				t.Errorf("after an edit in the same words, the block shows %q", b)
			}
			edit("User's sister collects coins from Peru")
			if b := recall("what does my sister collect from Peru?"); !strings.Contains(b, "collects coins from Peru") || strings.Contains(b, "stamps") || strings.Contains(b, "STAMPS") {
				t.Errorf("after an edit in other words, the block shows %q", b)
			}
			if err := e.Delete(t.Context(), owner, id, false); err != nil {
				t.Fatal(err)
			}
			if b := recall("what does my sister collect from Peru?"); strings.Contains(b, "Peru") {
				t.Errorf("a deleted memory is recalled: %q", b)
			}
			if b := recall("do I keep bees in the orchard?"); !strings.Contains(b, "User keeps bees in the orchard") {
				t.Errorf("the block shows %q", b)
			}
			if !encrypted {
				return
			}
			// The texts the postings keep live in the process only.
			err = filepath.WalkDir(cfg.Dir, func(path string, d fs.DirEntry, err error) error {
				if err != nil || d.IsDir() {
					return err
				}
				b, err := os.ReadFile(path)
				if err != nil {
					return err
				}
				for _, s := range []string{"bees", "orchard", "sourdough", "bicycle"} {
					if bytes.Contains(b, []byte(s)) {
						t.Errorf("%s holds %q in the clear", path, s)
					}
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
		})
	}
}
