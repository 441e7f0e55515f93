package index_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/blevesearch/bleve/v2"

	"github.com/caddy-memory/memory/index"
)

var errBoom = errors.New("boom")

func openIndex(t testing.TB, dir string, k int) *index.Index {
	t.Helper()
	x, err := index.Open(dir, k, 200*time.Millisecond)
	if err != nil {
		t.Fatalf("Open(%s, %d): %v", dir, k, err)
	}
	t.Cleanup(func() { x.Close() })
	return x
}

func apply(t testing.TB, x *index.Index, seq uint64, docs ...index.Doc) {
	t.Helper()
	if err := x.Apply(docs, seq); err != nil {
		t.Fatalf("Apply(seq %d): %v", seq, err)
	}
}

// find searches and returns the hit ids in order.
func find(t testing.TB, x *index.Index, q index.Query) []uint64 {
	t.Helper()
	hits, err := x.Search(context.Background(), q)
	if err != nil {
		t.Fatalf("Search(%+v): %v", q, err)
	}
	return ids(hits)
}

func ids(hits []index.Hit) []uint64 {
	out := make([]uint64, 0, len(hits))
	for _, h := range hits {
		out = append(out, h.ID)
	}
	return out
}

func sorted(xs []uint64) []uint64 {
	out := append([]uint64(nil), xs...)
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

func sameSet(got []uint64, want ...uint64) bool {
	return fmt.Sprint(sorted(got)) == fmt.Sprint(sorted(want))
}

// ownersInShards returns n owner names that land in n different shards.
func ownersInShards(t testing.TB, x *index.Index, n int) []string {
	t.Helper()
	seen := map[int]bool{}
	var owners []string
	for i := 0; len(owners) < n && i < 10000; i++ {
		o := fmt.Sprintf("owner-%d", i)
		if s := x.ShardOf(o); !seen[s] {
			seen[s] = true
			owners = append(owners, o)
		}
	}
	if len(owners) < n {
		t.Fatalf("could not find %d owners in distinct shards", n)
	}
	return owners
}

func shardDir(dir string, i int) string { return filepath.Join(dir, fmt.Sprintf("shard-%03d", i)) }

func TestOpenCreatesShards(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "index")
	x := openIndex(t, dir, 3)
	if x.K() != 3 {
		t.Errorf("K() = %d, want 3", x.K())
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var shards []string
	for _, e := range entries {
		if e.IsDir() && strings.HasPrefix(e.Name(), "shard-") {
			shards = append(shards, e.Name())
		}
	}
	if len(shards) != 3 {
		t.Errorf("shard directories = %v, want 3", shards)
	}
	for i := 0; i < 3; i++ {
		if applied, st := x.Applied(i); applied != 0 || st != index.Ready {
			t.Errorf("new shard %d: applied %d state %v", i, applied, st)
		}
	}
	if x.DocCount() != 0 {
		t.Errorf("DocCount = %d", x.DocCount())
	}
	for _, k := range []int{0, -1} {
		if y, err := index.Open(t.TempDir(), k, 0); err == nil {
			y.Close()
			t.Errorf("Open with %d shards succeeded", k)
		}
	}
}

func TestShardOfIsStable(t *testing.T) {
	dir := t.TempDir()
	x := openIndex(t, dir, 8)
	used := map[int]bool{}
	for i := 0; i < 200; i++ {
		o := fmt.Sprintf("owner-%d", i)
		s := x.ShardOf(o)
		if s < 0 || s >= 8 {
			t.Fatalf("ShardOf(%q) = %d", o, s)
		}
		if x.ShardOf(o) != s {
			t.Fatalf("ShardOf(%q) not stable", o)
		}
		used[s] = true
	}
	if len(used) < 6 {
		t.Errorf("200 owners use only %d of 8 shards", len(used))
	}
	x.Close()
	y := openIndex(t, dir, 8)
	for i := 0; i < 200; i++ {
		o := fmt.Sprintf("owner-%d", i)
		if y.ShardOf(o) != x.ShardOf(o) {
			t.Errorf("ShardOf(%q) changed across reopen", o)
		}
	}
}

func TestApplyIndexesAndDeletes(t *testing.T) {
	x := openIndex(t, t.TempDir(), 1)
	apply(t, x, 1,
		index.Doc{ID: 1, Owner: "alice", Kind: "preference", Content: "I drink green tea every morning"},
		index.Doc{ID: 2, Owner: "alice", Kind: "habit", Content: "I take the tea with honey"},
	)
	if got := find(t, x, index.Query{Owner: "alice", Text: "tea"}); !sameSet(got, 1, 2) {
		t.Errorf("tea -> %v, want 1 and 2", got)
	}
	if x.DocCount() != 2 {
		t.Errorf("DocCount = %d, want 2", x.DocCount())
	}
	apply(t, x, 2, index.Doc{ID: 1, Owner: "alice", Delete: true})
	if got := find(t, x, index.Query{Owner: "alice", Text: "tea"}); !sameSet(got, 2) {
		t.Errorf("after delete tea -> %v, want 2", got)
	}
	// Re-indexing the same id replaces its text.
	apply(t, x, 3, index.Doc{ID: 2, Owner: "alice", Content: "I switched to black coffee"})
	if got := find(t, x, index.Query{Owner: "alice", Text: "tea"}); len(got) != 0 {
		t.Errorf("old text still found: %v", got)
	}
	if got := find(t, x, index.Query{Owner: "alice", Text: "coffee"}); !sameSet(got, 2) {
		t.Errorf("new text -> %v, want 2", got)
	}
	if x.DocCount() != 1 {
		t.Errorf("DocCount = %d, want 1", x.DocCount())
	}
	if applied, _ := x.Applied(0); applied != 3 {
		t.Errorf("Applied = %d, want 3", applied)
	}
}

func TestApplyIgnoresOldSequences(t *testing.T) {
	x := openIndex(t, t.TempDir(), 4)
	o := ownersInShards(t, x, 2)
	a, b := o[0], o[1]
	sa, sb := x.ShardOf(a), x.ShardOf(b)

	apply(t, x, 5, index.Doc{ID: 1, Owner: a, Content: "the red bicycle"})
	for i := 0; i < x.K(); i++ {
		applied, st := x.Applied(i)
		want := uint64(0)
		if i == sa {
			want = 5
		}
		if applied != want || st != index.Ready {
			t.Errorf("shard %d: applied %d state %v, want %d Ready", i, applied, st, want)
		}
	}

	// A replay (same seq) or an older batch is ignored for a's shard, but b's
	// shard has applied nothing and takes it.
	apply(t, x, 5, index.Doc{ID: 2, Owner: a, Content: "a blue bicycle"})
	apply(t, x, 3,
		index.Doc{ID: 1, Owner: a, Delete: true},
		index.Doc{ID: 3, Owner: a, Content: "a green bicycle"},
		index.Doc{ID: 4, Owner: b, Content: "b yellow bicycle"},
	)
	if got := find(t, x, index.Query{Owner: a, Text: "bicycle"}); !sameSet(got, 1) {
		t.Errorf("a's bicycles = %v, want only 1 (old batches ignored)", got)
	}
	if got := find(t, x, index.Query{Owner: b, Text: "bicycle"}); !sameSet(got, 4) {
		t.Errorf("b's bicycles = %v, want 4", got)
	}
	if applied, _ := x.Applied(sa); applied != 5 {
		t.Errorf("Applied(a) = %d, want 5", applied)
	}
	if applied, _ := x.Applied(sb); applied != 3 {
		t.Errorf("Applied(b) = %d, want 3", applied)
	}
}

func TestReopenKeepsDocumentsAndApplied(t *testing.T) {
	dir := t.TempDir()
	x, err := index.Open(dir, 4, 0)
	if err != nil {
		t.Fatal(err)
	}
	o := ownersInShards(t, x, 2)
	apply(t, x, 7, index.Doc{ID: 1, Owner: o[0], Content: "my dog is called Rex"})
	apply(t, x, 9, index.Doc{ID: 2, Owner: o[1], Content: "my cat is called Tom"})
	if err := x.MarkApplied(x.ShardOf(o[0]), 12); err != nil {
		t.Fatal(err)
	}
	if err := x.Close(); err != nil {
		t.Fatal(err)
	}

	y := openIndex(t, dir, 4)
	if applied, st := y.Applied(y.ShardOf(o[0])); applied != 12 || st != index.Ready {
		t.Errorf("Applied(o0) after reopen = %d %v, want 12 (MarkApplied)", applied, st)
	}
	if applied, _ := y.Applied(y.ShardOf(o[1])); applied != 9 {
		t.Errorf("Applied(o1) after reopen = %d, want 9", applied)
	}
	if got := find(t, y, index.Query{Owner: o[0], Text: "dog"}); !sameSet(got, 1) {
		t.Errorf("dog after reopen = %v", got)
	}
	if got := find(t, y, index.Query{Owner: o[1], Text: "cat"}); !sameSet(got, 2) {
		t.Errorf("cat after reopen = %v", got)
	}
	if y.DocCount() != 2 {
		t.Errorf("DocCount after reopen = %d", y.DocCount())
	}
}

func TestGarbageShardDirectoryIsRecreated(t *testing.T) {
	dir := t.TempDir()
	sd := shardDir(dir, 0)
	if err := os.MkdirAll(sd, 0o700); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"junk.txt", "root.bolt", "000000000001.zap"} {
		if err := os.WriteFile(filepath.Join(sd, name), []byte("this is not an index"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	x := openIndex(t, dir, 1)
	if applied, st := x.Applied(0); applied != 0 || st != index.Ready {
		t.Errorf("recreated shard: applied %d state %v", applied, st)
	}
	if _, err := os.Stat(filepath.Join(sd, "junk.txt")); !os.IsNotExist(err) {
		t.Errorf("garbage left in the recreated shard: %v", err)
	}
	apply(t, x, 1, index.Doc{ID: 1, Owner: "o", Content: "works after all"})
	if got := find(t, x, index.Query{Owner: "o", Text: "works"}); !sameSet(got, 1) {
		t.Errorf("recreated shard does not index: %v", got)
	}
}

func TestDamagedShardIsRecreatedEmpty(t *testing.T) {
	dir := t.TempDir()
	x, err := index.Open(dir, 2, 0)
	if err != nil {
		t.Fatal(err)
	}
	o := ownersInShards(t, x, 2)
	apply(t, x, 4, index.Doc{ID: 1, Owner: o[0], Content: "damaged shard text"},
		index.Doc{ID: 2, Owner: o[1], Content: "healthy shard text"})
	bad, good := x.ShardOf(o[0]), x.ShardOf(o[1])
	x.Close()

	if err := os.WriteFile(filepath.Join(shardDir(dir, bad), "index_meta.json"), []byte("{not json"), 0o600); err != nil {
		t.Fatal(err)
	}
	y := openIndex(t, dir, 2)
	if applied, st := y.Applied(bad); applied != 0 || st != index.Ready {
		t.Errorf("damaged shard after Open: applied %d state %v, want 0 Ready", applied, st)
	}
	if got := find(t, y, index.Query{Owner: o[0], Text: "text"}); len(got) != 0 {
		t.Errorf("damaged shard still answers %v", got)
	}
	if applied, _ := y.Applied(good); applied != 4 {
		t.Errorf("healthy shard applied %d, want 4", applied)
	}
	if got := find(t, y, index.Query{Owner: o[1], Text: "text"}); !sameSet(got, 2) {
		t.Errorf("healthy shard lost its documents: %v", got)
	}
}

func TestOtherMappingVersionIsRecreated(t *testing.T) {
	dir := t.TempDir()
	x, err := index.Open(dir, 1, 0)
	if err != nil {
		t.Fatal(err)
	}
	apply(t, x, 6, index.Doc{ID: 1, Owner: "o", Content: "built with the old mapping"})
	x.Close()

	b, err := bleve.Open(shardDir(dir, 0))
	if err != nil {
		t.Fatal(err)
	}
	v, _ := b.GetInternal([]byte("mapping_version"))
	if want := index.MappingVersion + "+" + index.SegmentFormat; string(v) != want {
		b.Close()
		t.Fatalf("shard records mapping_version %q, want %q", v, want)
	}
	if err := b.SetInternal([]byte("mapping_version"), []byte("old-"+index.MappingVersion)); err != nil {
		t.Fatal(err)
	}
	b.Close()

	assertRecreated(t, openIndex(t, dir, 1), "shard of another mapping")
}

// assertRecreated checks that shard 0 of x was started again empty, for the
// store to refill.
func assertRecreated(t *testing.T, x *index.Index, what string) {
	t.Helper()
	if applied, st := x.Applied(0); applied != 0 || st != index.Ready {
		t.Errorf("%s: applied %d state %v, want 0 Ready (to be refilled from the store)", what, applied, st)
	}
	if x.DocCount() != 0 {
		t.Errorf("%s kept %d docs", what, x.DocCount())
	}
}

// A shard written by the previous version (Bleve v2.5: zapx v16 segments,
// mapping_version "4") is recreated empty for the store to refill, so that
// every shard is written in the current segment format.
func TestShardOfPreviousSegmentFormatIsRecreated(t *testing.T) {
	dir := t.TempDir()
	old, err := bleve.NewUsing(shardDir(dir, 0), bleve.NewIndexMapping(), "scorch", "scorch",
		map[string]interface{}{"forceSegmentType": "zap", "forceSegmentVersion": 16})
	if err != nil {
		t.Fatal(err)
	}
	if err := old.SetInternal([]byte("mapping_version"), []byte(index.MappingVersion)); err != nil {
		t.Fatal(err)
	}
	if err := old.SetInternal([]byte("applied_seq"), []byte("9")); err != nil {
		t.Fatal(err)
	}
	if err := old.Index("1", map[string]interface{}{"owner": "o", "content": "written by zapx sixteen"}); err != nil {
		t.Fatal(err)
	}
	old.Close()

	x := openIndex(t, dir, 1)
	assertRecreated(t, x, "shard of the previous format")
	apply(t, x, 10, index.Doc{ID: 1, Owner: "o", Content: "written by zapx seventeen"})
	if got := find(t, x, index.Query{Owner: "o", Text: "seventeen"}); !sameSet(got, 1) {
		t.Errorf("recreated shard does not answer: %v", got)
	}
}

func TestSecondOpenDoesNotWipeHeldShards(t *testing.T) {
	dir := t.TempDir()
	x, err := index.Open(dir, 1, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer x.Close()
	apply(t, x, 3, index.Doc{ID: 1, Owner: "o", Content: "precious memory"})

	y, err := index.Open(dir, 1, 200*time.Millisecond)
	if err == nil {
		y.Close()
		t.Fatal("second Open of a held index succeeded")
	}
	if got := find(t, x, index.Query{Owner: "o", Text: "precious"}); !sameSet(got, 1) {
		t.Errorf("first handle after a failed second Open: %v", got)
	}
	x.Close()
	z := openIndex(t, dir, 1)
	if applied, _ := z.Applied(0); applied != 3 {
		t.Errorf("applied after the failed second Open = %d, want 3", applied)
	}
	if got := find(t, z, index.Query{Owner: "o", Text: "precious"}); !sameSet(got, 1) {
		t.Errorf("the failed second Open wiped the shard: %v", got)
	}
}

func TestSearchIsolatesOwnersInOneShard(t *testing.T) {
	x := openIndex(t, t.TempDir(), 1)
	const text = "I love hiking in the mountains with my dog Rex"
	apply(t, x, 1,
		index.Doc{ID: 1, Owner: "alice", Session: "s1", Kind: "preference", Content: text},
		index.Doc{ID: 2, Owner: "bob", Session: "s1", Kind: "preference", Content: text},
		index.Doc{ID: 3, Owner: "bob", Session: "s1", Kind: "note", Content: "alice owner bob hiking secrets"},
		index.Doc{ID: 4, Owner: "alice", Session: "s2", Kind: "note", Content: "hiking boots size 38"},
	)
	if got := find(t, x, index.Query{Owner: "alice", Text: "hiking"}); !sameSet(got, 1, 4) {
		t.Errorf("alice hiking -> %v, want 1 and 4", got)
	}
	if got := find(t, x, index.Query{Owner: "bob", Text: "hiking"}); !sameSet(got, 2, 3) {
		t.Errorf("bob hiking -> %v, want 2 and 3", got)
	}
	for _, owner := range []string{"", "carol", "*", "alice bob", "alice OR bob", "ALICE", "alic"} {
		if got := find(t, x, index.Query{Owner: owner, Text: "hiking mountains"}); len(got) != 0 {
			t.Errorf("owner %q sees %v", owner, got)
		}
	}
}

func TestQuerySyntaxIsPlainText(t *testing.T) {
	x := openIndex(t, t.TempDir(), 1)
	apply(t, x, 1,
		index.Doc{ID: 1, Owner: "alice", Session: "s1", Content: "alice likes foo and bar"},
		index.Doc{ID: 2, Owner: "bob", Session: "s1", Content: "bob secret foo bar baz owner content kind"},
		index.Doc{ID: 3, Owner: "bob", Session: "s1", Content: "anything at all x re"},
	)
	aliceIDs := map[uint64]bool{1: true}
	for _, q := range []string{
		"owner:bob", "owner:bob foo", "+foo -bar", "foo AND bar OR baz", "*", "f*", "?oo",
		"/re/", "/.*/", `"foo bar`, `foo"`, "(foo", "foo)", "((((", "))))", "foo^10 bar~2",
		"content:foo", "_id:2", "os:bob", "kind:note", "owner:* OR owner:bob", `\`, "{[}]", "!!", "-",
		"foo:bar:baz", "+owner:bob +content:secret", "\x1f", "bob\x1fs1", "",
	} {
		hits, err := x.Search(context.Background(), index.Query{Owner: "alice", Text: q})
		if err != nil {
			t.Errorf("query %q: %v", q, err)
			continue
		}
		for _, id := range ids(hits) {
			if !aliceIDs[id] {
				t.Errorf("query %q as alice leaks document %d", q, id)
			}
		}
	}
	// Words inside the syntax are still plain words.
	if got := find(t, x, index.Query{Owner: "alice", Text: "owner:bob +foo"}); !sameSet(got, 1) {
		t.Errorf("'owner:bob +foo' -> %v, want alice's foo", got)
	}
	if got := find(t, x, index.Query{Owner: "alice", Text: "-foo"}); !sameSet(got, 1) {
		t.Errorf("'-foo' -> %v, want alice's foo (no negation)", got)
	}
	// The session scope cannot be reached through the text either.
	for _, q := range []string{"bob\x1fs1", "os:bob\x1fs1 foo"} {
		hits, err := x.Search(context.Background(), index.Query{Owner: "alice", Session: "s1", OnlySession: true, Text: q})
		if err != nil {
			t.Errorf("query %q: %v", q, err)
		}
		for _, id := range ids(hits) {
			if !aliceIDs[id] {
				t.Errorf("session query %q leaks %d", q, id)
			}
		}
	}
}

func TestSearchOnlySession(t *testing.T) {
	x := openIndex(t, t.TempDir(), 1)
	apply(t, x, 1,
		index.Doc{ID: 1, Owner: "alice", Session: "s1", Content: "project deadline friday"},
		index.Doc{ID: 2, Owner: "alice", Session: "s2", Content: "project deadline monday"},
		index.Doc{ID: 3, Owner: "alice", Content: "project without a session"},
		index.Doc{ID: 4, Owner: "bob", Session: "s1", Content: "project deadline bob"},
	)
	if got := find(t, x, index.Query{Owner: "alice", Session: "s1", OnlySession: true, Text: "project"}); !sameSet(got, 1) {
		t.Errorf("alice s1 only -> %v, want 1", got)
	}
	if got := find(t, x, index.Query{Owner: "alice", Session: "s2", OnlySession: true, Text: "project"}); !sameSet(got, 2) {
		t.Errorf("alice s2 only -> %v, want 2", got)
	}
	if got := find(t, x, index.Query{Owner: "alice", Session: "", OnlySession: true, Text: "project"}); !sameSet(got, 3) {
		t.Errorf("alice no-session only -> %v, want 3", got)
	}
	if got := find(t, x, index.Query{Owner: "alice", Session: "s9", OnlySession: true, Text: "project"}); len(got) != 0 {
		t.Errorf("alice unknown session -> %v", got)
	}
	if got := find(t, x, index.Query{Owner: "alice", Session: "s1", Text: "project"}); !sameSet(got, 1, 2, 3) {
		t.Errorf("alice with session but not only -> %v, want all of alice's", got)
	}
	if got := find(t, x, index.Query{Owner: "bob", Session: "s1", OnlySession: true, Text: "project"}); !sameSet(got, 4) {
		t.Errorf("bob s1 only -> %v, want 4", got)
	}
}

func TestFillerAndStopWordsFindNothing(t *testing.T) {
	x := openIndex(t, t.TempDir(), 1)
	apply(t, x, 1,
		index.Doc{ID: 1, Owner: "o", Content: "Can you tell me please, I would like to know the answer"},
		index.Doc{ID: 2, Owner: "o", Content: "I eat pasta on Sundays"},
	)
	for _, q := range []string{
		"can you tell me please", "Could you please help me?", "the a an of to is it", "hi hello thanks ok",
		"  ", "?!...", "what do you think about it",
	} {
		if terms := x.Terms(q); len(terms) != 0 {
			t.Errorf("Terms(%q) = %v, want none", q, terms)
		}
		if got := find(t, x, index.Query{Owner: "o", Text: q}); len(got) != 0 {
			t.Errorf("filler query %q found %v", q, got)
		}
	}
	// A filler-laden question still searches for its topic.
	if got := find(t, x, index.Query{Owner: "o", Text: "can you please tell me when I eat pasta"}); !sameSet(got, 2) {
		t.Errorf("topic under fillers -> %v, want 2", got)
	}
	if terms := x.Terms("can you tell me what I like to eat today"); !contains(terms, "eat") || contains(terms, "tell") || contains(terms, "today") {
		t.Errorf("Terms of a filler question = %v, want eat without tell/today", terms)
	}
}

func contains(xs []string, x string) bool {
	for _, v := range xs {
		if v == x {
			return true
		}
	}
	return false
}

func TestStemming(t *testing.T) {
	x := openIndex(t, t.TempDir(), 1)
	apply(t, x, 1,
		index.Doc{ID: 1, Owner: "o", Content: "My sister lives in Lisbon"},
		index.Doc{ID: 2, Owner: "o", Content: "I am running a marathon"},
		index.Doc{ID: 3, Owner: "o", Content: "Alice's favourite cookies"},
	)
	for q, want := range map[string]uint64{
		"lived": 1, "living": 1, "live": 1, "runs": 2, "marathons": 2, "cookie": 3, "Alice": 3, "LISBON": 1,
	} {
		if got := find(t, x, index.Query{Owner: "o", Text: q}); !sameSet(got, want) {
			t.Errorf("%q -> %v, want %d", q, got, want)
		}
	}
}

func TestTermsAreCapped(t *testing.T) {
	x := openIndex(t, t.TempDir(), 1)
	var words []string
	for i := 0; i < 3*index.MaxQueryTerms; i++ {
		// Letters only, distinct stems, lengths 4..: "abcd", "abcde", ...
		words = append(words, strings.Repeat(string(rune('b'+i%20)), 3)+strings.Repeat("x", i/20)+"q"+string(rune('a'+i%26)))
	}
	terms := x.Terms(strings.Join(words, " "))
	if len(terms) != index.MaxQueryTerms {
		t.Fatalf("Terms of %d words = %d terms, want %d: %v", len(words), len(terms), index.MaxQueryTerms, terms)
	}
	seen := map[string]bool{}
	for _, term := range terms {
		if seen[term] {
			t.Errorf("duplicate term %q", term)
		}
		seen[term] = true
	}
	// The longest are kept: every term is at least as long as any dropped one.
	shortestKept := 1 << 30
	for _, term := range terms {
		shortestKept = min(shortestKept, len(term))
	}
	for _, w := range words {
		analysed := x.Terms(w)
		if len(analysed) != 1 {
			t.Fatalf("Terms(%q) = %v, want one term", w, analysed)
		}
		if a := analysed[0]; !seen[a] && len(a) > shortestKept {
			t.Errorf("dropped %q, longer than a kept term of length %d", a, shortestKept)
		}
	}
	if got := x.Terms("tea Tea TEA teas"); len(got) != 1 {
		t.Errorf("Terms(tea Tea TEA teas) = %v, want one term", got)
	}

	// A pasted page still finds a memory by its rare, long word, and does not error.
	apply(t, x, 1, index.Doc{ID: 1, Owner: "o", Content: "the photosynthesis homework"})
	page := strings.Repeat("cat dog sun car hat ", 50) + strings.Join(words, " ") + " photosynthesis"
	if got := find(t, x, index.Query{Owner: "o", Text: page}); !sameSet(got, 1) {
		t.Errorf("long query -> %v, want 1", got)
	}
}

func TestNoDocumentsNoHits(t *testing.T) {
	x := openIndex(t, t.TempDir(), 1)
	if got := find(t, x, index.Query{Owner: "nobody", Text: "anything tea coffee"}); len(got) != 0 {
		t.Errorf("empty index -> %v", got)
	}
	apply(t, x, 1, index.Doc{ID: 1, Owner: "somebody", Content: "tea coffee"})
	if got := find(t, x, index.Query{Owner: "nobody", Text: "tea coffee"}); len(got) != 0 {
		t.Errorf("owner without documents -> %v", got)
	}
	if got := find(t, x, index.Query{Owner: "somebody", Text: "juice"}); len(got) != 0 {
		t.Errorf("unmatched word -> %v", got)
	}
}

func TestNonEnglishText(t *testing.T) {
	x := openIndex(t, t.TempDir(), 1)
	apply(t, x, 1,
		index.Doc{ID: 1, Owner: "o", Content: "Ich wohne in München und liebe Käsespätzle."},
		index.Doc{ID: 2, Owner: "o", Content: "私は東京に住んでいます。"},
		index.Doc{ID: 3, Owner: "o", Content: "J'habite à Montréal depuis l'été dernier."},
		index.Doc{ID: 4, Owner: "o", Content: "Я живу в Москве"},
	)
	for q, want := range map[string]uint64{
		"München": 1, "käsespätzle": 1, "東京": 2, "Montréal": 3, "Москве": 4,
	} {
		if got := find(t, x, index.Query{Owner: "o", Text: q}); len(got) == 0 || got[0] != want {
			t.Errorf("%q -> %v, want %d first", q, got, want)
		}
	}
}

func TestBM25MoreMatchingTermsRankHigher(t *testing.T) {
	x := openIndex(t, t.TempDir(), 1)
	apply(t, x, 1,
		index.Doc{ID: 1, Owner: "o", Content: "my coffee mug is blue"},
		index.Doc{ID: 2, Owner: "o", Content: "the coffee grinder needs new beans"},
		index.Doc{ID: 3, Owner: "o", Content: "tea pot on the shelf"},
		index.Doc{ID: 4, Owner: "o", Content: "the coffee beans from the grinder taste burnt and the coffee grinder is old"},
	)
	hits, err := x.Search(context.Background(), index.Query{Owner: "o", Text: "coffee grinder beans"})
	if err != nil {
		t.Fatal(err)
	}
	got := ids(hits)
	if len(got) != 3 || got[2] != 1 {
		t.Fatalf("coffee grinder beans -> %v, want the one-term match (1) last of three", got)
	}
	for i := 1; i < len(hits); i++ {
		if hits[i].Score > hits[i-1].Score {
			t.Errorf("hits not best first: %+v", hits)
		}
	}
	if hits[2].Score >= hits[1].Score {
		t.Errorf("one-term match scores %v, not below three-term match %v", hits[2].Score, hits[1].Score)
	}
	if hits, _ := x.Search(context.Background(), index.Query{Owner: "o", Text: "coffee", Size: 2}); len(hits) != 2 {
		t.Errorf("Size 2 returned %d hits", len(hits))
	}
}

func TestRebuild(t *testing.T) {
	dir := t.TempDir()
	x, err := index.Open(dir, 2, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer x.Close()
	o := ownersInShards(t, x, 2)
	a, b := o[0], o[1]
	sa := x.ShardOf(a)
	apply(t, x, 5,
		index.Doc{ID: 1, Owner: a, Content: "stale apple"},
		index.Doc{ID: 2, Owner: a, Content: "kept apple"},
		index.Doc{ID: 3, Owner: a, Content: "old banana"},
		index.Doc{ID: 10, Owner: b, Content: "other apple"},
	)

	x.SetState(sa, index.Rebuilding)
	if applied, st := x.Applied(sa); applied != 5 || st != index.Rebuilding {
		t.Errorf("Applied while rebuilding = %d %v", applied, st)
	}
	if got := find(t, x, index.Query{Owner: a, Text: "apple"}); len(got) != 0 {
		t.Errorf("search of a rebuilding shard -> %v, want nothing", got)
	}
	apply(t, x, 6, index.Doc{ID: 4, Owner: a, Content: "skipped apple"}, index.Doc{ID: 11, Owner: b, Content: "second apple"})
	if applied, _ := x.Applied(sa); applied != 5 {
		t.Errorf("Apply touched a rebuilding shard: applied %d", applied)
	}
	// The other shard is unaffected.
	if got := find(t, x, index.Query{Owner: b, Text: "apple"}); !sameSet(got, 10, 11) {
		t.Errorf("other shard during rebuild -> %v", got)
	}

	err = x.Rebuild(sa, 8, func(add func(index.Doc) error) error {
		for _, d := range []index.Doc{
			{ID: 2, Owner: a, Content: "kept apple"},
			{ID: 3, Owner: a, Content: "new cherry"},
			{ID: 5, Owner: a, Content: "fresh apple"},
			{ID: 6, Owner: a, Content: "deleted apple", Delete: true},
		} {
			if err := add(d); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if applied, st := x.Applied(sa); applied != 8 || st != index.Ready {
		t.Errorf("after Rebuild: applied %d state %v, want 8 Ready", applied, st)
	}
	check := func(x *index.Index, when string) {
		t.Helper()
		if got := find(t, x, index.Query{Owner: a, Text: "apple"}); !sameSet(got, 2, 5) {
			t.Errorf("%s: apple -> %v, want exactly the fed 2 and 5", when, got)
		}
		if got := find(t, x, index.Query{Owner: a, Text: "banana"}); len(got) != 0 {
			t.Errorf("%s: old text of 3 still found: %v", when, got)
		}
		if got := find(t, x, index.Query{Owner: a, Text: "cherry"}); !sameSet(got, 3) {
			t.Errorf("%s: cherry -> %v, want 3", when, got)
		}
		if got := find(t, x, index.Query{Owner: b, Text: "apple"}); !sameSet(got, 10, 11) {
			t.Errorf("%s: other shard -> %v", when, got)
		}
		if n := x.DocCount(); n != 5 {
			t.Errorf("%s: DocCount = %d, want 5", when, n)
		}
	}
	check(x, "after Rebuild")
	if _, err := os.Stat(shardDir(dir, sa) + ".rebuild"); !os.IsNotExist(err) {
		t.Errorf("rebuild directory left behind: %v", err)
	}
	// The rebuilt shard and its position survive a restart.
	x.Close()
	x = openIndex(t, dir, 2)
	if applied, st := x.Applied(sa); applied != 8 || st != index.Ready {
		t.Errorf("rebuilt shard after reopen: applied %d state %v, want 8 Ready", applied, st)
	}
	check(x, "after Rebuild and reopen")
	// The rebuilt shard takes new changes again.
	apply(t, x, 8, index.Doc{ID: 7, Owner: a, Content: "ignored apple"})
	apply(t, x, 9, index.Doc{ID: 7, Owner: a, Content: "ninth pear"})
	if got := find(t, x, index.Query{Owner: a, Text: "pear"}); !sameSet(got, 7) {
		t.Errorf("Apply after Rebuild -> %v", got)
	}
	apply(t, x, 10, index.Doc{ID: 7, Owner: a, Delete: true})

	x.Close()
	y := openIndex(t, dir, 2)
	if applied, st := y.Applied(sa); applied != 10 || st != index.Ready {
		t.Errorf("rebuilt shard after reopen: applied %d state %v, want 10 Ready", applied, st)
	}
	check(y, "after reopen")
}

func TestFailedRebuildKeepsShard(t *testing.T) {
	dir := t.TempDir()
	x := openIndex(t, dir, 1)
	apply(t, x, 3, index.Doc{ID: 1, Owner: "o", Content: "survivor"})
	x.SetState(0, index.Rebuilding)
	err := x.Rebuild(0, 9, func(add func(index.Doc) error) error {
		if err := add(index.Doc{ID: 2, Owner: "o", Content: "half"}); err != nil {
			return err
		}
		return errBoom
	})
	if !errors.Is(err, errBoom) {
		t.Fatalf("Rebuild err = %v, want the feed's error", err)
	}
	if _, err := os.Stat(shardDir(dir, 0) + ".rebuild"); !os.IsNotExist(err) {
		t.Errorf("failed rebuild left its directory: %v", err)
	}
	if applied, _ := x.Applied(0); applied != 3 {
		t.Errorf("failed rebuild changed applied to %d", applied)
	}
	x.SetState(0, index.Ready)
	if got := find(t, x, index.Query{Owner: "o", Text: "survivor half"}); !sameSet(got, 1) {
		t.Errorf("after a failed rebuild -> %v, want the old contents", got)
	}
}

func TestRank(t *testing.T) {
	now := time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)
	yearAgo := now.AddDate(-1, 0, 0)

	t.Run("relevance beats priors", func(t *testing.T) {
		cs := []index.Candidate{
			{ID: 1, Score: 1.0, Kind: "preference", Updated: now, Mentions: 10},
			{ID: 2, Score: 2.0, Kind: "turn", Updated: yearAgo, Mentions: 1},
		}
		index.Rank(cs, now)
		if cs[0].ID != 2 {
			t.Errorf("a fresh, repeated fact with half the BM25 outranked the better match: %+v", cs)
		}
		if cs[0].Rank < cs[1].Rank {
			t.Errorf("not sorted best first: %+v", cs)
		}
	})
	t.Run("fact over turn", func(t *testing.T) {
		cs := []index.Candidate{
			{ID: 2, Score: 1, Kind: "turn", Updated: now, Mentions: 1},
			{ID: 1, Score: 1, Kind: "preference", Updated: now, Mentions: 1},
		}
		index.Rank(cs, now)
		if cs[0].ID != 1 {
			t.Errorf("turn outranked an equally relevant fact: %+v", cs)
		}
	})
	t.Run("recent over old", func(t *testing.T) {
		cs := []index.Candidate{
			{ID: 2, Score: 1, Kind: "note", Updated: yearAgo, Mentions: 1},
			{ID: 1, Score: 1, Kind: "note", Updated: now.Add(-time.Hour), Mentions: 1},
		}
		index.Rank(cs, now)
		if cs[0].ID != 1 {
			t.Errorf("year-old memory outranked a recent one: %+v", cs)
		}
	})
	t.Run("mentions", func(t *testing.T) {
		cs := []index.Candidate{
			{ID: 2, Score: 1, Kind: "note", Updated: now, Mentions: 1},
			{ID: 1, Score: 1, Kind: "note", Updated: now, Mentions: 3},
		}
		index.Rank(cs, now)
		if cs[0].ID != 1 {
			t.Errorf("a memory said once outranked one said three times: %+v", cs)
		}
	})
	t.Run("ties newer id first", func(t *testing.T) {
		cs := []index.Candidate{
			{ID: 3, Score: 1, Kind: "note", Updated: now},
			{ID: 9, Score: 1, Kind: "note", Updated: now},
			{ID: 5, Score: 1, Kind: "note", Updated: now},
		}
		index.Rank(cs, now)
		if cs[0].ID != 9 || cs[1].ID != 5 || cs[2].ID != 3 {
			t.Errorf("ties not newest first: %+v", cs)
		}
	})
	t.Run("priors are mild", func(t *testing.T) {
		cs := []index.Candidate{{ID: 1, Score: 1, Kind: "note", Updated: now, Mentions: 100}}
		index.Rank(cs, now)
		if cs[0].Rank < 1 || cs[0].Rank > 2 {
			t.Errorf("all priors together turn score 1 into %v", cs[0].Rank)
		}
	})
}

func TestClose(t *testing.T) {
	x, err := index.Open(t.TempDir(), 2, 0)
	if err != nil {
		t.Fatal(err)
	}
	apply(t, x, 1, index.Doc{ID: 1, Owner: "o", Content: "closing time"})
	if err := x.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if err := x.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	if _, err := x.Search(context.Background(), index.Query{Owner: "o", Text: "closing"}); !errors.Is(err, index.ErrClosed) {
		t.Errorf("Search after Close err = %v, want ErrClosed", err)
	}
	if err := x.Apply([]index.Doc{{ID: 2, Owner: "o", Content: "late"}}, 2); !errors.Is(err, index.ErrClosed) {
		t.Errorf("Apply after Close err = %v, want ErrClosed", err)
	}
	if err := x.MarkApplied(0, 5); !errors.Is(err, index.ErrClosed) {
		t.Errorf("MarkApplied after Close err = %v, want ErrClosed", err)
	}
	if err := x.Rebuild(0, 5, func(func(index.Doc) error) error { return nil }); !errors.Is(err, index.ErrClosed) {
		t.Errorf("Rebuild after Close err = %v, want ErrClosed", err)
	}
}

func TestConcurrentSearchApplyRebuild(t *testing.T) {
	x := openIndex(t, t.TempDir(), 2)
	o := ownersInShards(t, x, 2)
	a, b := o[0], o[1]
	apply(t, x, 1, index.Doc{ID: 1, Owner: a, Content: "base apple"}, index.Doc{ID: 2, Owner: b, Content: "base apple"})

	race := newRacers()
	for _, owner := range []string{a, b} {
		race.run(func() error {
			hits, err := x.Search(context.Background(), index.Query{Owner: owner, Text: "apple"})
			if err != nil {
				return err
			}
			for _, h := range hits {
				// a's ids are odd, b's even.
				if (owner == a) != (h.ID%2 == 1) {
					return fmt.Errorf("owner %s got %d", owner, h.ID)
				}
			}
			return nil
		})
	}
	seq := uint64(1)
	for i := 0; i < 20; i++ {
		seq++
		if err := x.Apply([]index.Doc{
			{ID: uint64(2*i + 3), Owner: a, Content: "more apple"},
			{ID: uint64(2*i + 4), Owner: b, Content: "more apple"},
		}, seq); err != nil {
			t.Fatal(err)
		}
		if i%5 == 0 {
			sa := x.ShardOf(a)
			x.SetState(sa, index.Rebuilding)
			if err := x.Rebuild(sa, seq, func(add func(index.Doc) error) error {
				return add(index.Doc{ID: 1, Owner: a, Content: "rebuilt apple"})
			}); err != nil {
				t.Fatal(err)
			}
		}
	}
	race.finish(t)
	if got := find(t, x, index.Query{Owner: b, Text: "apple"}); len(got) != 10 { // default size
		t.Errorf("b has %d hits, want 10 (size limit of 21)", len(got))
	}
}

// benchVocabulary makes n distinct, pronounceable, non-stop words.
func benchVocabulary(n int) []string {
	cons := []string{"b", "d", "f", "g", "k", "l", "m", "n", "p", "r", "s", "t", "v", "z"}
	vows := []string{"a", "e", "i", "o", "u"}
	seen := map[string]bool{}
	var words []string
	r := rand.New(rand.NewSource(1))
	for len(words) < n {
		var sb strings.Builder
		for s := 0; s < 2+r.Intn(3); s++ {
			sb.WriteString(cons[r.Intn(len(cons))])
			sb.WriteString(vows[r.Intn(len(vows))])
		}
		sb.WriteString(cons[r.Intn(len(cons))])
		w := sb.String()
		if !seen[w] {
			seen[w] = true
			words = append(words, w)
		}
	}
	return words
}

// benchSentences makes sentences of n words of a 5,000-word vocabulary,
// drawn with Zipf frequencies from r.
func benchSentences(r *rand.Rand) func(n int) string {
	vocab := benchVocabulary(5000)
	zipf := rand.NewZipf(r, 1.1, 2, uint64(len(vocab)-1))
	return func(n int) string {
		ws := make([]string, n)
		for i := range ws {
			ws[i] = vocab[zipf.Uint64()]
		}
		return strings.Join(ws, " ")
	}
}

func BenchmarkSearch(b *testing.B) {
	const (
		k      = 8
		docs   = 20000
		owners = 200
		batch  = 10000 // few batches: each one waits for an fsync
	)
	x, err := index.Open(b.TempDir(), k, 0)
	if err != nil {
		b.Fatal(err)
	}
	defer x.Close()
	r := rand.New(rand.NewSource(2))
	sentence := benchSentences(r)
	ownerName := func(i int) string { return fmt.Sprintf("%032x", i*7919+1) }
	start := time.Now()
	var pending []index.Doc
	seq := uint64(0)
	for id := 1; id <= docs; id++ {
		kind := "turn"
		if id%3 == 0 {
			kind = "preference"
		}
		pending = append(pending, index.Doc{
			ID: uint64(id), Owner: ownerName(id % owners), Session: fmt.Sprintf("s%d", id%5),
			Kind: kind, Content: sentence(8 + r.Intn(24)),
		})
		if len(pending) == batch {
			seq++
			if err := x.Apply(pending, seq); err != nil {
				b.Fatal(err)
			}
			pending = pending[:0]
		}
	}
	b.Logf("indexed %d docs for %d owners in %d shards in %v", x.DocCount(), owners, k, time.Since(start).Round(time.Millisecond))
	queries := make([]string, 256)
	for i := range queries {
		queries[i] = sentence(4)
	}
	ctx := context.Background()
	b.Run(fmt.Sprintf("K%d-docs%d-owners%d", k, docs, owners), func(b *testing.B) {
		b.ReportAllocs()
		hits := 0
		for i := 0; i < b.N; i++ {
			hs, err := x.Search(ctx, index.Query{Owner: ownerName(i % owners), Text: queries[i%len(queries)], Size: 10})
			if err != nil {
				b.Fatal(err)
			}
			hits += len(hs)
		}
		b.ReportMetric(float64(hits)/float64(b.N), "hits/op")
	})
	b.Run("Weights", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			sc := x.NewScorer(ownerName(i%owners), x.Terms(queries[i%len(queries)]))
			if _, err := sc.Weights(sc.All()); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkApply is indexing into one shard as the indexer does it: in a
// bulk load, batches of 300 turn-sized memories (a transcript and its
// context), each shard's share of one pass; while proxying, batches of 2,
// a shard's share of one tick's turns.
func BenchmarkApply(b *testing.B) {
	for _, batch := range []int{300, 2} {
		b.Run(fmt.Sprintf("batch=%d", batch), func(b *testing.B) {
			x, err := index.Open(b.TempDir(), 1, 0)
			if err != nil {
				b.Fatal(err)
			}
			defer x.Close()
			sentence := benchSentences(rand.New(rand.NewSource(3)))
			docs := make([]index.Doc, batch)
			id, seq := uint64(0), uint64(0)
			b.ReportAllocs()
			for b.Loop() {
				for i := range docs {
					id++
					docs[i] = index.Doc{ID: id, Owner: fmt.Sprintf("%032x", id%100), Session: "s", Kind: "turn",
						Content: "User: " + sentence(25) + "\nAssistant: " + sentence(40), Context: sentence(60)}
				}
				seq++
				if err := x.Apply(docs, seq); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(id), "µs/doc")
		})
	}
}
