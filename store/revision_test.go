package store_test

import (
	"testing"

	"github.com/caddy-memory/memory/store"
)

// FactsRevision moves when one of an owner's facts is written, deleted or
// purged, and not when a transcript turn is: what is derived from the
// facts stays cached while turns are learned.
func TestFactsRevision(t *testing.T) {
	s := newStore(t)
	rev := func() uint64 {
		var r uint64
		s.View(func(tx *store.Tx) error { r = tx.FactsRevision("ana"); return nil })
		return r
	}
	if r := rev(); r != 0 {
		t.Fatalf("an owner with nothing has revision %d", r)
	}
	fact, _ := upsert(t, s, "ana", store.Put{Kind: "health", Key: "health:allergy", Content: "User is allergic to peanuts."})
	after := rev()
	if after == 0 {
		t.Fatal("writing a fact did not move the revision")
	}
	turn, _ := upsert(t, s, "ana", store.Put{Kind: "turn", Content: "User: hello"})
	upsert(t, s, "bob", store.Put{Kind: "identity", Content: "User lives in Oslo."})
	if r := rev(); r != after {
		t.Errorf("a turn, or another owner's fact, moved the revision: %d -> %d", after, r)
	}
	upsert(t, s, "ana", store.Put{Kind: "health", Key: "health:allergy", Content: "User is allergic to shellfish."})
	superseded := rev()
	if superseded <= after {
		t.Errorf("superseding a fact: revision %d, was %d", superseded, after)
	}
	if err := s.Update(func(tx *store.Tx) error { _, err := tx.Delete("ana", fact.ID); return err }); err != nil {
		t.Fatal(err)
	}
	deleted := rev()
	if deleted <= superseded {
		t.Errorf("deleting a fact: revision %d, was %d", deleted, superseded)
	}
	if err := s.Update(func(tx *store.Tx) error { return tx.Purge("ana", turn.ID) }); err != nil {
		t.Fatal(err)
	}
	if r := rev(); r != deleted {
		t.Errorf("purging a turn moved the revision: %d -> %d", deleted, r)
	}
	if err := s.Update(func(tx *store.Tx) error { return tx.Purge("ana", fact.ID) }); err != nil {
		t.Fatal(err)
	}
	if r := rev(); r <= deleted {
		t.Errorf("purging a fact: revision %d, was %d", r, deleted)
	}
}
