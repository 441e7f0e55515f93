package engine

import (
	"context"
	"errors"
	"time"

	"github.com/caddy-memory/memory/extract"
	"github.com/caddy-memory/memory/store"
)

// ErrNoLLM is returned for a distillation asked of an engine without a
// model to learn with.
var ErrNoLLM = errors.New("learning with a model is not configured: add an llm block to this storage in the global memory option")

// Ingested reports what Ingest stored.
type Ingested struct {
	Turns int `json:"turns"`
	Facts int `json:"facts"`
}

// Ingest stores what a transcript of one session teaches for owner (see
// extract.Transcript), in one transaction, and returns once everything is
// durable and searchable. With distil (and learning with a model on), the
// session is distilled next, dated by its turns.
func (e *Engine) Ingest(ctx context.Context, owner, session string, said []extract.Said, facts, distil bool) (Ingested, error) {
	return e.learner.ingest(ctx, owner, session, said, facts, distil)
}

func (lr *learner) ingest(ctx context.Context, owner, session string, said []extract.Said, facts, distil bool) (Ingested, error) {
	if distil && lr.distiller.running() == nil {
		return Ingested{}, ErrNoLLM
	}
	mems, turns := extract.Transcript(session, said, facts)
	seq, err := lr.write(func(tx *store.Tx) error {
		var last time.Time
		for _, m := range mems {
			if _, _, err := tx.Upsert(owner, lr.putOf(m, store.SourceRules)); err != nil {
				return err
			}
			if m.Time.After(last) {
				last = m.Time
			}
		}
		if distil && turns > 0 {
			_, err := touchSession(tx, owner, session, last, true)
			return err
		}
		return nil
	})
	if distil && err == nil {
		lr.distiller.wakeUp()
	}
	if err != nil {
		return Ingested{}, err
	}
	return Ingested{Turns: turns, Facts: len(mems) - turns}, lr.indexer.waitIndexed(ctx, seq)
}
