package postgres_test

import (
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/caddy-memory/memory/engine"
	"github.com/caddy-memory/memory/internal/pgtest"
	"github.com/caddy-memory/memory/store"
)

// filesHolding lists the files under dir that contain s.
func filesHolding(t *testing.T, dir, s string) []string {
	t.Helper()
	var out []string
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return nil
		}
		if b, err := os.ReadFile(p); err == nil && bytes.Contains(b, []byte(s)) {
			out = append(out, p)
		}
		return nil
	})
	return out
}

// TestForgetThroughOneInstanceIsPurgedFromAnother: an owner forgotten
// through A leaves no byte of theirs in B's storage directory either, once
// B replayed the forget (its replica compacted, the owner's shard rebuilt).
func TestForgetThroughOneInstanceIsPurgedFromAnother(t *testing.T) {
	url := pgtest.Database(t)
	open := func(dir string) *engine.Engine {
		e, err := engine.Open(engine.Config{Dir: dir, Database: url, Shards: 2, LocalSearchMax: -1})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { e.Close(context.Background()) })
		return e
	}
	dirA, dirB := t.TempDir(), t.TempDir()
	a, b := open(dirA), open(dirB)
	ana, bob := a.OwnerID("key-ana"), a.OwnerID("key-bob")
	var puts []engine.OwnedPut
	for i := range 40 {
		puts = append(puts, engine.OwnedPut{Owner: ana, Put: store.Put{Kind: "note", Content: fmt.Sprintf("Ana's locker code is zqsecret%04d", i)}})
	}
	puts = append(puts, engine.OwnedPut{Owner: bob, Put: store.Put{Kind: "note", Content: "Bob's locker code is zqbob"}})
	if _, err := a.Remember(context.Background(), puts...); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for len(filesHolding(t, dirB, "zqsecret0007")) == 0 {
		if ctx.Err() != nil {
			t.Fatal("B never held Ana's memories: the test would prove nothing")
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err := b.Sync(ctx); err != nil {
		t.Fatal(err)
	}

	if _, err := a.Forget(ctx, ana); err != nil {
		t.Fatal(err)
	}
	for {
		files := filesHolding(t, dirB, "zqsecret0007")
		if len(files) == 0 {
			break
		}
		if ctx.Err() != nil {
			t.Fatalf("B's storage still holds Ana's memories after A forgot her: %v", files)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if files := filesHolding(t, dirA, "zqsecret0007"); len(files) > 0 {
		t.Fatalf("A's storage still holds Ana's memories: %v", files)
	}
	if len(filesHolding(t, dirB, "zqbob")) == 0 {
		t.Fatal("B's purge took Bob's memory with it")
	}
}
