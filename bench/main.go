// Command bench measures what memory costs a Caddy that proxies an LLM API,
// against the same Caddy with reverse_proxy alone, in one run on one machine,
// and how the engine scales to a million memories.
//
//	go run ./bench                       # A/B in two modes, latency and capacity, as ratios
//	go run ./bench -memories 1000000     # the same with a million stored memories
//	go run ./bench -scale 10000,100000,1000000
//	go run ./bench -import 64MiB         # what one import costs a Caddy process (RSS, time)
//	go run ./bench -open-check DIR       # what the check of a storage's file at open costs
//	go run ./bench -rss DIR -memories 1000000  # Caddy's resident memory on a copy of a preloaded storage
//
// The A/B run starts, on loopback: a fast fake upstream speaking OpenAI chat
// completions (JSON and SSE), and one Caddy with two servers, one with
// reverse_proxy alone, one with memory in front of the same reverse_proxy, on
// a storage preloaded with memories (by default a heavy-tailed mix of owner
// sizes). Identical traffic (owners drawn by the square root of their size,
// bodies with a few turns of history, a fixed seed) goes to both in
// alternating rounds, in two modes: latency (an upstream that takes 20 ms,
// clients below saturation) and capacity (an upstream that answers at once,
// more clients than cores: requests per second and CPU per request).
// Absolute numbers on a shared machine are noise; the ratios measured in one
// run are the figures.
package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"runtime"
	"runtime/pprof"
	"runtime/trace"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/caddyserver/caddy/v2"
	_ "github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
	_ "github.com/caddyserver/caddy/v2/modules/standard"
	"github.com/dustin/go-humanize"
	"github.com/jackc/pgx/v5"

	_ "github.com/caddy-memory/memory"
	"github.com/caddy-memory/memory/internal/block"
	"github.com/caddy-memory/memory/internal/engine"
	"github.com/caddy-memory/memory/internal/freeport"
	"github.com/caddy-memory/memory/internal/seal"
	"github.com/caddy-memory/memory/internal/stats"
	"github.com/caddy-memory/memory/store"
	"github.com/caddy-memory/memory/store/postgres"
)

func main() {
	memories := flag.Int("memories", 100_000, "memories preloaded into the memory server's storage")
	owners := flag.Int("owners", 10_000, "owners the memories (and the traffic) are spread over")
	mixFlag := flag.String("mix", string(heavy), "how memories are spread over owners: heavy (most owners small, 0.1% of them with 10,000 to 50,000) or uniform")
	capClients := flag.Int("capacity-concurrency", 16, "concurrent clients of the capacity rounds (zero-latency upstream, saturating); 0 skips them")
	rounds := flag.Int("rounds", 5, "A/B rounds; each runs both servers, in alternating order")
	duration := flag.Duration("duration", 5*time.Second, "length of each measurement")
	concurrency := flag.Int("concurrency", 8, "concurrent clients of the latency rounds (closed loop; 8 keeps a 2-core machine below saturation)")
	settleMax := flag.Duration("settle", 5*time.Minute, "after the preload, wait up to this long for background index merges to finish before measuring")
	latencyRounds := flag.Int("latency-rounds", 3, "rounds of JSON requests from one client after the A/B rounds, for the latency one request pays")
	delay := flag.Duration("upstream-delay", 20*time.Millisecond, "the upstream's time to answer (to the first token when streaming) in the latency rounds")
	chunks := flag.Int("chunks", 20, "SSE chunks per streamed answer")
	chunkDelay := flag.Duration("chunk-delay", 2*time.Millisecond, "time between SSE chunks")
	dir := flag.String("dir", "", "where to put storages (default: the system's temporary directory)")
	keep := flag.String("storage", "", "A/B mode: use this storage and keep it; preload only if it holds no memories yet (to repeat runs without the preload; later runs also see what earlier ones learned)")
	scale := flag.String("scale", "", "comma-separated memory counts: run the engine scale measurements instead")
	scaleOneN := flag.Int("scale-one", 0, "internal: one scale run")
	scaleServe := flag.String("scale-serve", "", "the restarted server of a scale run, on this storage (kept with BENCH_KEEP=1); -memories and -owners as it was made with")
	shards := flag.Int("shards", engine.DefaultShards, "index shards of the storages created (index_shards)")
	searchCache := flag.String("search-cache", "", "A/B and -import modes: the memory server's search_cache (a size, or off; default: the handler's)")
	database := flag.String("database", "", "A/B mode: the memory server's storage is this PostgreSQL database (postgres://...; emptied first); the preload goes through it and its rate is reported")
	encrypt := flag.Bool("encrypt", false, "A/B mode: the memory server's storage is encrypted (a random key; see docs/encryption.md)")
	cpuprofile := flag.String("cpuprofile", "", "write a CPU profile of the measured traffic (A/B mode; after the preload) to this file")
	traceFile := flag.String("trace", "", "write an execution trace of the one-client rounds (A/B mode) to this file, for go tool trace")
	memprofile := flag.String("memprofile", "", "write the process's allocations up to the end of the one-client rounds (A/B mode) to this file, and up to their start to this file with .base appended: go tool pprof -diff_base FILE.base FILE shows theirs")
	importSize := flag.String("import", "", "send POST /import bodies of this size (e.g. 64MiB) to a Caddy process started for it, and report its RSS and the time")
	importShape := flag.String("import-shape", "export", "-import: the lines sent: export (as GET /export writes them), long (16 KiB memories with 20 versions as long) or history (4 MiB lines of tiny versions)")
	importClients := flag.Int("import-clients", 1, "-import: concurrent imports, each under a bearer of its own")
	caddyBin := flag.String("caddy", "", "-import: the caddy binary to start (default: go build ./cmd/caddy)")
	openCheck := flag.String("open-check", "", "open this storage with and without the check of its file at open, warm and cold, each open in a process of its own, and report the time and peak RSS")
	openRuns := flag.Int("open-runs", 3, "-open-check: rounds")
	openCheckTimeout := flag.Duration("open-check-timeout", store.CheckTimeout, "-open-check: the check's bound (store.CheckTimeout)")
	openOneDir := flag.String("open-one", "", "internal: one open of -open-check")
	instances := flag.Int("instances", 1, "A/B mode with -database: Caddy instances on the database, the load round-robin over them (the others in processes of their own), and a turn told through the first timed until the second recalls it")
	instanceFile := flag.String("instance", "", "internal: serve this configuration as one of -instances")
	instanceFind := flag.Int("instance-find", 0, "internal: -instance answers the probes' searches on this port")
	rssDir := flag.String("rss", "", "start Caddy (-caddy, or built) with memory on a copy of this preloaded storage (made with the -memories, -owners and -mix given), send a request for every owner and as many again from -concurrency clients, and report its resident memory by kind before, right after and through -rss-rest (-memprofile: its heap profile at the end)")
	rssRest := flag.Duration("rss-rest", time.Minute, "-rss: how long to watch the process after the traffic")
	flag.Parse()
	log.SetFlags(0)
	if m := mix(*mixFlag); m != heavy && m != uniform {
		log.Fatalf("bench: -mix: %q is neither heavy nor uniform", *mixFlag)
	}

	var err error
	switch {
	case *instanceFile != "":
		err = serveInstance(*instanceFile, *instanceFind)
	case *rssDir != "":
		err = runRSS(rssConfig{storage: *rssDir, memories: *memories, owners: *owners, mix: mix(*mixFlag), caddy: *caddyBin, dir: *dir,
			clients: *concurrency, rest: *rssRest, memprofile: *memprofile})
	case *openOneDir != "":
		err = openOne(*openOneDir, *openCheckTimeout)
	case *openCheck != "":
		err = runOpenCheck(*openCheck, *openRuns, *openCheckTimeout)
	case *importSize != "":
		size, perr := humanize.ParseBytes(*importSize)
		if perr != nil {
			log.Fatalf("bench: -import: %v", perr)
		}
		err = runImport(importConfig{size: int64(size), shape: *importShape, clients: *importClients, caddy: *caddyBin, dir: *dir, searchCache: *searchCache})
	case *scaleServe != "":
		err = serveOne(*scaleServe, *owners, *memories)
	case *scaleOneN > 0:
		err = scaleOne(*scaleOneN, *owners, *shards, *dir)
	case *scale != "":
		var sizes []int
		for _, f := range strings.Split(*scale, ",") {
			n, perr := strconv.Atoi(strings.TrimSpace(f))
			if perr != nil || n <= 0 {
				log.Fatalf("bench: -scale: %q is not a count", f)
			}
			sizes = append(sizes, n)
		}
		err = runScales(sizes, *owners, *shards, *dir)
	default:
		_, err = ab(abConfig{memories: *memories, owners: *owners, mix: mix(*mixFlag), rounds: *rounds, duration: *duration,
			concurrency: *concurrency, capConcurrency: *capClients, latencyRounds: *latencyRounds, settle: *settleMax, delay: *delay, chunks: *chunks, chunkDelay: *chunkDelay, dir: *dir, keep: *keep, shards: *shards,
			cpuprofile: *cpuprofile, trace: *traceFile, memprofile: *memprofile, encrypt: *encrypt, searchCache: *searchCache, database: *database,
			instances: *instances})
	}
	if err != nil {
		log.Fatalf("bench: %v", err)
	}
}

type abConfig struct {
	mix                                                   mix
	capConcurrency                                        int
	memories, owners, rounds, concurrency, chunks, shards int
	latencyRounds                                         int
	settle                                                time.Duration
	duration, delay, chunkDelay                           time.Duration
	dir, keep, cpuprofile, trace, memprofile, searchCache string
	database                                              string
	encrypt                                               bool
	instances                                             int
}

// upstream is the fake LLM API: answers after delay, streaming when asked.
type upstream struct {
	delay          atomic.Int64 // nanoseconds: the capacity rounds set it to 0
	chunkDelay     time.Duration
	chunks         int
	seen, injected atomic.Int64 // requests from the memory server, and those carrying memories
}

func (u *upstream) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	// When the request, whole, reached the upstream: the client's send time
	// comes along in a header (one process, one clock), and the lag goes
	// back in another, to split what a server adds into the way there and
	// the way back.
	sent, sentErr := strconv.ParseInt(r.Header.Get("X-Bench-Sent"), 10, 64)
	if sentErr == nil {
		w.Header().Set("X-Bench-Reach", strconv.FormatFloat(float64(time.Now().UnixNano()-sent)/1e6, 'f', 3, 64))
	}
	if r.Header.Get("X-Bench") == "memory" {
		u.seen.Add(1)
		if bytes.Contains(body, []byte(block.End)) {
			u.injected.Add(1)
		}
	}
	if d := time.Duration(u.delay.Load()); d > 0 {
		time.Sleep(d)
	}
	if sentErr == nil { // and when it began to answer: the rest is the way back
		w.Header().Set("X-Bench-Answer", strconv.FormatFloat(float64(time.Now().UnixNano()-sent)/1e6, 'f', 3, 64))
	}
	if !bytes.Contains(body, []byte(`"stream":true`)) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"id":"chatcmpl-bench","object":"chat.completion","created":1,"model":"bench","choices":[{"index":0,"finish_reason":"stop","message":{"role":"assistant","content":"Sure, here is what I found about that, with a few details you might find useful for planning."}}],"usage":{"prompt_tokens":120,"completion_tokens":20,"total_tokens":140}}`)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	rc := http.NewResponseController(w)
	for i := range u.chunks {
		if i > 0 {
			time.Sleep(u.chunkDelay)
		}
		fmt.Fprintf(w, "data: {\"id\":\"chatcmpl-bench\",\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"word%d \"}}]}\n\n", i)
		rc.Flush()
	}
	io.WriteString(w, "data: [DONE]\n\n")
	rc.Flush()
}

// abResult is what an A/B run measured: each round's figures by server
// and mode ("bare/json", "memory/sse", "memory/single", ...), and the
// requests the upstream saw from the memory server, with memories and in all.
type abResult struct {
	rounds         map[string][]measure
	seen, injected int64
}

func ab(c abConfig) (abResult, error) {
	storage := c.keep
	if storage == "" {
		var err error
		if storage, err = os.MkdirTemp(c.dir, "memory-bench-*"); err != nil {
			return abResult{}, err
		}
		defer os.RemoveAll(storage)
	}

	start := time.Now()
	keys, extra, err := benchKeys(c.encrypt)
	if c.searchCache != "" {
		extra += "\n\t\t\tsearch_cache " + c.searchCache
	}
	if err != nil {
		return abResult{}, err
	}
	// The memory server's storage: the directory, or the database with the
	// directory as its replica. The preload writes through that replica,
	// so its index is built before the measurement, not in it.
	where := "path " + storage
	if c.database != "" {
		if err := emptyDatabase(c.database); err != nil {
			return abResult{}, err
		}
		where = "url " + c.database + "\n\t\t\treplica " + storage
	}
	var shared store.Shared
	if c.database != "" {
		db, err := postgres.Open(context.Background(), c.database, nil)
		if err != nil {
			return abResult{}, err
		}
		shared = db
	}
	e, err := engine.Open(engine.Config{Dir: storage, Shards: c.shards, Keys: keys, Shared: shared})
	if err != nil {
		return abResult{}, err
	}
	write := true
	if st, err := e.Stats(); err == nil && st.Memories > 0 {
		write = false
		fmt.Fprintf(os.Stderr, "reusing %s: %d memories\n", storage, st.Memories)
	} else {
		fmt.Fprintf(os.Stderr, "preloading %d memories over %d owners...\n", c.memories, c.owners)
	}
	words, sizes, err := preload(e, c.memories, c.owners, c.mix, 42, write)
	if err == nil {
		err = e.Sync(context.Background())
	}
	if err == nil && write {
		// Let Scorch finish merging the bulk load while the engine that wrote
		// it is open: closed, it stops, and the merges left over resumed in the
		// memory server during the measurement (a server that learned the same
		// memories over weeks would have merged them long before).
		settle(c.settle)
	}
	if cerr := e.Close(context.Background()); err == nil {
		err = cerr
	}
	if err != nil {
		return abResult{}, err
	}
	took := time.Since(start)
	fmt.Fprintf(os.Stderr, "preloaded in %s (%.0f memories/s, index settled included)\n", took.Round(time.Second), float64(c.memories)/took.Seconds())

	up := &upstream{chunkDelay: c.chunkDelay, chunks: c.chunks}
	up.delay.Store(int64(c.delay))
	upSrv := httptest.NewServer(up)
	defer upSrv.Close()
	ports, err := freeport.Loopback(2)
	if err != nil {
		return abResult{}, err
	}
	bare, mem := ports[0], ports[1]
	upstreamAddr := strings.TrimPrefix(upSrv.URL, "http://")
	cfg, err := serverConfig(where, extra, bare, mem, upstreamAddr)
	if err != nil {
		return abResult{}, err
	}
	if err := caddy.Load(cfg, true); err != nil {
		return abResult{}, err
	}
	defer caddy.Stop()
	targets := []target{{"bare", []int{bare}}, {"memory", []int{mem}}}
	var others []*instance
	if c.instances > 1 {
		if c.database == "" {
			return abResult{}, errors.New("-instances needs -database")
		}
		others, err = startInstances(c.instances-1, c.database, extra, upstreamAddr, storage)
		defer stopInstances(others)
		if err != nil {
			return abResult{}, err
		}
		for _, in := range others {
			targets[0].ports = append(targets[0].ports, in.bare)
			targets[1].ports = append(targets[1].ports, in.mem)
		}
		othersCPU = func() float64 { return instancesCPU(others) }
	}
	settle(c.settle)
	stop, err := profile(c.cpuprofile)
	if err != nil {
		return abResult{}, err
	}
	defer stop()

	eng, err := memoryEngine()
	if err != nil {
		return abResult{}, err
	}
	// Probes are told through the first instance and looked for there, or
	// on the second.
	find := engineFinder(eng)
	if len(others) > 0 {
		find = httpFinder(client0(), others[0].find)
	}
	watch := map[string]*learnWatch{}
	for _, mode := range []string{"json", "capacity"} {
		watch[mode] = &learnWatch{e: eng, probes: &prober{client: client0(), port: mem, find: find, gap: 100 * time.Millisecond}}
	}
	// measured runs one round; the memory server's, with learning watched.
	measured := func(mode string, t target, f func() measure) measure {
		if w := watch[mode]; w != nil && t.name == "memory" {
			return w.around(f)
		}
		return f()
	}

	bodies := traffic(words, sizes, 2000)
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: c.concurrency * 2, DisableCompression: true}}
	results := map[string][]measure{}
	// A short warm-up of both, unrecorded.
	for _, t := range targets {
		run(client, t, bodies, c.concurrency, time.Second, false)
	}
	for round := range c.rounds {
		for _, t := range alternate(targets, round) {
			results[t.name+"/json"] = append(results[t.name+"/json"], measured("json", t, func() measure { return run(client, t, bodies, c.concurrency, c.duration, false) }))
			results[t.name+"/sse"] = append(results[t.name+"/sse"], run(client, t, bodies, c.concurrency, c.duration, true))
		}
		fmt.Fprintf(os.Stderr, "round %d/%d done\n", round+1, c.rounds)
	}
	// Latency as one request pays it: a single client, so requests do not
	// queue for the cores behind each other (or behind the load generator),
	// once the index has built and merged what the rounds above taught the
	// memory server (measured through, those merges would be most of this
	// p99).
	if c.latencyRounds > 0 {
		settle(c.settle)
	}
	if c.trace != "" {
		f, err := os.Create(c.trace)
		if err != nil {
			return abResult{}, err
		}
		defer f.Close()
		if err := trace.Start(f); err != nil {
			return abResult{}, err
		}
		defer trace.Stop()
	}
	if err := writeAllocs(c.memprofile, ".base"); err != nil {
		return abResult{}, err
	}
	var gcBefore runtime.MemStats
	runtime.ReadMemStats(&gcBefore)
	singleStart := time.Now()
	for round := range c.latencyRounds {
		for _, t := range alternate(targets, round) {
			results[t.name+"/single"] = append(results[t.name+"/single"], run(client, t, bodies, 1, c.duration, false))
		}
	}
	singleEnd := time.Now()
	var gcAfter runtime.MemStats
	runtime.ReadMemStats(&gcAfter)
	if err := writeAllocs(c.memprofile, ""); err != nil {
		return abResult{}, err
	}
	// Capacity: what a request costs, with an upstream that answers at
	// once and more clients than cores, so both servers are saturated and
	// their requests per second are what the CPU allows.
	if c.capConcurrency > 0 {
		up.delay.Store(0)
		settle(c.settle)
		for round := range c.rounds {
			for _, t := range alternate(targets, round) {
				results[t.name+"/capacity"] = append(results[t.name+"/capacity"], measured("capacity", t, func() measure {
					return run(client, t, bodies, c.capConcurrency, c.duration, false)
				}))
			}
		}
		up.delay.Store(int64(c.delay))
	}
	// Without load: how soon a turn told is recalled (on the second
	// instance, when there are several).
	quiet := &prober{client: client0(), port: mem, find: find, gap: 50 * time.Millisecond}
	qctx, qcancel := context.WithTimeout(context.Background(), 5*time.Second)
	quiet.run(qctx)
	qcancel()
	report(c, results, up, sizes)
	recalledOn := "on this instance"
	if len(others) > 0 {
		recalledOn = "on a second instance"
	}
	fmt.Printf("a told turn searchable %s: without load p50 %.1f ms, p99 %.1f ms (%d probes, %d not found in %s)\n",
		recalledOn, stats.Percentile(quiet.lags, 50), stats.Percentile(quiet.lags, 99), len(quiet.lags), quiet.lost, probeTimeout)
	for _, mode := range []string{"json", "capacity"} {
		if len(watch[mode].commits) > 0 {
			watch[mode].report(mode, recalledOn)
		}
	}
	if c.latencyRounds > 0 {
		// Collections are what the slowest of these requests tend to
		// overlap: how often they come says how many a p99 sees.
		took := singleEnd.Sub(singleStart)
		fmt.Printf("one-client rounds (whole process: servers, upstream and clients): %d garbage collections in %s, %.1f MB/s allocated, heap goal %d MiB\n",
			gcAfter.NumGC-gcBefore.NumGC, took.Round(time.Second),
			float64(gcAfter.TotalAlloc-gcBefore.TotalAlloc)/1e6/took.Seconds(), gcAfter.NextGC>>20)
	}
	// Resident memory once the bench is over. The process hosts both
	// servers, the upstream and the clients; all but the memory server are
	// small beside it, and memory.db's and the index's mapped pages are
	// the memory server's alone.
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	rss, private := rssMiB()
	db, ix := mappedMiB(storage)
	fmt.Printf("at the end (the whole process, both servers): RSS %.0f MiB, of which private %.0f MiB, memory.db's pages %.0f MiB, the index's %.0f MiB; Go heap in use %d MiB, heap goal %d MiB\n",
		rss, private, db, ix, ms.HeapInuse>>20, ms.NextGC>>20)
	return abResult{rounds: results, seen: up.seen.Load(), injected: up.injected.Load()}, nil
}

// writeAllocs writes the process's allocation profile so far to path with
// suffix appended; nothing when path is empty.
func writeAllocs(path, suffix string) error {
	if path == "" {
		return nil
	}
	f, err := os.Create(path + suffix)
	if err != nil {
		return err
	}
	defer f.Close()
	return pprof.Lookup("allocs").WriteTo(f, 0)
}

// benchKeys makes a random key for an encrypted run: the keys the preload
// opens the storage with, and the memory server's encryption block.
func benchKeys(encrypt bool) (*seal.Ring, string, error) {
	if !encrypt {
		return nil, "", nil
	}
	raw := make([]byte, seal.KeySize)
	if _, err := rand.Read(raw); err != nil {
		return nil, "", err
	}
	key := base64.StdEncoding.EncodeToString(raw)
	keys, err := seal.NewRing(key, nil)
	return keys, "encryption {\n\t\t\t\tkey " + key + "\n\t\t\t}", err
}

// alternate is the order the servers run in a round: turn about, so
// neither always runs first (after the other's background work).
func alternate(targets []target, round int) []target {
	if round%2 == 1 {
		return []target{targets[1], targets[0]}
	}
	return targets
}

// emptyDatabase drops the memory tables of a database the bench is given,
// so each run preloads the same memories into an empty store.
func emptyDatabase(url string) error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	_, err = conn.Exec(ctx, `DROP TABLE IF EXISTS memory_schema, memory_state, memory_buckets, memory_rows, memory_log;
		DROP SEQUENCE IF EXISTS memory_log_seq`)
	return err
}
