// Package enginetest opens engines for other packages' tests: in a
// directory of the test's own unless the configuration names one, closed
// (and the close checked) when the test ends.
package enginetest

import (
	"context"
	"testing"
	"time"

	"github.com/caddy-memory/memory/internal/engine"
)

// Open opens an engine with cfg, in t.TempDir() when cfg.Dir is empty,
// and closes it when t ends, failing t if the close fails.
func Open(t testing.TB, cfg engine.Config) *engine.Engine {
	t.Helper()
	if cfg.Dir == "" {
		cfg.Dir = t.TempDir()
	}
	e, err := engine.Open(cfg)
	if err != nil {
		t.Fatalf("engine.Open: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := e.Close(ctx); err != nil {
			t.Errorf("closing the engine: %v", err)
		}
	})
	return e
}
