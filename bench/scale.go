package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"strconv"
	"strings"
	"time"

	"github.com/caddy-memory/memory/internal/engine"
	"github.com/caddy-memory/memory/internal/stats"
)

// scaleResult is one scale run, at one number of memories.
type scaleResult struct {
	Memories        int     `json:"memories"`
	Owners          int     `json:"owners"`
	IngestPerSec    float64 `json:"ingest_per_sec"`
	SearchP50Ms     float64 `json:"search_p50_ms"`
	SearchP99Ms     float64 `json:"search_p99_ms"`
	RSSIngestMiB    float64 `json:"rss_ingest_mib"`
	RSSMiB          float64 `json:"rss_mib"`       // restarted, serving searches
	PrivateMiB      float64 `json:"private_mib"`   // of which not file pages
	StoreRSSMiB     float64 `json:"store_rss_mib"` // of which memory.db's pages
	IndexRSSMiB     float64 `json:"index_rss_mib"` // of which the index's files
	HeapMiB         float64 `json:"heap_mib"`
	StoreMiB        float64 `json:"store_mib"`
	IndexMiB        float64 `json:"index_mib"`
	StartIntactSec  float64 `json:"start_intact_sec"`
	StartRebuildSec float64 `json:"start_rebuild_sec"`
	// The same restarted server after the storage's page cache was dropped,
	// as after a reboot: every page it reads comes from the disk.
	Cold *servedCold `json:"cold,omitempty"`
}

type servedCold struct {
	StartSec    float64 `json:"start_sec"`
	SearchP50Ms float64 `json:"search_p50_ms"`
	SearchP99Ms float64 `json:"search_p99_ms"`
	RSSMiB      float64 `json:"rss_mib"`
	StoreRSSMiB float64 `json:"store_rss_mib"`
}

// runScales runs each size in its own process, so resident memory is that
// size's alone.
func runScales(sizes []int, owners, shards int, dir string) error {
	var results []scaleResult
	for _, n := range sizes {
		fmt.Fprintf(os.Stderr, "scale run: %d memories over %d owners...\n", n, owners)
		var r scaleResult
		if err := child(&r, "-scale-one", strconv.Itoa(n), "-owners", strconv.Itoa(owners),
			"-shards", strconv.Itoa(shards), "-dir", dir); err != nil {
			return fmt.Errorf("scale run of %d: %w", n, err)
		}
		results = append(results, r)
	}
	fmt.Printf("%-10s %8s %10s %10s %10s %11s %12s\n", "memories", "owners", "ingest/s", "bbolt MiB", "index MiB", "RSS ingest", "rebuild (s)")
	for _, r := range results {
		fmt.Printf("%-10d %8d %10.0f %10.0f %10.0f %11.0f %12.1f\n", r.Memories, r.Owners, r.IngestPerSec, r.StoreMiB, r.IndexMiB, r.RSSIngestMiB, r.StartRebuildSec)
	}
	fmt.Println("\nrestarted server, 3,000 searches of random owners: with the page cache the ingest left (warm), and with it dropped first, as after a reboot (cold)")
	fmt.Printf("%-10s %10s %8s %8s %8s %8s %10s %10s | %10s %8s %8s %8s %10s\n", "memories", "start (s)", "p50 ms", "p99 ms", "RSS", "private", "bbolt RSS", "index RSS",
		"cold start", "p50 ms", "p99 ms", "RSS", "bbolt RSS")
	for _, r := range results {
		fmt.Printf("%-10d %10.2f %8.2f %8.2f %8.0f %8.0f %10.0f %10.0f", r.Memories, r.StartIntactSec, r.SearchP50Ms, r.SearchP99Ms, r.RSSMiB, r.PrivateMiB, r.StoreRSSMiB, r.IndexRSSMiB)
		if c := r.Cold; c != nil {
			fmt.Printf(" | %10.2f %8.2f %8.2f %8.0f %10.0f\n", c.StartSec, c.SearchP50Ms, c.SearchP99Ms, c.RSSMiB, c.StoreRSSMiB)
		} else {
			fmt.Printf(" | %10s\n", "not measured")
		}
	}
	return nil
}

// child runs this program again with args, in a process of its own, and
// decodes the JSON it prints into v.
func child(v any, args ...string) error {
	cmd := exec.Command(os.Args[0], args...)
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		return err
	}
	return json.Unmarshal(out, v)
}

// scaleOne measures one size and prints the result as JSON.
func scaleOne(n, owners, shards int, parent string) error {
	dir, err := os.MkdirTemp(parent, "memory-scale-*")
	if err != nil {
		return err
	}
	if os.Getenv("BENCH_KEEP") == "" {
		defer os.RemoveAll(dir)
	} else {
		fmt.Fprintf(os.Stderr, "keeping the storage in %s\n", dir)
	}
	ctx := context.Background()
	e, err := engine.Open(engine.Config{Dir: dir, Shards: shards})
	if err != nil {
		return err
	}
	r := scaleResult{Memories: n, Owners: owners}

	stop, err := profile(os.Getenv("BENCH_INGEST_PROFILE"))
	if err != nil {
		return err
	}
	start := time.Now()
	words, _, err := preload(e, n, owners, uniform, 42, true)
	if err != nil {
		return err
	}
	if err := e.Sync(ctx); err != nil {
		return err
	}
	r.IngestPerSec = float64(n) / time.Since(start).Seconds()
	stop()
	r.RSSIngestMiB, _ = rssMiB()
	if err := e.Close(ctx); err != nil {
		return err
	}
	r.StoreMiB = mib(fileSize(filepath.Join(dir, "memory.db")))
	r.IndexMiB = mib(stats.DirSize(filepath.Join(dir, "index")))

	// A restarted server, in a new process so nothing of the ingest is
	// resident: start-up with the index intact (open until searchable),
	// retrieval as the proxy does it, and what the process holds.
	if err := writeJSON(filepath.Join(dir, "words.json"), words); err != nil {
		return err
	}
	var served scaleResult
	if err := child(&served, "-scale-serve", dir, "-owners", strconv.Itoa(owners), "-memories", strconv.Itoa(n)); err != nil {
		return fmt.Errorf("serving run: %w", err)
	}
	r.StartIntactSec, r.SearchP50Ms, r.SearchP99Ms = served.StartIntactSec, served.SearchP50Ms, served.SearchP99Ms
	r.RSSMiB, r.PrivateMiB, r.HeapMiB = served.RSSMiB, served.PrivateMiB, served.HeapMiB
	r.StoreRSSMiB, r.IndexRSSMiB = served.StoreRSSMiB, served.IndexRSSMiB

	// And after losing the index: rebuilt from the store.
	if err := os.RemoveAll(filepath.Join(dir, "index")); err != nil {
		return err
	}
	start = time.Now()
	if e, err = open(dir); err != nil {
		return err
	}
	r.StartRebuildSec = time.Since(start).Seconds()
	if err := e.Close(ctx); err != nil {
		return err
	}

	// Again from the disk, as after a reboot (last: a dropped cache would
	// slow the rebuild). Where the cache cannot be dropped (not Linux), the
	// cold figures are left out rather than measured warm.
	if err := dropCache(dir); err != nil {
		fmt.Fprintf(os.Stderr, "cold start not measured: %v\n", err)
	} else {
		if err := child(&served, "-scale-serve", dir, "-owners", strconv.Itoa(owners), "-memories", strconv.Itoa(n)); err != nil {
			return fmt.Errorf("serving run from a cold cache: %w", err)
		}
		r.Cold = &servedCold{StartSec: served.StartIntactSec, SearchP50Ms: served.SearchP50Ms, SearchP99Ms: served.SearchP99Ms,
			RSSMiB: served.RSSMiB, StoreRSSMiB: served.StoreRSSMiB}
	}
	return json.NewEncoder(os.Stdout).Encode(r)
}

// serveOne opens a storage scaleOne filled, as a restarted server would,
// and reports start-up, retrieval and resident memory as JSON.
func serveOne(dir string, owners, n int) error {
	var words map[int][]string
	b, err := os.ReadFile(filepath.Join(dir, "words.json"))
	if err != nil {
		return err
	}
	if err := json.Unmarshal(b, &words); err != nil {
		return err
	}
	var r scaleResult
	start := time.Now()
	e, err := open(dir)
	if err != nil {
		return err
	}
	defer e.Close(context.Background())
	r.StartIntactSec = time.Since(start).Seconds()
	if err := searches(e, words, owners, n, &r); err != nil {
		return err
	}
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	r.HeapMiB = float64(ms.HeapInuse) / (1 << 20)
	r.RSSMiB, r.PrivateMiB = rssMiB()
	r.StoreRSSMiB, r.IndexRSSMiB = mappedMiB(dir)
	return json.NewEncoder(os.Stdout).Encode(r)
}

func writeJSON(path string, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return os.WriteFile(path, b, 0o600)
}

// profile starts a CPU profile into the file at path, unless path is
// empty, and returns the function that ends it.
func profile(path string) (stop func(), err error) {
	if path == "" {
		return func() {}, nil
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, err
	}
	return func() { pprof.StopCPUProfile(); f.Close() }, nil
}

// searches measures retrieval as the proxy does it, for random owners.
// BENCH_SEARCH_PROFILE names a file for a CPU profile of them.
func searches(e *engine.Engine, words map[int][]string, owners, n int, r *scaleResult) error {
	stop, err := profile(os.Getenv("BENCH_SEARCH_PROFILE"))
	if err != nil {
		return err
	}
	defer stop()
	ctx := context.Background()
	v := newVocab(7)
	var lat []float64
	for i := range 3000 {
		o := v.rng.IntN(min(owners, n))
		q := v.question(words[o])
		t0 := time.Now()
		if _, err := e.Search(ctx, engine.SearchRequest{Owner: e.OwnerID(ownerKey(o)), Query: q, Limit: 10, MinScore: engine.DefaultMinScore}); err != nil {
			return err
		}
		if i >= 200 { // warm-up excluded
			lat = append(lat, float64(time.Since(t0).Microseconds())/1000)
		}
	}
	r.SearchP50Ms, r.SearchP99Ms = stats.Percentile(lat, 50), stats.Percentile(lat, 99)
	return nil
}

// open opens the storage and waits until every memory is searchable.
func open(dir string) (*engine.Engine, error) {
	e, err := engine.Open(engine.Config{Dir: dir})
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Hour)
	defer cancel()
	if err := e.Sync(ctx); err != nil {
		e.Close(context.Background())
		return nil, err
	}
	return e, nil
}

// rssMiB is the process's resident memory, and the part of it that is its
// own (anonymous: heap, stacks, runtime) rather than mapped file pages, which
// the kernel shares with its page cache and can drop at any time.
func rssMiB() (total, private float64) {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0, 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) < 2 {
			continue
		}
		kb, _ := strconv.ParseFloat(f[1], 64)
		switch f[0] {
		case "VmRSS:":
			total = kb / 1024
		case "RssAnon:":
			private = kb / 1024
		}
	}
	return total, private
}

// mappedMiB is how much of the resident memory is pages of the storage's
// files mapped into the process: memory.db (bbolt) and the index's segments.
func mappedMiB(dir string) (store, index float64) {
	b, err := os.ReadFile("/proc/self/smaps")
	if err != nil {
		return 0, 0
	}
	var into *float64
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		switch {
		case len(f) >= 5 && strings.Contains(f[0], "-"): // a mapping's header
			into = nil
			if len(f) >= 6 && f[5] == filepath.Join(dir, "memory.db") {
				into = &store
			} else if len(f) >= 6 && strings.HasPrefix(f[5], filepath.Join(dir, "index")+"/") {
				into = &index
			}
		case len(f) >= 2 && f[0] == "Rss:" && into != nil:
			kb, _ := strconv.ParseFloat(f[1], 64)
			*into += kb / 1024
		}
	}
	return store, index
}

func fileSize(p string) int64 {
	st, err := os.Stat(p)
	if err != nil {
		return 0
	}
	return st.Size()
}

func mib(b int64) float64 { return float64(b) / (1 << 20) }
