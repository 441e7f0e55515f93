package recall

import (
	"fmt"
	"strings"
	"testing"

	"github.com/caddy-memory/memory/store"
)

// The profile is read again only when one of the owner's facts changes.
func TestProfileIsCachedUntilAFactChanges(t *testing.T) {
	s, st := newTest(t, DefaultLocalSearchMax)
	owner := st.OwnerID("ana")
	allergy := put(t, st, owner, store.Put{Kind: "health", Key: "health:allergy", Content: "User is allergic to peanuts."})[0]
	recallFor(t, s, owner, "Any snack ideas?")
	first := s.profiles.Get(owner)
	if first == nil || len(first.facts) != 1 {
		t.Fatalf("profile = %+v", first)
	}
	put(t, st, owner, store.Put{Kind: "turn", Key: "turn:c-2:1", Content: "User: Thanks, what else is good?"}) // a turn, no fact
	recallFor(t, s, owner, "Any snack ideas?")
	if s.profiles.Get(owner) != first {
		t.Error("a turn that taught no fact made the profile be read again")
	}
	put(t, st, owner, store.Put{Kind: "identity", Key: "identity:diet", Content: "User is vegan."})
	recallFor(t, s, owner, "Any snack ideas?")
	if p := s.profiles.Get(owner); p == first || len(p.facts) != 2 {
		t.Errorf("a new fact left the profile as it was: %+v", p)
	}
	// A fact deleted leaves it.
	if err := st.Update(func(tx *store.Tx) error { _, err := tx.Delete(owner, allergy.ID); return err }); err != nil {
		t.Fatal(err)
	}
	if rec := recallFor(t, s, owner, "Any snack ideas?"); strings.Contains(rec.Block, "peanuts") || !strings.Contains(rec.Block, "vegan") {
		t.Errorf("a deleted fact still rides, or the other does not:\n%s", rec.Block)
	}
}

// A large owner's profile is read ahead (as the engine builds its
// postings), a small owner's only when it is asked for.
func TestWarmProfileReadsLargeOwnersOnly(t *testing.T) {
	s, st := newTest(t, 8)
	large, small := st.OwnerID("sk-large"), st.OwnerID("sk-small")
	var puts []store.Put
	for i := range 20 {
		puts = append(puts, store.Put{Kind: "note", Key: fmt.Sprint("n", i), Content: fmt.Sprint("Note ", i, " about the allotment.")})
	}
	puts = append(puts, store.Put{Kind: "health", Key: "health:allergy", Content: "User is allergic to shellfish."})
	put(t, st, large, puts...)
	put(t, st, small, store.Put{Kind: "health", Key: "health:allergy", Content: "User is allergic to peanuts."})
	err := st.View(func(tx *store.Tx) error {
		if err := s.WarmProfile(tx, large, 21); err != nil {
			return err
		}
		return s.WarmProfile(tx, small, 1)
	})
	if err != nil {
		t.Fatal(err)
	}
	if p := s.profiles.Get(large); p == nil || len(p.facts) != 1 || !strings.Contains(p.facts[0].content(), "shellfish") {
		t.Fatalf("the large owner's profile read ahead: %+v", p)
	}
	if s.HoldsProfile(small) {
		t.Error("a small owner's profile was read before it was asked for")
	}
}

// The profile cache keeps within its bytes, letting the least recently
// used owners go first.
func TestProfileCacheKeepsWithinItsBytes(t *testing.T) {
	c := newProfileCache()
	each := profileCacheBytes / 10
	for i := range 10 {
		c.Put(fmt.Sprintf("o%d", i), &profile{size: each - 200})
	}
	c.Get("o0") // used lately: kept
	c.Put("o10", &profile{size: each - 200})
	if c.Bytes() > profileCacheBytes {
		t.Errorf("the cache holds %d bytes, over its %d", c.Bytes(), profileCacheBytes)
	}
	if c.Get("o0") == nil || c.Get("o10") == nil {
		t.Error("the owner used lately, or the newest, was let go")
	}
	if c.Get("o1") != nil {
		t.Error("the least recently used owner is still held")
	}
}
