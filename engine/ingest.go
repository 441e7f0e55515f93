package engine

import (
	"context"

	"github.com/caddy-memory/memory/extract"
	"github.com/caddy-memory/memory/store"
)

// Ingested reports what Ingest stored.
type Ingested struct {
	Turns int `json:"turns"`
	Facts int `json:"facts"`
}

// Ingest stores what a transcript of one session teaches for owner (see
// extract.Transcript), in one transaction, and returns once everything is
// durable and searchable.
func (e *Engine) Ingest(ctx context.Context, owner, session string, said []extract.Said, facts bool) (Ingested, error) {
	mems, turns := extract.Transcript(session, said, facts)
	seq, err := e.write(func(tx *store.Tx) error {
		for _, m := range mems {
			if _, _, err := tx.Upsert(owner, putOf(m, store.SourceRules)); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return Ingested{}, err
	}
	return Ingested{Turns: turns, Facts: len(mems) - turns}, e.WaitIndexed(ctx, seq)
}

// putOf is a learned memory as the store writes it, with its digest and
// the learner it came from.
func putOf(m extract.Memory, source string) store.Put {
	return withDigest(store.Put{Session: m.Session, Kind: m.Kind, Key: m.Key, Content: m.Content,
		Context: m.Context, Ref: m.Ref, Meta: m.Meta, Time: m.Time, Source: source, Importance: m.Importance})
}
