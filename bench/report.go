package main

import (
	"fmt"
	"math"
	"sort"

	"github.com/caddy-memory/memory/internal/stats"
)

func median(v []float64) float64 { return stats.Percentile(v, 50) }

// report prints an A/B run: each figure's median over the rounds, for both
// servers and as the ratio memory/bare, then the one-client latencies and
// where they go.
func report(c abConfig, results map[string][]measure, up *upstream, sizes []int) {
	stat := func(key string, f func(measure) float64) float64 {
		var v []float64
		for _, m := range results[key] {
			v = append(v, f(m))
		}
		return median(v)
	}
	rps := func(m measure) float64 { return float64(m.reqs) / m.seconds }
	p := func(q float64) func(measure) float64 {
		return func(m measure) float64 { return stats.Percentile(m.lat, q) }
	}
	tt := func(q float64) func(measure) float64 {
		return func(m measure) float64 { return stats.Percentile(m.ttfb, q) }
	}
	errs := 0
	for _, ms := range results {
		for _, m := range ms {
			errs += m.errors
		}
	}

	fmt.Printf("\n%d memories over %d owners, %s mix (%s); %d rounds of %s per server and mode\n",
		c.memories, c.owners, c.mix, describeSizes(sizes), c.rounds, c.duration)
	fmt.Printf("latency rounds: %d clients, upstream answers in %s", c.concurrency, c.delay)
	fmt.Printf(" (streams: %d chunks, %s apart)\n", c.chunks, c.chunkDelay)
	if c.encrypt {
		fmt.Println("memory's storage is encrypted (store values and index files sealed, digests keyed)")
	}
	if n := up.seen.Load(); n > 0 {
		fmt.Printf("memory injected memories into %.0f%% of its requests; %d failed requests in all\n\n", 100*float64(up.injected.Load())/float64(n), errs)
	}
	fmt.Printf("%-22s %12s %12s %12s\n", "median of rounds", "bare", "memory", "memory/bare")
	row := func(name, key string, f func(measure) float64, unit string) {
		b, m := stat("bare/"+key, f), stat("memory/"+key, f)
		fmt.Printf("%-22s %10.2f%s %10.2f%s %12.3f\n", name, b, unit, m, unit, m/b)
	}
	row("JSON requests/s", "json", rps, "  ")
	row("JSON p50", "json", p(50), "ms")
	row("JSON p99", "json", p(99), "ms")
	row("SSE requests/s", "sse", rps, "  ")
	row("SSE first byte p50", "sse", tt(50), "ms")
	row("SSE first byte p99", "sse", tt(99), "ms")
	row("SSE complete p50", "sse", p(50), "ms")
	if len(results["memory/capacity"]) > 0 {
		cpuPer := func(m measure) float64 { return 1e6 * m.cpu / float64(max(1, m.reqs)) }
		fmt.Printf("capacity rounds: %d clients, upstream answers at once\n", c.capConcurrency)
		row("JSON requests/s", "capacity", rps, "  ")
		row("JSON p50", "capacity", p(50), "ms")
		row("CPU per request", "capacity", cpuPer, "µs")
	}
	fmt.Printf("\nmemory's own search (X-Memory-Time), JSON: p50 %.2f ms, p99 %.2f ms\n",
		stat("memory/json", func(m measure) float64 { return stats.Percentile(m.search, 50) }),
		stat("memory/json", func(m measure) float64 { return stats.Percentile(m.search, 99) }))
	fmt.Printf("added latency, JSON: p50 %+.2f ms, p99 %+.2f ms\n",
		stat("memory/json", p(50))-stat("bare/json", p(50)), stat("memory/json", p(99))-stat("bare/json", p(99)))
	if c.latencyRounds > 0 {
		fmt.Printf("added latency, JSON, one client (%d rounds): p50 %+.2f ms, p99 %+.2f ms (bare p50 %.2f ms; memory's own search p50 %.2f ms, p99 %.2f ms)\n", c.latencyRounds,
			stat("memory/single", p(50))-stat("bare/single", p(50)), stat("memory/single", p(99))-stat("bare/single", p(99)), stat("bare/single", p(50)),
			stat("memory/single", func(m measure) float64 { return stats.Percentile(m.search, 50) }),
			stat("memory/single", func(m measure) float64 { return stats.Percentile(m.search, 99) }))
		lat := func(m measure) []float64 { return m.lat }
		bare, mem := pooled(results["bare/single"], lat), pooled(results["memory/single"], lat)
		bp, mp := stats.Percentile(bare, 99), stats.Percentile(mem, 99)
		lo, hi := pctInterval(mem, 99)
		fmt.Printf("one client, rounds pooled (%d and %d requests): added p99 %+.2f ms; memory's p99 %.2f ms (95%% interval %.2f to %.2f ms), bare's %.2f ms\n",
			len(bare), len(mem), mp-bp, mp, lo, hi, bp)
		// Where the added time goes: to the upstream (the search, the
		// rewrite), or back from it (the copy, and whatever else runs then).
		way := func(name, what string, f func(measure) []float64) {
			med := func(key string) float64 {
				return stat(key, func(m measure) float64 { return stats.Percentile(f(m), 50) })
			}
			p99 := func(key string) float64 { return stats.Percentile(pooled(results[key], f), 99) }
			b, m := med("bare/single"), med("memory/single")
			fmt.Printf("one client, way %s: %s p50 %.2f ms (bare) and %.2f ms (memory), %+.2f ms; pooled p99 %.2f and %.2f ms, %+.2f ms\n",
				name, what, b, m, m-b, p99("bare/single"), p99("memory/single"), p99("memory/single")-p99("bare/single"))
		}
		way("there", "the upstream had the whole request after", func(m measure) []float64 { return m.reach })
		way("back", "the client had the whole answer, from when the upstream began it, after", func(m measure) []float64 { return m.back })
	}
}

// pooled is the figures f picks of all of ms together. A round's p99 is
// its ~3rd slowest request (230 requests in 5 s at 21 ms); the p99 of the
// pooled rounds rests on more of the tail.
func pooled(ms []measure, f func(measure) []float64) []float64 {
	var v []float64
	for _, m := range ms {
		v = append(v, f(m)...)
	}
	return v
}

// pctInterval is a 95% confidence interval of the p-th percentile of the
// population v was drawn from: the order statistics whose ranks lie 1.96
// standard deviations of the binomial count below p either side of it. For
// 900 requests, the p99 lies between the 15th and the 4th slowest.
func pctInterval(v []float64, p float64) (lo, hi float64) {
	if len(v) == 0 {
		return 0, 0
	}
	s := append([]float64(nil), v...)
	sort.Float64s(s)
	n, q := float64(len(s)), p/100
	half := 1.96 * math.Sqrt(n*q*(1-q))
	rank := func(r float64) float64 { return s[min(len(s)-1, max(0, int(r)))] }
	return rank(n*q - half), rank(n*q + half)
}

// describeSizes says how an owner-size mix came out.
func describeSizes(sizes []int) string {
	largest, over10k, indexed := 0, 0, 0
	for _, s := range sizes {
		largest = max(largest, s)
		if s > 10_000 {
			over10k++
		}
		if s > 256 {
			indexed++
		}
	}
	return fmt.Sprintf("largest %d, %d owners over 10,000, %d over 256", largest, over10k, indexed)
}
