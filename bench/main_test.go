package main

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
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

func TestABRunsBothServers(t *testing.T) {
	allocs := filepath.Join(t.TempDir(), "allocs.prof")
	out := captureStdout(t, func() error {
		return ab(abConfig{memories: 300, owners: 20, rounds: 1, latencyRounds: 1, duration: 300 * time.Millisecond, concurrency: 2,
			delay: time.Millisecond, chunks: 3, chunkDelay: time.Millisecond, dir: t.TempDir(), memprofile: allocs})
	})
	for _, want := range []string{"JSON requests/s", "SSE first byte p50", "memory injected memories into", "0 failed requests", "one client (1 rounds): p50 ",
		"one client, rounds pooled (", "one client, way there: the upstream had the whole request after p50 ", "garbage collections in", "MB/s allocated"} {
		if !bytes.Contains(out, []byte(want)) {
			t.Errorf("report lacks %q:\n%s", want, out)
		}
	}
	// The ways there and back are measured for both servers, not left at zero.
	for _, way := range []string{`way there: the upstream had the whole request after`, `way back: the client had the whole answer, from when the upstream began it, after`} {
		m := regexp.MustCompile(way + ` p50 (\S+) ms \(bare\) and (\S+) ms \(memory\)`).FindSubmatch(out)
		if m == nil {
			t.Errorf("no %q figures:\n%s", way, out)
			continue
		}
		for i, server := range []string{"bare", "memory"} {
			if v, _ := strconv.ParseFloat(string(m[i+1]), 64); v <= 0 {
				t.Errorf("%s: %s ms for %s", way, m[i+1], server)
			}
		}
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
