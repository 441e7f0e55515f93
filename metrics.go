package memory

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/caddy-memory/memory/app"
)

// Request outcomes, the values of the "outcome" label.
const (
	outcomeInjected     = "injected"         // memories were placed in the request
	outcomeNothing      = "nothing_relevant" // searched; nothing cleared the floor
	outcomePassed       = "passed_through"   // not rewritten: no owner, not a chat body, too large, compressed
	outcomeFailedOpen   = "failed_open"      // memory failed; the request went on without it
	outcomeFailedClosed = "failed_closed"    // memory failed; fail_closed answered 503
	outcomeOptedOut     = "opted_out"        // the client asked for no memory (X-Memory: off)
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
	overflowTotal = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: "caddy", Subsystem: "memory", Name: "overflow_total",
		Help: "Requests the upstream refused for their length (or, for Ollama, over its context), by what came of them: rescued, refused_again, not_trimmable.",
	}, []string{"result"})
	toolCalls = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: "caddy", Subsystem: "memory", Name: "tool_calls_total",
		Help: "Calls of the proxy's memory tools the model made, by tool.",
	}, []string{"tool"})
)

func registerMetrics(reg prometheus.Registerer) error {
	return app.RegisterMetrics(reg, requestsTotal, injectedPerRequest, retrievalSeconds, overflowTotal, toolCalls)
}

func outcome(o string) { requestsTotal.WithLabelValues(o).Inc() }
