//go:build unix

package engine

import (
	"fmt"
	"syscall"
	"testing"
	"time"

	"github.com/caddy-memory/memory/extract"
)

// BenchmarkTurnCost is the CPU the engine spends remembering a turn when
// turns arrive as a busy proxy hands them over: one every 3 ms (about 330
// a second, what the A/B bench's eight clients send) and one every 0.5 ms
// (2,000 a second, its capacity rounds): the work that competes with the
// requests being served. It is the process's CPU time (user and system:
// fsync counts) divided by the turns.
func BenchmarkTurnCost(b *testing.B) {
	for _, every := range []time.Duration{3 * time.Millisecond, 500 * time.Microsecond} {
		b.Run(fmt.Sprint("every=", every), func(b *testing.B) { turnCost(b, every) })
	}
}

func turnCost(b *testing.B, every time.Duration) {
	e, err := Open(Config{Dir: b.TempDir(), Shards: 1})
	if err != nil {
		b.Fatal(err)
	}
	defer e.Close(b.Context())
	owners := make([]string, 100)
	for i := range owners {
		owners[i] = e.OwnerID(fmt.Sprint("owner-", i))
	}
	answer := chatJSON("That sounds like a lovely plan. The lake trail is about twelve kilometres, " +
		"so bring water, and the café at the north end opens at nine if you want breakfast first.")
	tick := time.NewTicker(every)
	defer tick.Stop()
	before := cpuTime(b)
	i := 0
	for b.Loop() {
		<-tick.C
		i++
		e.Enqueue(&Job{Owner: owners[i%len(owners)], Turn: extract.Turn{Dialect: "openai_chat", Conversation: fmt.Sprint("c-", i%len(owners)),
			Turn: i, NewTurn: true, User: fmt.Sprintf("I'm planning a hike around the lake on Saturday %d, any tips?", i),
			Response: answer, ContentType: "application/json", Time: time.Now(),
		}})
	}
	if err := e.Sync(b.Context()); err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64((cpuTime(b)-before).Microseconds())/float64(i), "cpu-µs/turn")
}

func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
