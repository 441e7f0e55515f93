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
	RequestsTotal = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: "caddy", Subsystem: "memory", Name: "requests_total",
		Help: "Chat requests seen by the memory handler, by outcome.",
	}, []string{"outcome"})
	InjectedMemories = prometheus.NewHistogram(prometheus.HistogramOpts{
		Namespace: "caddy", Subsystem: "memory", Name: "injected_memories",
		Help:    "Memories injected per searched request.",
		Buckets: []float64{0, 1, 2, 3, 5, 8, 13, 21},
	})
	RetrievalSeconds = prometheus.NewHistogram(prometheus.HistogramOpts{
		Namespace: "caddy", Subsystem: "memory", Name: "retrieval_seconds",
		Help:    "Time to search and load memories on the request path.",
		Buckets: []float64{.0005, .001, .002, .005, .01, .025, .05, .1, .25, .5},
	})
	OverflowTotal = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: "caddy", Subsystem: "memory", Name: "overflow_total",
		Help: "Requests the upstream refused for their length (or, for Ollama, over its context), by what came of them: rescued, refused_again, not_trimmable.",
	}, []string{"result"})
	ToolCallsTotal = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: "caddy", Subsystem: "memory", Name: "tool_calls_total",
		Help: "Calls of the proxy's memory tools the model made, by tool.",
	}, []string{"tool"})
)

// The storages' background work.
var (
	jobsTotal = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: "caddy", Subsystem: "memory", Name: "extraction_jobs_total",
		Help: "Turns handed to extraction, by result (done, failed, dropped).",
	}, []string{"result"})
	heldTurns = prometheus.NewGauge(prometheus.GaugeOpts{
		Namespace: "caddy", Subsystem: "memory", Name: "held_turns",
		Help: "Turns held in this instance's storage while the shared database does not answer; learned once it does.",
	})
	storedTotal = prometheus.NewCounter(prometheus.CounterOpts{
		Namespace: "caddy", Subsystem: "memory", Name: "memories_stored_total",
		Help: "Memories created or updated by extraction.",
	})
	embeddingFailures = prometheus.NewCounter(prometheus.CounterOpts{
		Namespace: "caddy", Subsystem: "memory", Name: "embedding_failures_total",
		Help: "Failed calls to the embeddings endpoint (recall fell back to lexical).",
	})
	llmCalls = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: "caddy", Subsystem: "memory", Name: "llm_calls_total",
		Help: "Calls to the model that distils sessions, by result (ok, bad_json, error).",
	}, []string{"result"})
	damagedStorages = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Namespace: "caddy", Subsystem: "memory", Name: "storage_damaged",
		Help: "1 for a storage (by directory) whose store file was found damaged: its requests pass through without memory until it is salvaged.",
	}, []string{"storage"})
	llmSeconds = prometheus.NewHistogram(prometheus.HistogramOpts{
		Namespace: "caddy", Subsystem: "memory", Name: "llm_call_seconds",
		Help:    "Time a call to the model that distils sessions took.",
		Buckets: []float64{.25, .5, 1, 2, 4, 8, 15, 30, 60, 120},
	})
)

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
