package main

import (
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/caddy-memory/memory/internal/stats"
)

// The benchmark is run by hand (see the README); these smoke runs keep it
// working: a tiny A/B run through Caddy, and a tiny scale run.

// TestMain lets a scale run start this test binary as its restarted
// server, as it starts the bench binary.
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == "-scale-serve" {
		main()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// TestABRunsBothServers: a tiny A/B run measures both servers in every
// mode, the memory server injects, and nothing fails.
func TestABRunsBothServers(t *testing.T) {
	allocs := filepath.Join(t.TempDir(), "allocs.prof")
	var res abResult
	captureStdout(t, func() error {
		var err error
		res, err = ab(abConfig{memories: 300, owners: 20, mix: heavy, rounds: 1, latencyRounds: 1, duration: 300 * time.Millisecond, concurrency: 2, capConcurrency: 3,
			delay: time.Millisecond, chunks: 3, chunkDelay: time.Millisecond, dir: t.TempDir(), memprofile: allocs})
		return err
	})
	for _, server := range []string{"bare", "memory"} {
		for _, mode := range []string{"json", "sse", "single", "capacity"} {
			ms := res.rounds[server+"/"+mode]
			if len(ms) == 0 || ms[0].reqs == 0 || ms[0].errors != 0 {
				t.Fatalf("%s/%s: %+v, want requests and no errors", server, mode, ms)
			}
			m := ms[0]
			if stats.Percentile(m.lat, 50) <= 0 || stats.Percentile(m.reach, 50) <= 0 || stats.Percentile(m.back, 50) <= 0 {
				t.Errorf("%s/%s: a figure left at zero: latency %v, way there %v, way back %v", server, mode,
					stats.Percentile(m.lat, 50), stats.Percentile(m.reach, 50), stats.Percentile(m.back, 50))
			}
			if mode == "capacity" && m.cpu <= 0 {
				t.Errorf("%s/capacity: no CPU time measured", server)
			}
			if mode == "sse" && stats.Percentile(m.ttfb, 50) <= 0 {
				t.Errorf("%s/sse: no first-byte times", server)
			}
		}
	}
	if res.seen == 0 || res.injected == 0 {
		t.Errorf("the memory server injected into %d of %d requests", res.injected, res.seen)
	}
	for _, f := range []string{allocs + ".base", allocs} {
		if st, err := os.Stat(f); err != nil || st.Size() == 0 {
			t.Errorf("-memprofile: %s not written (%v)", f, err)
		}
	}
}

// TestPctInterval: the interval of a p99 over 900 requests runs from the
// 15th to the 4th slowest, around the 9th.
func TestPctInterval(t *testing.T) {
	v := make([]float64, 900)
	for i := range v {
		v[len(v)-1-i] = float64(i) // any order
	}
	lo, hi := pctInterval(v, 99)
	if lo != 885 || hi != 896 || stats.Percentile(v, 99) != 891 {
		t.Errorf("p99 %v in [%v, %v], want 891 in [885, 896]", stats.Percentile(v, 99), lo, hi)
	}
	if lo, hi := pctInterval(nil, 99); lo != 0 || hi != 0 {
		t.Errorf("no requests: [%v, %v]", lo, hi)
	}
}

func TestScaleOneReportsEveryFigure(t *testing.T) {
	out := captureStdout(t, func() error { return scaleOne(500, 50, 8, t.TempDir()) })
	var r scaleResult
	if err := json.Unmarshal(out, &r); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if r.Memories != 500 || r.IngestPerSec <= 0 || r.SearchP50Ms <= 0 || r.StoreMiB <= 0 || r.IndexMiB <= 0 ||
		r.StartIntactSec <= 0 || r.StartRebuildSec <= 0 || r.RSSMiB <= 0 || r.PrivateMiB <= 0 || r.RSSIngestMiB <= 0 || r.HeapMiB <= 0 {
		t.Errorf("missing figures: %+v", r)
	}
	if c := r.Cold; runtime.GOOS == "linux" && (c == nil || c.StartSec <= 0 || c.SearchP50Ms <= 0 || c.RSSMiB <= 0) {
		t.Errorf("missing cold-start figures: %+v", c)
	}
}

func captureStdout(t *testing.T, fn func() error) []byte {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	orig := os.Stdout
	os.Stdout = w
	done := make(chan []byte)
	go func() { b, _ := io.ReadAll(r); done <- b }()
	ferr := fn()
	w.Close()
	os.Stdout = orig
	out := <-done
	if ferr != nil {
		t.Fatal(ferr)
	}
	return out
}

// TestHeavyMix: the heavy mix has the shape it promises, and spends
// exactly the memories asked for.
func TestHeavyMix(t *testing.T) {
	sizes := heavy.sizes(1_000_000, 10_000)
	total, large, small := 0, 0, 0
	for _, s := range sizes {
		total += s
		if s >= 10_000 && s <= 50_000 {
			large++
		}
		if s < 100 {
			small++
		}
	}
	if total != 1_000_000 || large < 5 || large > 20 || small < 9_500 {
		t.Errorf("1M over 10k owners: %d memories, %d owners of 10k to 50k, %d under 100", total, large, small)
	}
	for _, n := range []int{300, 100_000} {
		total := 0
		for _, s := range heavy.sizes(n, 20) {
			total += s
		}
		if total != n {
			t.Errorf("heavy.sizes(%d, 20) spends %d", n, total)
		}
	}
}
