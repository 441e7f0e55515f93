package app

import (
	"context"
	"testing"

	"github.com/caddyserver/caddy/v2"
	"github.com/prometheus/client_golang/prometheus/testutil"
)

// TestAppRegistersEveryMetric: the memory app registers the handlers'
// metrics with the storages', into each configuration's registry, so
// what a request counts is on /metrics after a reload too (Caddy gives
// every configuration a fresh registry).
func TestAppRegistersEveryMetric(t *testing.T) {
	dir := t.TempDir()
	for i := range 2 { // the first configuration, then a reload
		ctx, cancel := caddy.NewContext(caddy.Context{Context: context.Background()})
		t.Cleanup(cancel)
		a := &App{Storages: map[string]*StorageConfig{"default": {Path: dir, IndexShards: 1}}}
		if err := a.Provision(ctx); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { a.Cleanup() })

		RequestsTotal.WithLabelValues("injected").Inc()
		ToolCallsTotal.WithLabelValues("save_memory").Inc()
		OverflowTotal.WithLabelValues("rescued").Inc()
		RetrievalSeconds.Observe(0.001)
		InjectedMemories.Observe(2)
		jobsTotal.WithLabelValues("done").Inc()
		reg := ctx.GetMetricsRegistry()
		for _, name := range []string{
			"caddy_memory_requests_total", "caddy_memory_tool_calls_total", "caddy_memory_overflow_total",
			"caddy_memory_retrieval_seconds", "caddy_memory_injected_memories", "caddy_memory_extraction_jobs_total",
			"caddy_memory_held_turns", "caddy_memory_memories_stored_total", "caddy_memory_embedding_failures_total",
		} {
			if n, err := testutil.GatherAndCount(reg, name); err != nil || n == 0 {
				t.Errorf("configuration %d: %s is not on its registry (%d series, %v)", i+1, name, n, err)
			}
		}
	}
}
