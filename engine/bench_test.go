package engine

import (
	"fmt"
	"testing"
	"time"
)

// BenchmarkTurnDurable measures the durability window: the time from handing
// a turn to the engine until it is on disk (fsynced) in the job queue, with
// turns arriving one at a time. A crash loses only turns inside this window.
func BenchmarkTurnDurable(b *testing.B) {
	e, err := Open(Config{Dir: b.TempDir(), Shards: 1})
	if err != nil {
		b.Fatal(err)
	}
	defer e.Close(b.Context())
	owner := e.OwnerID("bench")
	i := 0
	for b.Loop() {
		i++
		e.Enqueue(&Job{Owner: owner, Dialect: "openai_chat", User: fmt.Sprintf("turn %d", i), Time: time.Now()})
		for e.pending.Load() > 0 {
			time.Sleep(20 * time.Microsecond)
		}
	}
}
