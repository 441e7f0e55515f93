package memory

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/caddyserver/caddy/v2"
	"go.uber.org/zap"

	"github.com/caddy-memory/memory/engine"
)

// engines holds one open engine per absolute storage path. Caddy provisions a
// new configuration before it cleans up the old one, and bbolt takes an
// exclusive lock, so a reload must share the engine instead of reopening it.
var engines = caddy.NewUsagePool()

type pooledEngine struct {
	*engine.Engine
	drain atomic.Int64 // nanoseconds; the latest configuration's drain_timeout
}

// Destruct closes the engine when the last handler using it is cleaned up.
func (p *pooledEngine) Destruct() error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Duration(p.drain.Load()))
	defer cancel()
	return p.Close(ctx)
}

// acquireEngine opens the engine for a storage path, or shares the one
// already open. A configuration loaded while the engine is open applies
// what can change on it (drain, when drain is not 0; see
// engine.Reconfigure; the keys, see engine.UseKeys) and logs what cannot.
// With inherit, no keys (cfg.Keys nil) means the open engine's, not none.
func acquireEngine(path string, cfg engine.Config, drain time.Duration, logger *zap.Logger, inherit bool) (*engine.Engine, error) {
	opened := false
	v, _, err := engines.LoadOrNew(path, func() (caddy.Destructor, error) {
		e, err := engine.Open(cfg)
		if err != nil {
			return nil, err
		}
		opened = true
		p := &pooledEngine{Engine: e}
		p.drain.Store(int64(defaultDrainTimeout))
		return p, nil
	})
	if err != nil {
		return nil, err
	}
	p := v.(*pooledEngine)
	if !opened && (cfg.Keys != nil || !inherit) {
		if err := p.UseKeys(cfg.Keys); err != nil {
			_, _ = engines.Delete(path)
			return nil, err
		}
	}
	if drain > 0 {
		p.drain.Store(int64(drain))
	}
	if !opened {
		logFixed(logger, path, p.Reconfigure(cfg))
	}
	return p.Engine, nil
}

// logFixed says which configured settings an open storage keeps as they
// were.
func logFixed(logger *zap.Logger, storage string, fixed []engine.Fixed) {
	for _, s := range fixed {
		logger.Warn("memory storage is already open: this setting keeps its value until the storage is closed (restart Caddy to change it)",
			zap.String("storage", storage), zap.String("setting", s.Name), zap.String("configured", s.Configured), zap.String("in_effect", s.InEffect))
	}
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
			found = v.(*pooledEngine).Engine
			return false
		}
		return true
	})
	return found
}
