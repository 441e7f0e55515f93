package app

import (
	"errors"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/caddy-memory/memory/internal/engine"
)

// Every metric of the module is here, and the app registers them all, the
// handlers' with the storages': every configuration with a memory or
// memory_api handler has the app, so one registration covers them. The
// collectors exist once per process and are registered into each
// configuration's registry: Caddy gives every config load a fresh registry,
// and collectors created per config would keep counting into an orphan.

// What the memory handlers count of the requests they see (package memory
// counts them).
var (
	RequestsTotal    = counterVec("requests_total", "Chat requests seen by the memory handler, by outcome.", "outcome")
	InjectedMemories = histogram("injected_memories", "Memories injected per searched request.", 0, 1, 2, 3, 5, 8, 13, 21)
	RetrievalSeconds = histogram("retrieval_seconds", "Time to search and load memories on the request path.",
		.0005, .001, .002, .005, .01, .025, .05, .1, .25, .5)
	OverflowTotal  = counterVec("overflow_total", "Requests the upstream refused for their length (or, for Ollama, over its context), by what came of them: rescued, refused_again, not_trimmable.", "result")
	ToolCallsTotal = counterVec("tool_calls_total", "Calls of the proxy's memory tools the model made, by tool.", "tool")
)

// The storages' background work.
var (
	jobsTotal = counterVec("extraction_jobs_total", "Turns handed to extraction, by result (done, failed, dropped).", "result")
	heldTurns = prometheus.NewGauge(prometheus.GaugeOpts(opts("held_turns",
		"Turns held in this instance's storage while the shared database does not answer; learned once it does.")))
	storedTotal       = prometheus.NewCounter(prometheus.CounterOpts(opts("memories_stored_total", "Memories created or updated by extraction.")))
	embeddingFailures = prometheus.NewCounter(prometheus.CounterOpts(opts("embedding_failures_total",
		"Failed calls to the embeddings endpoint (recall fell back to lexical).")))
	llmCalls        = counterVec("llm_calls_total", "Calls to the model that distils sessions, by result (ok, bad_json, error).", "result")
	damagedStorages = prometheus.NewGaugeVec(prometheus.GaugeOpts(opts("storage_damaged",
		"1 for a storage (by directory) whose store file was found damaged: its requests pass through without memory until it is salvaged.")),
		[]string{"storage"})
	llmSeconds = histogram("llm_call_seconds", "Time a call to the model that distils sessions took.", .25, .5, 1, 2, 4, 8, 15, 30, 60, 120)
)

// opts are a metric's options: every one is caddy_memory_<name>.
func opts(name, help string) prometheus.Opts {
	return prometheus.Opts{Namespace: "caddy", Subsystem: "memory", Name: name, Help: help}
}

func counterVec(name, help string, labels ...string) *prometheus.CounterVec {
	return prometheus.NewCounterVec(prometheus.CounterOpts(opts(name, help)), labels)
}

func histogram(name, help string, buckets ...float64) prometheus.Histogram {
	return prometheus.NewHistogram(prometheus.HistogramOpts{Namespace: "caddy", Subsystem: "memory", Name: name, Help: help, Buckets: buckets})
}

// registerMetrics registers every collector into a configuration's
// registry, once each.
func registerMetrics(reg prometheus.Registerer) error {
	if reg == nil {
		return nil
	}
	for _, c := range []prometheus.Collector{
		RequestsTotal, InjectedMemories, RetrievalSeconds, OverflowTotal, ToolCallsTotal,
		jobsTotal, heldTurns, storedTotal, embeddingFailures, llmCalls, llmSeconds, damagedStorages,
	} {
		var already prometheus.AlreadyRegisteredError
		if err := reg.Register(c); err != nil && !errors.As(err, &already) {
			return err
		}
	}
	return nil
}

// observer feeds the engines' background events into the metrics.
type observer struct{}

var _ engine.HeldObserver = observer{}

// TurnsHeld counts the turns held for a shared database, over every
// storage of the process.
func (observer) TurnsHeld(delta int) { heldTurns.Add(float64(delta)) }

var _ engine.DamageObserver = observer{}

// Damaged marks the storage in dir damaged.
func (observer) Damaged(dir string) { damagedStorages.WithLabelValues(dir).Set(1) }

func (observer) JobDropped()      { jobsTotal.WithLabelValues("dropped").Inc() }
func (observer) JobFailed()       { jobsTotal.WithLabelValues("failed").Inc() }
func (observer) EmbeddingFailed() { embeddingFailures.Inc() }
func (observer) LLMCall(result string, took time.Duration) {
	llmCalls.WithLabelValues(result).Inc()
	llmSeconds.Observe(took.Seconds())
}
func (observer) JobDone(stored int) {
	jobsTotal.WithLabelValues("done").Inc()
	storedTotal.Add(float64(stored))
}
