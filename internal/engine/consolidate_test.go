package engine

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/caddy-memory/memory/store"
)

const day = 24 * time.Hour

// clock is a time the test moves.
type clock struct{ ns atomic.Int64 }

func (c *clock) now() time.Time          { return time.Unix(0, c.ns.Load()).UTC() }
func (c *clock) set(t time.Time)         { c.ns.Store(t.UnixNano()) }
func (c *clock) advance(d time.Duration) { c.ns.Add(int64(d)) }

// aging opens an engine whose time is c's, with the default lifecycle and
// no background pass.
func aging(t *testing.T, c *clock) *Engine {
	t.Helper()
	e, err := openConfig(t, Config{Dir: t.TempDir(), Shards: 1, LockTimeout: 200 * time.Millisecond, Clock: c.now})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { closeEngine(t, e) })
	cfg := DefaultLifecycle
	cfg.Every = 0
	e.UseLifecycle(cfg)
	return e
}

func remember(t *testing.T, e *Engine, owner string, puts ...store.Put) []*store.Memory {
	t.Helper()
	ops := make([]OwnedPut, len(puts))
	for i, p := range puts {
		ops[i] = OwnedPut{owner, p}
	}
	res, err := e.Remember(context.Background(), ops...)
	if err != nil {
		t.Fatal(err)
	}
	out := make([]*store.Memory, len(res))
	for i, r := range res {
		out[i] = r.Memory
	}
	return out
}

func consolidated(t *testing.T, e *Engine, owner string) Consolidated {
	t.Helper()
	dry, err := e.Consolidate(context.Background(), owner, true)
	if err != nil {
		t.Fatal(err)
	}
	res, err := e.Consolidate(context.Background(), owner, false)
	if err != nil {
		t.Fatal(err)
	}
	if dry != res {
		t.Errorf("a dry run said %+v, the pass did %+v", dry, res)
	}
	return res
}

// TestUseAndDecayChangeTheRanking: of two memories that match a question
// alike, the one used lately ranks first once the other has been idle.
func TestUseAndDecayChangeTheRanking(t *testing.T) {
	var c clock
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	c.set(start)
	e := aging(t, &c)
	owner := e.OwnerID("sk-decay")
	ms := remember(t, e, owner,
		store.Put{Kind: "preference", Key: "a", Content: "The user likes hiking in the Alps.", Time: start},
		store.Put{Kind: "preference", Key: "b", Content: "The user likes hiking in the Tatras.", Time: start})
	c.advance(40 * day)
	e.Used(owner, ms[0].ID)
	e.usage.flush()
	c.advance(day)
	res := search(t, e, owner, "where do I like hiking?")
	if len(res) != 2 || res[0].Memory.ID != ms[0].ID {
		t.Fatalf("after a use of the first and 40 idle days of the second: %s", contents(res))
	}
	got, _ := e.Get(owner, ms[0].ID)
	other, _ := e.Get(owner, ms[1].ID)
	if got.Uses != 1 || got.LastUsed == nil || got.Salience <= other.Salience {
		t.Errorf("used: %d uses, last %v, salience %.3f against %.3f", got.Uses, got.LastUsed, got.Salience, other.Salience)
	}
}

// TestConsolidationChangesWhatIsFound: each step of a pass changes what a
// later search returns; pinned and API-made memories survive it.
func TestConsolidationChangesWhatIsFound(t *testing.T) {
	var c clock
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	c.set(start)
	e := aging(t, &c)
	owner := e.OwnerID("sk-age")
	ms := remember(t, e, owner,
		store.Put{Kind: "turn", Key: "t-old", Content: "User: I repaired my zqbicycle today.", Time: start},
		store.Put{Kind: "turn", Key: "t-pinned", Content: "User: my zqbicycle is a red Bianchi.", Time: start},
		store.Put{Kind: "habit", Key: "stamps", Content: "The user collects zqstamps.", Time: start, Source: store.SourceRules},
		store.Put{Kind: "habit", Key: "coins", Content: "The user collects zqcoins.", Time: start, Source: store.SourceAPI},
		store.Put{Kind: "preference", Key: "coffee1", Content: "The user likes strong black zqcoffee in the morning.", Time: start.Add(80 * day), Source: store.SourceRules},
		store.Put{Kind: "preference", Key: "coffee2", Content: "The user likes strong black zqcoffee in the mornings.", Time: start.Add(85 * day), Source: store.SourceLLM},
		store.Put{Kind: "habit", Key: "swim", Content: "The user swims at the zqlido.", Time: start.Add(80 * day)},
		store.Put{Kind: "habit", Key: "run", Content: "The user runs at the zqlido.", Time: start.Add(80 * day)},
	)
	if _, err := e.Edit(context.Background(), owner, ms[1].ID, func(m *store.Memory) error { m.Pinned = true; return nil }); err != nil {
		t.Fatal(err)
	}
	for i, when := range []time.Duration{88, 89, 90} {
		remember(t, e, owner, store.Put{Kind: "turn", Key: "t-swim-" + string(rune('a'+i)),
			Content: "User: I swim at the zqlido again, I swim there most days.", Time: start.Add(when * day)})
	}
	c.set(start.Add(95 * day))
	before := map[string]string{}
	for _, q := range []string{"zqbicycle", "zqstamps", "zqcoins", "zqcoffee", "zqlido"} {
		before[q] = contents(search(t, e, owner, q))
	}

	res := consolidated(t, e, owner)
	if res.Pruned != 1 || res.Evicted != 1 || res.Merged != 1 || res.Promoted != 1 || res.Owners != 1 {
		t.Errorf("counts %+v, want 1 pruned, 1 evicted, 1 merged, 1 promoted", res)
	}
	after := func(q string) string { return contents(search(t, e, owner, q)) }
	if got := after("zqbicycle"); strings.Contains(got, "repaired") || !strings.Contains(got, "red Bianchi") {
		t.Errorf("prune: before %q, after %q; want the old turn gone, the pinned one kept", before["zqbicycle"], got)
	}
	if got := after("zqstamps"); got != "" || before["zqstamps"] == "" {
		t.Errorf("evict: before %q, after %q; want the faded fact gone", before["zqstamps"], got)
	}
	if got := after("zqcoins"); got == "" {
		t.Errorf("the API-made fact, as faded, was evicted")
	}
	if got := after("zqcoffee"); strings.Count(got, "zqcoffee") != 1 || strings.Count(before["zqcoffee"], "zqcoffee") != 2 {
		t.Errorf("merge: before %q, after %q; want one of the two", before["zqcoffee"], got)
	}
	if got := after("zqlido"); !strings.HasPrefix(got, "The user swims") || strings.HasPrefix(before["zqlido"], "The user swims") {
		t.Errorf("promote: before %q, after %q; want the confirmed fact first", before["zqlido"], got)
	}
	// The merged memory's text is the survivor's history (the newer of
	// the two, as both were stated once); the evicted one says why, and
	// comes back when restored (a restore counts as a use, so it does not
	// fade straight out again).
	for _, m := range memoriesOf(t, e, owner) {
		switch m.Key {
		case "coffee2":
			if m.DeletedAt != nil || len(m.History) != 1 || !strings.HasSuffix(m.History[0].Content, "morning.") || m.Mentions != 2 {
				t.Errorf("the survivor: deleted %v, history %+v, mentions %d", m.DeletedAt, m.History, m.Mentions)
			}
		case "coffee1":
			if m.DeletedAt == nil || !strings.HasPrefix(m.DeleteReason, "merged into ") {
				t.Errorf("the merged memory: deleted %v, reason %q", m.DeletedAt, m.DeleteReason)
			}
		case "stamps":
			if m.DeletedAt == nil || m.DeleteReason != "salience" {
				t.Errorf("the evicted memory: deleted %v, reason %q", m.DeletedAt, m.DeleteReason)
			}
			if _, err := e.Edit(context.Background(), owner, m.ID, func(m *store.Memory) error {
				m.DeletedAt, m.DeleteReason = nil, ""
				return nil
			}); err != nil {
				t.Fatal(err)
			}
			e.Used(owner, m.ID)
			e.usage.flush()
		}
	}
	if got := after("zqstamps"); got == "" {
		t.Errorf("the restored memory is not found")
	}
	// A second pass finds nothing more to do.
	if again := consolidated(t, e, owner); again.Pruned+again.Evicted+again.Merged+again.Promoted != 0 {
		t.Errorf("a second pass did %+v", again)
	}
}

// TestConsolidationResumesAtTheOwnerItReached: a pass over every owner
// records where it is, so one cut short resumes there.
func TestConsolidationResumesAtTheOwnerItReached(t *testing.T) {
	var c clock
	c.set(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	e := aging(t, &c)
	for _, o := range []string{"a", "b", "c"} {
		remember(t, e, e.OwnerID(o), store.Put{Content: "memory of " + o})
	}
	res, err := e.Consolidate(context.Background(), "", false)
	if err != nil || res.Owners != 3 {
		t.Fatalf("a full pass: %+v %v", res, err)
	}
	if m := e.store.Mark(consolidateMark); m != "" {
		t.Errorf("a finished pass left the mark %q", m)
	}
	// Cut short after the first owner: the next pass starts at the second.
	var owners []string
	e.store.View(func(tx *store.Tx) error {
		return tx.Owners(func(o string) error { owners = append(owners, o); return nil })
	})
	if err := e.store.Update(func(tx *store.Tx) error { return tx.SetMark(consolidateMark, owners[1]) }); err != nil {
		t.Fatal(err)
	}
	if res, err := e.Consolidate(context.Background(), "", false); err != nil || res.Owners != 2 {
		t.Errorf("resumed pass: %+v %v, want the two owners left", res, err)
	}
}
