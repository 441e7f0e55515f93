package sharedtest_test

import (
	"net/http"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/caddy-memory/memory/internal/pgtest"
)

// replication is how long a change committed through one instance may take
// to be recalled through another: announced by NOTIFY, else found by the
// 1 s poll.
const replication = 2 * time.Second

// TestFactToldThroughAIsInjectedThroughB: Ana tells instance A two facts,
// one saved through A's memory_api, one in a proxied chat turn that A
// learns from; a question she then asks through instance B reaches B's
// model with both. Bob, asking the same through B, gets nothing of hers.
//
// A and B run on one host with one data directory (as two instances of a
// blue-green deploy do) and no replica setting: each takes a replica of its
// own (the second, the default's next slot). Before, B refused to start.
func TestFactToldThroughAIsInjectedThroughB(t *testing.T) {
	db := pgtest.Database(t)
	upA, upB := newUpstream(t), newUpstream(t)
	a := startInstance(t, "A", db, upA)
	b := newInstance(t, "B", db, upB)
	b.dataHome = a.dataHome
	b.start()
	const ana, bob = "key-ana", "key-bob"

	// Bob has a memory of his own through B, so B knows him too.
	b.remember(bob, "fact", "pet", "User keeps a cat called Zqmittens.")

	// Through A: one fact by the API, one by a proxied turn.
	a.remember(ana, "fact", "goats", "User keeps two goats called Zqfrost and Zqmoss.")
	told := time.Now()
	res := a.chat(ana, "Remember that I keep bees in Tromsø.")
	if res.Err != nil || res.Status != http.StatusOK || !res.OK {
		t.Fatalf("the turn through A did not reach A's model: status %d, err %v", res.Status, res.Err)
	}
	got, took := poll(t, b, ana, "What animals do I keep?", replication, "Ana's facts told through A", func(blk string) bool {
		return strings.Contains(blk, "Zqfrost") && strings.Contains(blk, "bees in Tromsø")
	})
	t.Logf("B injected Ana's facts %v after the turn through A (%v after it was told):\n%s", took, time.Since(told), got)
	if strings.Contains(got, "Zqmittens") {
		t.Errorf("Ana's request through B carried Bob's memory:\n%s", got)
	}

	// Bob through B: his own cat, nothing of Ana's.
	for i, q := range []string{"What animals do I keep?", "Do I keep bees or goats in Tromsø?"} {
		res := b.chat(bob, q)
		if res.Err != nil || res.Status != http.StatusOK || !res.OK {
			t.Fatalf("Bob's question through B: status %d, err %v", res.Status, res.Err)
		}
		blk := block(res.Sent.Body)
		if i == 0 && !strings.Contains(blk, "Zqmittens") {
			t.Errorf("Bob's question %q through B did not carry his own memory (X-Memory-Status %s):\n%s", q, res.Memory, blk)
		}
		for _, s := range []string{"Zqfrost", "Zqmoss", "bees", "Tromsø"} {
			if strings.Contains(blk, s) {
				t.Errorf("Bob's question %q through B carried Ana's %q:\n%s", q, s, blk)
			}
		}
	}
	// And Ana's own list through B has both facts.
	joined, err := b.contents(ana)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(joined, "Zqfrost") || !strings.Contains(joined, "bees in Tromsø") {
		t.Errorf("Ana's memories listed through B lack a fact told through A: %s", joined)
	}
}

// TestEditDeleteForgetThroughAReachB: what Ana changes through A's
// memory_api changes what B's model is told: an edited memory is injected
// with its new text and never its old one, a deleted one no longer, and once
// she has forgotten herself B injects nothing for her key and lists nothing.
//
// Each names its replica directory (replica), in its data directory.
func TestEditDeleteForgetThroughAReachB(t *testing.T) {
	db := pgtest.Database(t)
	upA, upB := newUpstream(t), newUpstream(t)
	a, b := newInstance(t, "A", db, upA), newInstance(t, "B", db, upB)
	for _, c := range []*instance{a, b} {
		c.replica = filepath.Join(c.dataHome, "replica-"+c.name)
		c.start()
	}
	const ana, bob = "key-ana", "key-bob"

	locker := a.remember(ana, "fact", "locker", "User's locker code is zqalpha1111.")
	gym := a.remember(ana, "fact", "gym", "User's gym is called Zqironworks.")
	a.remember(ana, "fact", "dentist", "User's dentist is Dr Zqmolar.")
	b.remember(bob, "fact", "locker", "User's locker code is zqbob7777.")

	const lockerQ, gymQ, dentistQ = "What is my locker code?", "What is my gym called?", "Who is my dentist?"
	poll(t, b, ana, lockerQ, replication, "Ana's locker code", func(blk string) bool { return strings.Contains(blk, "zqalpha1111") })
	poll(t, b, ana, gymQ, replication, "Ana's gym", func(blk string) bool { return strings.Contains(blk, "Zqironworks") })

	// Edit through A.
	out := a.mustAPI(http.MethodPatch, "/memories/"+itoa(locker), ana,
		map[string]any{"content": "User's locker code is zqbravo2222."}, http.StatusOK)
	if m, _ := out["memory"].(map[string]any); m["content"] != "User's locker code is zqbravo2222." {
		t.Fatalf("PATCH answered %v", out)
	}
	blk, took := poll(t, b, ana, lockerQ, replication, "the edited locker code, without the old one", func(blk string) bool {
		return strings.Contains(blk, "zqbravo2222") && !strings.Contains(blk, "zqalpha1111")
	})
	t.Logf("B injected the edit %v after it was acknowledged through A", took)
	if strings.Contains(blk, "zqbob7777") {
		t.Errorf("Ana's request through B carried Bob's locker code:\n%s", blk)
	}
	// Once the new text is there, the old never comes back.
	for range 3 {
		res := b.chat(ana, lockerQ)
		if blk := block(res.Sent.Body); strings.Contains(blk, "zqalpha1111") || !strings.Contains(blk, "zqbravo2222") {
			t.Fatalf("after the edit reached B, a later question got:\n%s", blk)
		}
	}

	// Delete through A.
	a.mustAPI(http.MethodDelete, "/memories/"+itoa(gym), ana, nil, http.StatusOK)
	_, took = poll(t, b, ana, gymQ, replication, "the deleted gym gone", func(blk string) bool {
		return !strings.Contains(blk, "Zqironworks")
	})
	t.Logf("B stopped injecting the deleted memory %v after it was acknowledged through A", took)
	if blk := block(b.chat(ana, lockerQ).Sent.Body); !strings.Contains(blk, "zqbravo2222") {
		t.Errorf("deleting the gym took the locker code with it:\n%s", blk)
	}

	// Forget Ana through A. B's own turns of her are learned first, so none
	// lands after the forget and nothing of hers may be left.
	b.settle()
	a.settle()
	a.mustAPI(http.MethodDelete, "/owners/me", ana, nil, http.StatusOK)
	forgot := time.Now()
	for {
		ms, err := b.list(ana)
		if err != nil {
			t.Fatal(err)
		}
		if len(ms) == 0 {
			break
		}
		if time.Since(forgot) > replication {
			t.Fatalf("%v after Ana was forgotten through A, B still lists %d of her memories, e.g. %q", replication, len(ms), ms[0].Content)
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Logf("B listed nothing of Ana's %v after she was forgotten through A", time.Since(forgot))
	for _, q := range []string{lockerQ, gymQ, dentistQ} {
		res := b.chat(ana, q)
		if res.Err != nil || res.Status != http.StatusOK || !res.OK {
			t.Fatalf("Ana's question through B after forgetting: status %d, err %v", res.Status, res.Err)
		}
		if blk := block(res.Sent.Body); blk != "" {
			t.Errorf("after Ana was forgotten, her question %q through B still carried (X-Memory-Status %s):\n%s", q, res.Memory, blk)
		}
	}
	if ms, err := a.list(ana); err != nil || len(ms) > 3 { // the three questions just asked through B, at most
		t.Errorf("A lists %d memories of Ana after she was forgotten (err %v): %v", len(ms), err, ms)
	}
	// No byte of her content is left in the storage directory of the
	// instance that forgot her (docs/api.md), nor, once it has purged the
	// forget it replayed (compacted its replica, rebuilt her index shard),
	// in the other's.
	secrets := []string{"zqalpha1111", "zqbravo2222", "Zqironworks", "Zqmolar"}
	for _, s := range secrets {
		if files := a.filesHolding(s); len(files) > 0 {
			t.Errorf("A: after Ana was forgotten through it, %q is still on disk in %v", s, files)
		}
	}
	purged := time.Now()
	for _, s := range secrets {
		for files := b.filesHolding(s); len(files) > 0; files = b.filesHolding(s) {
			if time.Since(purged) > 10*time.Second {
				t.Errorf("B: 10 s after Ana was forgotten through A, %q is still on disk in %v", s, files)
				break
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	t.Logf("B's storage held nothing of Ana's %v after A's forget was checked", time.Since(purged))
	// Bob is untouched.
	if blk := block(b.chat(bob, lockerQ).Sent.Body); !strings.Contains(blk, "zqbob7777") {
		t.Errorf("forgetting Ana took Bob's memory with it:\n%s", blk)
	}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// TestInstancesStartTogetherOnEmptyDatabase: three instances started at the
// same moment on a new database (each making the schema, and the store's
// secret that names owners, unless another did first) all come up, answer,
// and agree on who an API key is: a memory saved through any one is listed,
// under the same owner id, through the others, and recalled through them.
func TestInstancesStartTogetherOnEmptyDatabase(t *testing.T) {
	db := pgtest.Database(t)
	var cs []*instance
	for _, name := range []string{"A", "B", "C"} {
		cs = append(cs, newInstance(t, name, db, newUpstream(t)))
	}
	var wg sync.WaitGroup
	errs := make([]error, len(cs))
	for i, c := range cs {
		wg.Go(func() {
			if errs[i] = c.launch(); errs[i] == nil {
				errs[i] = c.waitReady(60 * time.Second)
			}
		})
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			cs[i].showLog()
			t.Fatalf("%s: %v", cs[i].name, err)
		}
	}
	for _, c := range cs {
		for _, l := range c.logLines(`"level":"error"`) {
			t.Errorf("%s logged an error at start: %s", c.name, l)
		}
		if res := c.chat("key-probe", "Hello there, good morning!"); res.Err != nil || res.Status != http.StatusOK || !res.OK {
			t.Errorf("%s does not proxy: status %d, err %v", c.name, res.Status, res.Err)
		}
	}

	// Each saves one memory for Carol; every instance lists all three, with
	// one owner id.
	const carol = "key-carol"
	facts := []string{"User's boat is called Zqpetrel.", "User's boat is moored in Zqbergen.", "User's boat has a zqcrimson sail."}
	for i, c := range cs {
		c.remember(carol, "fact", "boat-"+itoa(int64(i)), facts[i])
	}
	owner := ""
	for _, c := range cs {
		deadline := time.Now().Add(replication)
		for {
			ms, err := c.list(carol)
			if err != nil {
				t.Fatal(err)
			}
			got := map[string]bool{}
			for _, m := range ms {
				got[m.Content] = true
				if owner == "" {
					owner = m.Owner
				}
				if m.Owner != owner {
					t.Fatalf("%s lists Carol's %q under owner %s, another instance under %s: the instances name owners differently",
						c.name, m.Content, m.Owner, owner)
				}
			}
			if got[facts[0]] && got[facts[1]] && got[facts[2]] {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s lists %d of Carol's memories %v after %v, want the three saved through A, B and C", c.name, len(ms), ms, replication)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	for _, c := range cs {
		poll(t, c, carol, "What is my boat called, where is it moored, and what colour is its sail?", replication,
			"Carol's three boat facts", func(blk string) bool {
				return strings.Contains(blk, "Zqpetrel") && strings.Contains(blk, "Zqbergen") && strings.Contains(blk, "zqcrimson")
			})
	}
}

// TestKillNineLosesNoAcknowledgedWrite: while clients save memories through
// A's memory_api as fast as it answers, A is killed with SIGKILL. Every
// memory A acknowledged (2xx) is then listed, with the id A gave it, through
// B, and through A once it is started again on its old replica.
func TestKillNineLosesNoAcknowledgedWrite(t *testing.T) {
	db := pgtest.Database(t)
	a := startInstance(t, "A", db, newUpstream(t))
	b := startInstance(t, "B", db, newUpstream(t))

	type ack struct {
		key, content string
		id           int64
	}
	const writers = 6
	var (
		mu     sync.Mutex
		acked  []ack
		failed atomic.Int64
		wg     sync.WaitGroup
		killed atomic.Bool
	)
	for w := range writers {
		wg.Go(func() {
			key := "key-load-" + itoa(int64(w))
			for i := 0; ; i++ {
				content := "User's note " + itoa(int64(w)) + "-" + itoa(int64(i)) + " is zqnote" + itoa(int64(w*100000+i)) + "."
				status, out, err := a.api(http.MethodPost, "/memories", key,
					map[string]any{"kind": "fact", "key": "note-" + itoa(int64(i)), "content": content})
				if err == nil && status/100 == 2 {
					m, _ := out["memory"].(map[string]any)
					id, _ := m["id"].(float64)
					if id == 0 || m["content"] != content {
						t.Errorf("A acknowledged %q with %v", content, out)
					}
					mu.Lock()
					acked = append(acked, ack{key, content, int64(id)})
					mu.Unlock()
					continue
				}
				failed.Add(1)
				if killed.Load() {
					return
				}
				if err == nil {
					t.Errorf("A refused a write before it was killed: status %d %v", status, out)
				}
			}
		})
	}
	// Let the load build up, then crash A in the middle of it.
	deadline := time.Now().Add(10 * time.Second)
	for {
		mu.Lock()
		n := len(acked)
		mu.Unlock()
		if n >= 150 || time.Now().After(deadline) {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	killed.Store(true)
	a.kill9()
	wg.Wait()
	t.Logf("A acknowledged %d writes before SIGKILL; %d requests failed (in flight or after)", len(acked), failed.Load())
	if len(acked) < 50 {
		t.Fatalf("only %d writes were acknowledged before the kill; the test exercised too little", len(acked))
	}

	check := func(c *instance) {
		t.Helper()
		want := map[string]map[int64]string{}
		for _, k := range acked {
			if want[k.key] == nil {
				want[k.key] = map[int64]string{}
			}
			want[k.key][k.id] = k.content
		}
		deadline := time.Now().Add(replication)
		for {
			var missing []string
			for key, ids := range want {
				ms, err := c.list(key)
				if err != nil {
					t.Fatal(err)
				}
				have := map[int64]string{}
				for _, m := range ms {
					have[m.ID] = m.Content
				}
				for id, content := range ids {
					if have[id] != content {
						missing = append(missing, key+"#"+itoa(id)+" "+content+" (listed: "+have[id]+")")
					}
				}
			}
			if len(missing) == 0 {
				return
			}
			if time.Now().After(deadline) {
				t.Errorf("%s: %d of %d acknowledged writes are missing after %v, e.g. %v", c.name, len(missing), len(acked), replication, missing[:min(5, len(missing))])
				return
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	check(b)
	a.start() // the same replica directory, as after a crash
	check(a)
	if res := a.chat("key-load-0", "What do you know about my note zqnote1?"); res.Status != http.StatusOK || !strings.Contains(block(res.Sent.Body), "is zqnote1.") {
		t.Errorf("restarted A does not recall a memory acknowledged before the crash: status %d, block:\n%s", res.Status, block(res.Sent.Body))
	}
}

// TestDatabaseRestartUnderLoad: with chat traffic flowing through A, the
// database goes down (a crash: immediate stop) for about two seconds and
// comes back, while the traffic goes on. Every proxied request still
// reaches the model and answers 200 (memory fails open; recall keeps
// working from A's replica), no turn is dropped, and learning resumes: a
// fact told through A after the database is back, and one told while it
// was down (held in memory and retried with backoff), are both recalled
// through B within a few seconds of the database's return.
func TestDatabaseRestartUnderLoad(t *testing.T) {
	db := pgtest.Database(t)
	upA := newUpstream(t)
	a := startInstance(t, "A", db, upA)
	b := startInstance(t, "B", db, newUpstream(t))
	const dan = "key-dan"

	a.remember(dan, "fact", "city", "User lives in Zqoslo.")
	poll(t, a, dan, "Where do I live?", replication, "Dan's city", func(blk string) bool { return strings.Contains(blk, "Zqoslo") })

	// Traffic: two clients (Dan and another) asking and telling through A
	// without pause, until told to stop; every answer is recorded.
	type outcome struct {
		at     time.Time
		status int
		memory string
		err    error
		ok     bool
	}
	var (
		mu       sync.Mutex
		outcomes []outcome
		stop     = make(chan struct{})
		wg       sync.WaitGroup
	)
	stopTraffic := sync.OnceFunc(func() { close(stop); wg.Wait() })
	defer stopTraffic()
	for w := range 2 {
		wg.Go(func() {
			key := "key-traffic"
			if w == 0 {
				key = dan
			}
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				q := "Where do I live?"
				if i%2 == 1 {
					q = "Remember that my favourite number is " + itoa(int64(i)) + "."
				}
				res := a.chat(key, q)
				mu.Lock()
				outcomes = append(outcomes, outcome{time.Now(), res.Status, res.Memory, res.Err, res.OK})
				mu.Unlock()
				time.Sleep(20 * time.Millisecond)
			}
		})
	}
	time.Sleep(300 * time.Millisecond)

	pgtest.Stop(t)
	down := time.Now()
	time.Sleep(700 * time.Millisecond)
	during := a.chat(dan, "Remember that my kayak is named Zqpuffin.")
	// A memory saved through the API while the database is down cannot be
	// committed: it must be refused, not acknowledged and then lost.
	apiStatus, apiOut, apiErr := a.api(http.MethodPost, "/memories", dan,
		map[string]any{"kind": "fact", "key": "bike", "content": "User's bike is a zqteal Brompton."})
	t.Logf("saving a memory through A's API while the database is down: status %d, err %v, %v", apiStatus, apiErr, apiOut)
	time.Sleep(1300 * time.Millisecond)
	pgtest.Start(t)
	up := time.Now()
	t.Logf("the database was down for %v", up.Sub(down))
	after := a.chat(dan, "Remember that my canoe is named Zqorca.")
	for _, r := range []chatResult{during, after} {
		if r.Err != nil || r.Status != http.StatusOK || !r.OK {
			t.Fatalf("a turn telling a fact did not reach the model: status %d, err %v", r.Status, r.Err)
		}
	}

	// Learning resumed, with the traffic still flowing: the fact told after
	// the database came back, then the one told while it was down, are
	// recalled through B.
	_, took := poll(t, b, dan, "What is my canoe named?", 5*time.Second, "the fact told through A after the database came back",
		func(blk string) bool { return strings.Contains(blk, "Zqorca") })
	t.Logf("B recalled the fact told after the outage %v after it was told", took)
	// Turns held while the database is down are retried every second
	// (docs/scale.md), so they are learned soon after it is back, traffic
	// or not.
	const heldWithin = 12 * time.Second
	if _, _, err := try(b, dan, "What is my kayak named?", heldWithin-time.Since(up), func(blk string) bool { return strings.Contains(blk, "Zqpuffin") }); err != nil {
		t.Errorf("the fact told through A while the database was down is not recalled through B %v after the database came back, "+
			"while traffic through A goes on (the turn A holds in memory is not retried while other turns keep arriving): %v", heldWithin, err)
	} else {
		t.Logf("B recalled the fact told during the outage %v after the database came back", time.Since(up))
	}
	stopTraffic()
	quiet := time.Now()

	var inOutage, failedOpen, injected int
	for _, o := range outcomes {
		if o.err != nil || o.status != http.StatusOK || !o.ok {
			t.Errorf("a proxied request at %+.3fs from the database going down failed: status %d, reached the model %v, err %v",
				o.at.Sub(down).Seconds(), o.status, o.ok, o.err)
		}
		if o.at.After(down) && o.at.Before(up) {
			inOutage++
			switch o.memory {
			case "failed_open":
				failedOpen++
			case "injected":
				injected++
			}
		}
	}
	t.Logf("%d requests of the traffic in all, %d while the database was down (%d with memories injected from the replica, %d failed open); A's model received %d requests",
		len(outcomes), inOutage, injected, failedOpen, upA.count())
	if inOutage < 10 {
		t.Errorf("only %d requests were sent while the database was down", inOutage)
	}

	if apiErr == nil && apiStatus/100 == 2 {
		ms, err := b.list(dan)
		if err != nil {
			t.Fatal(err)
		}
		found := false
		for _, m := range ms {
			found = found || strings.Contains(m.Content, "zqteal")
		}
		if !found {
			t.Errorf("A acknowledged a memory (status %d) while the database was down, and B does not list it after the database came back", apiStatus)
		}
	} else if apiErr != nil || apiStatus < 500 {
		t.Errorf("saving a memory through A's API while the database was down: status %d, err %v; want a 5xx saying the storage is unavailable", apiStatus, apiErr)
	}

	// Once the traffic stops, the held turn is learned at the latest when
	// the writer's backoff (at most 10 s) runs out.
	if t.Failed() {
		_, _, err := try(b, dan, "What is my kayak named?", 15*time.Second, func(blk string) bool { return strings.Contains(blk, "Zqpuffin") })
		t.Logf("once the traffic through A stopped, B recalled the fact told during the outage after %v (err: %v)", time.Since(quiet), err)
	}
	a.settle()
	if n := a.metric(`caddy_memory_extraction_jobs_total{result="dropped"}`); n != 0 {
		t.Errorf("A dropped %v turns across the outage", n)
	}
	t.Logf("A's metrics: turns learned %v, dropped %v, failed %v; requests failed open %v",
		a.metric(`caddy_memory_extraction_jobs_total{result="done"}`), a.metric(`caddy_memory_extraction_jobs_total{result="dropped"}`),
		a.metric(`caddy_memory_extraction_jobs_total{result="failed"}`), a.metric(`caddy_memory_requests_total{outcome="failed_open"}`))
}
