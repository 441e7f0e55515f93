package engine

import (
	"context"
	"fmt"
	"math"
	"math/rand"
	"strings"
	"testing"
	"time"

	"github.com/caddy-memory/memory/index"
	"github.com/caddy-memory/memory/store"
)

// localVocabulary makes memories that share words in varying numbers, so
// rankings have something to decide.
var localVocabulary = strings.Fields(`lisbon porto peanuts shellfish allergy marathon training
	spring river window seats flights sister brother dog cat painting sunsets cello guitar
	coffee tea breakfast vegetarian sushi budget holiday japan camping hiking boots garden`)

// seedVaried writes, for each owner, n memories of a few random words
// each (facts and transcript turns with context, in two sessions, one
// expired and one deleted), and returns the owner ids. Owners are named
// prefix-0, prefix-1, ...; seed picks the words. With seedWithoutDigests
// the records are written as versions before the digest wrote them.
func seedVaried(t *testing.T, e *Engine, prefix string, owners, n int, seed int64) []string {
	t.Helper()
	rng := rand.New(rand.NewSource(seed))
	words := func(k int) string {
		ws := make([]string, k)
		for i := range ws {
			ws[i] = localVocabulary[rng.Intn(len(localVocabulary))]
		}
		return strings.Join(ws, " ")
	}
	var ids []string
	past := time.Now().Add(-time.Hour)
	_, err := e.write(func(tx *store.Tx) error {
		for o := range owners {
			owner := e.OwnerID(fmt.Sprintf("%s-%d", prefix, o))
			ids = append(ids, owner)
			for i := range n {
				p := store.Put{Kind: "note", Session: fmt.Sprintf("s%d", i%2), Content: "User mentioned " + words(2+rng.Intn(6)),
					Time: time.Now().Add(-time.Duration(rng.Intn(90*24)) * time.Hour)}
				if i%3 == 0 {
					p.Kind, p.Content, p.Context = "turn", "User: "+words(4+rng.Intn(10)), words(6)
					p.Meta = map[string]string{"turn": fmt.Sprintf("t%d", i/6)}
				}
				if i == 1 {
					p.ExpiresAt = &past
				}
				if !seedWithoutDigests {
					p = withDigest(p)
				}
				m, _, err := tx.Upsert(owner, p)
				if err != nil {
					return err
				}
				if i == 2 {
					if _, err := tx.Delete(owner, m.ID); err != nil {
						return err
					}
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return ids
}

// TestLocalSearchAgreesWithIndex: a small owner's memories are scored
// directly instead of through the index, with the owner's own statistics.
// Where those are the shard's (an owner alone in it), what a request gets
// injected must be what the index finds: the same memories, in the same
// order, with scores that differ from the index's by one factor per query.
func TestLocalSearchAgreesWithIndex(t *testing.T) {
	compared := 0
	for seed := range int64(6) {
		e := open(t, t.TempDir(), 1)
		owners := seedVaried(t, e, "local", 1, 40, seed)
		settle(t, e)
		compared += compareLocalWithIndex(t, e, owners)
		closeEngine(t, e)
	}
	if compared < 60 {
		t.Fatalf("only %d searches found anything; the comparison says little", compared)
	}
}

// TestLocalSearchIgnoresOtherOwners: what one owner is reminded of does not
// depend on what others store, even in the same index shard.
func TestLocalSearchIgnoresOtherOwners(t *testing.T) {
	e := open(t, t.TempDir(), 1)
	defer closeEngine(t, e)
	e.cfg.LocalSearchMax = 0
	owner := seedVaried(t, e, "alone", 1, 40, 1)[0]
	queries := []string{"peanuts allergy", "which flights seats do I like", "coffee breakfast vegetarian sushi budget holiday"}
	before := map[string][]Result{}
	for _, q := range queries {
		before[q] = search(t, e, owner, q)
	}
	// Others who talk of nothing but flights and coffee, and have so much
	// to say that the index holds them.
	seedVaried(t, e, "crowd", 2, DefaultLocalSearchMax, 2)
	_, err := e.write(func(tx *store.Tx) error {
		for i := range 200 {
			if _, _, err := tx.Upsert(e.OwnerID(fmt.Sprintf("crowd-%d", i%2)), withDigest(store.Put{Kind: "note", Content: fmt.Sprintf("User books flights with coffee, trip %d", i)})); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	settle(t, e)
	if st, err := e.Stats(); err != nil || st.IndexedDocs < 2*DefaultLocalSearchMax {
		t.Fatalf("the index holds %d documents (%v): the others should be in it", st.IndexedDocs, err)
	}
	for _, q := range queries {
		after := search(t, e, owner, q)
		if len(before[q]) == 0 || ids(after) != ids(before[q]) {
			t.Fatalf("%q: %s before the others wrote, %s after", q, ids(before[q]), ids(after))
		}
		for i := range after {
			if after[i].Score != before[q][i].Score {
				t.Errorf("%q: result %d scored %g, then %g once others wrote", q, i, before[q][i].Score, after[i].Score)
			}
		}
	}
}

var seedWithoutDigests bool

// TestLocalSearchReadsRecordsWithoutDigest: memories written by a version
// that kept no term digest in their records are matched by their text,
// with the same results; so are those of an owner with both kinds.
func TestLocalSearchReadsRecordsWithoutDigest(t *testing.T) {
	compared := 0
	for seed, mixed := range []bool{false, true} {
		e := open(t, t.TempDir(), 1)
		// The new store's re-digest pass, done before there is anything:
		// started late (a loaded machine), it would digest the records
		// this test keeps without.
		<-e.indexer.redigestDone
		seedWithoutDigests = true
		owner := seedVaried(t, e, "earlier", 1, 40, int64(seed))[0]
		seedWithoutDigests = false
		if mixed {
			_, err := e.write(func(tx *store.Tx) error {
				for i, w := range localVocabulary {
					p := store.Put{Kind: "note", Content: fmt.Sprintf("User later mentioned %s and %s", w, localVocabulary[(i*7)%len(localVocabulary)])}
					if _, _, err := tx.Upsert(owner, withDigest(p)); err != nil {
						return err
					}
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
		}
		kinds := map[bool]int{}
		err := e.store.View(func(tx *store.Tx) error {
			return tx.PeekAll(owner, func(p *store.Peek) error {
				kinds[p.Terms() != nil]++
				return nil
			})
		})
		if err != nil || kinds[false] < 30 || (kinds[true] > 0) != mixed {
			t.Fatalf("records with a digest and without: %v (%v); the test needs mixed=%v", kinds, err, mixed)
		}
		settle(t, e)
		compared += compareLocalWithIndex(t, e, []string{owner})
		closeEngine(t, e)
	}
	if compared < 20 {
		t.Fatalf("only %d searches found anything; the comparison says little", compared)
	}
}

// compareLocalWithIndex returns how many searches found something to compare.
func compareLocalWithIndex(t *testing.T, e *Engine, owners []string) int {
	t.Helper()
	queries := []string{
		"what do I remember about lisbon and porto?",
		"peanuts allergy",
		"which flights seats do I like",
		"tell me about my sister's dog",
		"What did Kowalski say about the marathon?", // a name no owner used
		"coffee breakfast vegetarian sushi budget holiday",
		"guitar",
	}
	compared := 0
	for _, owner := range owners {
		for i, q := range queries {
			// Limits large enough that no candidate is cut: among memories
			// of equal score, which make the cut is arbitrary in Bleve.
			for _, req := range []SearchRequest{
				{Owner: owner, Query: q, Limit: 40},
				{Owner: owner, Query: q, Limit: 40, MinScore: DefaultMinScore},
				{Owner: owner, Query: q, Limit: 40, Session: "s1", OnlySession: true},
				{Owner: owner, Query: q, Limit: 40, ExcludeTurn: fmt.Sprintf("t%d", i%4)},
			} {
				e.UseSearchCache(-1)
				e.cfg.LocalSearchMax = -1
				want, err := e.Search(context.Background(), req)
				if err != nil {
					t.Fatal(err)
				}
				e.cfg.LocalSearchMax = 0
				got, err := e.Search(context.Background(), req)
				if err != nil {
					t.Fatal(err)
				}
				// The postings rank as the records do, scores and all.
				e.UseSearchCache(0)
				settle(t, e)
				posted, err := e.Search(context.Background(), req)
				if err != nil {
					t.Fatal(err)
				}
				if ids(posted) != ids(got) || scores(posted) != scores(got) {
					t.Errorf("%+v:\n postings %s %s\n records  %s %s", req, ids(posted), scores(posted), ids(got), scores(got))
				}
				if ids(got) != ids(want) {
					t.Errorf("%+v:\n local %s\n index %s", req, ids(got), ids(want))
					continue
				}
				for j := range got {
					if r, r0 := got[j].Score/want[j].Score, got[0].Score/want[0].Score; math.Abs(r-r0) > 1e-6*r0 {
						t.Errorf("%+v: result %d scores %g locally, %g by the index: not one factor (%g)", req, j, got[j].Score, want[j].Score, r0)
					}
				}
				if len(got) > 0 {
					compared++
				}
			}
		}
	}
	return compared
}

func scores(rs []Result) string {
	var b strings.Builder
	for _, r := range rs {
		fmt.Fprintf(&b, "%.12g ", r.Score) // not Rank: its recency moves with the clock
	}
	return b.String()
}

func ids(rs []Result) string {
	var b strings.Builder
	for _, r := range rs {
		fmt.Fprintf(&b, "%d ", r.Memory.ID)
	}
	return b.String()
}

// TestLocalSearchOnlyForSmallOwners: an owner past LocalSearchMax is
// searched through the index, or its postings. The index is made to forget
// both owners' memories, so only a search of the records (or postings
// made from them) can find them.
func TestLocalSearchOnlyForSmallOwners(t *testing.T) {
	e := open(t, t.TempDir(), 1)
	defer closeEngine(t, e)
	e.cfg.LocalSearchMax = 3
	small, large := e.OwnerID("small"), e.OwnerID("large")
	var docs []index.Doc
	seq, err := e.write(func(tx *store.Tx) error {
		for owner, n := range map[string]int{small: 3, large: 4} {
			for i := range n {
				m, _, err := tx.Upsert(owner, withDigest(store.Put{Kind: "note", Content: fmt.Sprintf("User keeps bees, hive %d", i)}))
				if err != nil {
					return err
				}
				docs = append(docs, index.Doc{ID: m.ID, Owner: owner, Delete: true})
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	settle(t, e)
	if err := e.index.Apply(docs, seq+1); err != nil {
		t.Fatal(err)
	}
	if got := search(t, e, small, "bees"); len(got) != 3 {
		t.Errorf("small owner: %d memories found, want its 3 from its records", len(got))
	}
	e.UseSearchCache(-1)
	if got := search(t, e, large, "bees"); len(got) != 0 {
		t.Errorf("large owner, postings off: %d memories found, want none: the index has none", len(got))
	}
	// The postings of a large owner are made from its records.
	e.UseSearchCache(0)
	waitPostings(t, e, large)
	if got := search(t, e, large, "bees"); len(got) != 4 {
		t.Errorf("large owner: %d memories found in its postings, want its 4", len(got))
	}
}

// A memory restated in other case and punctuation (under another key, so
// the store keeps both) is injected once, whether the owner is searched
// through its records or through the index.
func TestSearchDropsRestatements(t *testing.T) {
	for _, max := range []int{0, -1} { // records, index
		e := open(t, t.TempDir(), 1)
		e.cfg.LocalSearchMax = max
		owner := e.OwnerID("sk-tea")
		_, err := e.write(func(tx *store.Tx) error {
			for i, c := range []string{"I like green tea with honey.", "i like GREEN tea, with honey", "My cat is called Miso."} {
				if _, _, err := tx.Upsert(owner, withDigest(store.Put{Kind: "note", Key: fmt.Sprint("k", i), Content: c})); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		settle(t, e)
		got := search(t, e, owner, "what tea do I like with honey?")
		if n := strings.Count(strings.ToLower(contents(got)), "green tea"); n != 1 {
			t.Errorf("local search max %d: the restated memory came %d times, want once: %q", max, n, contents(got))
		}
		closeEngine(t, e)
	}
}

// TestIndexHoldsOnlyOwnersPastLocalSearch: owners searched from their
// records stay out of the index; one that outgrows that is enrolled with all
// its memories, stays enrolled, and a rebuild keeps the same owners.
func TestIndexHoldsOnlyOwnersPastLocalSearch(t *testing.T) {
	e, err := openConfig(t, Config{Dir: t.TempDir(), Shards: 2, LockTimeout: 200 * time.Millisecond, LocalSearchMax: 3})
	if err != nil {
		t.Fatal(err)
	}
	defer closeEngine(t, e)
	small, large := e.OwnerID("small"), e.OwnerID("large")
	var largeIDs []uint64
	add := func(owner string, n int) {
		t.Helper()
		_, err := e.write(func(tx *store.Tx) error {
			for range n {
				m, _, err := tx.Upsert(owner, withDigest(store.Put{Kind: "note", Content: fmt.Sprintf("User keeps bees, hive %d", rand.Int())}))
				if err != nil {
					return err
				}
				if owner == large {
					largeIDs = append(largeIDs, m.ID)
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		settle(t, e)
	}
	check := func(when string, smallHeld bool, docs uint64) {
		t.Helper()
		for owner, want := range map[string]bool{small: smallHeld, large: true} {
			if held, err := e.index.Holds(owner); err != nil || held != want {
				t.Errorf("%s: index holds owner %s: %v (%v), want %v", when, owner[:6], held, err, want)
			}
		}
		if st, err := e.Stats(); err != nil || st.IndexedDocs != docs {
			t.Errorf("%s: %d documents indexed (%v), want %d", when, st.IndexedDocs, err, docs)
		}
		if got := search(t, e, large, "bees"); len(got) != len(largeIDs) {
			t.Errorf("%s: the large owner's search found %d, want %d", when, len(got), len(largeIDs))
		}
	}
	add(small, 3)
	add(large, 5)
	check("3 and 5 memories", false, 5)
	add(small, 1)
	check("the small owner grown to 4", true, 9)
	if err := e.Reindex(context.Background()); err != nil {
		t.Fatal(err)
	}
	check("after a rebuild", true, 9)
	// Shrunk below the limit, an owner stays enrolled and its deletes apply.
	_, err = e.write(func(tx *store.Tx) error {
		for _, id := range largeIDs[:3] {
			if err := tx.Purge(large, id); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	largeIDs = largeIDs[3:]
	settle(t, e)
	check("the large owner shrunk to 2", true, 6)

	// An owner past the limit that the index does not hold (yet, or while
	// its shard is rebuilt) is searched from its records.
	add(large, 3)
	shard := e.index.ShardOf(large)
	e.index.SetState(shard, index.Rebuilding)
	if got := search(t, e, large, "bees"); len(got) != 5 {
		t.Errorf("large owner during its shard's rebuild: %d memories found, want its 5 from its records", len(got))
	}
	e.index.SetState(shard, index.Ready)
}

// TestRestartAfterSmallOwnersReplaysNothing: changes of owners the index
// does not hold give no shard a document, yet a clean restart must not
// replay them: every shard records how far it is consistent.
func TestRestartAfterSmallOwnersReplaysNothing(t *testing.T) {
	dir := t.TempDir()
	e, err := openConfig(t, Config{Dir: dir, Shards: 4, LockTimeout: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	seedVaried(t, e, "few", 10, 5, 3)
	settle(t, e)
	last := e.store.LastSeq()
	closeEngine(t, e)
	if e, err = openConfig(t, Config{Dir: dir, Shards: 4, LockTimeout: 200 * time.Millisecond}); err != nil {
		t.Fatal(err)
	}
	defer closeEngine(t, e)
	for i := range e.index.K() {
		if applied, st := e.index.Applied(i); applied != last || st != index.Ready {
			t.Errorf("shard %d reopened at change %d (state %d), want %d: a restart would replay the rest", i, applied, st, last)
		}
	}
}

// TestStaleDigestsAreRenewed: records whose digest another analyzer made
// (or none) are searched by their text, finding the same memories, and the
// next open makes their digests again in the background.
func TestStaleDigestsAreRenewed(t *testing.T) {
	dir := t.TempDir()
	e := open(t, dir, 1)
	<-e.indexer.redigestDone // the new store's pass, done before there is anything
	owner := seedVaried(t, e, "stale", 1, 60, 7)[0]
	settle(t, e)
	queries := []string{"coffee hiking", "guitar sister", "garden", "sushi japan budget"}
	before := map[string]string{}
	for _, q := range queries {
		if before[q] = ids(search(t, e, owner, q)); before[q] == ids(nil) {
			t.Fatalf("%q finds nothing; the comparison would say nothing", q)
		}
	}
	// What an analyzer of another version would have left: a digest that
	// is not this version's, on every record, and no record of a pass.
	var all []uint64
	err := e.store.View(func(tx *store.Tx) error {
		return tx.PeekAll(owner, func(p *store.Peek) error { all = append(all, p.ID); return nil })
	})
	if err != nil {
		t.Fatal(err)
	}
	err = e.store.Update(func(tx *store.Tx) error {
		for i, id := range all {
			stale := []byte{index.DigestVersion + 1, 0}
			if i%2 == 0 {
				stale = nil
			}
			if err := tx.SetDigest(owner, id, stale); err != nil {
				return err
			}
		}
		return nil
	})
	if err == nil {
		err = e.store.SetLocalCursor(digestCursor, 0)
	}
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range queries {
		if got := ids(search(t, e, owner, q)); got != before[q] {
			t.Errorf("%q with stale digests: %s, want %s", q, got, before[q])
		}
	}
	closeEngine(t, e)

	e = open(t, dir, 1)
	defer closeEngine(t, e)
	stale := func() (n int) {
		e.store.View(func(tx *store.Tx) error {
			return tx.PeekAll(owner, func(p *store.Peek) error {
				if !index.CurrentDigest(p.Terms()) {
					n++
				}
				return nil
			})
		})
		return n
	}
	deadline := time.Now().Add(10 * time.Second)
	for stale() > 0 || e.store.LocalCursor(digestCursor) != index.DigestVersion {
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d records still have stale digests", stale(), len(all))
		}
		time.Sleep(10 * time.Millisecond)
	}
	settle(t, e) // the renewed digests are changes the index follows
	for _, q := range queries {
		if got := ids(search(t, e, owner, q)); got != before[q] {
			t.Errorf("%q with renewed digests: %s, want %s", q, got, before[q])
		}
	}
}

// TestPostingsFollowChanges: a large owner's postings, once built, see
// what is learned, edited, deleted and forgotten after, at the next search;
// and never another owner's memories.
func TestPostingsFollowChanges(t *testing.T) {
	e := open(t, t.TempDir(), 1)
	defer closeEngine(t, e)
	e.cfg.LocalSearchMax = 3
	owner, other := e.OwnerID("large"), e.OwnerID("other")
	put := func(owner, content string) uint64 { return rememberNote(t, e, owner, content) }
	for i := range 5 {
		put(owner, fmt.Sprintf("User keeps bees, hive %d", i))
		put(other, fmt.Sprintf("User keeps bees and goats, pen %d", i))
	}
	settle(t, e)
	waitPostings(t, e, owner)
	if got := search(t, e, owner, "bees"); len(got) != 5 {
		t.Fatalf("%d found, want 5", len(got))
	}
	id := put(owner, "User's sister collects stamps")
	if got := search(t, e, owner, "stamps"); len(got) != 1 || got[0].Memory.Content != "User's sister collects stamps" {
		t.Errorf("a memory learned after the postings were built: found %v", got)
	}
	if _, err := e.Edit(t.Context(), owner, id, func(m *store.Memory) error { m.Content = "User's sister collects coins"; return nil }); err != nil {
		t.Fatal(err)
	}
	if got := search(t, e, owner, "stamps"); len(got) != 0 {
		t.Errorf("an edited memory is still found by its old words: %v", got)
	}
	if got := search(t, e, owner, "coins"); len(got) != 1 {
		t.Errorf("an edited memory is not found by its new words: %v", got)
	}
	if err := e.Delete(t.Context(), owner, id, false); err != nil {
		t.Fatal(err)
	}
	if got := search(t, e, owner, "coins"); len(got) != 0 {
		t.Errorf("a deleted memory is found: %v", got)
	}
	for _, r := range search(t, e, owner, "bees goats pen") {
		if strings.Contains(r.Memory.Content, "goats") {
			t.Errorf("another owner's memory found: %q", r.Memory.Content)
		}
	}
	if _, err := e.Forget(t.Context(), owner); err != nil {
		t.Fatal(err)
	}
	if got := search(t, e, owner, "bees"); len(got) != 0 {
		t.Errorf("a forgotten owner's memories are found: %v", got)
	}
}

// rememberNote stores a note of owner's, and returns its id.
func rememberNote(t *testing.T, e *Engine, owner, content string) uint64 {
	t.Helper()
	res, err := e.Remember(t.Context(), OwnedPut{Owner: owner, Put: store.Put{Kind: "note", Content: content}})
	if err != nil {
		t.Fatal(err)
	}
	return res[0].Memory.ID
}

// waitPostings waits until the postings hold owner and have applied every
// change.
func waitPostings(t testing.TB, e *Engine, owner string) {
	t.Helper()
	if err := e.Sync(t.Context()); err != nil {
		t.Fatal(err)
	}
	if b := e.postings.cur.Load(); b == nil || b.p.Owner(owner) == nil {
		t.Fatal("the postings do not hold the owner")
	}
}

// TestPostingsWithinBudget: owners are admitted while they fit in the
// budget; one that does not is searched through its records or the index.
func TestPostingsWithinBudget(t *testing.T) {
	e := open(t, t.TempDir(), 1)
	defer closeEngine(t, e)
	e.cfg.LocalSearchMax = 3
	large, small := e.OwnerID("large"), e.OwnerID("small")
	for i := range 40 {
		if _, err := e.Remember(t.Context(), OwnedPut{Owner: large, Put: store.Put{Kind: "note", Content: fmt.Sprintf("User keeps bees, hive %d", i)}}); err != nil {
			t.Fatal(err)
		}
	}
	settle(t, e)
	e.UseSearchCache(40 * minPostingBytes / 2) // rebuilt within: no room for 40 memories
	deadline := time.Now().Add(10 * time.Second)
	for b := e.postings.cur.Load(); b == nil || !b.ready.Load() || b.budget != 40*minPostingBytes/2; b = e.postings.cur.Load() {
		if time.Now().After(deadline) {
			t.Fatal("the postings were not made again within the smaller budget")
		}
		time.Sleep(time.Millisecond)
	}
	if _, err := e.Remember(t.Context(), OwnedPut{Owner: small, Put: store.Put{Kind: "note", Content: "User keeps one goat"}}); err != nil {
		t.Fatal(err)
	}
	settle(t, e)
	b := e.postings.cur.Load()
	if b.p.Owner(large) != nil || b.p.Owner(small) == nil {
		t.Errorf("large owner held: %v, small owner held: %v; want only the small one", b.p.Owner(large) != nil, b.p.Owner(small) != nil)
	}
	if got := search(t, e, large, "bees"); len(got) == 0 {
		t.Fatal("nothing found through the index")
	}
	if got := search(t, e, small, "goat"); len(got) != 1 {
		t.Fatalf("the small owner's memory: %d found, want 1", len(got))
	}
}
