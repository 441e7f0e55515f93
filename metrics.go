package memory

import (
	"errors"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/caddy-memory/memory/engine"
)

// Request outcomes, the values of the "outcome" label.
const (
	outcomeInjected     = "injected"         // memories were placed in the request
	outcomeNothing      = "nothing_relevant" // searched; nothing cleared the floor
	outcomePassed       = "passed_through"   // not rewritten: no owner, not a chat body, too large, compressed
	outcomeFailedOpen   = "failed_open"      // memory failed; the request went on without it
	outcomeFailedClosed = "failed_closed"    // memory failed; fail_closed answered 503
)

// The collectors exist once per process and are registered into each
// configuration's registry: Caddy gives every config load a fresh registry,
// and collectors created per config would keep counting into an orphan.
var (
	requestsTotal = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: "caddy", Subsystem: "memory", Name: "requests_total",
		Help: "Chat requests seen by the memory handler, by outcome.",
	}, []string{"outcome"})
	injectedPerRequest = prometheus.NewHistogram(prometheus.HistogramOpts{
		Namespace: "caddy", Subsystem: "memory", Name: "injected_memories",
		Help:    "Memories injected per searched request.",
		Buckets: []float64{0, 1, 2, 3, 5, 8, 13, 21},
	})
	retrievalSeconds = prometheus.NewHistogram(prometheus.HistogramOpts{
		Namespace: "caddy", Subsystem: "memory", Name: "retrieval_seconds",
		Help:    "Time to search and load memories on the request path.",
		Buckets: []float64{.0005, .001, .002, .005, .01, .025, .05, .1, .25, .5},
	})
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
	toolCalls = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: "caddy", Subsystem: "memory", Name: "tool_calls_total",
		Help: "Calls of the proxy's memory tools the model made, by tool.",
	}, []string{"tool"})
	llmSeconds = prometheus.NewHistogram(prometheus.HistogramOpts{
		Namespace: "caddy", Subsystem: "memory", Name: "llm_call_seconds",
		Help:    "Time a call to the model that distils sessions took.",
		Buckets: []float64{.25, .5, 1, 2, 4, 8, 15, 30, 60, 120},
	})
)

func registerMetrics(reg prometheus.Registerer) error {
	if reg == nil {
		return nil
	}
	for _, c := range []prometheus.Collector{requestsTotal, injectedPerRequest, retrievalSeconds, jobsTotal, heldTurns, storedTotal, embeddingFailures, llmCalls, llmSeconds, toolCalls} {
		var already prometheus.AlreadyRegisteredError
		if err := reg.Register(c); err != nil && !errors.As(err, &already) {
			return err
		}
	}
	return nil
}

func outcome(o string) { requestsTotal.WithLabelValues(o).Inc() }

// observer feeds the engine's background events into the metrics.
type observer struct{}

var _ engine.HeldObserver = observer{}

func (observer) JobDropped() { jobsTotal.WithLabelValues("dropped").Inc() }
func (observer) JobFailed()  { jobsTotal.WithLabelValues("failed").Inc() }

// TurnsHeld (engine.HeldObserver) counts the turns held for the shared
// database, over every storage of the process.
func (observer) TurnsHeld(delta int) { heldTurns.Add(float64(delta)) }
func (observer) EmbeddingFailed() {
	embeddingFailures.Inc()
}
func (observer) LLMCall(result string, took time.Duration) {
	llmCalls.WithLabelValues(result).Inc()
	llmSeconds.Observe(took.Seconds())
}
func (observer) JobDone(stored int) {
	jobsTotal.WithLabelValues("done").Inc()
	storedTotal.Add(float64(stored))
}
