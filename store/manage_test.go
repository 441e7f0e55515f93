package store_test

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/caddy-memory/memory/store"
)

// update runs fn in a read-write transaction and fails the test on error.
func update(t testing.TB, s *store.DB, fn func(*store.Tx) error) {
	t.Helper()
	if err := s.Update(fn); err != nil {
		t.Fatalf("Update: %v", err)
	}
}

// fileHas reports whether the store file holds needle anywhere, free pages
// included.
func fileHas(t testing.TB, s *store.DB, needle string) bool {
	t.Helper()
	raw, err := os.ReadFile(s.Path())
	if err != nil {
		t.Fatalf("reading the store file: %v", err)
	}
	return bytes.Contains(raw, []byte(needle))
}

func fileSize(t testing.TB, path string) int64 {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Size()
}

func countOf(t testing.TB, s *store.DB, owner string) store.Counts {
	t.Helper()
	var c store.Counts
	err := s.View(func(tx *store.Tx) error {
		var err error
		c, err = tx.Count(owner)
		return err
	})
	if err != nil {
		t.Fatalf("Count(%q): %v", owner, err)
	}
	return c
}

func importOne(t testing.TB, s *store.DB, owner string, m *store.Memory) (store.ImportOp, error) {
	t.Helper()
	var op store.ImportOp
	err := s.Update(func(tx *store.Tx) error {
		var err error
		op, err = tx.Import(owner, m, true, tx.LastID())
		return err
	})
	return op, err
}

func mustImport(t testing.TB, s *store.DB, owner string, m *store.Memory) store.ImportOp {
	t.Helper()
	op, err := importOne(t, s, owner, m)
	if err != nil {
		t.Fatalf("Import(%q, id %d): %v", owner, m.ID, err)
	}
	return op
}

func ownersList(t testing.TB, s *store.DB) []string {
	t.Helper()
	var out []string
	if err := s.View(func(tx *store.Tx) error {
		return tx.Owners(func(o string) error { out = append(out, o); return nil })
	}); err != nil {
		t.Fatal(err)
	}
	return out
}

func TestForgetOwnerRemovesEverythingOfThatOwnerOnly(t *testing.T) {
	s := newStore(t)
	gone, kept := s.OwnerID("gone"), s.OwnerID("kept")

	// The forgotten owner: a fact superseded twice (two history entries),
	// a transcript, a soft-deleted note, a conversation ref and two jobs.
	var goneIDs []uint64
	for _, city := range []string{"Lisbon", "Porto", "Faro"} {
		m, _ := upsert(t, s, gone, store.Put{Kind: "identity", Key: "identity:location", Content: "User lives in " + city + "."})
		goneIDs = append(goneIDs, m.ID)
	}
	turn, _ := upsert(t, s, gone, store.Put{Kind: "turn", Key: "turn:c:1", Content: "User: hello zqgoneword"})
	note, _ := upsert(t, s, gone, store.Put{Content: "A note to delete"})
	update(t, s, func(tx *store.Tx) error {
		if _, err := tx.Delete(gone, note.ID); err != nil {
			return err
		}
		return tx.SetConversation(gone, "resp-gone", "conv-gone")
	})
	goneIDs = append(goneIDs, turn.ID, note.ID)

	keptMem, _ := upsert(t, s, kept, store.Put{Kind: "turn", Content: "User: hello zqkeptword"})
	update(t, s, func(tx *store.Tx) error { return tx.SetConversation(kept, "resp-kept", "conv-kept") })
	if err := s.PutJobs([]store.Job{
		{Owner: gone, Data: []byte("gone job 1")},
		{Owner: kept, Data: []byte("kept job")},
		{Owner: gone, Data: []byte("gone job 2")},
	}); err != nil {
		t.Fatal(err)
	}
	if got := s.Conversation(gone, "resp-gone"); got != "conv-gone" {
		t.Fatalf("before forgetting, Conversation = %q, want conv-gone", got)
	}

	before := s.LastSeq()
	var f store.Forgotten
	update(t, s, func(tx *store.Tx) error {
		var err error
		f, err = tx.ForgetOwner(gone)
		return err
	})
	if want := (store.Forgotten{Memories: 3, History: 2, Jobs: 2}); f != want {
		t.Errorf("ForgetOwner = %+v, want %+v", f, want)
	}
	if got := s.LastSeq() - before; got != 3 {
		t.Errorf("ForgetOwner logged %d changes, want one per memory (3)", got)
	}
	cs, _ := changes(t, s, before)
	logged := map[uint64]bool{}
	for _, c := range cs {
		if c.Owner != gone {
			t.Errorf("change %d names owner %q, want the forgotten owner", c.Seq, c.Owner)
		}
		logged[c.ID] = true
	}
	for _, id := range []uint64{goneIDs[0], turn.ID, note.ID} {
		if !logged[id] {
			t.Errorf("removal of memory %d not logged; logged %v", id, logged)
		}
	}

	if ms := all(t, s, gone); len(ms) != 0 {
		t.Errorf("forgotten owner still has %d memories", len(ms))
	}
	for _, id := range goneIDs {
		if o, err := ownerOf(s, id); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("OwnerOf(%d) = %q, %v; want ErrNotFound", id, o, err)
		}
		if _, err := get(t, s, gone, id); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("Get(forgotten, %d) = %v, want ErrNotFound", id, err)
		}
	}
	if got := s.Conversation(gone, "resp-gone"); got != "" {
		t.Errorf("forgotten conversation ref still resolves to %q", got)
	}
	if got := countOf(t, s, gone); got.Total+got.Deleted+got.Expired != 0 {
		t.Errorf("Count(forgotten) = %+v, want nothing", got)
	}
	if contains(ownersList(t, s), gone) {
		t.Errorf("forgotten owner still listed by Owners")
	}

	jobs, err := s.Jobs(10)
	if err != nil {
		t.Fatal(err)
	}
	if len(jobs) != 1 || jobs[0].Owner != kept || string(jobs[0].Data) != "kept job" {
		t.Errorf("jobs after forgetting = %s, want only the other owner's", jobData(jobs))
	}

	// The other owner is untouched.
	if m := mustGet(t, s, kept, keptMem.ID); m.Content != "User: hello zqkeptword" {
		t.Errorf("other owner's memory changed: %+v", m)
	}
	if o, err := ownerOf(s, keptMem.ID); err != nil || o != kept {
		t.Errorf("OwnerOf(other owner's memory) = %q, %v", o, err)
	}
	if got := s.Conversation(kept, "resp-kept"); got != "conv-kept" {
		t.Errorf("other owner's conversation ref = %q, want conv-kept", got)
	}

	// The forgotten owner can start again from nothing.
	m, op := upsert(t, s, gone, store.Put{Kind: "identity", Key: "identity:location", Content: "User lives in Braga."})
	if op != store.Created || len(m.History) != 0 || m.Mentions != 1 {
		t.Errorf("first memory after forgetting: op %s, %+v; want a fresh memory", op, m)
	}
}

func TestForgetUnknownOwnerIsNoOp(t *testing.T) {
	s := newStore(t)
	kept := s.OwnerID("kept")
	upsert(t, s, kept, store.Put{Content: "Still here"})
	if err := s.PutJobs([]store.Job{{Owner: kept, Data: []byte("job")}}); err != nil {
		t.Fatal(err)
	}
	before := s.LastSeq()
	var f store.Forgotten
	update(t, s, func(tx *store.Tx) error {
		var err error
		f, err = tx.ForgetOwner(s.OwnerID("nobody"))
		return err
	})
	if f != (store.Forgotten{}) {
		t.Errorf("ForgetOwner(unknown) = %+v, want zero counts", f)
	}
	if s.LastSeq() != before {
		t.Errorf("ForgetOwner(unknown) logged changes: %d -> %d", before, s.LastSeq())
	}
	if len(all(t, s, kept)) != 1 || s.PendingJobs() != 1 {
		t.Errorf("forgetting an unknown owner touched another owner's data")
	}
}

func TestCompactScrubsDeletedBytes(t *testing.T) {
	s := newStore(t)
	gone, kept := s.OwnerID("gone"), s.OwnerID("kept")
	const forgotten, purged = "zqforgottensecret", "zqpurgedsecret"

	// Enough data that the file grows well beyond its minimum size.
	filler := strings.Repeat("padding ", 1200)
	update(t, s, func(tx *store.Tx) error {
		for i := range 300 {
			if _, _, err := tx.Upsert(gone, store.Put{Content: fmt.Sprintf("%s %d %s", forgotten, i, filler)}); err != nil {
				return err
			}
		}
		return nil
	})
	doomed, _ := upsert(t, s, kept, store.Put{Content: "Purge me: " + purged})
	var keptIDs []uint64
	for i := range 5 {
		m, _ := upsert(t, s, kept, store.Put{Content: fmt.Sprintf("Keep me %d: zqkeptsecret", i)})
		keptIDs = append(keptIDs, m.ID)
	}
	lastSeq := s.LastSeq()

	update(t, s, func(tx *store.Tx) error {
		if _, err := tx.ForgetOwner(gone); err != nil {
			return err
		}
		return tx.Purge(kept, doomed.ID)
	})
	// Control: bbolt frees pages without scrubbing them.
	if !fileHas(t, s, forgotten) || !fileHas(t, s, purged) {
		t.Fatalf("control failed: the deleted bytes are already gone before Compact (forgotten %v, purged %v)",
			fileHas(t, s, forgotten), fileHas(t, s, purged))
	}

	sizeBefore := fileSize(t, s.Path())
	before, after, err := s.Compact()
	if err != nil {
		t.Fatalf("Compact: %v", err)
	}
	if before != sizeBefore {
		t.Errorf("Compact reports %d bytes before, the file had %d", before, sizeBefore)
	}
	if got := fileSize(t, s.Path()); got != after {
		t.Errorf("Compact reports %d bytes after, the file has %d", after, got)
	}
	if after >= before {
		t.Errorf("Compact did not shrink a file that lost most of its data: %d -> %d bytes", before, after)
	}
	if fileHas(t, s, forgotten) {
		t.Errorf("the forgotten owner's content is still in the file after Compact")
	}
	if fileHas(t, s, purged) {
		t.Errorf("the purged memory's content is still in the file after Compact")
	}
	if _, err := os.Stat(s.Path() + ".compact"); !os.IsNotExist(err) {
		t.Errorf("Compact left its temporary file behind: %v", err)
	}

	// Everything live survives, numbering continues, and the store works.
	for i, id := range keptIDs {
		if m := mustGet(t, s, kept, id); m.Content != fmt.Sprintf("Keep me %d: zqkeptsecret", i) {
			t.Errorf("memory %d after Compact = %q", id, m.Content)
		}
	}
	if s.LastSeq() < lastSeq {
		t.Errorf("the change sequence went back from %d to %d", lastSeq, s.LastSeq())
	}
	m, op := upsert(t, s, kept, store.Put{Content: "Written after Compact"})
	if op != store.Created || m.ID <= keptIDs[len(keptIDs)-1] {
		t.Errorf("write after Compact: op %s, id %d; want a new id above %d", op, m.ID, keptIDs[len(keptIDs)-1])
	}
	if got := mustGet(t, s, kept, m.ID); got.Content != "Written after Compact" {
		t.Errorf("read after Compact = %q", got.Content)
	}
	if c := countOf(t, s, kept); c.Total != 6 {
		t.Errorf("other owner has %d memories after Compact, want 6", c.Total)
	}

	// A second Compact of a compact file does not grow it.
	b2, a2, err := s.Compact()
	if err != nil {
		t.Fatal(err)
	}
	if a2 > b2 {
		t.Errorf("Compact grew the file: %d -> %d bytes", b2, a2)
	}

	// And the result survives a reopen.
	path := s.Path()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s2 := openStore(t, path)
	if c := countOf(t, s2, kept); c.Total != 6 {
		t.Errorf("after reopening, other owner has %d memories, want 6", c.Total)
	}
}

func TestCompactWithConcurrentReadersAndWriters(t *testing.T) {
	s := newStore(t)
	owner := s.OwnerID("busy")
	for i := range 50 {
		upsert(t, s, owner, store.Put{Content: fmt.Sprintf("seed %d", i)})
	}

	stop := make(chan struct{})
	var wg sync.WaitGroup
	var mu sync.Mutex
	written := map[uint64]string{}
	var reads, writes atomic.Int64
	errs := make(chan error, 16)
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				content := fmt.Sprintf("writer %d item %d", w, i)
				var id uint64
				err := s.Update(func(tx *store.Tx) error {
					m, _, err := tx.Upsert(owner, store.Put{Content: content})
					if m != nil {
						id = m.ID
					}
					return err
				})
				if err != nil {
					errs <- fmt.Errorf("writer: %w", err)
					return
				}
				writes.Add(1)
				mu.Lock()
				written[id] = content
				mu.Unlock()
			}
		}()
	}
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				err := s.View(func(tx *store.Tx) error {
					c, err := tx.Count(owner)
					if err == nil && c.Total < 50 {
						err = fmt.Errorf("a reader saw %d memories, fewer than the 50 seeded", c.Total)
					}
					return err
				})
				if err != nil {
					errs <- fmt.Errorf("reader: %w", err)
					return
				}
				reads.Add(1)
			}
		}()
	}

	done := make(chan error, 1)
	go func() {
		for range 3 {
			time.Sleep(20 * time.Millisecond)
			if _, _, err := s.Compact(); err != nil {
				done <- err
				return
			}
		}
		time.Sleep(20 * time.Millisecond)
		done <- nil
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("Compact under load: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("Compact under concurrent load did not finish in 30 s (deadlock?)")
	}
	close(stop)
	waited := make(chan struct{})
	go func() { wg.Wait(); close(waited) }()
	select {
	case <-waited:
	case <-time.After(30 * time.Second):
		t.Fatal("readers and writers did not stop after Compact (deadlock?)")
	}
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if reads.Load() == 0 || writes.Load() == 0 {
		t.Fatalf("no concurrent work happened: %d reads, %d writes", reads.Load(), writes.Load())
	}
	// Every acknowledged write is in the store.
	for id, content := range written {
		if m, err := get(t, s, owner, id); err != nil || m.Content != content {
			t.Errorf("acknowledged write %d (%q) lost across Compact: %v", id, content, err)
		}
	}
	if c := countOf(t, s, owner); c.Total != 50+len(written) {
		t.Errorf("store holds %d memories, want %d", c.Total, 50+len(written))
	}
}

func TestScanAfterAndEarlyStop(t *testing.T) {
	s := newStore(t)
	a, b := s.OwnerID("a"), s.OwnerID("b")
	var ids []uint64
	for i := range 5 {
		m, _ := upsert(t, s, a, store.Put{Content: fmt.Sprintf("a%d", i)})
		ids = append(ids, m.ID)
		upsert(t, s, b, store.Put{Content: fmt.Sprintf("b%d", i)}) // interleaved ids
	}
	scan := func(owner string, after uint64, max int) []uint64 {
		t.Helper()
		var got []uint64
		err := s.View(func(tx *store.Tx) error {
			return tx.Scan(owner, after, func(m *store.Memory) (bool, error) {
				if m.Owner != owner {
					t.Errorf("Scan(%q) yielded a memory of %q", owner, m.Owner)
				}
				got = append(got, m.ID)
				return len(got) < max, nil
			})
		})
		if err != nil {
			t.Fatalf("Scan: %v", err)
		}
		return got
	}
	if got := scan(a, 0, 100); !reflect.DeepEqual(got, ids) {
		t.Errorf("Scan(after 0) = %v, want %v", got, ids)
	}
	if got := scan(a, ids[1], 100); !reflect.DeepEqual(got, ids[2:]) {
		t.Errorf("Scan(after %d) = %v, want %v", ids[1], got, ids[2:])
	}
	// after need not be an id of the owner: b's ids sit between a's.
	if got := scan(a, ids[1]+1, 100); !reflect.DeepEqual(got, ids[2:]) {
		t.Errorf("Scan(after %d) = %v, want %v", ids[1]+1, got, ids[2:])
	}
	if got := scan(a, ids[4], 100); len(got) != 0 {
		t.Errorf("Scan(after the last id) = %v, want nothing", got)
	}
	if got := scan(a, 0, 2); !reflect.DeepEqual(got, ids[:2]) {
		t.Errorf("Scan stopping after 2 = %v, want %v", got, ids[:2])
	}
	if got := scan(s.OwnerID("nobody"), 0, 100); len(got) != 0 {
		t.Errorf("Scan(unknown owner) = %v", got)
	}
	// Paging with the last id seen as cursor visits each memory once.
	var paged []uint64
	for after := uint64(0); ; {
		page := scan(a, after, 2)
		if len(page) == 0 {
			break
		}
		paged = append(paged, page...)
		after = page[len(page)-1]
	}
	if !reflect.DeepEqual(paged, ids) {
		t.Errorf("paging by 2 = %v, want %v", paged, ids)
	}
	// An error from fn stops the scan and is returned.
	err := s.View(func(tx *store.Tx) error {
		return tx.Scan(a, 0, func(*store.Memory) (bool, error) { return true, errBoom })
	})
	if !errors.Is(err, errBoom) {
		t.Errorf("Scan returned %v, want fn's error", err)
	}
}

func TestOwnersFrom(t *testing.T) {
	s := newStore(t)
	for _, o := range []string{"carol", "alice", "bob", "dave"} {
		upsert(t, s, o, store.Put{Content: "hello from " + o})
	}
	from := func(start string, max int) []string {
		t.Helper()
		var got []string
		err := s.View(func(tx *store.Tx) error {
			return tx.OwnersFrom(start, func(o string) (bool, error) {
				got = append(got, o)
				return len(got) < max, nil
			})
		})
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	for _, c := range []struct {
		start string
		max   int
		want  []string
	}{
		{"", 10, []string{"alice", "bob", "carol", "dave"}},
		{"bob", 10, []string{"bob", "carol", "dave"}}, // at or after
		{"bz", 10, []string{"carol", "dave"}},
		{"e", 10, nil},
		{"", 2, []string{"alice", "bob"}},
		{"carol", 1, []string{"carol"}},
	} {
		if got := from(c.start, c.max); !reflect.DeepEqual(got, c.want) {
			t.Errorf("OwnersFrom(%q) stopping after %d = %v, want %v", c.start, c.max, got, c.want)
		}
	}
}

func TestCount(t *testing.T) {
	s := newStore(t)
	owner := s.OwnerID("counted")
	past := time.Now().Add(-time.Hour)
	future := time.Now().Add(time.Hour)
	upsert(t, s, owner, store.Put{Kind: "turn", Content: "turn one"})
	upsert(t, s, owner, store.Put{Kind: "turn", Content: "turn two"})
	upsert(t, s, owner, store.Put{Kind: "identity", Content: "User lives in Lisbon."})
	upsert(t, s, owner, store.Put{Kind: "note", Content: "expires later", ExpiresAt: &future})
	upsert(t, s, owner, store.Put{Kind: "note", Content: "expired", ExpiresAt: &past})
	del, _ := upsert(t, s, owner, store.Put{Kind: "turn", Content: "deleted turn"})
	// Deleted and expired: counted as deleted.
	both, _ := upsert(t, s, owner, store.Put{Kind: "note", Content: "deleted and expired", ExpiresAt: &past})
	update(t, s, func(tx *store.Tx) error {
		if _, err := tx.Delete(owner, del.ID); err != nil {
			return err
		}
		_, err := tx.Delete(owner, both.ID)
		return err
	})
	upsert(t, s, s.OwnerID("other"), store.Put{Kind: "turn", Content: "not counted"})

	want := store.Counts{Total: 4, Deleted: 2, Expired: 1, ByKind: map[string]int{"turn": 2, "identity": 1, "note": 1}}
	if got := countOf(t, s, owner); !reflect.DeepEqual(got, want) {
		t.Errorf("Count = %+v, want %+v", got, want)
	}
	if got := countOf(t, s, s.OwnerID("nobody")); got.Total != 0 || got.Deleted != 0 || got.Expired != 0 || len(got.ByKind) != 0 {
		t.Errorf("Count(unknown owner) = %+v, want zeros", got)
	}
}

func TestImportKeepsNewID(t *testing.T) {
	s := newStore(t)
	owner := s.OwnerID("importer")
	created := time.Date(2024, 3, 1, 10, 0, 0, 0, time.UTC)
	updated := time.Date(2024, 5, 2, 11, 30, 0, 123000000, time.UTC)
	expires := time.Date(2099, 1, 1, 0, 0, 0, 0, time.UTC)
	deleted := time.Date(2024, 6, 3, 12, 0, 0, 0, time.UTC)
	in := &store.Memory{
		ID: 500, Owner: "whoever-exported-it", Session: "s-1", Kind: "identity", Key: "identity:location",
		Content: "  User lives in Porto.  ", Ref: "msg-9", Meta: map[string]string{"turn": "t-1", "x": "y"},
		CreatedAt: created, UpdatedAt: updated, ExpiresAt: &expires, DeletedAt: &deleted,
		Mentions: 7, Version: 3, Seq: 99999,
		History: []store.Version{
			{Content: "User lives in Lisbon.", Ref: "msg-1", Session: "s-0", At: created},
			{Content: "User lives in Faro.", Ref: "msg-5", Session: "s-1", At: created.Add(time.Hour)},
		},
	}
	before := s.LastSeq()
	if op := mustImport(t, s, owner, in); op != store.Imported {
		t.Errorf("Import of a free id = %s, want imported", op)
	}
	if s.LastSeq() != before+1 {
		t.Errorf("Import logged %d changes, want 1", s.LastSeq()-before)
	}
	cs, _ := changes(t, s, before)
	if len(cs) != 1 || cs[0].Owner != owner || cs[0].ID != 500 {
		t.Errorf("Import logged %+v, want one change for memory 500 of the owner", cs)
	}

	m := mustGet(t, s, owner, 500)
	if o, err := ownerOf(s, 500); err != nil || o != owner {
		t.Errorf("OwnerOf(500) = %q, %v", o, err)
	}
	if m.Owner != owner || m.Content != "User lives in Porto." || m.Key != "identity:location" ||
		m.Kind != "identity" || m.Session != "s-1" || m.Ref != "msg-9" {
		t.Errorf("imported fields = %+v", m)
	}
	if !m.CreatedAt.Equal(created) || !m.UpdatedAt.Equal(updated) {
		t.Errorf("times = %v / %v, want %v / %v", m.CreatedAt, m.UpdatedAt, created, updated)
	}
	if m.ExpiresAt == nil || !m.ExpiresAt.Equal(expires) || m.DeletedAt == nil || !m.DeletedAt.Equal(deleted) {
		t.Errorf("expires_at / deleted_at = %v / %v", m.ExpiresAt, m.DeletedAt)
	}
	if m.Mentions != 7 || m.Version != 3 {
		t.Errorf("mentions %d version %d, want 7 and 3", m.Mentions, m.Version)
	}
	if !reflect.DeepEqual(m.Meta, map[string]string{"turn": "t-1", "x": "y"}) {
		t.Errorf("meta = %v", m.Meta)
	}
	if len(m.History) != 2 || m.History[0].Content != "User lives in Lisbon." || m.History[0].Ref != "msg-1" ||
		m.History[0].Session != "s-0" || !m.History[0].At.Equal(created) || m.History[1].Content != "User lives in Faro." {
		t.Errorf("history = %+v", m.History)
	}
	if m.Seq != before+1 {
		t.Errorf("seq = %d, want the change's %d (not the exported one)", m.Seq, before+1)
	}
	if c := countOf(t, s, owner); c.Deleted != 1 || c.Total != 0 {
		t.Errorf("an imported deleted memory counts as %+v", c)
	}

	// The next memory is numbered after the imported one.
	n, _ := upsert(t, s, owner, store.Put{Content: "Written after the import"})
	if n.ID <= 500 {
		t.Errorf("Upsert after importing id 500 got id %d", n.ID)
	}
}

func TestImportTwiceIsIdempotent(t *testing.T) {
	s := newStore(t)
	owner := s.OwnerID("twice")
	mk := func() *store.Memory {
		return &store.Memory{ID: 42, Kind: "note", Content: "Imported twice", Mentions: 2,
			CreatedAt: time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)}
	}
	if op := mustImport(t, s, owner, mk()); op != store.Imported {
		t.Errorf("first import = %s", op)
	}
	seq := s.LastSeq()
	if op := mustImport(t, s, owner, mk()); op != store.Replaced {
		t.Errorf("second import = %s, want replaced", op)
	}
	if s.LastSeq() != seq+1 {
		t.Errorf("second import logged %d changes, want 1", s.LastSeq()-seq)
	}
	ms := all(t, s, owner)
	if len(ms) != 1 || ms[0].ID != 42 || ms[0].Mentions != 2 || ms[0].Content != "Imported twice" {
		t.Fatalf("after importing twice: %+v, want one memory 42", ms)
	}
	// Also without an id: the derived key finds the same memory.
	noID := mk()
	noID.ID = 0
	if op := mustImport(t, s, owner, noID); op != store.Replaced || noID.ID != 42 {
		t.Errorf("import without id = %s, id %d; want replaced into 42", op, noID.ID)
	}
	if ms := all(t, s, owner); len(ms) != 1 {
		t.Errorf("%d memories after a third import", len(ms))
	}
}

func TestImportRenumbersIDOfAnotherOwner(t *testing.T) {
	s := newStore(t)
	a, b := s.OwnerID("a"), s.OwnerID("b")
	theirs, _ := upsert(t, s, b, store.Put{Content: "B's memory"})

	// Onto another owner's id: a new memory, answered as any new one is, so
	// the answer does not say the id is taken.
	in := &store.Memory{ID: theirs.ID, Content: "A's imported memory"}
	if op := mustImport(t, s, a, in); op != store.Imported {
		t.Fatalf("import onto another owner's id = %s, want imported", op)
	}
	if in.ID == theirs.ID || in.ID == 0 {
		t.Fatalf("renumbered id = %d", in.ID)
	}
	if m := mustGet(t, s, b, theirs.ID); m.Content != "B's memory" {
		t.Errorf("the other owner's memory was overwritten: %q", m.Content)
	}
	if o, _ := ownerOf(s, theirs.ID); o != b {
		t.Errorf("OwnerOf(%d) = %q, want the other owner", theirs.ID, o)
	}
	if m := mustGet(t, s, a, in.ID); m.Content != "A's imported memory" {
		t.Errorf("renumbered memory = %q", m.Content)
	}

	// Importing high ids moves the numbering past them.
	mustImport(t, s, a, &store.Memory{ID: 1000, Content: "high id"})
	mustImport(t, s, a, &store.Memory{ID: 900, Content: "lower high id"})
	seen := map[uint64]bool{theirs.ID: true, in.ID: true, 1000: true, 900: true}
	for i := range 5 {
		m, _ := upsert(t, s, a, store.Put{Content: fmt.Sprintf("later %d", i)})
		if seen[m.ID] || m.ID <= 1000 {
			t.Errorf("Upsert after imports got id %d, reusing or below imported ids", m.ID)
		}
		seen[m.ID] = true
	}
	if m := mustGet(t, s, a, 1000); m.Content != "high id" {
		t.Errorf("imported memory 1000 overwritten: %q", m.Content)
	}
	again := &store.Memory{ID: 1000, Content: "B imports onto A's 1000"}
	if op := mustImport(t, s, b, again); op != store.Imported || seen[again.ID] {
		t.Errorf("second renumbering = %s, id %d", op, again.ID)
	}
}

// TestImportKeepsTheNumberingSane: ids past what JSON numbers hold exactly
// are renumbered, and an untrusted import (keepID false: self mode) never
// moves the numbering at all, so no caller can push new memories' ids
// towards the end of the range.
func TestImportKeepsTheNumberingSane(t *testing.T) {
	s := newStore(t)
	a := s.OwnerID("a")
	for _, id := range []uint64{store.MaxID + 1, 1 << 60, math.MaxUint64} {
		in := &store.Memory{ID: id, Content: fmt.Sprintf("id %d", id)}
		if op := mustImport(t, s, a, in); op != store.Renumbered || in.ID > 1000 {
			t.Errorf("import of id %d = %s, id %d; want renumbered to a small id", id, op, in.ID)
		}
	}
	var op store.ImportOp
	in := &store.Memory{ID: store.MaxID, Content: "self-mode import at the end of the range"}
	err := s.Update(func(tx *store.Tx) error {
		var err error
		op, err = tx.Import(a, in, false, tx.LastID())
		return err
	})
	if err != nil || op != store.Imported || in.ID > 1000 {
		t.Fatalf("untrusted import of id MaxID = %s, id %d, %v; want imported with a new small id", op, in.ID, err)
	}
	if m, _ := upsert(t, s, a, store.Put{Content: "after"}); m.ID > 1000 {
		t.Errorf("a memory created after the imports got id %d", m.ID)
	}
	// A trusted import of MaxID is kept, and then the numbering is
	// exhausted: creating a memory says so instead of passing MaxID.
	mustImport(t, s, a, &store.Memory{ID: store.MaxID, Content: "the last id"})
	err = s.Update(func(tx *store.Tx) error {
		_, _, err := tx.Upsert(a, store.Put{Content: "one too many"})
		return err
	})
	if err == nil || !strings.Contains(err.Error(), "exhausted") {
		t.Errorf("creating a memory past MaxID: %v, want an error saying the ids are exhausted", err)
	}
}

func TestImportSameKeyJoinsExistingMemory(t *testing.T) {
	s := newStore(t)
	owner := s.OwnerID("keys")
	cur, _ := upsert(t, s, owner, store.Put{Kind: "identity", Key: "identity:location", Content: "User lives in Lisbon."})
	in := &store.Memory{ID: 7777, Kind: "identity", Key: "identity:location", Content: "User lives in Porto."}
	if op := mustImport(t, s, owner, in); op != store.Replaced {
		t.Errorf("import with the key of an existing memory = %s, want replaced", op)
	}
	if in.ID != cur.ID {
		t.Errorf("joined memory got id %d, want the existing %d", in.ID, cur.ID)
	}
	ms := all(t, s, owner)
	if len(ms) != 1 || ms[0].ID != cur.ID || ms[0].Content != "User lives in Porto." {
		t.Errorf("memories = %+v, want one, %d, with the imported content", ms, cur.ID)
	}
	if _, err := ownerOf(s, 7777); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("the imported id 7777 was registered although the memory kept %d: %v", cur.ID, err)
	}
	// Upserting by the key still reaches the one memory.
	m, op := upsert(t, s, owner, store.Put{Kind: "identity", Key: "identity:location", Content: "User lives in Porto."})
	if op != store.Updated || m.ID != cur.ID {
		t.Errorf("upsert by key after import: %s id %d", op, m.ID)
	}
}

func TestImportReplacingOwnIDFreesOldKey(t *testing.T) {
	s := newStore(t)
	owner := s.OwnerID("rekey")
	m, _ := upsert(t, s, owner, store.Put{Key: "old-key", Content: "old"})
	if op := mustImport(t, s, owner, &store.Memory{ID: m.ID, Key: "new-key", Content: "new"}); op != store.Replaced {
		t.Errorf("import onto own id = %s", op)
	}
	// The old key no longer points to the memory: an upsert creates a new one.
	n, op := upsert(t, s, owner, store.Put{Key: "old-key", Content: "old again"})
	if op != store.Created || n.ID == m.ID {
		t.Errorf("upsert by the old key = %s id %d, want a new memory", op, n.ID)
	}
	if got := mustGet(t, s, owner, m.ID); got.Content != "new" || got.Key != "new-key" {
		t.Errorf("re-keyed memory = %+v", got)
	}
}

func TestImportTrimsHistory(t *testing.T) {
	s := newStore(t)
	owner := s.OwnerID("history")
	in := &store.Memory{ID: 3, Content: "current"}
	for i := range store.MaxHistory + 5 {
		in.History = append(in.History, store.Version{Content: fmt.Sprintf("v%d", i)})
	}
	mustImport(t, s, owner, in)
	m := mustGet(t, s, owner, 3)
	if len(m.History) != store.MaxHistory {
		t.Fatalf("history has %d versions, want %d", len(m.History), store.MaxHistory)
	}
	if m.History[0].Content != "v5" || m.History[store.MaxHistory-1].Content != fmt.Sprintf("v%d", store.MaxHistory+4) {
		t.Errorf("history kept %q..%q, want the newest versions", m.History[0].Content, m.History[store.MaxHistory-1].Content)
	}
}

func TestImportInvalid(t *testing.T) {
	s := newStore(t)
	owner := s.OwnerID("invalid")
	before := s.LastSeq()
	for _, c := range []struct {
		owner string
		m     *store.Memory
	}{
		{owner, &store.Memory{ID: 1, Content: ""}},
		{owner, &store.Memory{ID: 1, Content: " \n\t "}},
		{"", &store.Memory{ID: 1, Content: "no owner"}},
	} {
		if _, err := importOne(t, s, c.owner, c.m); !errors.Is(err, store.ErrInvalid) {
			t.Errorf("Import(%q, %q) = %v, want ErrInvalid", c.owner, c.m.Content, err)
		}
	}
	if s.LastSeq() != before || len(ownersList(t, s)) != 0 {
		t.Errorf("a refused import left changes or owners behind")
	}
}

func TestImportDefaults(t *testing.T) {
	s := newStore(t)
	owner := s.OwnerID("defaults")
	start := time.Now().Add(-time.Second)
	mustImport(t, s, owner, &store.Memory{ID: 11, Content: "Bare import"})
	m := mustGet(t, s, owner, 11)
	if m.Kind != "note" || m.Key != store.DeriveKey("note", "Bare import") || m.Mentions != 1 {
		t.Errorf("defaults: kind %q key %q mentions %d", m.Kind, m.Key, m.Mentions)
	}
	if m.CreatedAt.Before(start) || !m.UpdatedAt.Equal(m.CreatedAt) {
		t.Errorf("times: created %v updated %v", m.CreatedAt, m.UpdatedAt)
	}
}

func TestStatsCountsOwnersAndMemories(t *testing.T) {
	s := newStore(t)
	empty, err := s.Stats()
	if err != nil {
		t.Fatal(err)
	}
	if empty.Owners != 0 || empty.Memories != 0 || empty.PendingJobs != 0 || empty.FileBytes <= 0 {
		t.Errorf("empty store stats = %+v", empty)
	}
	a, b := s.OwnerID("a"), s.OwnerID("b")
	for i := range 3 {
		upsert(t, s, a, store.Put{Content: fmt.Sprintf("a %d", i)})
	}
	d, _ := upsert(t, s, b, store.Put{Content: "b deleted"})
	upsert(t, s, b, store.Put{Content: "b kept"})
	update(t, s, func(tx *store.Tx) error { _, err := tx.Delete(b, d.ID); return err })
	if err := s.PutJobs([]store.Job{{Owner: a, Data: []byte("x")}, {Owner: b, Data: []byte("y")}}); err != nil {
		t.Fatal(err)
	}
	st, err := s.Stats()
	if err != nil {
		t.Fatal(err)
	}
	if st.Owners != 2 || st.Memories != 5 || st.PendingJobs != 2 || st.LastSeq != s.LastSeq() {
		t.Errorf("stats = %+v, want 2 owners, 5 memories (deleted included), 2 jobs, last seq %d", st, s.LastSeq())
	}
	if size := fileSize(t, s.Path()); st.FileBytes != size {
		t.Errorf("stats file bytes %d, the file has %d", st.FileBytes, size)
	}
	update(t, s, func(tx *store.Tx) error { _, err := tx.ForgetOwner(a); return err })
	st, _ = s.Stats()
	if st.Owners != 1 || st.Memories != 2 || st.PendingJobs != 1 {
		t.Errorf("stats after forgetting an owner = %+v, want 1 owner, 2 memories, 1 job", st)
	}
}

func TestImportOfTheLargestIDDoesNotWrapNumbering(t *testing.T) {
	s := newStore(t)
	a, b := s.OwnerID("a"), s.OwnerID("b")
	old, _ := upsert(t, s, a, store.Put{Content: "A's first memory"})
	// An exported line may carry any id; an import must not let later
	// memories be numbered 0 or onto existing ones.
	if _, err := importOne(t, s, b, &store.Memory{ID: math.MaxUint64, Content: "B's imported memory"}); err != nil && !errors.Is(err, store.ErrInvalid) {
		t.Fatalf("Import(id max): %v", err)
	}
	seen := map[uint64]bool{old.ID: true, math.MaxUint64: true}
	for i := range 3 {
		var m *store.Memory
		err := s.Update(func(tx *store.Tx) error {
			var err error
			m, _, err = tx.Upsert(b, store.Put{Content: fmt.Sprintf("B's memory %d", i)})
			return err
		})
		if err != nil {
			t.Fatalf("Upsert after importing id %d: %v", uint64(math.MaxUint64), err)
		}
		if m.ID == 0 || seen[m.ID] {
			t.Errorf("Upsert after importing id %d got id %d (0 or already used)", uint64(math.MaxUint64), m.ID)
		}
		seen[m.ID] = true
	}
	if o, err := ownerOf(s, old.ID); err != nil || o != a {
		t.Errorf("OwnerOf(%d) = %q, %v; want A, whose memory it is", old.ID, o, err)
	}
}

// TestOpenRemovesAnInterruptedCompaction: a compaction killed midway
// leaves its new file beside the store; the next open removes it and the
// store is whole.
func TestOpenRemovesAnInterruptedCompaction(t *testing.T) {
	path := filepath.Join(t.TempDir(), "memory.db")
	s := openStore(t, path)
	upsert(t, s, "o", store.Put{Content: "still here"})
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path+".compact", []byte("half a compacted copy: zqleftover"), 0o600); err != nil {
		t.Fatal(err)
	}
	s = openStore(t, path)
	if _, err := os.Stat(path + ".compact"); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the interrupted compaction's file is still there after open: %v", err)
	}
	if ms := all(t, s, "o"); len(ms) != 1 || ms[0].Content != "still here" {
		t.Errorf("after open: %+v", ms)
	}
}
