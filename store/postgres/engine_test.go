package postgres_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/caddy-memory/memory/extract"
	"github.com/caddy-memory/memory/internal/engine"
	"github.com/caddy-memory/memory/internal/pgtest"
	"github.com/caddy-memory/memory/store"
	"github.com/caddy-memory/memory/store/postgres"
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
		e, err := engine.Open(onDatabase(t, engine.Config{Dir: dir, Shards: 2, LocalSearchMax: -1}, url))
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

// countJobs counts the turns an engine learned.
type countJobs struct{ done atomic.Int64 }

func (c *countJobs) JobDropped()                   {}
func (c *countJobs) JobDone(int)                   { c.done.Add(1) }
func (c *countJobs) JobFailed()                    {}
func (c *countJobs) EmbeddingFailed()              {}
func (c *countJobs) LLMCall(string, time.Duration) {}

// TestQueuedTurnsAreLearnedOnce: turns left in the shared durable queue
// (by an instance that stopped before learning them) are learned by one of
// the instances that start, never by both.
func TestQueuedTurnsAreLearnedOnce(t *testing.T) {
	url := pgtest.Database(t)
	sh, err := postgres.Open(context.Background(), url, nil)
	if err != nil {
		t.Fatal(err)
	}
	st, err := store.OpenWith(filepath.Join(t.TempDir(), "memory.db"), store.Options{Shared: sh})
	if err != nil {
		t.Fatal(err)
	}
	const turns = 240
	var jobs []store.Job
	for i := range turns {
		owner := st.OwnerID(fmt.Sprintf("key-%d", i%6))
		data, _ := json.Marshal(engine.Job{Owner: owner, Turn: extract.Turn{Dialect: "openai_chat", NewTurn: true, Turn: i + 1,
			User: fmt.Sprintf("My locker number is %d.", 1000+i), Time: time.Now()}})
		jobs = append(jobs, store.Job{Owner: owner, Data: data})
	}
	if err := st.PutJobs(jobs); err != nil {
		t.Fatal(err)
	}
	st.Close()

	var counts [2]countJobs
	var engines [2]*engine.Engine
	var wg sync.WaitGroup
	for i := range engines {
		wg.Add(1)
		go func() {
			defer wg.Done()
			e, err := engine.Open(onDatabase(t, engine.Config{Dir: t.TempDir(), Shards: 2, Observer: &counts[i]}, url))
			if err != nil {
				t.Error(err)
				return
			}
			engines[i] = e
		}()
	}
	wg.Wait()
	for _, e := range engines {
		if e == nil {
			t.FailNow()
		}
		defer e.Close(context.Background())
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	for counts[0].done.Load()+counts[1].done.Load() < turns && ctx.Err() == nil {
		time.Sleep(20 * time.Millisecond)
	}
	time.Sleep(300 * time.Millisecond) // a second learning of a turn would land meanwhile
	if got := counts[0].done.Load() + counts[1].done.Load(); got != turns {
		t.Fatalf("the two instances learned %d turns (%d and %d) of %d queued", got, counts[0].done.Load(), counts[1].done.Load(), turns)
	}
	for _, e := range engines {
		if err := e.Sync(ctx); err != nil {
			t.Fatal(err)
		}
		for i := range 6 {
			page, _, _, err := e.List(engine.ListQuery{Owner: e.OwnerID(fmt.Sprintf("key-%d", i)), Limit: 100})
			if err != nil {
				t.Fatal(err)
			}
			for _, m := range page {
				if m.Mentions != 1 {
					t.Errorf("%q was learned %d times", m.Content, m.Mentions)
				}
			}
		}
	}
}
