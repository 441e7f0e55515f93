package engine

import (
	"time"

	"github.com/caddy-memory/memory/index"
	"github.com/caddy-memory/memory/store"
)

// enrolment says whether the index already holds owner, and, if not,
// whether it should from now on: an owner with more memories than a search
// reads from its records. Smaller owners are never searched in the index,
// so their memories stay out of it: in a store of many small owners,
// indexing them would be most of the CPU of a bulk load (segments, merges,
// analysis) and nearly all of the index's size.
func (ix *indexer) enrolment(tx *store.Tx, owner string) (held, enrol bool, err error) {
	if held, err = ix.index.Holds(owner); err != nil || held {
		return held, false, err
	}
	enrol, err = ix.outgrown(tx, owner)
	return false, enrol, err
}

// enrolDocs appends all of owner's active memories and its enrolment.
func enrolDocs(tx *store.Tx, owner string, now time.Time, docs []index.Doc) ([]index.Doc, error) {
	err := tx.ForEach(owner, func(m *store.Memory) error {
		if m.Active(now) {
			docs = append(docs, docOf(m))
		}
		return nil
	})
	return append(docs, index.Doc{Owner: owner, Enrol: true}), err
}
