package engine

import (
	"encoding/json"
	"fmt"
	"math/rand"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/caddy-memory/memory/extract"
	"github.com/caddy-memory/memory/internal/stats"
	"github.com/caddy-memory/memory/store"
)

// BenchmarkTurnDurable measures the durability window: the time from handing
// a turn to the engine until what it taught is on disk (fsynced), with
// turns arriving one at a time, more than learnEvery apart (closer, they
// are gathered). A crash loses only turns inside this window.
func BenchmarkTurnDurable(b *testing.B) {
	e, err := Open(Config{Dir: b.TempDir(), Shards: 1})
	if err != nil {
		b.Fatal(err)
	}
	defer e.Close(b.Context())
	owner := e.OwnerID("bench")
	i := 0
	for b.Loop() {
		b.StopTimer()
		time.Sleep(learnEvery)
		b.StartTimer()
		i++
		e.Enqueue(&Job{Owner: owner, Turn: extract.Turn{Dialect: "openai_chat", User: fmt.Sprintf("turn %d", i), Time: time.Now()}})
		for e.learner.pending.Load() > 0 {
			time.Sleep(20 * time.Microsecond)
		}
	}
}

// BenchmarkSearchOwner is one retrieval for an owner with n memories the
// size of a proxied turn, in a store of other owners' memories, through
// the postings in memory, the owner's records and the index. A 1M-memory store over
// 10k owners has about 100 memories an owner.
func BenchmarkSearchOwner(b *testing.B) {
	for _, n := range []int{100, 1000} {
		// Every owner indexed (enrolled), so either path can be measured.
		e, err := Open(Config{Dir: b.TempDir(), Shards: 1, LocalSearchMax: -1})
		if err != nil {
			b.Fatal(err)
		}
		rng := rand.New(rand.NewSource(1))
		words := strings.Fields(`time year people way day thing life child world school family student group
			country problem hand part place week company system program question work number night point home
			water room mother area money story month book job word business issue side head house service friend
			father power hour game line end member car city name team minute idea body back parent face running
			shoes morning garden coffee trip beach bike dog cat dinner recipe guitar pottery hike camping painting`)
		text := func(k int) string {
			ws := make([]string, k)
			for i := range ws {
				ws[i] = words[rng.Intn(len(words))]
			}
			return strings.Join(ws, " ")
		}
		owner := e.OwnerID("bench")
		_, err = e.write(func(tx *store.Tx) error {
			for i := range 5 * n {
				o := owner
				if i%5 != 0 {
					o = e.OwnerID(fmt.Sprint("other-", i%50))
				}
				_, _, err := tx.Upsert(o, withDigest(store.Put{Kind: "turn", Key: fmt.Sprint("turn:", i),
					Content: "User: " + text(20) + "\nAssistant: " + text(30), Context: text(40)}))
				if err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			b.Fatal(err)
		}
		if err := e.Sync(b.Context()); err != nil {
			b.Fatal(err)
		}
		req := SearchRequest{Owner: owner, Query: "Can you remind me about the guitar and the camping trip with my father?", Limit: 5, MinScore: DefaultMinScore}
		for _, path := range []struct {
			name          string
			max, postings int
		}{{"postings", 1 << 20, 0}, {"records", 1 << 20, -1}, {"index", -1, -1}} {
			b.Run(fmt.Sprintf("%s/%d", path.name, n), func(b *testing.B) {
				e.cfg.LocalSearchMax = path.max
				e.UseSearchCache(path.postings)
				if err := e.Sync(b.Context()); err != nil {
					b.Fatal(err)
				}
				b.ReportAllocs()
				for b.Loop() {
					if _, err := e.Search(b.Context(), req); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
		e.Close(b.Context())
	}
}

// BenchmarkSearchLargeOwner is one retrieval for an owner holding 50,000
// memories (a year of daily use, kept), in a shard that also holds other
// large owners' 50,000, through the index, with questions of a few common
// and rarer words. It reports the p50 and p99 of the searches besides the
// mean.
func BenchmarkSearchLargeOwner(b *testing.B) {
	const n = 50_000
	e, err := Open(Config{Dir: b.TempDir(), Shards: 1})
	if err != nil {
		b.Fatal(err)
	}
	defer e.Close(b.Context())
	rng := rand.New(rand.NewSource(1))
	zipf := rand.NewZipf(rng, 1.07, 2, 20_000)
	common := strings.Fields(`time year people way day thing life child world school family student group
		country problem hand part place week company system program question work number night point home
		water room mother area money story month book job word business issue side head house service friend
		father power hour game line end member car city name team minute idea body back parent face running
		shoes morning garden coffee trip beach bike dog cat dinner recipe guitar pottery hike camping painting`)
	word := func() string {
		if i := zipf.Uint64(); i < uint64(len(common)) {
			return common[i]
		} else {
			return fmt.Sprintf("w%x", i)
		}
	}
	text := func(k int) string {
		ws := make([]string, k)
		for i := range ws {
			ws[i] = word()
		}
		return strings.Join(ws, " ")
	}
	owner := e.OwnerID("bench")
	halfOwner(b, e, owner, 2*n, func(int) string { return "User: " + text(15) + "\nAssistant: " + text(25) }, func(int) string { return text(30) })
	questions := make([]string, 200)
	for i := range questions {
		questions[i] = "Can you remind me about the " + text(2) + " and " + text(3) + "?"
	}
	searchLatencies(b, e, owner, questions)
}

// searchLatencies searches owner's memories for the questions in turn and
// reports the p50 and p99 besides the mean.
func searchLatencies(b *testing.B, e *Engine, owner string, questions []string) {
	if err := e.Sync(b.Context()); err != nil {
		b.Fatal(err)
	}
	var took []float64
	i := 0
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		t0 := time.Now()
		if _, err := e.Search(b.Context(), SearchRequest{Owner: owner, Query: questions[i%len(questions)], Limit: 5, MinScore: DefaultMinScore}); err != nil {
			b.Fatal(err)
		}
		took = append(took, float64(time.Since(t0).Microseconds()))
		i++
	}
	b.ReportMetric(stats.Percentile(took, 50), "p50-µs")
	b.ReportMetric(stats.Percentile(took, 99), "p99-µs")
	if p := e.postings.cur.Load(); p != nil {
		b.ReportMetric(float64(p.p.Bytes())/(1<<20), "postings-MiB")
	}
	var ms runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&ms)
	b.ReportMetric(float64(ms.HeapAlloc)/(1<<20), "heap-MiB")
}

// BenchmarkSearchLargeOwnerText is BenchmarkSearchLargeOwner with the
// words of real conversation: LoCoMo's dev turns (../shared/evals, beside
// the repository), paired into transcript turns and repeated to 50,000 for
// the owner and 50,000 for others in the same shard, asked LoCoMo's dev
// questions. Zipf-drawn words put the commonest words in nearly every
// memory; conversation does not.
func BenchmarkSearchLargeOwnerText(b *testing.B) {
	const n = 50_000
	f, err := os.Open("../../../shared/evals/locomo/dev_turns.jsonl")
	if err != nil {
		b.Skipf("the LoCoMo dev turns are not beside the repository: %v", err)
	}
	var said []string
	dec := json.NewDecoder(f)
	for {
		var t struct{ Speaker, Text string }
		if dec.Decode(&t) != nil {
			break
		}
		said = append(said, t.Speaker+": "+t.Text)
	}
	f.Close()
	q, err := os.Open("../../../shared/evals/locomo/dev_questions.jsonl")
	if err != nil {
		b.Fatal(err)
	}
	var questions []string
	dec = json.NewDecoder(q)
	for {
		var t struct{ Question string }
		if dec.Decode(&t) != nil {
			break
		}
		questions = append(questions, t.Question)
	}
	q.Close()
	e, err := Open(Config{Dir: b.TempDir(), Shards: 1})
	if err != nil {
		b.Fatal(err)
	}
	defer e.Close(b.Context())
	owner := e.OwnerID("bench")
	halfOwner(b, e, owner, 2*n, func(i int) string {
		j := (i / 2 * 2) % (len(said) - 1)
		return "User: " + said[j] + "\nAssistant: " + said[j+1]
	}, func(int) string { return "" })
	searchLatencies(b, e, owner, questions)
}

// halfOwner stores n turn memories, every other one owner's and the rest
// ten other owners', with content and context made by the functions, and
// waits until they are indexed.
func halfOwner(b *testing.B, e *Engine, owner string, n int, content, context func(i int) string) {
	for start := 0; start < n; start += 5000 {
		_, err := e.write(func(tx *store.Tx) error {
			for i := start; i < min(start+5000, n); i++ {
				o := owner
				if i%2 == 1 {
					o = e.OwnerID(fmt.Sprint("other-", i%10))
				}
				_, _, err := tx.Upsert(o, withDigest(store.Put{Kind: "turn", Key: fmt.Sprint("turn:", i),
					Content: content(i), Context: context(i)}))
				if err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			b.Fatal(err)
		}
	}
	if err := e.Sync(b.Context()); err != nil {
		b.Fatal(err)
	}
}
