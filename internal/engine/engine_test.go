package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/caddy-memory/memory/extract"
	"github.com/caddy-memory/memory/store"
)

// open opens an engine whose searches all go through the index, which
// most tests here are about (indexing, replay, rebuilds); local_test.go
// covers searching a small owner's records directly.
func open(t *testing.T, dir string, shards int) *Engine {
	t.Helper()
	e, err := openConfig(t, Config{Dir: dir, Shards: shards, LockTimeout: 200 * time.Millisecond, LocalSearchMax: -1})
	if err != nil {
		t.Fatalf("open engine: %v", err)
	}
	return e
}

func closeEngine(t *testing.T, e *Engine) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := e.Close(ctx); err != nil {
		t.Fatalf("close engine: %v", err)
	}
}

func settle(t *testing.T, e *Engine) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := e.Sync(ctx); err != nil {
		t.Fatal(err)
	}
}

func search(t *testing.T, e *Engine, owner, q string) []Result {
	t.Helper()
	res, err := e.Search(context.Background(), SearchRequest{Owner: owner, Query: q, Limit: 10})
	if err != nil {
		t.Fatalf("search %q: %v", q, err)
	}
	return res
}

func contents(rs []Result) string {
	var s []string
	for _, r := range rs {
		s = append(s, r.Memory.Content)
	}
	return strings.Join(s, " | ")
}

func chatJSON(text string) []byte {
	b, _ := json.Marshal(map[string]any{
		"id":      "chatcmpl-1",
		"object":  "chat.completion",
		"choices": []any{map[string]any{"index": 0, "message": map[string]any{"role": "assistant", "content": text}}},
	})
	return b
}

func TestTurnBecomesSearchableMemories(t *testing.T) {
	e := open(t, t.TempDir(), 4)
	defer closeEngine(t, e)
	owner := e.OwnerID("sk-test")
	ok := e.Enqueue(&Job{Owner: owner, Turn: extract.Turn{Dialect: "openai_chat", Conversation: "c-1", Turn: 1, NewTurn: true,
		User:     "Hi, my name is Ana and I live in Lisbon. I'm allergic to peanuts.",
		Response: chatJSON("Nice to meet you, Ana!"), ContentType: "application/json",
		Time: time.Now(),
	}})
	if !ok {
		t.Fatal("job not accepted")
	}
	settle(t, e)

	got := contents(search(t, e, owner, "Where do I live?"))
	if !strings.Contains(got, "User lives in Lisbon.") {
		t.Errorf("location not found, got %q", got)
	}
	got = contents(search(t, e, owner, "any snack ideas without peanuts"))
	if !strings.Contains(got, "allergic to peanuts") {
		t.Errorf("allergy not found, got %q", got)
	}
	got = contents(search(t, e, owner, "Ana"))
	if !strings.Contains(got, "Assistant: Nice to meet you, Ana!") {
		t.Errorf("transcript turn not found, got %q", got)
	}
	if res := search(t, e, e.OwnerID("someone else"), "Lisbon peanuts Ana"); len(res) != 0 {
		t.Errorf("another owner sees %q", contents(res))
	}
}

func TestNewerFactSupersedesOlderKeepsHistory(t *testing.T) {
	e := open(t, t.TempDir(), 4)
	defer closeEngine(t, e)
	owner := e.OwnerID("u")
	for i, city := range []string{"Lisbon", "Porto"} {
		e.Enqueue(&Job{Owner: owner, Turn: extract.Turn{Dialect: "openai_chat", Conversation: "c", Turn: i + 1, NewTurn: true,
			User: "I live in " + city + ".", Time: time.Now(),
		}})
		settle(t, e)
	}
	res := search(t, e, owner, "where do I live")
	var loc *store.Memory
	for _, r := range res {
		if r.Memory.Key == "identity:location" {
			if loc != nil {
				t.Fatalf("two current location facts: %q", contents(res))
			}
			loc = r.Memory
		}
	}
	if loc == nil || loc.Content != "User lives in Porto." {
		t.Fatalf("location = %+v, want Porto", loc)
	}
	if len(loc.History) != 1 || loc.History[0].Content != "User lives in Lisbon." {
		t.Errorf("history = %+v, want the Lisbon value", loc.History)
	}
}

// seed writes n memories for each of owners directly through the store, each
// with a distinctive word, and returns the words by owner.
func seed(t *testing.T, e *Engine, owners, n int) map[string][]string {
	t.Helper()
	words := map[string][]string{}
	_, err := e.write(func(tx *store.Tx) error {
		for o := range owners {
			owner := e.OwnerID(fmt.Sprintf("owner-%d", o))
			for i := range n {
				w := fmt.Sprintf("zq%dx%dword", o, i)
				words[owner] = append(words[owner], w)
				if _, _, err := tx.Upsert(owner, withDigest(store.Put{Kind: "note", Content: "Remembered token " + w})); err != nil {
					return err
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return words
}

func assertAllSearchable(t *testing.T, e *Engine, words map[string][]string) {
	t.Helper()
	for owner, ws := range words {
		for _, w := range ws {
			res := search(t, e, owner, w)
			if len(res) != 1 || !strings.Contains(res[0].Memory.Content, w) {
				t.Fatalf("memory %q of %s not searchable: %q", w, owner, contents(res))
			}
		}
	}
}

func TestIndexDeletedIsRebuiltFromStore(t *testing.T) {
	for _, trimmed := range []bool{false, true} {
		t.Run(fmt.Sprintf("log_trimmed=%v", trimmed), func(t *testing.T) {
			testIndexDeleted(t, trimmed)
		})
	}
}

// testIndexDeleted covers both repairs: with the change log intact a lost
// index is replayed from it; once the log is trimmed it must be rebuilt from
// the records themselves.
func testIndexDeleted(t *testing.T, trimmed bool) {
	dir := t.TempDir()
	e := open(t, dir, 8)
	words := seed(t, e, 20, 10)
	settle(t, e)
	if trimmed {
		e.indexer.trim()
	}
	closeEngine(t, e)

	if err := os.RemoveAll(filepath.Join(dir, "index")); err != nil {
		t.Fatal(err)
	}
	e = open(t, dir, 8)
	defer closeEngine(t, e)
	settle(t, e)
	assertAllSearchable(t, e, words)
}

func TestIndexBehindCatchesUpFromChangeLog(t *testing.T) {
	dir := t.TempDir()
	e := open(t, dir, 8)
	words := seed(t, e, 5, 5)
	settle(t, e)
	closeEngine(t, e)

	// Write to the store alone, as if the process died after the store
	// committed and before the index applied the change.
	st, err := store.Open(filepath.Join(dir, "memory.db"), time.Second)
	if err != nil {
		t.Fatal(err)
	}
	owner := st.OwnerID("late owner")
	err = st.Update(func(tx *store.Tx) error {
		_, _, err := tx.Upsert(owner, withDigest(store.Put{Content: "Written while the index was behind: zqlateword"}))
		return err
	})
	st.Close()
	if err != nil {
		t.Fatal(err)
	}
	words[owner] = []string{"zqlateword"}

	e = open(t, dir, 8)
	defer closeEngine(t, e)
	settle(t, e)
	assertAllSearchable(t, e, words)
}

func TestIndexAheadOfRestoredStoreIsRebuilt(t *testing.T) {
	if onPostgres() {
		// A replica restored from a backup is brought forward by the
		// database; restoring the database is PostgreSQL's business.
		t.Skip("restores the store file from a backup: the file backend only")
	}
	dir := t.TempDir()
	e := open(t, dir, 4)
	words := seed(t, e, 3, 3)
	settle(t, e)
	closeEngine(t, e)
	backup := filepath.Join(t.TempDir(), "backup.db")
	copyFile(t, filepath.Join(dir, "memory.db"), backup)

	e = open(t, dir, 4)
	ghost := e.OwnerID("ghost")
	if _, err := e.write(func(tx *store.Tx) error {
		_, _, err := tx.Upsert(ghost, withDigest(store.Put{Content: "Only in the newer store: zqghostword"}))
		return err
	}); err != nil {
		t.Fatal(err)
	}
	settle(t, e)
	closeEngine(t, e)

	copyFile(t, backup, filepath.Join(dir, "memory.db")) // restore the older store
	e = open(t, dir, 4)
	defer closeEngine(t, e)
	settle(t, e)
	assertAllSearchable(t, e, words)
	if res := search(t, e, ghost, "zqghostword"); len(res) != 0 {
		t.Errorf("a memory the restored store does not have is still found: %q", contents(res))
	}
	if n := e.index.DocCount(); n != 9 {
		t.Errorf("index holds %d documents, the restored store 9", n)
	}
	// The restored store numbers new changes from its own, older, position;
	// an index that believed itself ahead would skip them.
	if _, err := e.write(func(tx *store.Tx) error {
		_, _, err := tx.Upsert(ghost, withDigest(store.Put{Content: "Written after the restore: zqafterword"}))
		return err
	}); err != nil {
		t.Fatal(err)
	}
	settle(t, e)
	if res := search(t, e, ghost, "zqafterword"); len(res) != 1 {
		t.Errorf("a memory written after the restore is not searchable")
	}
}

func TestTrimmedLogStillRecovers(t *testing.T) {
	dir := t.TempDir()
	e := open(t, dir, 4)
	words := seed(t, e, 4, 4)
	settle(t, e)
	e.indexer.trim()
	if _, oldest, _ := e.store.Changes(0, 1); oldest != 0 {
		t.Fatalf("change log not trimmed, oldest entry %d", oldest)
	}
	more := seed(t, e, 1, 2) // owner-0 again, new words
	for o, ws := range more {
		words[o] = append(words[o], ws...)
	}
	settle(t, e)
	closeEngine(t, e)

	e = open(t, dir, 4)
	defer closeEngine(t, e)
	settle(t, e)
	assertAllSearchable(t, e, words)
}

// The log a caught-up index has applied is trimmed without waiting for
// trimEvery: at a million memories it was otherwise a tenth of memory.db.
func TestChangeLogIsTrimmedOnceApplied(t *testing.T) {
	dir := t.TempDir()
	e, err := openConfig(t, Config{Dir: dir, Shards: 4, LockTimeout: 200 * time.Millisecond, LocalSearchMax: -1, trimAfter: 100})
	if err != nil {
		t.Fatal(err)
	}
	words := seed(t, e, 3, 100) // 300 changes, all written at once
	settle(t, e)
	deadline := time.Now().Add(5 * time.Second)
	for {
		_, oldest, err := e.store.Changes(0, 1)
		if err != nil {
			t.Fatal(err)
		}
		if oldest == 0 || oldest > 300 {
			break // trimmed through everything applied
		}
		if time.Now().After(deadline) {
			t.Fatalf("change log still starts at entry %d of 300 after the index applied them all", oldest)
		}
		time.Sleep(20 * time.Millisecond)
	}
	closeEngine(t, e)

	e = open(t, dir, 4)
	defer closeEngine(t, e)
	settle(t, e)
	assertAllSearchable(t, e, words)
}

func TestDurableJobsAreProcessedAfterCrash(t *testing.T) {
	dir := t.TempDir()
	// A job persisted by a process that died before extracting it.
	st := openTestStore(t, dir)
	owner := st.OwnerID("crashy")
	data, _ := json.Marshal(Job{Owner: owner, Turn: extract.Turn{Dialect: "openai_chat", NewTurn: true, Turn: 1,
		User: "My favorite color is teal.", Time: time.Now(),
	}})
	if err := st.PutJobs([]store.Job{{Owner: owner, Data: data}}); err != nil {
		t.Fatal(err)
	}
	st.Close()

	e := open(t, dir, 4)
	defer closeEngine(t, e)
	settle(t, e)
	if got := contents(search(t, e, owner, "favorite color")); !strings.Contains(got, "User's favorite color is teal.") {
		t.Errorf("persisted job not processed after restart: %q", got)
	}
	if n := e.store.PendingJobs(); n != 0 {
		t.Errorf("%d jobs still pending", n)
	}
}

func TestCloseDrainsQueuedTurns(t *testing.T) {
	dir := t.TempDir()
	e := open(t, dir, 4)
	owner := e.OwnerID("drain")
	for i := range 50 {
		if !e.Enqueue(&Job{Owner: owner, Turn: extract.Turn{Dialect: "openai_chat", NewTurn: true, Turn: i,
			User: fmt.Sprintf("Remember that locker %d holds zqlocker%d.", i, i), Time: time.Now(),
		}}) {
			t.Fatal("job dropped")
		}
	}
	closeEngine(t, e) // no Sync: Close itself must finish the work

	e = open(t, dir, 4)
	defer closeEngine(t, e)
	settle(t, e)
	for i := range 50 {
		if res := search(t, e, owner, fmt.Sprintf("zqlocker%d", i)); len(res) == 0 {
			t.Fatalf("turn %d lost at shutdown", i)
		}
	}
}

// TestTurnsUnderLoadAreAllLearned: turns arriving a millisecond apart, as
// from a busy proxy, are all learned. (How they share commits is measured
// by BenchmarkTurnCost, not asserted.)
func TestTurnsUnderLoadAreAllLearned(t *testing.T) {
	e := open(t, t.TempDir(), 1)
	defer closeEngine(t, e)
	owner := e.OwnerID("busy")
	job := func(i int) *Job {
		return &Job{Owner: owner, Turn: extract.Turn{Dialect: "openai_chat", NewTurn: true, Turn: i,
			User: fmt.Sprintf("Remember that shelf %d holds zqshelf%d.", i, i), Time: time.Now(),
		}}
	}

	const n = 60
	for i := 1; i <= n; i++ {
		if !e.Enqueue(job(i)) {
			t.Fatal("turn dropped")
		}
		time.Sleep(time.Millisecond)
	}
	settle(t, e)
	for _, i := range []int{1, n / 2, n} {
		if res := search(t, e, owner, fmt.Sprintf("zqshelf%d", i)); len(res) == 0 {
			t.Errorf("turn %d was not learned", i)
		}
	}
}

func TestSecondOpenFailsWithActionableError(t *testing.T) {
	dir := t.TempDir()
	e := open(t, dir, 2)
	defer closeEngine(t, e)
	_, err := openConfig(t, Config{Dir: dir, Shards: 2, LockTimeout: 300 * time.Millisecond})
	if err == nil {
		t.Fatal("second open of a held storage succeeded")
	}
	if !errors.Is(err, store.ErrLocked) || !strings.Contains(err.Error(), "caddy reload") {
		t.Errorf("error does not say what to do: %v", err)
	}
}

func TestQueueFullDropsInsteadOfBlocking(t *testing.T) {
	obs := &countingObserver{}
	e, err := openConfig(t, Config{Dir: t.TempDir(), Shards: 1, QueueSize: 1, Observer: obs})
	if err != nil {
		t.Fatal(err)
	}
	defer closeEngine(t, e)
	// An Enqueue that waited for room would never drop one.
	for range 2000 {
		e.Enqueue(&Job{Owner: "o", Turn: extract.Turn{Dialect: "openai_chat", User: "hello there", Time: time.Now()}})
	}
	if obs.dropped.Load() == 0 {
		t.Errorf("a queue of 1 never dropped a job")
	}
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	in, err := os.Open(from)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	out, err := os.Create(to)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(out, in); err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
}

type countingObserver struct {
	dropped, done, failed atomic.Int64
	mu                    sync.Mutex
	llm                   map[string]int // calls to the model by result
}

func (c *countingObserver) JobDropped() { c.dropped.Add(1) }
func (c *countingObserver) JobDone(int) { c.done.Add(1) }
func (c *countingObserver) JobFailed()  { c.failed.Add(1) }

func (c *countingObserver) EmbeddingFailed() {}

func (c *countingObserver) LLMCall(result string, _ time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.llm == nil {
		c.llm = map[string]int{}
	}
	c.llm[result]++
}

func (c *countingObserver) calls(result string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.llm[result]
}
