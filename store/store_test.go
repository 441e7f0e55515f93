package store_test

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/caddy-memory/memory/store"
)

// errBoom makes an Update roll back.
var errBoom = errors.New("boom")

func openStore(t testing.TB, path string) *store.DB {
	t.Helper()
	s, err := openPath(t, path, 200*time.Millisecond)
	if err != nil {
		t.Fatalf("Open(%s): %v", path, err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func newStore(t testing.TB) *store.DB {
	t.Helper()
	return openStore(t, filepath.Join(t.TempDir(), "memory.db"))
}

func upsert(t testing.TB, s *store.DB, owner string, p store.Put) (*store.Memory, store.Op) {
	t.Helper()
	var m *store.Memory
	var op store.Op
	err := s.Update(func(tx *store.Tx) error {
		var err error
		m, op, err = tx.Upsert(owner, p)
		return err
	})
	if err != nil {
		t.Fatalf("Upsert(%q, %+v): %v", owner, p, err)
	}
	return m, op
}

func get(t testing.TB, s *store.DB, owner string, id uint64) (*store.Memory, error) {
	t.Helper()
	var m *store.Memory
	err := s.View(func(tx *store.Tx) error {
		var err error
		m, err = tx.Get(owner, id)
		return err
	})
	return m, err
}

func mustGet(t testing.TB, s *store.DB, owner string, id uint64) *store.Memory {
	t.Helper()
	m, err := get(t, s, owner, id)
	if err != nil {
		t.Fatalf("Get(%q, %d): %v", owner, id, err)
	}
	return m
}

func all(t testing.TB, s *store.DB, owner string) []*store.Memory {
	t.Helper()
	var ms []*store.Memory
	err := s.View(func(tx *store.Tx) error {
		return tx.ForEach(owner, func(m *store.Memory) error { ms = append(ms, m); return nil })
	})
	if err != nil {
		t.Fatalf("ForEach(%q): %v", owner, err)
	}
	return ms
}

func ownerOf(s *store.DB, id uint64) (string, error) {
	var o string
	err := s.View(func(tx *store.Tx) error {
		var err error
		o, err = tx.OwnerOf(id)
		return err
	})
	return o, err
}

func changes(t testing.TB, s *store.DB, after uint64) ([]store.Change, uint64) {
	t.Helper()
	cs, oldest, err := s.Changes(after, 1000)
	if err != nil {
		t.Fatalf("Changes(%d): %v", after, err)
	}
	return cs, oldest
}

func TestOpenCreatesPrivateFileAndDirectory(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "nested", "storage")
	path := filepath.Join(dir, "memory.db")
	s := openStore(t, path)
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatalf("store file not created: %v", err)
	}
	if perm := fi.Mode().Perm(); perm != 0o600 {
		t.Errorf("store file mode = %o, want 600", perm)
	}
	di, err := os.Stat(dir)
	if err != nil {
		t.Fatalf("storage directory not created: %v", err)
	}
	if !di.IsDir() {
		t.Fatalf("%s is not a directory", dir)
	}
	if perm := di.Mode().Perm(); perm&0o077 != 0 {
		t.Errorf("storage directory mode = %o, readable by others", perm)
	}
	if st, err := s.Stats(); err != nil || st.FileBytes <= 0 {
		t.Errorf("Stats().FileBytes = %d (%v), want > 0", st.FileBytes, err)
	}
}

func TestReopenKeepsMemoriesAndOwnerIDs(t *testing.T) {
	path := filepath.Join(t.TempDir(), "memory.db")
	s, err := openPath(t, path, 0)
	if err != nil {
		t.Fatal(err)
	}
	owner := s.OwnerID("alice-api-key")
	m, _ := upsert(t, s, owner, store.Put{Kind: "identity", Key: "name", Content: "My name is Alice."})
	seq := s.LastSeq()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	s2 := openStore(t, path)
	if got := s2.OwnerID("alice-api-key"); got != owner {
		t.Fatalf("OwnerID changed across reopen: %q then %q; the owner would lose every memory", owner, got)
	}
	got := mustGet(t, s2, owner, m.ID)
	if got.Content != "My name is Alice." || got.Key != "name" || got.Kind != "identity" {
		t.Errorf("after reopen got %+v", got)
	}
	if s2.LastSeq() != seq {
		t.Errorf("LastSeq after reopen = %d, want %d", s2.LastSeq(), seq)
	}
}

func TestOwnerID(t *testing.T) {
	dir := t.TempDir()
	a := openStore(t, filepath.Join(dir, "a.db"))
	b := openStore(t, filepath.Join(dir, "b.db"))
	hex32 := regexp.MustCompile(`^[0-9a-f]{32}$`)
	for _, raw := range []string{"sk-live-SECRETKEY-0001", "alice", "Bob Smith <bob@example.com>", ""} {
		id := a.OwnerID(raw)
		if id != a.OwnerID(raw) {
			t.Errorf("OwnerID(%q) not deterministic", raw)
		}
		if !hex32.MatchString(id) {
			t.Errorf("OwnerID(%q) = %q, want 32 lowercase hex characters", raw, id)
		}
		if raw != "" && (id == raw || strings.Contains(id, raw)) {
			t.Errorf("OwnerID(%q) = %q exposes the raw value", raw, id)
		}
		if bid := b.OwnerID(raw); bid == id {
			t.Errorf("two stores map %q to the same id %q; the secret is not per store", raw, id)
		}
	}
	if a.OwnerID("alice") == a.OwnerID("bob") {
		t.Error("different raw owners map to the same id")
	}
}

func TestRawOwnerNeverReachesFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "memory.db")
	s, err := openPath(t, path, 0)
	if err != nil {
		t.Fatal(err)
	}
	const raw = "sk-proj-VERYSECRETAPIKEY-9f8e7d"
	upsert(t, s, s.OwnerID(raw), store.Put{Content: "I like tea"})
	s.Close()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(data, []byte(raw)) {
		t.Fatal("the raw owner value is stored in the file")
	}
	if !bytes.Contains(data, []byte("I like tea")) {
		t.Fatal("sanity check failed: content not found in file, the search above proves nothing")
	}
}

func TestSecondOpenFailsWithErrLocked(t *testing.T) {
	path := filepath.Join(t.TempDir(), "memory.db")
	s := openStore(t, path)
	upsert(t, s, "o", store.Put{Content: "still here"})

	const timeout = 300 * time.Millisecond
	start := time.Now()
	s2, err := openPath(t, path, timeout)
	elapsed := time.Since(start)
	if err == nil {
		s2.Close()
		t.Fatal("second Open of a held store succeeded")
	}
	if !errors.Is(err, store.ErrLocked) {
		t.Errorf("err = %v, want ErrLocked", err)
	}
	if !strings.Contains(err.Error(), "caddy reload") {
		t.Errorf("err = %q, want a hint about 'caddy reload'", err)
	}
	if elapsed < timeout/2 {
		t.Errorf("second Open failed after %v, without waiting for the lock timeout of %v", elapsed, timeout)
	}
	// The first handle is unharmed.
	if ms := all(t, s, "o"); len(ms) != 1 || ms[0].Content != "still here" {
		t.Errorf("first handle after failed second Open: %+v", ms)
	}
}

func TestNewerSchemaRefused(t *testing.T) {
	path := filepath.Join(t.TempDir(), "memory.db")
	s, err := openPath(t, path, 0)
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	b, err := bolt.Open(path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	err = b.Update(func(tx *bolt.Tx) error {
		return tx.Bucket([]byte("meta")).Put([]byte("schema"), []byte{0, 0, 0, 0, 0, 0, 0, 99})
	})
	b.Close()
	if err != nil {
		t.Fatal(err)
	}
	s, err = openPath(t, path, 0)
	if err == nil {
		s.Close()
		t.Fatal("Open accepted a file written by a newer schema")
	}
	if !strings.Contains(err.Error(), "newer") {
		t.Errorf("err = %v, want it to say the file is newer", err)
	}
}

func TestUpsertCreates(t *testing.T) {
	s := newStore(t)
	said := time.Date(2024, 3, 1, 10, 0, 0, 0, time.FixedZone("CET", 3600))
	m, op := upsert(t, s, "o1", store.Put{
		Session: "s1", Kind: "preference", Key: "drink", Content: "  I like green tea.  ",
		Ref: "msg-1", Meta: map[string]string{"turn": "t1"}, Time: said,
	})
	if op != store.Created {
		t.Errorf("op = %q, want created", op)
	}
	if m.ID == 0 {
		t.Error("created memory has id 0")
	}
	if m.Version != 0 || m.Mentions != 1 || len(m.History) != 0 {
		t.Errorf("new memory: Version=%d Mentions=%d History=%d, want 0, 1, 0", m.Version, m.Mentions, len(m.History))
	}
	if !m.CreatedAt.Equal(said) || !m.UpdatedAt.Equal(said) {
		t.Errorf("CreatedAt=%v UpdatedAt=%v, want %v", m.CreatedAt, m.UpdatedAt, said)
	}
	got := mustGet(t, s, "o1", m.ID)
	if got.Content != "I like green tea." || got.Kind != "preference" || got.Key != "drink" ||
		got.Session != "s1" || got.Ref != "msg-1" || got.Meta["turn"] != "t1" || got.Owner != "o1" {
		t.Errorf("stored %+v", got)
	}
	if !got.CreatedAt.Equal(said) {
		t.Errorf("stored CreatedAt = %v, want %v", got.CreatedAt, said)
	}
	if !got.Active(time.Now()) {
		t.Error("a new memory is not active")
	}

	// No time given: now.
	before := time.Now()
	m2, _ := upsert(t, s, "o1", store.Put{Content: "untimed"})
	if m2.CreatedAt.Before(before.Add(-time.Second)) || m2.CreatedAt.After(time.Now().Add(time.Second)) {
		t.Errorf("CreatedAt for zero Put.Time = %v, want about now", m2.CreatedAt)
	}
	if m2.Kind != "note" {
		t.Errorf("default kind = %q, want note", m2.Kind)
	}
	if m2.ID == m.ID {
		t.Error("two memories share an id")
	}
}

func TestUpsertSameContentIsAnotherMention(t *testing.T) {
	s := newStore(t)
	t0 := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	m, _ := upsert(t, s, "o", store.Put{Key: "city", Content: "I live in Paris.", Time: t0, Ref: "r1"})
	for i, restated := range []string{"i live in paris", "I  LIVE in Paris!!", "\tI live, in Paris?"} {
		m2, op := upsert(t, s, "o", store.Put{Key: "city", Content: restated, Time: t0.Add(time.Duration(i+1) * time.Hour)})
		if op != store.Updated {
			t.Errorf("restating %q: op = %q, want updated", restated, op)
		}
		if m2.ID != m.ID {
			t.Fatalf("restating %q created id %d, want %d", restated, m2.ID, m.ID)
		}
		if m2.Mentions != i+2 {
			t.Errorf("after restating %q Mentions = %d, want %d", restated, m2.Mentions, i+2)
		}
		if m2.Version != 0 || len(m2.History) != 0 {
			t.Errorf("restating %q added history: Version=%d History=%+v", restated, m2.Version, m2.History)
		}
	}
	got := mustGet(t, s, "o", m.ID)
	if got.Mentions != 4 || len(got.History) != 0 {
		t.Errorf("stored Mentions=%d History=%d, want 4, 0", got.Mentions, len(got.History))
	}
	if !got.CreatedAt.Equal(t0) {
		t.Errorf("CreatedAt moved to %v on a restatement", got.CreatedAt)
	}
	if !got.UpdatedAt.Equal(t0.Add(3 * time.Hour)) {
		t.Errorf("UpdatedAt = %v, want the latest mention %v", got.UpdatedAt, t0.Add(3*time.Hour))
	}
	if got.Ref != "r1" {
		t.Errorf("a restatement without a ref dropped the ref: %q", got.Ref)
	}
	if n := len(all(t, s, "o")); n != 1 {
		t.Errorf("owner has %d memories, want 1", n)
	}
}

func TestUpsertDifferentContentSupersedes(t *testing.T) {
	s := newStore(t)
	t0 := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	m, _ := upsert(t, s, "o", store.Put{Key: "city", Content: "I live in Paris.", Time: t0, Session: "s1", Ref: "r1"})
	m2, op := upsert(t, s, "o", store.Put{Key: "city", Content: "I live in Berlin.", Time: t0.Add(time.Hour), Session: "s2"})
	if op != store.Superseded {
		t.Errorf("op = %q, want superseded", op)
	}
	if m2.ID != m.ID {
		t.Fatalf("supersede created a new id %d, want %d", m2.ID, m.ID)
	}
	got := mustGet(t, s, "o", m.ID)
	if got.Content != "I live in Berlin." {
		t.Errorf("Content = %q, want the new value", got.Content)
	}
	if got.Version != 1 {
		t.Errorf("Version = %d, want 1", got.Version)
	}
	if len(got.History) != 1 {
		t.Fatalf("History = %+v, want the old value", got.History)
	}
	h := got.History[0]
	if h.Content != "I live in Paris." || h.Session != "s1" || h.Ref != "r1" || !h.At.Equal(t0) {
		t.Errorf("History[0] = %+v, want Paris from s1/r1 at %v", h, t0)
	}
	if got.Ref != "" {
		t.Errorf("the new value kept the old ref %q", got.Ref)
	}
	if !got.UpdatedAt.Equal(t0.Add(time.Hour)) || !got.CreatedAt.Equal(t0) {
		t.Errorf("CreatedAt=%v UpdatedAt=%v", got.CreatedAt, got.UpdatedAt)
	}
	if n := len(all(t, s, "o")); n != 1 {
		t.Errorf("owner has %d memories, want 1", n)
	}
}

func TestHistoryIsCapped(t *testing.T) {
	s := newStore(t)
	const n = store.MaxHistory + 5
	var id uint64
	err := s.Update(func(tx *store.Tx) error {
		for i := 0; i < n; i++ {
			m, _, err := tx.Upsert("o", store.Put{Key: "counter", Content: fmt.Sprintf("value number %d", i)})
			if err != nil {
				return err
			}
			id = m.ID
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	got := mustGet(t, s, "o", id)
	if got.Content != fmt.Sprintf("value number %d", n-1) {
		t.Errorf("Content = %q", got.Content)
	}
	if len(got.History) != store.MaxHistory {
		t.Fatalf("len(History) = %d, want %d", len(got.History), store.MaxHistory)
	}
	// Oldest dropped: history holds values n-1-MaxHistory .. n-2, oldest first.
	for i, h := range got.History {
		want := fmt.Sprintf("value number %d", n-1-store.MaxHistory+i)
		if h.Content != want {
			t.Errorf("History[%d] = %q, want %q", i, h.Content, want)
		}
	}
	if got.Version != n-1 {
		t.Errorf("Version = %d, want %d", got.Version, n-1)
	}
}

func TestDerivedKey(t *testing.T) {
	s := newStore(t)
	m, op := upsert(t, s, "o", store.Put{Kind: "preference", Content: "I like green tea."})
	if op != store.Created {
		t.Fatalf("op = %q", op)
	}
	if m.Key == "" {
		t.Fatal("no key derived")
	}
	if m.Key != store.DeriveKey("preference", "I like green tea.") {
		t.Errorf("Key = %q, want DeriveKey's %q", m.Key, store.DeriveKey("preference", "I like green tea."))
	}
	m2, op := upsert(t, s, "o", store.Put{Kind: "preference", Content: "i like GREEN   tea"})
	if op != store.Updated || m2.ID != m.ID || m2.Mentions != 2 {
		t.Errorf("restating with a derived key: op=%q id=%d (want %d) mentions=%d", op, m2.ID, m.ID, m2.Mentions)
	}
	// Different content is a different memory, not a supersede.
	m3, op := upsert(t, s, "o", store.Put{Kind: "preference", Content: "I like black coffee."})
	if op != store.Created || m3.ID == m.ID {
		t.Errorf("different content with a derived key: op=%q id=%d", op, m3.ID)
	}
	// The same sentence of another kind is another memory.
	m4, op := upsert(t, s, "o", store.Put{Kind: "habit", Content: "I like green tea."})
	if op != store.Created || m4.ID == m.ID {
		t.Errorf("same content, other kind: op=%q id=%d", op, m4.ID)
	}
	if n := len(all(t, s, "o")); n != 3 {
		t.Errorf("owner has %d memories, want 3", n)
	}
	if mustGet(t, s, "o", m.ID).Content != "i like GREEN   tea" {
		t.Error("restatement did not keep the latest wording")
	}
}

func TestUpsertInvalid(t *testing.T) {
	s := newStore(t)
	for _, c := range []struct {
		owner string
		p     store.Put
	}{
		{"", store.Put{Content: "hello"}},
		{"o", store.Put{Content: ""}},
		{"o", store.Put{Content: " \t\n "}},
	} {
		err := s.Update(func(tx *store.Tx) error {
			_, _, err := tx.Upsert(c.owner, c.p)
			return err
		})
		if !errors.Is(err, store.ErrInvalid) {
			t.Errorf("Upsert(%q, %q) err = %v, want ErrInvalid", c.owner, c.p.Content, err)
		}
	}
	if s.LastSeq() != 0 {
		t.Errorf("invalid writes logged changes: LastSeq = %d", s.LastSeq())
	}
	if n := len(all(t, s, "o")); n != 0 {
		t.Errorf("invalid writes stored %d memories", n)
	}
}

func TestDeletedMemoryRevived(t *testing.T) {
	for _, again := range []string{"I live in Paris.", "I live in Rome."} {
		t.Run(again, func(t *testing.T) {
			s := newStore(t)
			m, _ := upsert(t, s, "o", store.Put{Key: "city", Content: "I live in Paris."})
			if err := s.Update(func(tx *store.Tx) error { _, err := tx.Delete("o", m.ID); return err }); err != nil {
				t.Fatal(err)
			}
			if mustGet(t, s, "o", m.ID).Active(time.Now()) {
				t.Fatal("deleted memory is active")
			}
			m2, op := upsert(t, s, "o", store.Put{Key: "city", Content: again})
			if m2.ID != m.ID {
				t.Errorf("revival created id %d, want %d", m2.ID, m.ID)
			}
			if op != store.Created {
				t.Errorf("op = %q, want created (it is new to retrieval)", op)
			}
			got := mustGet(t, s, "o", m.ID)
			if got.DeletedAt != nil || !got.Active(time.Now()) {
				t.Errorf("revived memory still deleted: %+v", got)
			}
			if got.Content != again {
				t.Errorf("Content = %q, want %q", got.Content, again)
			}
			if len(got.History) != 1 || got.History[0].Content != "I live in Paris." {
				t.Errorf("History = %+v, want the deleted value", got.History)
			}
			if got.Version != 1 {
				t.Errorf("Version = %d, want 1", got.Version)
			}
		})
	}
}

func TestChangeLog(t *testing.T) {
	s := newStore(t)
	if s.LastSeq() != 0 {
		t.Fatalf("fresh store LastSeq = %d", s.LastSeq())
	}
	if cs, oldest := changes(t, s, 0); len(cs) != 0 || oldest != 0 {
		t.Fatalf("fresh store Changes = %+v, oldest %d", cs, oldest)
	}
	expectSeq := func(step string, want uint64) {
		t.Helper()
		if got := s.LastSeq(); got != want {
			t.Errorf("after %s LastSeq = %d, want %d", step, got, want)
		}
	}

	m, _ := upsert(t, s, "alice", store.Put{Key: "k", Content: "one"})
	expectSeq("create", 1)
	if m.Seq != 1 {
		t.Errorf("created Seq = %d, want 1", m.Seq)
	}
	other, _ := upsert(t, s, "bob", store.Put{Key: "k", Content: "bob's"})
	expectSeq("create for another owner", 2)

	m, _ = upsert(t, s, "alice", store.Put{Key: "k", Content: "ONE"})
	expectSeq("mention", 3)
	if m.Seq != 3 || mustGet(t, s, "alice", m.ID).Seq != 3 {
		t.Errorf("Seq after mention = %d, want 3", m.Seq)
	}
	m, _ = upsert(t, s, "alice", store.Put{Key: "k", Content: "two"})
	expectSeq("supersede", 4)
	if mustGet(t, s, "alice", m.ID).Seq != 4 {
		t.Errorf("stored Seq after supersede = %d, want 4", mustGet(t, s, "alice", m.ID).Seq)
	}
	if err := s.Update(func(tx *store.Tx) error { _, err := tx.Delete("alice", m.ID); return err }); err != nil {
		t.Fatal(err)
	}
	expectSeq("soft delete", 5)
	if got := mustGet(t, s, "alice", m.ID).Seq; got != 5 {
		t.Errorf("stored Seq after delete = %d, want 5", got)
	}
	if err := s.Update(func(tx *store.Tx) error { return tx.Purge("alice", m.ID) }); err != nil {
		t.Fatal(err)
	}
	expectSeq("purge", 6)

	cs, oldest := changes(t, s, 0)
	want := []store.Change{
		{1, "alice", m.ID}, {2, "bob", other.ID}, {3, "alice", m.ID},
		{4, "alice", m.ID}, {5, "alice", m.ID}, {6, "alice", m.ID},
	}
	if oldest != 1 {
		t.Errorf("oldest = %d, want 1", oldest)
	}
	if fmt.Sprint(cs) != fmt.Sprint(want) {
		t.Errorf("Changes(0) = %+v\nwant %+v", cs, want)
	}
	cs, _, err := s.Changes(2, 2)
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(cs) != fmt.Sprint(want[2:4]) {
		t.Errorf("Changes(2, 2) = %+v, want %+v", cs, want[2:4])
	}
	if cs, _ := changes(t, s, 6); len(cs) != 0 {
		t.Errorf("Changes(LastSeq) = %+v, want none", cs)
	}
}

func TestSeveralWritesInOneTransaction(t *testing.T) {
	s := newStore(t)
	var ms []*store.Memory
	err := s.Update(func(tx *store.Tx) error {
		for _, c := range []string{"a", "b", "c"} {
			m, _, err := tx.Upsert("o", store.Put{Content: "memory " + c})
			if err != nil {
				return err
			}
			ms = append(ms, m)
		}
		if tx.LastSeq() != 3 {
			return fmt.Errorf("LastSeq inside the transaction = %d, want 3", tx.LastSeq())
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	cs, _ := changes(t, s, 0)
	if len(cs) != 3 {
		t.Fatalf("Changes = %+v, want 3", cs)
	}
	for i, m := range ms {
		if cs[i].ID != m.ID || m.Seq != cs[i].Seq || mustGet(t, s, "o", m.ID).Seq != cs[i].Seq {
			t.Errorf("memory %d (Seq %d) vs change %+v", m.ID, m.Seq, cs[i])
		}
	}
}

func TestFailedTransactionLeavesNothing(t *testing.T) {
	s := newStore(t)
	first, _ := upsert(t, s, "o", store.Put{Key: "a", Content: "kept"})
	before := s.LastSeq()

	var lost *store.Memory
	err := s.Update(func(tx *store.Tx) error {
		var err error
		if lost, _, err = tx.Upsert("o", store.Put{Key: "b", Content: "lost"}); err != nil {
			return err
		}
		if _, _, err = tx.Upsert("o", store.Put{Key: "a", Content: "changed"}); err != nil {
			return err
		}
		if _, err = tx.Delete("o", first.ID); err != nil {
			return err
		}
		return errBoom
	})
	if !errors.Is(err, errBoom) {
		t.Fatalf("Update err = %v, want the fn's error", err)
	}
	if got := s.LastSeq(); got != before {
		t.Errorf("LastSeq = %d after a failed transaction, want %d", got, before)
	}
	if cs, _ := changes(t, s, before); len(cs) != 0 {
		t.Errorf("failed transaction logged %+v", cs)
	}
	if _, err := get(t, s, "o", lost.ID); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("memory from a failed transaction: err = %v", err)
	}
	if _, err := ownerOf(s, lost.ID); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("OwnerOf a memory from a failed transaction: err = %v", err)
	}
	got := mustGet(t, s, "o", first.ID)
	if got.Content != "kept" || got.DeletedAt != nil || got.Version != 0 {
		t.Errorf("failed transaction changed an existing memory: %+v", got)
	}
	if n := len(all(t, s, "o")); n != 1 {
		t.Errorf("owner has %d memories, want 1", n)
	}

	// The next write continues the sequence without a gap.
	next, _ := upsert(t, s, "o", store.Put{Key: "c", Content: "next"})
	if next.Seq != before+1 || s.LastSeq() != before+1 {
		t.Errorf("next write Seq = %d, LastSeq = %d, want %d", next.Seq, s.LastSeq(), before+1)
	}
	if cs, _ := changes(t, s, before); len(cs) != 1 || cs[0].ID != next.ID {
		t.Errorf("changes after the failed transaction = %+v", cs)
	}
}

func TestWritesFailInView(t *testing.T) {
	s := newStore(t)
	err := s.View(func(tx *store.Tx) error {
		_, _, err := tx.Upsert("o", store.Put{Content: "x"})
		return err
	})
	if err == nil {
		t.Error("Upsert in a read-only transaction succeeded")
	}
	if s.LastSeq() != 0 || len(all(t, s, "o")) != 0 {
		t.Error("a read-only transaction wrote")
	}
}

func TestTrimChanges(t *testing.T) {
	s := newStore(t)
	for i := 0; i < 5; i++ {
		upsert(t, s, "o", store.Put{Content: fmt.Sprintf("memory %d", i)})
	}
	n, err := s.TrimChanges(2)
	if err != nil {
		t.Fatal(err)
	}
	if n != 2 {
		t.Errorf("TrimChanges(2) removed %d, want 2", n)
	}
	cs, oldest := changes(t, s, 0)
	if oldest != 3 {
		t.Errorf("oldest = %d, want 3", oldest)
	}
	if len(cs) != 3 || cs[0].Seq != 3 || cs[2].Seq != 5 {
		t.Errorf("Changes after trim = %+v, want 3..5", cs)
	}
	if n, _ := s.TrimChanges(2); n != 0 {
		t.Errorf("trimming again removed %d", n)
	}
	if n, _ := s.TrimChanges(100); n != 3 {
		t.Errorf("TrimChanges(100) removed %d, want 3", n)
	}
	if cs, oldest := changes(t, s, 0); len(cs) != 0 || oldest != 0 {
		t.Errorf("after trimming everything: %+v oldest %d", cs, oldest)
	}
	// Memories are untouched, and sequence numbers are never reused.
	if n := len(all(t, s, "o")); n != 5 {
		t.Errorf("trimming the log lost memories: %d left", n)
	}
	m, _ := upsert(t, s, "o", store.Put{Content: "after trim"})
	if m.Seq != 6 || s.LastSeq() != 6 {
		t.Errorf("after trim the next Seq = %d (LastSeq %d), want 6", m.Seq, s.LastSeq())
	}
}

// TestChangedSince: whether an owner changed after a position, read from
// the log's entries after it, and not answered when the log no longer
// reaches back to it or holds more than the limit.
func TestChangedSince(t *testing.T) {
	s := newStore(t)
	for i := range 6 {
		upsert(t, s, []string{"alice", "bob", "alicex"}[i%3], store.Put{Content: fmt.Sprintf("memory %d", i)})
	}
	check := func(after uint64, owner string, limit int, changed, ok bool) {
		t.Helper()
		err := s.View(func(tx *store.Tx) error {
			if c, k := tx.ChangedSince(after, owner, limit); c != changed || k != ok {
				t.Errorf("ChangedSince(%d, %s, %d) = %v, %v; want %v, %v", after, owner, limit, c, k, changed, ok)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	check(0, "alice", 10, true, true)
	check(4, "alice", 10, false, true) // 5 is bob's, 6 alicex's: not alice's
	check(3, "alice", 10, true, true)
	check(4, "alicex", 10, true, true)
	check(6, "alice", 10, false, true)
	check(3, "alice", 0, false, false)
	if _, err := s.TrimChanges(3); err != nil {
		t.Fatal(err)
	}
	check(3, "alicex", 10, true, true)
	check(2, "alice", 10, false, false) // change 3 is gone
}

// TestPeek: one memory read as PeekAll reads it.
func TestPeek(t *testing.T) {
	s := newStore(t)
	m, _ := upsert(t, s, "o", store.Put{Kind: "note", Session: "s1", Content: "note", Digest: []byte("d")})
	err := s.View(func(tx *store.Tx) error {
		p, err := tx.Peek("o", m.ID)
		if err != nil {
			return err
		}
		got, err := p.Memory()
		if err != nil || p.ID != m.ID || string(p.Terms()) != "d" || !p.InSession("s1") || got.Content != "note" {
			t.Errorf("peek %d %q %v, memory %+v (%v)", p.ID, p.Terms(), p.InSession("s1"), got, err)
		}
		for _, c := range []struct {
			owner string
			id    uint64
		}{{"o", m.ID + 100}, {"other", m.ID}} {
			if _, err := tx.Peek(c.owner, c.id); !errors.Is(err, store.ErrNotFound) {
				t.Errorf("Peek(%s, %d): %v, want ErrNotFound", c.owner, c.id, err)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestOwnersAreIsolated(t *testing.T) {
	s := newStore(t)
	alice, bob := s.OwnerID("alice"), s.OwnerID("bob")
	am, _ := upsert(t, s, alice, store.Put{Key: "name", Content: "My name is Alice."})
	upsert(t, s, alice, store.Put{Content: "Alice likes tea."})
	bm, _ := upsert(t, s, bob, store.Put{Key: "name", Content: "My name is Bob."})

	if am.ID == bm.ID {
		t.Fatal("two owners' memories share an id")
	}
	if _, err := get(t, s, bob, am.ID); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("bob reads alice's memory: err = %v", err)
	}
	if _, err := get(t, s, "nobody", am.ID); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("unknown owner reads alice's memory: err = %v", err)
	}
	if got := mustGet(t, s, bob, bm.ID); got.Content != "My name is Bob." {
		t.Errorf("bob's name memory = %q; the same key of another owner interfered", got.Content)
	}
	if got := mustGet(t, s, alice, am.ID); got.Content != "My name is Alice." || got.Version != 0 {
		t.Errorf("alice's name memory = %+v", got)
	}

	for owner, want := range map[string]int{alice: 2, bob: 1, "nobody": 0} {
		ms := all(t, s, owner)
		if len(ms) != want {
			t.Errorf("ForEach(%s) yielded %d, want %d", owner, len(ms), want)
		}
		for _, m := range ms {
			if m.Owner != owner {
				t.Errorf("ForEach(%s) yielded %+v", owner, m)
			}
		}
	}

	var owners []string
	if err := s.View(func(tx *store.Tx) error {
		return tx.Owners(func(o string) error { owners = append(owners, o); return nil })
	}); err != nil {
		t.Fatal(err)
	}
	if len(owners) != 2 || !contains(owners, alice) || !contains(owners, bob) {
		t.Errorf("Owners = %v, want alice and bob", owners)
	}
	if o, err := ownerOf(s, am.ID); err != nil || o != alice {
		t.Errorf("OwnerOf(alice's) = %q, %v", o, err)
	}
	if o, err := ownerOf(s, bm.ID); err != nil || o != bob {
		t.Errorf("OwnerOf(bob's) = %q, %v", o, err)
	}
	if _, err := ownerOf(s, 9999); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("OwnerOf(unknown) err = %v", err)
	}

	// Another owner can neither delete nor purge nor edit it.
	seq := s.LastSeq()
	if err := s.Update(func(tx *store.Tx) error { _, err := tx.Delete(bob, am.ID); return err }); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("bob deletes alice's memory: err = %v", err)
	}
	if err := s.Update(func(tx *store.Tx) error { return tx.Purge(bob, am.ID) }); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("bob purges alice's memory: err = %v", err)
	}
	if err := s.Update(func(tx *store.Tx) error {
		_, err := tx.Edit(bob, am.ID, func(m *store.Memory) error { m.Content = "hacked"; return nil })
		return err
	}); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("bob edits alice's memory: err = %v", err)
	}
	if got := mustGet(t, s, alice, am.ID); got.Content != "My name is Alice." || !got.Active(time.Now()) {
		t.Errorf("alice's memory after bob's attempts: %+v", got)
	}
	if s.LastSeq() != seq {
		t.Errorf("refused writes logged changes")
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

func TestSoftDelete(t *testing.T) {
	s := newStore(t)
	m, _ := upsert(t, s, "o", store.Put{Key: "k", Content: "forget me"})
	var del *store.Memory
	if err := s.Update(func(tx *store.Tx) error {
		var err error
		del, err = tx.Delete("o", m.ID)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if del.DeletedAt == nil || del.Active(time.Now()) {
		t.Errorf("Delete returned %+v, want a deleted memory", del)
	}
	got := mustGet(t, s, "o", m.ID)
	if got.DeletedAt == nil || got.Active(time.Now()) {
		t.Errorf("stored memory after Delete: %+v", got)
	}
	if got.Content != "forget me" {
		t.Errorf("soft delete lost the content: %q", got.Content)
	}
	if n := len(all(t, s, "o")); n != 1 {
		t.Errorf("ForEach yields %d after a soft delete, want 1 (deleted ones included)", n)
	}
	if o, err := ownerOf(s, m.ID); err != nil || o != "o" {
		t.Errorf("OwnerOf after soft delete = %q, %v", o, err)
	}
	if err := s.Update(func(tx *store.Tx) error { _, err := tx.Delete("o", 12345); return err }); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("Delete(unknown) err = %v", err)
	}
}

func TestPurge(t *testing.T) {
	s := newStore(t)
	m, _ := upsert(t, s, "o", store.Put{Key: "secret", Content: "my pin is 1234"})
	upsert(t, s, "o", store.Put{Key: "secret", Content: "my pin is 5678"})
	keep, _ := upsert(t, s, "o", store.Put{Key: "other", Content: "keep me"})

	if err := s.Update(func(tx *store.Tx) error { return tx.Purge("o", m.ID) }); err != nil {
		t.Fatal(err)
	}
	if _, err := get(t, s, "o", m.ID); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("Get after Purge err = %v", err)
	}
	if _, err := ownerOf(s, m.ID); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("OwnerOf after Purge err = %v", err)
	}
	ms := all(t, s, "o")
	if len(ms) != 1 || ms[0].ID != keep.ID {
		t.Errorf("ForEach after Purge = %+v, want only the other memory", ms)
	}
	// The key is free again: a new memory, with no trace of the purged history.
	n, op := upsert(t, s, "o", store.Put{Key: "secret", Content: "my pin is 1234"})
	if op != store.Created || n.ID == m.ID {
		t.Errorf("Upsert after Purge: op=%q id=%d (purged %d)", op, n.ID, m.ID)
	}
	if len(n.History) != 0 || n.Version != 0 || n.Mentions != 1 {
		t.Errorf("purged history came back: %+v", n)
	}
	if err := s.Update(func(tx *store.Tx) error { return tx.Purge("o", m.ID) }); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("Purge twice err = %v", err)
	}
}

func TestPurgeSurvivesReopen(t *testing.T) {
	path := filepath.Join(t.TempDir(), "memory.db")
	s, err := openPath(t, path, 0)
	if err != nil {
		t.Fatal(err)
	}
	m, _ := upsert(t, s, "o", store.Put{Content: "my password is hunter2"})
	if err := s.Update(func(tx *store.Tx) error { return tx.Purge("o", m.ID) }); err != nil {
		t.Fatal(err)
	}
	s.Close()
	s = openStore(t, path)
	if _, err := get(t, s, "o", m.ID); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("purged memory is back after reopen: %v", err)
	}
}

func TestActive(t *testing.T) {
	now := time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)
	past, future := now.Add(-time.Minute), now.Add(time.Minute)
	deleted := now.Add(-time.Hour)
	for _, c := range []struct {
		name string
		m    store.Memory
		want bool
	}{
		{"plain", store.Memory{}, true},
		{"expires later", store.Memory{ExpiresAt: &future}, true},
		{"expired", store.Memory{ExpiresAt: &past}, false},
		{"expires exactly now", store.Memory{ExpiresAt: &now}, false},
		{"deleted", store.Memory{DeletedAt: &deleted}, false},
		{"deleted, expires later", store.Memory{DeletedAt: &deleted, ExpiresAt: &future}, false},
	} {
		if got := c.m.Active(now); got != c.want {
			t.Errorf("%s: Active = %v, want %v", c.name, got, c.want)
		}
	}

	// Through the store.
	s := newStore(t)
	soon := time.Now().Add(time.Hour)
	gone := time.Now().Add(-time.Hour)
	a, _ := upsert(t, s, "o", store.Put{Content: "valid for an hour", ExpiresAt: &soon})
	b, _ := upsert(t, s, "o", store.Put{Content: "already expired", ExpiresAt: &gone})
	if !mustGet(t, s, "o", a.ID).Active(time.Now()) {
		t.Error("memory expiring in an hour is not active")
	}
	if mustGet(t, s, "o", a.ID).Active(time.Now().Add(2 * time.Hour)) {
		t.Error("memory is active after its expiry")
	}
	if mustGet(t, s, "o", b.ID).Active(time.Now()) {
		t.Error("expired memory is active")
	}
}

// A new value for a key replaces the old one entirely (its ref and session
// go with it); an expiry that belonged to the old value, and has passed, must
// not make the new value unretrievable the moment it is stored.
func TestSupersedingExpiredMemoryIsActive(t *testing.T) {
	s := newStore(t)
	gone := time.Now().Add(-time.Hour)
	m, _ := upsert(t, s, "o", store.Put{Key: "trip", Content: "I am in Rome this week", ExpiresAt: &gone})
	if mustGet(t, s, "o", m.ID).Active(time.Now()) {
		t.Fatal("setup: expired memory is active")
	}
	m2, op := upsert(t, s, "o", store.Put{Key: "trip", Content: "I am planning a trip to Oslo"})
	if op != store.Superseded || m2.ID != m.ID {
		t.Fatalf("op = %q id = %d", op, m2.ID)
	}
	got := mustGet(t, s, "o", m.ID)
	if !got.Active(time.Now()) {
		t.Errorf("the new value %q is stored already expired (ExpiresAt %v inherited from the old value)", got.Content, got.ExpiresAt)
	}
}

func TestJobs(t *testing.T) {
	path := filepath.Join(t.TempDir(), "memory.db")
	s, err := openPath(t, path, 0)
	if err != nil {
		t.Fatal(err)
	}
	if n := s.PendingJobs(); n != 0 {
		t.Fatalf("fresh PendingJobs = %d", n)
	}
	if err := s.PutJobs([]store.Job{{Owner: "o", Data: []byte("job-a")}, {Owner: "p", Data: []byte("job-b")}}); err != nil {
		t.Fatal(err)
	}
	if err := s.PutJobs([]store.Job{{Owner: "o", Data: []byte("job-c")}}); err != nil {
		t.Fatal(err)
	}
	if n := s.PendingJobs(); n != 3 {
		t.Errorf("PendingJobs = %d, want 3", n)
	}
	jobs, err := s.Jobs(10)
	if err != nil {
		t.Fatal(err)
	}
	if got := jobData(jobs); got != "job-a,job-b,job-c" {
		t.Fatalf("Jobs = %s, want in order", got)
	}
	if jobs[0].Owner != "o" || jobs[1].Owner != "p" {
		t.Errorf("jobs lost their owners: %+v", jobs)
	}
	if !(jobs[0].Seq < jobs[1].Seq && jobs[1].Seq < jobs[2].Seq) {
		t.Errorf("job seqs not increasing: %+v", jobs)
	}
	if two, _ := s.Jobs(2); jobData(two) != "job-a,job-b" {
		t.Errorf("Jobs(2) = %s", jobData(two))
	}

	// Done with its result in one transaction.
	if err := s.Update(func(tx *store.Tx) error {
		if _, _, err := tx.Upsert("o", store.Put{Content: "from job a"}); err != nil {
			return err
		}
		return tx.DeleteJob(jobs[0].Seq)
	}); err != nil {
		t.Fatal(err)
	}
	// A failed transaction keeps the job.
	if err := s.Update(func(tx *store.Tx) error {
		if err := tx.DeleteJob(jobs[1].Seq); err != nil {
			return err
		}
		return errBoom
	}); !errors.Is(err, errBoom) {
		t.Fatal(err)
	}
	if n := s.PendingJobs(); n != 2 {
		t.Errorf("PendingJobs = %d, want 2", n)
	}
	s.Close()

	s = openStore(t, path)
	left, err := s.Jobs(10)
	if err != nil {
		t.Fatal(err)
	}
	if got := jobData(left); got != "job-b,job-c" {
		t.Errorf("Jobs after reopen = %s, want job-b,job-c", got)
	}
	if n := s.PendingJobs(); n != 2 {
		t.Errorf("PendingJobs after reopen = %d, want 2", n)
	}
	// New jobs come after the old ones.
	if err := s.PutJobs([]store.Job{{Owner: "o", Data: []byte("job-d")}}); err != nil {
		t.Fatal(err)
	}
	if more, _ := s.Jobs(10); jobData(more) != "job-b,job-c,job-d" {
		t.Errorf("Jobs = %s", jobData(more))
	}
	if n := len(all(t, s, "o")); n != 1 {
		t.Errorf("job result lost: %d memories", n)
	}
}

func jobData(jobs []store.Job) string {
	var parts []string
	for _, j := range jobs {
		parts = append(parts, string(j.Data))
	}
	return strings.Join(parts, ",")
}

func TestShards(t *testing.T) {
	path := filepath.Join(t.TempDir(), "memory.db")
	s, err := openPath(t, path, 0)
	if err != nil {
		t.Fatal(err)
	}
	if k, err := s.Shards(8); err != nil || k != 8 {
		t.Fatalf("Shards(8) = %d, %v", k, err)
	}
	if k, err := s.Shards(64); err != nil || k != 8 {
		t.Errorf("Shards(64) after 8 = %d, %v; want the recorded 8", k, err)
	}
	s.Close()
	s = openStore(t, path)
	if k, err := s.Shards(3); err != nil || k != 8 {
		t.Errorf("Shards(3) after reopen = %d, %v; want 8", k, err)
	}
}

func TestConcurrentUpserts(t *testing.T) {
	s := newStore(t)
	const owners, each = 8, 40
	var wg sync.WaitGroup
	errs := make(chan error, owners*2)
	for o := 0; o < owners; o++ {
		owner := s.OwnerID(fmt.Sprintf("user-%d", o))
		wg.Add(2)
		go func() {
			defer wg.Done()
			for i := 0; i < each; i++ {
				err := s.Update(func(tx *store.Tx) error {
					_, _, err := tx.Upsert(owner, store.Put{Content: fmt.Sprintf("fact %d of %s", i, owner)})
					return err
				})
				if err != nil {
					errs <- err
					return
				}
			}
		}()
		go func() { // readers at the same time
			defer wg.Done()
			for i := 0; i < each; i++ {
				err := s.View(func(tx *store.Tx) error {
					return tx.ForEach(owner, func(m *store.Memory) error {
						if m.Owner != owner {
							return fmt.Errorf("owner %s saw %+v", owner, m)
						}
						return nil
					})
				})
				if err != nil {
					errs <- err
					return
				}
				_ = s.LastSeq()
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	ids := map[uint64]bool{}
	for o := 0; o < owners; o++ {
		owner := s.OwnerID(fmt.Sprintf("user-%d", o))
		ms := all(t, s, owner)
		if len(ms) != each {
			t.Errorf("owner %d has %d memories, want %d", o, len(ms), each)
		}
		for _, m := range ms {
			if ids[m.ID] {
				t.Errorf("id %d used twice", m.ID)
			}
			ids[m.ID] = true
		}
	}
	if got := s.LastSeq(); got != owners*each {
		t.Errorf("LastSeq = %d, want %d", got, owners*each)
	}
	if cs, _ := changes(t, s, 0); len(cs) != owners*each {
		t.Errorf("change log has %d entries, want %d", len(cs), owners*each)
	}
}

func BenchmarkUpsert(b *testing.B) {
	s := newStore(b)
	const perTx = 1000
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		err := s.Update(func(tx *store.Tx) error {
			for j := 0; j < perTx; j++ {
				owner := fmt.Sprintf("owner-%02d", j%16)
				_, _, err := tx.Upsert(owner, store.Put{
					Kind:    "note",
					Content: fmt.Sprintf("benchmark memory %d in batch %d: the user likes item %d", j, i, j*7),
				})
				if err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(b.N*perTx)/b.Elapsed().Seconds(), "puts/s")
}

// TestPeekAll: an owner's memories are peeked in id order, with the digest of
// their current text, and counted only as far as asked.
func TestPeekAll(t *testing.T) {
	s := newStore(t)
	digest := func(content, context string) []byte { return []byte(content + "|" + context) }
	for i := range 3 {
		content := fmt.Sprint("note ", i)
		upsert(t, s, "small", store.Put{Kind: "note", Key: fmt.Sprint("k", i), Content: content, Context: "ctx", Digest: digest(content, "ctx")})
	}
	upsert(t, s, "small", store.Put{Kind: "note", Key: "k1", Content: "note 1, updated", Digest: digest("note 1, updated", "")})
	for i := range 5 {
		upsert(t, s, "large", store.Put{Kind: "note", Content: fmt.Sprint("other ", i)})
	}
	err := s.View(func(tx *store.Tx) error {
		var got []string
		err := tx.PeekAll("small", func(p *store.Peek) error {
			m, err := p.Memory()
			if err != nil {
				return err
			}
			if m.ID != p.ID {
				t.Errorf("peek id %d, record %d", p.ID, m.ID)
			}
			got = append(got, string(p.Terms()))
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if want := []string{"note 0|ctx", "note 1, updated|", "note 2|ctx"}; !reflect.DeepEqual(got, want) {
			t.Errorf("digests %q, want %q", got, want)
		}
		for _, c := range []struct {
			owner      string
			limit, got int
		}{{"small", 4, 3}, {"small", 3, 3}, {"small", 2, 3}, {"large", 2, 3}, {"large", 10, 5}, {"nobody", 1, 0}} {
			if n, err := tx.CountAtMost(c.owner, c.limit); err != nil || n != c.got {
				t.Errorf("CountAtMost(%s, %d) = %d, %v; want %d", c.owner, c.limit, n, err, c.got)
			}
		}
		return tx.PeekAll("nobody", func(p *store.Peek) error {
			t.Error("a memory of an unknown owner")
			return nil
		})
	})
	if err != nil {
		t.Fatal(err)
	}
}
