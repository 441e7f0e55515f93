// Command memeval measures recall on the LoCoMo long-conversation benchmark:
// it ingests every conversation through the engine's ingest path (the one
// POST /ingest uses), asks each question through the retrieval the proxy uses,
// and scores the turns it brings back against the question's evidence.
//
//	go run ./cmd/memeval -data ../shared/evals/locomo/locomo-dev.json
//
// It reads LoCoMo's own JSON format (a list of samples with "conversation"
// and "qa"), so it runs on any file of that shape, such as locomo10.json.
//
// With -prefeval, -updates or -journeys it measures instead what reaches
// the model through a real Caddy (see prefeval.go, updates.go,
// journeys.go): PrefEval's stated preferences and later questions that
// need them, a set of knowledge updates, and people's conversations with
// questions that need what they said.
//
//	go run ./cmd/memeval -prefeval ../shared/evals/prefeval -updates cmd/memeval/testdata/updates.json
//	go run ./cmd/memeval -journeys cmd/memeval/testdata/journeys.json -misses 10
package main

import (
	"context"
	crand "crypto/rand"
	"encoding/base64"
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"math/rand/v2"
	"os"
	"runtime/pprof"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/caddy-memory/memory/extract"
	"github.com/caddy-memory/memory/internal/block"
	"github.com/caddy-memory/memory/internal/embed"
	"github.com/caddy-memory/memory/internal/engine"
	"github.com/caddy-memory/memory/internal/llm"
	"github.com/caddy-memory/memory/internal/seal"
	"github.com/caddy-memory/memory/internal/stats"
)

func main() {
	data := flag.String("data", "../shared/evals/locomo/locomo-dev.json", "LoCoMo JSON: a list of samples with conversation and qa")
	storage := flag.String("storage", "", "storage directory (default: a fresh temporary one)")
	ks := flag.String("k", "1,5,10", "cut-offs for recall@k")
	limit := flag.Int("limit", 10, "memories retrieved per question (max_items)")
	maxTokens := flag.Int("max_tokens", 800, "token budget of the injected block, for the token figure")
	minScore := flag.Float64("min_score", engine.DefaultMinScore, "relevance floor, as the memory handler's min_score")
	offTopic := flag.Int("offtopic", 200, "off-topic questions per conversation for the relevance-floor check (0 to skip)")
	jsonOut := flag.String("json", "", "also write the results as JSON to this file")
	facts := flag.Bool("facts", true, "learn facts from the turns, as POST /ingest does by default")
	misses := flag.Int("misses", 0, "print this many questions whose evidence is not in the top 5, with what was found")
	shards := flag.Int("shards", 0, "index shards of the storage (0: the engine's default); 1 puts every conversation in one shard, as a large store's shard holds many owners")
	localMax := flag.Int("local-max", 0, "owners with at most this many memories are searched by scoring their records, not the index (0: the engine's default, -1: never)")
	cpuprofile := flag.String("cpuprofile", "", "write a CPU profile of the question phase (with -prefeval, -updates or -journeys: of the whole run, learning included) to this file")
	embedURL := flag.String("embed-url", "", "OpenAI-compatible embeddings endpoint, to measure embedding recall (off by default)")
	embedModel := flag.String("embed-model", "", "embedding model, with -embed-url")
	embedDims := flag.Int("embed-dims", 0, "embedding dimensions, with -embed-url (0: the model's)")
	embedKey := flag.String("embed-key", os.Getenv("OPENAI_API_KEY"), "API key for -embed-url (default $OPENAI_API_KEY)")
	llmURL := flag.String("llm-url", "", "OpenAI-compatible chat completions endpoint, to measure recall with sessions distilled by a model (off by default)")
	llmModel := flag.String("llm-model", "", "chat model, with -llm-url")
	llmKey := flag.String("llm-key", os.Getenv("MEMORY_LLM_KEY"), "API key for -llm-url (default $MEMORY_LLM_KEY)")
	llmRate := flag.Int("llm-rate", 60, "most calls a minute to -llm-url")
	encrypt := flag.Bool("encrypt", false, "encrypt the storage (a random key), to measure what encryption at rest costs")
	gate := flag.Bool("gate", true, "judge each question first, as the memory handler's gate heuristic does (false: gate off)")
	prefeval := flag.String("prefeval", "", "a PrefEval folder (items.jsonl, distractors.json): run its protocol through Caddy instead of LoCoMo")
	modes := flag.String("modes", "explicit,persona", "PrefEval modes, with -prefeval")
	perTopic := flag.Int("per-topic", 20, "PrefEval questions per topic, with -prefeval")
	prefs := flag.Int("prefs", prefsPerOwner, "PrefEval preferences each owner states (the protocol's 5; more, to measure owners with more than the profile holds)")
	updates := flag.String("updates", "", "a knowledge-update set (JSON, as cmd/memeval/testdata/updates.json): run it through Caddy instead of LoCoMo")
	journeys := flag.String("journeys", "", "a journey set (JSON, as cmd/memeval/testdata/journeys.json): run it through Caddy instead of LoCoMo")
	directives := flag.String("directives", "", "with -prefeval, -updates or -journeys: more memory directives for the proxy, e.g. \"profile off\"")
	workers := flag.Int("workers", 4, "with -prefeval, -updates or -journeys: owners talking at once")
	flag.Parse()
	log.SetFlags(0)
	switch {
	case *prefeval != "":
		needData(*prefeval, "items.jsonl", "distractors.json")
	case *updates != "" || *journeys != "":
		for _, f := range []string{*updates, *journeys} {
			if f != "" {
				needData(f)
			}
		}
	default:
		needData(*data)
	}
	if *prefeval != "" || *updates != "" || *journeys != "" {
		if *cpuprofile != "" {
			f, err := os.Create(*cpuprofile)
			if err != nil {
				log.Fatalf("memeval: %v", err)
			}
			pprof.StartCPUProfile(f)
			defer pprof.StopCPUProfile()
		}
		if err := runProxied(proxied{prefDir: *prefeval, modes: *modes, perTopic: *perTopic, prefs: *prefs, updates: *updates, journeys: *journeys,
			directives: *directives, storage: *storage, workers: *workers, misses: *misses, jsonOut: *jsonOut}); err != nil {
			log.Fatalf("memeval: %v", err)
		}
		return
	}

	samples, err := load(*data)
	if err != nil {
		log.Fatalf("memeval: %v", err)
	}
	cuts, err := parseKs(*ks)
	if err != nil {
		log.Fatalf("memeval: -k: %v", err)
	}
	dir := *storage
	if dir == "" {
		if dir, err = os.MkdirTemp("", "memeval-*"); err != nil {
			log.Fatal(err)
		}
		defer os.RemoveAll(dir)
	}
	var keys *seal.Ring
	if *encrypt {
		raw := make([]byte, seal.KeySize)
		crand.Read(raw)
		if keys, err = seal.NewRing(base64.StdEncoding.EncodeToString(raw), nil); err != nil {
			log.Fatal(err)
		}
	}
	e, err := engine.Open(engine.Config{Dir: dir, Shards: *shards, LocalSearchMax: *localMax, Keys: keys})
	if err != nil {
		log.Fatalf("memeval: %v", err)
	}
	defer e.Close(context.Background())

	ctx := context.Background()
	if *embedURL != "" {
		e.UseEmbedding(engine.EmbedConfig{
			Client:       &embed.Client{URL: *embedURL, Model: *embedModel, Dimensions: *embedDims, APIKey: *embedKey},
			QueryTimeout: 10 * time.Second,
		})
	}
	if *llmURL != "" {
		e.UseLLM(engine.LLMConfig{Client: &llm.Client{URL: *llmURL, Model: *llmModel, APIKey: *llmKey},
			Timeout: 5 * time.Minute, CallsPerMinute: *llmRate})
	}
	start := time.Now()
	turns := 0
	for _, s := range samples {
		n, err := ingest(ctx, e, s, *facts, *llmURL != "")
		if err != nil {
			log.Fatalf("memeval: ingesting %s: %v", s.ID, err)
		}
		turns += n
	}
	if *llmURL != "" {
		if err := e.WaitDistilled(ctx); err != nil {
			log.Fatal(err)
		}
		if err := e.Sync(ctx); err != nil {
			log.Fatal(err)
		}
	}
	ingestTook := time.Since(start)
	if *embedURL != "" {
		if err := e.Sync(ctx); err != nil {
			log.Fatal(err)
		}
		if err := e.WaitEmbedded(ctx); err != nil {
			log.Fatal(err)
		}
	}

	showMisses = *misses
	texts = map[string]string{}
	for _, s := range samples {
		for _, sess := range s.Sessions {
			for _, t := range sess.Turns {
				texts[s.ID+"/"+t.DiaID] = t.Speaker + ": " + t.Text
			}
		}
	}
	if *cpuprofile != "" {
		f, err := os.Create(*cpuprofile)
		if err != nil {
			log.Fatal(err)
		}
		pprof.StartCPUProfile(f)
	}
	r := run(ctx, e, samples, cuts, *limit, *maxTokens, *minScore, *offTopic, *gate)
	if *cpuprofile != "" {
		pprof.StopCPUProfile()
	}
	r.Turns, r.IngestSeconds = turns, ingestTook.Seconds()
	r.print(os.Stdout, cuts)
	if *jsonOut != "" {
		b, _ := json.MarshalIndent(r, "", " ")
		if err := os.WriteFile(*jsonOut, b, 0o644); err != nil {
			log.Fatalf("memeval: %v", err)
		}
	}
}

func parseKs(s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		k, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || k < 1 {
			return nil, fmt.Errorf("%q is not a cut-off", f)
		}
		out = append(out, k)
	}
	sort.Ints(out)
	return out, nil
}

// ingest loads one conversation as one owner, one LoCoMo session per
// session, each turn at its session's date with its dia_id as reference.
func ingest(ctx context.Context, e *engine.Engine, s sample, facts, distil bool) (int, error) {
	owner := e.OwnerID(s.ID)
	n := 0
	for _, sess := range s.Sessions {
		turns := make([]extract.Said, len(sess.Turns))
		for i, t := range sess.Turns {
			text := t.Text
			if t.Caption != "" {
				text += " [shares a photo: " + t.Caption + "]"
			}
			turns[i] = extract.Said{Role: t.Speaker, Content: text, Time: sess.Date, Ref: t.DiaID}
		}
		if _, err := e.Ingest(ctx, owner, sess.Name, turns, facts, distil); err != nil {
			return n, err
		}
		n += len(turns)
	}
	return n, nil
}

// result is the outcome of a run.
type result struct {
	Turns          int                           `json:"turns"`
	IngestSeconds  float64                       `json:"ingest_seconds"`
	Groups         map[string]map[string]float64 `json:"groups"`
	Counts         map[string]int                `json:"counts"`
	MeanTokens     float64                       `json:"mean_injected_tokens"`
	LatencyP50Ms   float64                       `json:"search_p50_ms"`
	LatencyP99Ms   float64                       `json:"search_p99_ms"`
	OffTopicAsked  int                           `json:"offtopic_questions"`
	OffTopicInject float64                       `json:"offtopic_inject_rate"`
	NothingRate    float64                       `json:"questions_injecting_nothing"`
}

var groupOrder = []string{"single-hop", "multi-hop", "temporal", "open-domain", "adversarial", "all_but_adversarial", "all"}

func run(ctx context.Context, e *engine.Engine, samples []sample, cuts []int, limit, maxTokens int, minScore float64, offTopic int, gate bool) *result {
	agg := map[string]map[string][]float64{}
	add := func(g, m string, v float64) {
		if agg[g] == nil {
			agg[g] = map[string][]float64{}
		}
		agg[g][m] = append(agg[g][m], v)
	}
	var lat []float64
	var tokens []float64
	asked, nothing := 0, 0
	for _, s := range samples {
		owner := e.OwnerID(s.ID)
		for _, q := range s.Questions {
			if len(q.Evidence) == 0 {
				continue
			}
			t0 := time.Now()
			res, err := e.Search(ctx, engine.SearchRequest{Owner: owner, Query: q.Question, Limit: limit, MinScore: minScore, Gate: gate})
			lat = append(lat, float64(time.Since(t0).Microseconds())/1000)
			if err != nil {
				log.Fatalf("memeval: search: %v", err)
			}
			asked++
			if len(res) == 0 {
				nothing++
			}
			ranked := turnsOf(res)
			if showMisses > 0 && q.Category != "adversarial" && !anyIn(ranked[:min(5, len(ranked))], q.Evidence) {
				showMisses--
				fmt.Printf("MISS [%s] %s\n", q.Category, q.Question)
				for _, d := range q.Evidence {
					fmt.Printf("   want %s  %.160s\n", d, texts[s.ID+"/"+d])
				}
				for _, d := range ranked[:min(3, len(ranked))] {
					fmt.Printf("   got  %s  %.160s\n", d, texts[s.ID+"/"+d])
				}
			}
			tokens = append(tokens, float64(blockTokens(res, maxTokens, limit)))
			ev := map[string]bool{}
			for _, d := range q.Evidence {
				ev[d] = true
			}
			groups := []string{q.Category, "all"}
			if q.Category != "adversarial" {
				groups = append(groups, "all_but_adversarial")
			}
			for _, g := range groups {
				for _, k := range cuts {
					hit := 0
					for _, d := range ranked[:min(k, len(ranked))] {
						if ev[d] {
							hit++
						}
					}
					add(g, fmt.Sprintf("recall@%d", k), float64(hit)/float64(len(ev)))
					add(g, fmt.Sprintf("hit@%d", k), b2f(hit > 0))
				}
			}
		}
	}
	r := &result{Groups: map[string]map[string]float64{}, Counts: map[string]int{}}
	for g, ms := range agg {
		r.Groups[g] = map[string]float64{}
		for m, vs := range ms {
			r.Groups[g][m] = mean(vs)
			r.Counts[g] = len(vs)
		}
	}
	r.MeanTokens = mean(tokens)
	r.NothingRate = float64(nothing) / float64(max(asked, 1))
	r.LatencyP50Ms, r.LatencyP99Ms = stats.Percentile(lat, 50), stats.Percentile(lat, 99)
	if offTopic > 0 {
		r.OffTopicAsked, r.OffTopicInject = offTopicRate(ctx, e, samples, offTopic, limit, maxTokens, minScore, gate)
	}
	return r
}

// turnsOf maps ranked memories to the turns they came from (their ref, a
// dia_id), dropping repeats and keeping the order.
func turnsOf(res []engine.Result) []string {
	var out []string
	seen := map[string]bool{}
	for _, r := range res {
		for _, d := range strings.Split(r.Memory.Ref, ",") {
			if d = strings.TrimSpace(d); d != "" && !seen[d] {
				seen[d] = true
				out = append(out, d)
			}
		}
	}
	return out
}

// blockTokens is the size of the block the proxy would inject.
func blockTokens(res []engine.Result, maxTokens, maxItems int) int {
	items := make([]block.Item, len(res))
	for i, r := range res {
		items[i] = block.Item{Text: r.Memory.Content, Time: r.Memory.UpdatedAt}
	}
	rendered, _, _ := block.Render(items, maxTokens, maxItems)
	if rendered == "" {
		return 0
	}
	return block.EstimateTokens(rendered)
}

// offTopicRate asks each conversation's owner questions from the other
// conversations (same owner, unrelated topic) and returns how often a block
// would be injected anyway.
func offTopicRate(ctx context.Context, e *engine.Engine, samples []sample, per, limit, maxTokens int, minScore float64, gate bool) (int, float64) {
	rng := rand.New(rand.NewPCG(1, 2))
	asked, injected := 0, 0
	for i, s := range samples {
		var pool []string
		for j, o := range samples {
			if j == i {
				continue
			}
			for _, q := range o.Questions {
				if q.Category != "adversarial" && !mentions(q.Question, s.Speakers) {
					pool = append(pool, q.Question)
				}
			}
		}
		rng.Shuffle(len(pool), func(a, b int) { pool[a], pool[b] = pool[b], pool[a] })
		owner := e.OwnerID(s.ID)
		for _, q := range pool[:min(per, len(pool))] {
			res, err := e.Search(ctx, engine.SearchRequest{Owner: owner, Query: q, Limit: limit, MinScore: minScore, Gate: gate})
			if err != nil {
				log.Fatalf("memeval: search: %v", err)
			}
			asked++
			if blockTokens(res, maxTokens, limit) > 0 {
				injected++
				if showMisses > 0 {
					showMisses--
					fmt.Printf("OFFTOPIC %s: %q -> %.120q\n", s.ID, q, res[0].Memory.Content)
				}
			}
		}
	}
	return asked, float64(injected) / float64(max(asked, 1))
}

// mentions reports whether a question names one of the speakers (then it is
// not off-topic for their conversation).
func mentions(q string, names []string) bool {
	for _, n := range names {
		if n != "" && strings.Contains(q, n) {
			return true
		}
	}
	return false
}

func (r *result) print(w *os.File, cuts []int) {
	fmt.Fprintf(w, "ingested %d turns in %.1fs\n\n", r.Turns, r.IngestSeconds)
	fmt.Fprintf(w, "%-22s%6s", "group", "n")
	for _, k := range cuts {
		fmt.Fprintf(w, "%11s", fmt.Sprintf("recall@%d", k))
	}
	fmt.Fprintf(w, "%9s\n", "hit@5")
	for _, g := range groupOrder {
		m, ok := r.Groups[g]
		if !ok {
			continue
		}
		fmt.Fprintf(w, "%-22s%6d", g, r.Counts[g])
		for _, k := range cuts {
			fmt.Fprintf(w, "%11.3f", m[fmt.Sprintf("recall@%d", k)])
		}
		fmt.Fprintf(w, "%9.3f\n", m["hit@5"])
	}
	fmt.Fprintf(w, "\nmean injected tokens %.0f   search p50 %.2f ms   p99 %.2f ms\n", r.MeanTokens, r.LatencyP50Ms, r.LatencyP99Ms)
	if r.OffTopicAsked > 0 {
		fmt.Fprintf(w, "off-topic questions that inject anything: %.1f%% of %d\n", 100*r.OffTopicInject, r.OffTopicAsked)
		fmt.Fprintf(w, "questions that inject nothing: %.1f%%\n", 100*r.NothingRate)
	}
}

// showMisses and texts serve the -misses flag.
var (
	showMisses int
	texts      map[string]string
)

func anyIn(ranked, want []string) bool {
	for _, d := range ranked {
		for _, w := range want {
			if d == w {
				return true
			}
		}
	}
	return false
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

func mean(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	s := 0.0
	for _, x := range v {
		s += x
	}
	return s / float64(len(v))
}
