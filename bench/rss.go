package main

import (
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/caddy-memory/memory/internal/freeport"
	"github.com/caddy-memory/memory/internal/stats"
)

// rssConfig is the -rss mode: what a Caddy process serving memory on a
// copy of a preloaded storage holds before traffic, right after traffic
// that reaches every owner, and while it rests afterwards.
type rssConfig struct {
	storage          string // the preloaded storage; copied, never written
	memories, owners int    // as it was preloaded with (for the questions)
	mix              mix
	caddy            string // a caddy binary; "" builds ./cmd/caddy
	dir              string
	clients          int
	rest             time.Duration // how long to watch after the traffic
	memprofile       string        // the heap profile at the end of the rest
}

// runRSS copies the storage, starts Caddy with memory on the copy (every
// storage setting at its default, consolidation aside) in front of an
// upstream that answers at once, waits until the start-up work is done,
// sends one request for every owner and as many again drawn as the A/B
// run draws them, and reports the process's resident memory by kind
// (/proc/PID/status and smaps) before, right after, and through the rest
// that follows.
func runRSS(c rssConfig) error {
	dir, err := os.MkdirTemp(c.dir, "bench-rss-")
	if err != nil {
		return err
	}
	if os.Getenv("BENCH_KEEP") == "" {
		defer os.RemoveAll(dir)
	}
	storage := filepath.Join(dir, "storage")
	if out, err := exec.Command("cp", "-a", c.storage, storage).CombinedOutput(); err != nil {
		return fmt.Errorf("copying %s: %v: %s", c.storage, err, out)
	}
	bin := c.caddy
	if bin == "" {
		bin = filepath.Join(dir, "caddy")
		build := exec.Command("go", "build", "-o", bin, "./cmd/caddy")
		build.Stdout, build.Stderr = os.Stderr, os.Stderr
		if err := build.Run(); err != nil {
			return fmt.Errorf("building caddy: %w", err)
		}
	}
	words, sizes, err := preload(nil, c.memories, c.owners, c.mix, 42, false)
	if err != nil {
		return err
	}
	up := &upstream{chunks: 1}
	upSrv := httptest.NewServer(up)
	defer upSrv.Close()
	ports, err := freeport.Loopback(2)
	if err != nil {
		return err
	}
	site, admin := ports[0], ports[1]
	// consolidate_every off, as in the A/B run: a new process's first
	// pass a minute after start reads every owner, a once-a-day cost that
	// would land in the minute measured.
	cfg := fmt.Sprintf(`{
	admin 127.0.0.1:%d
	log {
		level ERROR
	}
	memory {
		storage default {
			path %s
			consolidate_every off
		}
	}
}
http://127.0.0.1:%d {
	handle /memory/* {
		memory_api
	}
	memory
	reverse_proxy %s
}
`, admin, storage, site, strings.TrimPrefix(upSrv.URL, "http://"))
	start := time.Now()
	pid, stop, err := runCaddy(bin, dir, cfg, fmt.Sprintf("http://127.0.0.1:%d/memory", site))
	if err != nil {
		return err
	}
	defer stop()
	// Start-up builds every owner's postings from the store: measured
	// once that is done, as a server that has been up for a while.
	settlePid(pid, 5*time.Minute)
	time.Sleep(10 * time.Second) // and past the rest that follows it
	fmt.Printf("Caddy pid %d on a copy of %s (%d memories over %d owners), ready in %s\n", pid, c.storage, c.memories, c.owners, time.Since(start).Round(time.Second))
	printRSS("before traffic", pid, storage, bin)

	// Every owner once, in a random order, then as many drawn by size.
	v := newVocab(11)
	each := make([]request, 0, 2*c.owners)
	for _, o := range rand.New(rand.NewPCG(7, 7)).Perm(c.owners) {
		each = append(each, v.chat("You are a helpful assistant.", words, o))
	}
	each = append(each, traffic(words, sizes, c.owners)...)
	t0 := time.Now()
	lat, failed := send(site, each, c.clients)
	took := time.Since(t0)
	fmt.Printf("traffic: %d requests from %d clients in %.1f s, %d failed; latency p50 %.2f ms, p99 %.2f ms\n",
		len(each), c.clients, took.Seconds(), failed, stats.Percentile(lat, 50), stats.Percentile(lat, 99))
	printRSS("right after", pid, storage, bin)
	for _, at := range []time.Duration{10 * time.Second, 20 * time.Second, 30 * time.Second, c.rest} {
		if at > c.rest {
			continue
		}
		time.Sleep(time.Until(t0.Add(took + at)))
		printRSS(fmt.Sprintf("%s later", at), pid, storage, bin)
	}
	if c.memprofile != "" {
		if err := fetch(fmt.Sprintf("http://127.0.0.1:%d/debug/pprof/heap", admin), c.memprofile); err != nil {
			return err
		}
		if err := fetch(fmt.Sprintf("http://127.0.0.1:%d/debug/pprof/heap?debug=1", admin), c.memprofile+".txt"); err != nil {
			return err
		}
		fmt.Printf("heap profile of the process at rest: %s (go tool pprof -sample_index=inuse_space %s; the runtime's figures in %s.txt)\n", c.memprofile, c.memprofile, c.memprofile)
	}
	// What the first requests after a rest pay: whatever was given back
	// (pages, the heap, parked index shards) is read again on demand.
	// /health searches the index (one shard, parked at rest), so its first
	// call reopens it.
	health := fmt.Sprintf("http://127.0.0.1:%d/memory/health", site)
	h1, h2 := timeGet(health), timeGet(health)
	fmt.Printf("after the rest: GET /health (a search of a parked index shard) %.2f ms, again at once %.2f ms\n", h1, h2)
	var first, next []float64
	failed = 0
	for i, o := range rand.New(rand.NewPCG(9, 9)).Perm(c.owners)[:5] {
		if i > 0 {
			time.Sleep(15 * time.Second) // a rest, and its release
		}
		lat, f := send(site, []request{v.chat("You are a helpful assistant.", words, o)}, 1)
		first, failed = append(first, lat...), failed+f
		lat, f = send(site, []request{v.chat("You are a helpful assistant.", words, (o+1)%c.owners)}, 1)
		next, failed = append(next, lat...), failed+f
	}
	fmt.Printf("the first request after each of 5 rests: %s ms; the one after it: %s ms; %d failed\n", fmtMs(first), fmtMs(next), failed)
	printRSS("at the end", pid, storage, bin)
	return nil
}

// send sends the requests from clients concurrent clients, once each, and
// returns the latencies (ms) of those answered 200 and how many were not.
func send(port int, reqs []request, clients int) (lat []float64, failed int) {
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: clients * 2, DisableCompression: true}}
	work := make(chan request)
	var mu sync.Mutex
	var wg sync.WaitGroup
	for range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for r := range work {
				req, _ := http.NewRequest(http.MethodPost, fmt.Sprintf("http://127.0.0.1:%d/v1/chat/completions", port), strings.NewReader(string(r.body)))
				req.Header.Set("Authorization", "Bearer "+r.key)
				req.Header.Set("Content-Type", "application/json")
				t0 := time.Now()
				resp, err := client.Do(req)
				ok := err == nil
				if ok {
					_, _ = io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
					ok = resp.StatusCode == http.StatusOK
				}
				ms := float64(time.Since(t0).Microseconds()) / 1000
				mu.Lock()
				if ok {
					lat = append(lat, ms)
				} else {
					failed++
				}
				mu.Unlock()
			}
		}()
	}
	for _, r := range reqs {
		work <- r
	}
	close(work)
	wg.Wait()
	return lat, failed
}

// printRSS prints pid's resident memory and what it is: anonymous (heap,
// stacks, the runtime), the store file's pages, the index's segments, the
// binary, and the rest.
func printRSS(when string, pid int, storage, bin string) {
	st := procStatus(pid)
	by := rssByMapping(pid, storage, bin)
	fmt.Printf("%-14s RSS %5.0f MiB: anonymous %4.0f, memory.db %4.0f, index %4.0f, binary %3.0f, other files %3.0f\n",
		when, mib(st["VmRSS"]), mib(st["RssAnon"]), mib(by["memory.db"]), mib(by["index"]), mib(by["binary"]), mib(by["files"]))
}

// rssByMapping is pid's resident memory in file mappings (bytes, from
// /proc/PID/smaps), by file: the store's (storage's memory.db), the
// index's, the binary (bin; "" for none), others.
func rssByMapping(pid int, storage, bin string) map[string]int64 {
	out := map[string]int64{}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/smaps", pid))
	if err != nil {
		return out
	}
	name := ""
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		switch {
		case len(f) == 0:
		case strings.Contains(f[0], "-") && len(f) >= 5: // a mapping's first line
			name = ""
			if len(f) > 5 {
				switch p := f[5]; {
				case p == filepath.Join(storage, "memory.db"):
					name = "memory.db"
				case strings.HasPrefix(p, filepath.Join(storage, "index")+"/"):
					name = "index"
				case p == bin:
					name = "binary"
				case strings.HasPrefix(p, "/"):
					name = "files"
				}
			}
		case f[0] == "Rss:" && name != "":
			kb, _ := strconv.ParseInt(f[1], 10, 64)
			out[name] += kb << 10
		}
	}
	return out
}

// settlePid waits until process pid is idle (under a tenth of a core for
// two seconds in a row), or max has passed.
func settlePid(pid int, max time.Duration) {
	untilIdle(func() time.Duration {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			return 0
		}
		// The fields after the command's parenthesis: utime and stime are
		// the 12th and 13th (clock ticks, 100 a second on Linux).
		s := string(b)
		f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
		if len(f) < 13 {
			return 0
		}
		u, _ := strconv.ParseInt(f[11], 10, 64)
		k, _ := strconv.ParseInt(f[12], 10, 64)
		return time.Duration(u+k) * 10 * time.Millisecond
	}, max)
}

// timeGet is how long a GET of url took to answer, in ms.
func timeGet(url string) float64 {
	t0 := time.Now()
	req, _ := http.NewRequest(http.MethodGet, url, nil)
	req.Header.Set("Authorization", "Bearer sk-bench-probe")
	if resp, err := http.DefaultClient.Do(req); err == nil {
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	return float64(time.Since(t0).Microseconds()) / 1000
}

func fmtMs(v []float64) string {
	s := make([]string, len(v))
	for i, x := range v {
		s[i] = strconv.FormatFloat(x, 'f', 2, 64)
	}
	return strings.Join(s, ", ")
}

func fetch(url, path string) error {
	resp, err := http.Get(url)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	defer f.Close()
	_, err = io.Copy(f, resp.Body)
	return err
}
