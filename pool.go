package memory

import (
	"context"
	"time"

	"github.com/caddyserver/caddy/v2"

	"github.com/caddy-memory/memory/engine"
)

// engines holds one open engine per absolute storage path. Caddy provisions a
// new configuration before it cleans up the old one, and bbolt takes an
// exclusive lock, so a reload must share the engine instead of reopening it.
var engines = caddy.NewUsagePool()

type pooledEngine struct {
	*engine.Engine
	drain time.Duration
}

// Destruct closes the engine when the last handler using it is cleaned up.
func (p pooledEngine) Destruct() error {
	ctx, cancel := context.WithTimeout(context.Background(), p.drain)
	defer cancel()
	return p.Close(ctx)
}

func acquireEngine(path string, cfg engine.Config, drain time.Duration) (*engine.Engine, error) {
	v, _, err := engines.LoadOrNew(path, func() (caddy.Destructor, error) {
		e, err := engine.Open(cfg)
		if err != nil {
			return nil, err
		}
		return pooledEngine{Engine: e, drain: drain}, nil
	})
	if err != nil {
		return nil, err
	}
	return v.(pooledEngine).Engine, nil
}

func releaseEngine(path string) error {
	_, err := engines.Delete(path)
	return err
}

// engineAt returns the open engine for a storage path, if any.
func engineAt(path string) *engine.Engine {
	var found *engine.Engine
	engines.Range(func(k, v any) bool {
		if k == path {
			found = v.(pooledEngine).Engine
			return false
		}
		return true
	})
	return found
}
