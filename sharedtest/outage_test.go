package sharedtest_test

import (
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/caddy-memory/memory/internal/pgtest"
)

// TestStopDuringAnOutageLosesNoAnsweredTurn: turns whose answers the
// clients got while PostgreSQL is down (refusing connections, or accepting
// them and never answering) are counted as held, survive a SIGTERM, and
// are learned when the instance starts again; the stop keeps trying them
// until drain_timeout, and never waits more than a second past it.
func TestStopDuringAnOutageLosesNoAnsweredTurn(t *testing.T) {
	for _, hung := range []bool{false, true} {
		name := "refused"
		if hung {
			name = "hung"
		}
		t.Run(name, func(t *testing.T) {
			db := pgtest.Database(t)
			var proxy *pgtest.Proxy
			url := db
			if hung {
				proxy = pgtest.NewProxy(t, db)
				url = proxy.URL
			}
			const drain = 1500 * time.Millisecond
			a := newInstance(t, "A", url, newUpstream(t))
			a.extra = "drain_timeout 1500ms"
			a.start()
			const key = "key-erin"
			if res := a.chat(key, "Remember that my first locker is zqlocker100."); !res.OK {
				t.Fatalf("the first turn did not reach the model: %+v", res)
			}
			a.settle()

			if hung {
				proxy.Hang()
			} else {
				pgtest.Stop(t)
			}
			const turns = 5
			for i := 1; i <= turns; i++ {
				res := a.chat(key, fmt.Sprintf("Remember that my locker number %d is zqlocker%d.", i, 100+i))
				if res.Err != nil || res.Status != http.StatusOK || !res.OK {
					t.Fatalf("turn %d during the outage was not answered: status %d, err %v", i, res.Status, res.Err)
				}
			}
			if !hung {
				// Counted while held: in the stats and the metrics.
				deadline := time.Now().Add(10 * time.Second)
				for a.metric("caddy_memory_held_turns") != turns || !strings.Contains(a.adminStats(), `"held_turns":5`) {
					if time.Now().After(deadline) {
						t.Fatalf("held turns: metric %v, stats %s", a.metric("caddy_memory_held_turns"), a.adminStats())
					}
					time.Sleep(20 * time.Millisecond)
				}
			}

			start := time.Now()
			a.stop()
			took := time.Since(start)
			t.Logf("SIGTERM to exit: %v (drain_timeout %v)", took, drain)
			if took > drain+time.Second || (!hung && took < drain-100*time.Millisecond) {
				t.Errorf("the stop took %v: it should keep trying the held turns for drain_timeout (%v), and no more than a second past it", took, drain)
			}
			if dropped := a.logLines(`dropped`); len(dropped) > 0 {
				t.Errorf("A dropped turns: %v", dropped)
			}

			if hung {
				proxy.Resume()
			} else {
				pgtest.Start(t)
			}
			a.start()
			deadline := time.Now().Add(15 * time.Second)
			for {
				all, err := a.contents(key)
				if err != nil {
					t.Fatal(err)
				}
				missing := 0
				for i := 1; i <= turns; i++ {
					if !strings.Contains(all, fmt.Sprintf("zqlocker%d", 100+i)) {
						missing++
					}
				}
				if missing == 0 {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("after the restart, %d of the %d turns answered during the outage are not learned: %s", missing, turns, all)
				}
				time.Sleep(100 * time.Millisecond)
			}
		})
	}
}

// adminStats is the body of c's admin GET /memory/stats.
func (c *instance) adminStats() string {
	resp, err := client.Get(c.adminURL("/memory/stats"))
	if err != nil {
		return err.Error()
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return string(b)
}
