package engine

import (
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	zapx "github.com/blevesearch/zapx/v17"

	"github.com/caddy-memory/memory/extract"
	"github.com/caddy-memory/memory/store"
)

// storeFileHas reports whether the store file holds needle anywhere, free
// pages included.
func storeFileHas(t *testing.T, e *Engine, needle string) bool {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(e.cfg.Dir, "memory.db"))
	if err != nil {
		t.Fatalf("reading the store file: %v", err)
	}
	return bytes.Contains(raw, []byte(needle))
}

// termOf is word as the index analyses it.
func termOf(t *testing.T, e *Engine, word string) string {
	t.Helper()
	terms := e.index.Terms(word)
	if len(terms) != 1 {
		t.Fatalf("Terms(%q) = %q, want one term", word, terms)
	}
	return terms[0]
}

// segmentsHold reports whether any persisted index segment's content
// dictionary holds term (deleted documents' terms included), and how many
// segments it read. A segment the index is still writing (or merging) may
// not open yet; the walk is retried until every segment opens.
func segmentsHold(t *testing.T, dir, term string) (found bool, segments int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		found, segments, err := walkSegments(dir, term)
		if err == nil {
			return found, segments
		}
		if time.Now().After(deadline) {
			t.Fatal(err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func walkSegments(dir, term string) (found bool, segments int, err error) {
	err = filepath.WalkDir(filepath.Join(dir, "index"), func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			if os.IsNotExist(err) {
				return nil // merged away while we walked
			}
			return err
		}
		if d.IsDir() || !strings.HasSuffix(path, ".zap") {
			return nil
		}
		seg, err := (&zapx.ZapPlugin{}).Open(path)
		if err != nil {
			if os.IsNotExist(err) {
				return nil
			}
			return fmt.Errorf("opening segment %s: %w", path, err)
		}
		defer seg.Close()
		segments++
		dict, err := seg.Dictionary("content")
		if err != nil {
			return fmt.Errorf("dictionary of %s: %w", path, err)
		}
		ok, err := dict.Contains([]byte(term))
		if err != nil {
			return fmt.Errorf("looking up %q in %s: %w", term, path, err)
		}
		found = found || ok
		return nil
	})
	return found, segments, err
}

// memoriesOf lists an owner's memories (deleted ones included).
func memoriesOf(t *testing.T, e *Engine, owner string) []*store.Memory {
	t.Helper()
	var ms []*store.Memory
	if err := e.store.View(func(tx *store.Tx) error {
		return tx.ForEach(owner, func(m *store.Memory) error { ms = append(ms, m); return nil })
	}); err != nil {
		t.Fatal(err)
	}
	return ms
}

func proxiedTurn(owner, conversation string, turn int, user, answer string) *Job {
	return &Job{Owner: owner, Turn: extract.Turn{Dialect: "openai_chat", Conversation: conversation, Turn: turn, NewTurn: true,
		User: user, Response: chatJSON(answer), ContentType: "application/json", Time: time.Now(),
	}}
}

func TestForgetRemovesOwnerEverywhere(t *testing.T) {
	dir := t.TempDir()
	e := open(t, dir, 1) // both owners in the same shard
	defer closeEngine(t, e)
	ctx := context.Background()
	gone, kept := e.OwnerID("sk-gone"), e.OwnerID("sk-kept")
	const goneWord, lateWord, keptWord = "zqforgottenword", "zqlastminuteword", "zqkeptword"

	for i := range 3 {
		if !e.Enqueue(proxiedTurn(gone, "c-gone", i+1, fmt.Sprintf("My favorite color is %s number %d.", goneWord, i), "Noted: "+goneWord)) {
			t.Fatal("job dropped")
		}
	}
	if !e.Enqueue(proxiedTurn(kept, "c-kept", 1, "My favorite color is "+keptWord+".", "Noted: "+keptWord)) {
		t.Fatal("job dropped")
	}
	if _, err := e.Ingest(ctx, gone, "s-gone", []extract.Said{{Role: "user", Content: "Transcript mentioning " + goneWord, Ref: "m1"}}, true, false); err != nil {
		t.Fatal(err)
	}
	settle(t, e)

	// Controls: everything is where Forget must remove it from.
	if res := search(t, e, gone, goneWord); len(res) == 0 {
		t.Fatal("control failed: the owner's memories are not searchable before Forget")
	}
	if !storeFileHas(t, e, goneWord) {
		t.Fatal("control failed: the owner's word is not in the store file before Forget")
	}
	goneTerm := termOf(t, e, goneWord)
	if found, n := segmentsHold(t, dir, goneTerm); !found {
		t.Fatalf("control failed: term %q not in any of %d index segments before Forget", goneTerm, n)
	}
	if e.ConversationOf(gone, "chatcmpl-1") != "c-gone" {
		t.Fatal("control failed: the owner's conversation ref is not recorded")
	}

	// Turns handed over just before Forget must not land after it.
	for i := range 3 {
		if !e.Enqueue(proxiedTurn(gone, "c-gone", 10+i, fmt.Sprintf("I live in %s town %d.", lateWord, i), "Nice.")) {
			t.Fatal("job dropped")
		}
	}
	f, err := e.Forget(ctx, gone)
	if err != nil {
		t.Fatalf("Forget: %v", err)
	}
	if f.Memories == 0 || f.IndexShard != 0 || f.FileAfter <= 0 || f.FileAfter > f.FileBefore {
		t.Errorf("Forget reported %+v", f)
	}

	check := func(when string) {
		t.Helper()
		for _, w := range []string{goneWord, lateWord, "favorite color", "town"} {
			if res := search(t, e, gone, w); len(res) != 0 {
				t.Errorf("%s: search %q for the forgotten owner finds %q", when, w, contents(res))
			}
		}
		if ms := memoriesOf(t, e, gone); len(ms) != 0 {
			t.Errorf("%s: the store still holds %d memories of the forgotten owner, e.g. %q", when, len(ms), ms[0].Content)
		}
		if c := e.ConversationOf(gone, "chatcmpl-1"); c != "" {
			t.Errorf("%s: the forgotten owner's conversation ref still resolves to %q", when, c)
		}
		if got := contents(search(t, e, kept, keptWord)); !strings.Contains(got, keptWord) {
			t.Errorf("%s: the other owner's memory in the same shard is not found: %q", when, got)
		}
		if e.ConversationOf(kept, "chatcmpl-1") != "c-kept" {
			t.Errorf("%s: the other owner's conversation ref is lost", when)
		}
	}
	check("right after Forget")

	for _, w := range []string{goneWord, lateWord} {
		if storeFileHas(t, e, w) {
			t.Errorf("the store file still holds %q after Forget", w)
		}
		term := termOf(t, e, w)
		if found, n := segmentsHold(t, dir, term); found {
			t.Errorf("index term %q of the forgotten owner is still in a segment dictionary (%d segments)", term, n)
		}
	}
	if !storeFileHas(t, e, keptWord) {
		t.Errorf("the other owner's content is missing from the store file")
	}
	if found, n := segmentsHold(t, dir, termOf(t, e, keptWord)); !found {
		t.Errorf("the other owner's term is in none of %d segments after Forget", n)
	}

	// Nothing comes back once the background work has run again.
	settle(t, e)
	e.wake(e.wakeProcessor)
	settle(t, e)
	check("after Sync")
	if n := e.store.PendingJobs(); n != 0 {
		t.Errorf("%d jobs pending after Forget", n)
	}
	st, err := e.Stats()
	if err != nil {
		t.Fatal(err)
	}
	if st.Owners != 1 || uint64(st.Memories) != st.IndexedDocs {
		t.Errorf("after Forget: %d owners, %d memories, %d indexed; want 1 owner, all indexed", st.Owners, st.Memories, st.IndexedDocs)
	}
}

func TestIngest(t *testing.T) {
	e := open(t, t.TempDir(), 2)
	defer closeEngine(t, e)
	ctx := context.Background()
	owner := e.OwnerID("ingester")
	at := time.Date(2023, 5, 8, 13, 56, 0, 0, time.FixedZone("CEST", 2*3600))
	turns := []extract.Said{
		{Role: "Caroline", Content: "I live in Boston. The zqcarolword group was great.", Time: at, Ref: "D1:1"},
		{Role: "Melanie", Content: "I live in Denver. The zqmelword trip was fun.", Time: at.Add(time.Minute), Ref: "D1:2"},
		{Role: "assistant", Content: "I live in the cloud. The zqbotword answer.", Time: at.Add(2 * time.Minute), Ref: "D1:3"},
		{Role: "user", Content: "My favorite color is teal. The zquserword note.", Time: at.Add(3 * time.Minute)},
		{Role: "user", Content: "   "}, // nothing to store
	}
	res, err := e.Ingest(ctx, owner, "session-1", turns, true, false)
	if err != nil {
		t.Fatalf("Ingest: %v", err)
	}
	if res.Turns != 4 {
		t.Errorf("Ingest stored %d turns, want 4", res.Turns)
	}

	// Searchable as soon as Ingest returns, without Sync.
	want := map[string]struct{ content, ref string }{
		"zqcarolword": {"Caroline: I live in Boston. The zqcarolword group was great.", "D1:1"},
		"zqmelword":   {"Melanie: I live in Denver. The zqmelword trip was fun.", "D1:2"},
		"zqbotword":   {"Assistant: I live in the cloud. The zqbotword answer.", "D1:3"},
		"zquserword":  {"User: My favorite color is teal. The zquserword note.", ""},
	}
	for w, x := range want {
		found := false
		for _, r := range search(t, e, owner, w) {
			if r.Memory.Content == x.content {
				found = true
			}
		}
		if !found {
			t.Errorf("turn %q not searchable right after Ingest", x.content)
		}
	}

	var facts []*store.Memory
	turnsByContent := map[string]*store.Memory{}
	for _, m := range memoriesOf(t, e, owner) {
		if m.Kind == "turn" {
			turnsByContent[m.Content] = m
		} else {
			facts = append(facts, m)
		}
	}
	for i, c := range []string{"zqcarolword", "zqmelword", "zqbotword", "zquserword"} {
		m := turnsByContent[want[c].content]
		if m == nil {
			t.Errorf("no turn memory %q; turns: %v", want[c].content, keys(turnsByContent))
			continue
		}
		if m.Ref != want[c].ref || !m.CreatedAt.Equal(turns[i].Time) || m.Session != "session-1" {
			t.Errorf("turn %q: ref %q created %v session %q; want ref %q created %v", m.Content, m.Ref, m.CreatedAt, m.Session, want[c].ref, turns[i].Time)
		}
	}
	if len(turnsByContent) != 4 {
		t.Errorf("%d turn memories, want 4: %v", len(turnsByContent), keys(turnsByContent))
	}

	factKeys := map[string]string{}
	for _, m := range facts {
		factKeys[m.Content] = m.Key
		if strings.Contains(m.Content, "cloud") || strings.HasPrefix(m.Content, "Assistant") {
			t.Errorf("a fact was learned from the assistant's turn: %q", m.Content)
		}
	}
	for _, c := range []string{"Caroline lives in Boston.", "Melanie lives in Denver.", "User's favorite color is teal."} {
		if _, ok := factKeys[c]; !ok {
			t.Errorf("fact %q not learned; facts: %v", c, keys(factKeys))
		}
	}
	if k1, k2 := factKeys["Caroline lives in Boston."], factKeys["Melanie lives in Denver."]; k1 == k2 {
		t.Errorf("two speakers' locations share the key %q", k1)
	}
	if res.Facts != len(facts) {
		t.Errorf("Ingest reported %d facts, the store holds %d", res.Facts, len(facts))
	}
	if got := contents(search(t, e, owner, "Boston")); !strings.Contains(got, "Caroline lives in Boston.") {
		t.Errorf("the fact is not searchable right after Ingest: %q", got)
	}

	// Re-ingesting the same transcript changes nothing.
	before := memoriesOf(t, e, owner)
	again, err := e.Ingest(ctx, owner, "session-1", turns, true, false)
	if err != nil {
		t.Fatal(err)
	}
	after := memoriesOf(t, e, owner)
	if len(after) != len(before) {
		t.Errorf("re-ingesting grew the memories from %d to %d", len(before), len(after))
	}
	ids := func(ms []*store.Memory) []uint64 {
		var out []uint64
		for _, m := range ms {
			out = append(out, m.ID)
		}
		return out
	}
	if fmt.Sprint(ids(before)) != fmt.Sprint(ids(after)) {
		t.Errorf("re-ingesting changed the ids: %v -> %v", ids(before), ids(after))
	}
	if again.Turns != res.Turns {
		t.Errorf("re-ingest stored %d turns, first ingest %d", again.Turns, res.Turns)
	}
	// Neighbouring turns match through their context; copies would be
	// several memories holding the turn itself.
	copies := 0
	for _, r := range search(t, e, owner, "zqcarolword") {
		if strings.Contains(r.Memory.Content, "zqcarolword") {
			copies++
		}
	}
	if copies != 1 {
		t.Errorf("after re-ingest, search finds %d copies of the turn", copies)
	}
}

func TestIngestWithoutExtraction(t *testing.T) {
	e := open(t, t.TempDir(), 2)
	defer closeEngine(t, e)
	owner := e.OwnerID("no-facts")
	res, err := e.Ingest(context.Background(), owner, "s", []extract.Said{
		{Role: "user", Content: "I live in Boston. My favorite color is teal.", Ref: "1"},
		{Role: "Caroline", Content: "I live in Denver.", Ref: "2"},
	}, false, false)
	if err != nil {
		t.Fatal(err)
	}
	if res.Turns != 2 || res.Facts != 0 {
		t.Errorf("Ingest(extract=false) = %+v, want 2 turns, 0 facts", res)
	}
	for _, m := range memoriesOf(t, e, owner) {
		if m.Kind != "turn" {
			t.Errorf("extract=false stored a %s memory: %q", m.Kind, m.Content)
		}
	}
	if got := contents(search(t, e, owner, "Boston")); !strings.Contains(got, "User: I live in Boston.") {
		t.Errorf("turn not searchable: %q", got)
	}
}

func TestIngestLearnsNoFactsFromAssistantRoles(t *testing.T) {
	// Every role written as "Assistant" in the transcript is the assistant;
	// what it says about itself is not a fact about the owner's speakers.
	e := open(t, t.TempDir(), 1)
	defer closeEngine(t, e)
	for _, role := range []string{"assistant", "Assistant", "AI", "model", "system"} {
		owner := e.OwnerID("roles-" + role)
		if _, err := e.Ingest(context.Background(), owner, "s", []extract.Said{
			{Role: role, Content: "I live in the cloud. My favorite color is blue.", Ref: "1"},
		}, true, false); err != nil {
			t.Fatal(err)
		}
		for _, m := range memoriesOf(t, e, owner) {
			if m.Kind != "turn" {
				t.Errorf("role %q: learned the fact %q", role, m.Content)
			}
		}
	}
}

func keys[V any](m map[string]V) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func TestReindex(t *testing.T) {
	e := open(t, t.TempDir(), 4)
	defer closeEngine(t, e)
	ctx := context.Background()
	words := seed(t, e, 8, 5)
	// An inactive memory of each kind, which the index must not hold.
	owner := e.OwnerID("owner-0")
	past := time.Now().Add(-time.Hour)
	if _, err := e.write(func(tx *store.Tx) error {
		m, _, err := tx.Upsert(owner, withDigest(store.Put{Content: "Deleted zqdeletedword"}))
		if err != nil {
			return err
		}
		if _, err := tx.Delete(owner, m.ID); err != nil {
			return err
		}
		_, _, err = tx.Upsert(owner, withDigest(store.Put{Content: "Expired zqexpiredword", ExpiresAt: &past}))
		return err
	}); err != nil {
		t.Fatal(err)
	}
	settle(t, e)

	// Write and search while Reindex runs.
	var reindexing atomic.Bool
	reindexing.Store(true)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var mu sync.Mutex
	late := map[string][]string{}
	var during atomic.Int64
	errs := make(chan error, 8)
	wg.Add(2)
	go func() {
		defer wg.Done()
		writer := e.OwnerID("concurrent writer")
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			started := reindexing.Load()
			w := fmt.Sprintf("zqlate%dword", i)
			if _, err := e.write(func(tx *store.Tx) error {
				_, _, err := tx.Upsert(writer, withDigest(store.Put{Content: "Written during reindex " + w}))
				return err
			}); err != nil {
				errs <- err
				return
			}
			if started && reindexing.Load() {
				during.Add(1)
			}
			mu.Lock()
			late[writer] = append(late[writer], w)
			mu.Unlock()
			time.Sleep(2 * time.Millisecond)
		}
	}()
	go func() {
		defer wg.Done()
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			for o, ws := range words {
				w := ws[i%len(ws)]
				res, err := e.Search(ctx, SearchRequest{Owner: o, Query: w, Limit: 10})
				if err != nil {
					errs <- err
					return
				}
				if len(res) != 1 {
					errs <- fmt.Errorf("during Reindex, search %q found %d memories", w, len(res))
					return
				}
			}
		}
	}()
	err := e.Reindex(ctx)
	reindexing.Store(false)
	close(stop)
	wg.Wait()
	close(errs)
	if err != nil {
		t.Fatalf("Reindex: %v", err)
	}
	for err := range errs {
		t.Error(err)
	}
	if during.Load() == 0 {
		t.Fatal("no write happened during Reindex; the test proves nothing")
	}

	settle(t, e)
	assertAllSearchable(t, e, words)
	assertAllSearchable(t, e, late)
	for _, w := range []string{"zqdeletedword", "zqexpiredword"} {
		if res := search(t, e, owner, w); len(res) != 0 {
			t.Errorf("inactive memory found after Reindex: %q", contents(res))
		}
	}

	active := 0
	if err := e.store.View(func(tx *store.Tx) error {
		return tx.Owners(func(o string) error {
			c, err := tx.Count(o)
			active += c.Total
			return err
		})
	}); err != nil {
		t.Fatal(err)
	}
	st, err := e.Stats()
	if err != nil {
		t.Fatal(err)
	}
	if st.IndexedDocs != uint64(active) {
		t.Errorf("after Reindex the index holds %d documents, the store %d active memories", st.IndexedDocs, active)
	}
	if active != 8*5+len(late[e.OwnerID("concurrent writer")]) {
		t.Errorf("store holds %d active memories, want %d", active, 8*5+len(late[e.OwnerID("concurrent writer")]))
	}
}

func TestStats(t *testing.T) {
	dir := t.TempDir()
	e := open(t, dir, 3)
	words := seed(t, e, 2, 3)
	owner := e.OwnerID("owner-1")
	first := memoriesOf(t, e, owner)[0].ID
	if _, err := e.write(func(tx *store.Tx) error {
		_, err := tx.Delete(owner, first)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	settle(t, e)
	st, err := e.Stats()
	if err != nil {
		t.Fatal(err)
	}
	if len(words) != 2 {
		t.Fatal("seed did not make two owners")
	}
	if st.Owners != 2 || st.Memories != 6 || st.IndexedDocs != 5 || st.IndexLag != 0 || st.IndexShards != 3 {
		t.Errorf("stats = owners %d memories %d indexed %d lag %d shards %d; want 2, 6 (deleted included), 5, 0, 3",
			st.Owners, st.Memories, st.IndexedDocs, st.IndexLag, st.IndexShards)
	}
	if st.LastSeq != e.store.LastSeq() || st.FileBytes <= 0 || st.IndexBytes <= 0 || st.Storage != dir ||
		st.QueuedTurns != 0 || st.PendingJobs != 0 || len(st.Rebuilding) != 0 {
		t.Errorf("stats = %+v", st)
	}
	closeEngine(t, e)

	// A database keeps the shard count it was created with.
	e = open(t, dir, 7)
	defer closeEngine(t, e)
	settle(t, e)
	if st, err := e.Stats(); err != nil || st.IndexShards != 3 || st.IndexedDocs != 5 {
		t.Errorf("reopened with 7 shards configured: %+v, %v; want 3 shards, 5 documents", st, err)
	}
}

func TestHealth(t *testing.T) {
	e := open(t, t.TempDir(), 2)
	defer closeEngine(t, e)
	ctx := context.Background()
	h, err := e.Health(ctx)
	if err != nil {
		t.Fatalf("Health: %v", err)
	}
	if h.StoreLatency <= 0 || h.IndexLatency <= 0 {
		t.Errorf("latencies = %v / %v, want positive", h.StoreLatency, h.IndexLatency)
	}
	if err := e.index.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Health(ctx); err == nil || !strings.Contains(err.Error(), "index") {
		t.Errorf("Health with the index closed = %v, want an index error", err)
	}
}

func TestAcknowledgedWritesAreSearchableUnderConcurrentReads(t *testing.T) {
	// What the API's writes promise: once Write and WaitIndexed return, the
	// memory is searchable, also while others write and search at the same
	// time (as proxied requests do). A fresh engine each round, since the
	// indexer's first passes race the first writes.
	deadline := time.Now().Add(5 * time.Second)
	for round := 0; round < 30 && time.Now().Before(deadline); round++ {
		e := open(t, t.TempDir(), 2)
		ctx := context.Background()
		stop := make(chan struct{})
		var readers sync.WaitGroup
		for r := range 6 {
			readers.Add(1)
			go func() {
				defer readers.Done()
				owner := e.OwnerID(fmt.Sprintf("reader-%d", r))
				for {
					select {
					case <-stop:
						return
					default:
					}
					_, _ = e.Search(ctx, SearchRequest{Owner: owner, Query: "anything at all"})
					_ = e.store.View(func(*store.Tx) error { return nil })
				}
			}()
		}
		var writers sync.WaitGroup
		var mu sync.Mutex
		acked := map[string][]string{}
		errs := make(chan error, 8)
		for w := range 8 {
			writers.Add(1)
			go func() {
				defer writers.Done()
				owner := e.OwnerID(fmt.Sprintf("writer-%d", w))
				for i := range 3 {
					word := fmt.Sprintf("zqr%dw%dn%dword", round, w, i)
					seq, err := e.write(func(tx *store.Tx) error {
						_, _, err := tx.Upsert(owner, withDigest(store.Put{Content: "Concurrent " + word}))
						return err
					})
					if err == nil {
						err = e.WaitIndexed(ctx, seq)
					}
					if err != nil {
						errs <- err
						return
					}
					mu.Lock()
					acked[owner] = append(acked[owner], word)
					mu.Unlock()
				}
			}()
		}
		writers.Wait()
		close(stop)
		readers.Wait()
		close(errs)
		for err := range errs {
			t.Fatal(err)
		}
		var lost []string
		for owner, ws := range acked {
			for _, w := range ws {
				if res := search(t, e, owner, w); len(res) != 1 {
					lost = append(lost, w)
				}
			}
		}
		if len(lost) > 0 {
			settle(t, e) // not merely late: still missing once everything settled
			var still []string
			for owner, ws := range acked {
				for _, w := range ws {
					if res := search(t, e, owner, w); len(res) != 1 {
						still = append(still, w)
					}
				}
			}
			st, _ := e.Stats()
			t.Errorf("round %d: acknowledged memories %v were not searchable after WaitIndexed; after Sync still missing: %v "+
				"(store %d memories, index %d documents, index lag %d)", round, lost, still, st.Memories, st.IndexedDocs, st.IndexLag)
			closeEngine(t, e)
			return
		}
		closeEngine(t, e)
	}
}
