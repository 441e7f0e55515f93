package engine

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/caddy-memory/memory/extract"
	"github.com/caddy-memory/memory/store"
)

// A backlog of turns is learned group after group without waiting between
// them: only turns that make less than a group wait for learnEvery.
// (Before, every group waited, which capped the turns learned a second at
// writeBatch per learnEvery; past it the queue filled and turns were
// dropped.)
func TestABacklogIsLearnedWithoutPacing(t *testing.T) {
	e, err := openConfig(t, Config{Dir: t.TempDir(), Shards: 1, LockTimeout: 200 * time.Millisecond, QueueSize: 4 * writeBatch})
	if err != nil {
		t.Fatal(err)
	}
	defer closeEngine(t, e)
	e.learner.every.Store(int64(time.Hour)) // were the groups paced, the backlog would wait hours
	owner := e.OwnerID("sk-backlog")
	n := 4 * writeBatch
	jobs := make([]*Job, n)
	for i := range jobs {
		jobs[i] = &Job{Owner: owner, Turn: extract.Turn{Dialect: "openai_chat", NewTurn: true, Turn: i + 1,
			User: fmt.Sprintf("Shelf %d holds zqbox%d.", i, i), Time: time.Now()}}
	}
	// The store's writer is held while the turns arrive, so they wait in
	// the queue as a busy proxy's do.
	held, release := make(chan struct{}), make(chan struct{})
	go e.write(func(*store.Tx) error {
		close(held)
		<-release
		return nil
	})
	<-held
	for i, j := range jobs {
		if !e.Enqueue(j) {
			t.Fatalf("turn %d dropped", i)
		}
	}
	close(release)
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	if err := e.Sync(ctx); err != nil {
		t.Fatalf("the backlog was not learned: %v", err)
	}
	if res := search(t, e, owner, fmt.Sprint("zqbox", n-1)); len(res) == 0 {
		t.Error("the last turn of the backlog was not learned")
	}
}

// TestAGroupIsLearnedAsItsTurnsOneByOne: a large group is read on every
// core; what it learns is what each turn read alone teaches, in order.
func TestAGroupIsLearnedAsItsTurnsOneByOne(t *testing.T) {
	says := []string{"I live in Lisbon.", "My daughter Zoe is 7 and she's allergic to eggs.", "Translate: 'I am vegan'",
		"Me llamo Lucía y vivo en Bilbao.", "What's a good dinner?", "I work as a nurse at St Mary's."}
	items := make([]queued, 5*parallelFrom)
	for i := range items {
		if i%7 == 3 {
			continue // a durable job that could not be read
		}
		items[i].job = &Job{Owner: "o", Turn: extract.Turn{User: says[i%len(says)], NewTurn: true, Conversation: "c", Turn: i}}
	}
	got := learnAll(items, true)
	for i, it := range items {
		if it.job == nil {
			if got[i].mems != nil {
				t.Errorf("item %d, no job, learned %v", i, got[i].mems)
			}
			continue
		}
		want, _, _ := extract.Learn(&it.job.Turn)
		if fmt.Sprint(got[i].mems) != fmt.Sprint(want) {
			t.Errorf("item %d: the group learned %v, the turn alone %v", i, got[i].mems, want)
		}
	}
}
