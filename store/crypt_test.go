package store_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/caddy-memory/memory/internal/seal"
	"github.com/caddy-memory/memory/store"
)

func testKey(b byte) string {
	return base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{b}, seal.KeySize))
}

func ring(t testing.TB, current byte, old ...byte) *seal.Ring {
	t.Helper()
	var olds []string
	for _, o := range old {
		olds = append(olds, testKey(o))
	}
	r, err := seal.NewRing(testKey(current), olds)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func openSealed(t testing.TB, path string, keys *seal.Ring) *store.DB {
	t.Helper()
	s, err := store.OpenWith(path, store.Options{LockTimeout: 200 * time.Millisecond, Keys: keys})
	if err != nil {
		t.Fatalf("OpenWith(%s): %v", path, err)
	}
	return s
}

// secrets are distinctive strings written everywhere a store keeps user
// text: content, context, history, memory keys, sessions, conversation
// references, embeddings, pending turns, sessions waiting to be distilled.
var secrets = []string{"zqmarzipan", "zqcontext", "zqhistory", "zqkeyname", "zqsession", "zqresponse", "zqconversation", "zqvector", "zqpendingturn", "zqheldturn"}

// fill writes the secrets into s for owner, and returns the memory's id.
func fill(t testing.TB, s *store.DB, owner string) uint64 {
	t.Helper()
	var id uint64
	err := s.Update(func(tx *store.Tx) error {
		m, _, err := tx.Upsert(owner, store.Put{Kind: "preference", Key: "preference:zqkeyname", Content: "User likes zqhistory.",
			Session: "zqsession", Digest: []byte("zqdigestbytes")})
		if err != nil {
			return err
		}
		if _, _, err := tx.Upsert(owner, store.Put{Kind: "preference", Key: "preference:zqkeyname", Content: "User likes zqmarzipan.",
			Context: "zqcontext", Session: "zqsession"}); err != nil {
			return err
		}
		id = m.ID
		if err := tx.SetConversation(owner, "zqresponse", "zqconversation"); err != nil {
			return err
		}
		if err := tx.PutVector(owner, id, []byte("zqvector")); err != nil {
			return err
		}
		return tx.PutSession(store.SessionState{Owner: owner, Session: "zqsession", Last: time.Unix(1, 0)})
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.PutJobs([]store.Job{{Owner: owner, Data: []byte("zqpendingturn")}}); err != nil {
		t.Fatal(err)
	}
	if err := s.HoldJobs([]store.Job{{Owner: owner, Data: []byte("zqheldturn")}}); err != nil {
		t.Fatal(err)
	}
	return id
}

// check reads back what fill wrote.
func check(t testing.TB, s *store.DB, owner string, id uint64) {
	t.Helper()
	m := mustGet(t, s, owner, id)
	if m.Content != "User likes zqmarzipan." || m.Context != "zqcontext" || len(m.History) != 1 || m.History[0].Content != "User likes zqhistory." {
		t.Errorf("memory read back as %+v", m)
	}
	if c := s.Conversation(owner, "zqresponse"); c != "zqconversation" {
		t.Errorf("conversation %q", c)
	}
	err := s.View(func(tx *store.Tx) error {
		if v := tx.Vector(owner, id); string(v) != "zqvector" {
			t.Errorf("vector %q", v)
		}
		if st, ok := tx.Session(owner, "zqsession"); !ok || st.Session != "zqsession" {
			t.Errorf("session %+v %v", st, ok)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if jobs, err := s.Jobs(10); err != nil || len(jobs) != 1 || string(jobs[0].Data) != "zqpendingturn" {
		t.Errorf("jobs %+v %v", jobs, err)
	}
	if jobs, err := s.HeldJobs(10); err != nil || len(jobs) != 1 || string(jobs[0].Data) != "zqheldturn" {
		t.Errorf("held turns %+v %v", jobs, err)
	}
	// The key still finds the memory: a restatement updates it.
	m2, op := upsert(t, s, owner, store.Put{Kind: "preference", Key: "preference:zqkeyname", Content: "User likes zqmarzipan.",
		Context: "zqcontext", Session: "zqsession"})
	if m2.ID != id || op != store.Updated {
		t.Errorf("restating by key: id %d op %s, want %d updated", m2.ID, op, id)
	}
}

// leaked returns the secrets found in the file at path.
func leaked(t testing.TB, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var found []string
	for _, s := range append(secrets, "zqdigestbytes") {
		if bytes.Contains(b, []byte(s)) {
			found = append(found, s)
		}
	}
	return found
}

func TestSealedStoreHoldsNoPlaintext(t *testing.T) {
	path := filepath.Join(t.TempDir(), "memory.db")
	s := openSealed(t, path, ring(t, 1))
	if !s.Encrypted() {
		t.Fatal("a new store opened with keys is not encrypted")
	}
	owner := s.OwnerID("sk-raw-owner-key")
	id := fill(t, s, owner)
	check(t, s, owner, id)
	s.Close()
	if found := leaked(t, path); len(found) > 0 {
		t.Errorf("the sealed store file holds %v in the clear", found)
	}

	s = openSealed(t, path, ring(t, 1))
	defer s.Close()
	if s.OwnerID("sk-raw-owner-key") != owner {
		t.Error("owner ids changed across a reopen: the sealed secret did not come back")
	}
	check(t, s, owner, id)
}

func fileSum(t testing.TB, path string) [32]byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return sha256.Sum256(b)
}

// TestRefusedOpenTouchesNothing: without the key or with another, Open
// fails saying which and what to do, and the file is byte for byte the
// same.
func TestRefusedOpenTouchesNothing(t *testing.T) {
	path := filepath.Join(t.TempDir(), "memory.db")
	s := openSealed(t, path, ring(t, 1))
	fill(t, s, s.OwnerID("o"))
	s.Close()
	keyID := ring(t, 1).Current().ID()
	before := fileSum(t, path)

	for _, c := range []struct {
		name string
		keys *seal.Ring
		want error
		says []string
	}{
		{"no key", nil, store.ErrKeyRequired, []string{keyID, "encryption { key", "nothing was read or changed"}},
		{"wrong key", ring(t, 2), store.ErrWrongKey, []string{keyID, ring(t, 2).Current().ID(), "old_keys", "nothing was read or changed"}},
	} {
		_, err := store.OpenWith(path, store.Options{LockTimeout: 200 * time.Millisecond, Keys: c.keys})
		if !errors.Is(err, c.want) {
			t.Fatalf("%s: %v, want %v", c.name, err, c.want)
		}
		for _, s := range c.says {
			if !strings.Contains(err.Error(), s) {
				t.Errorf("%s: the error does not say %q: %v", c.name, s, err)
			}
		}
		if fileSum(t, path) != before {
			t.Fatalf("%s: the refused open changed the file", c.name)
		}
	}
	if _, err := os.Stat(path + ".convert"); err == nil {
		t.Error("a refused open left a file beside the store")
	}
}

// TestSwappedRecordDoesNotOpen: a sealed record copied onto another memory
// (or another owner) is detected, not read as that memory.
func TestSwappedRecordDoesNotOpen(t *testing.T) {
	path := filepath.Join(t.TempDir(), "memory.db")
	s := openSealed(t, path, ring(t, 1))
	alice, bob := s.OwnerID("alice"), s.OwnerID("bob")
	a, _ := upsert(t, s, alice, store.Put{Content: "Alice's own memory"})
	a2, _ := upsert(t, s, alice, store.Put{Content: "Alice's second memory"})
	b, _ := upsert(t, s, bob, store.Put{Content: "Bob's own memory"})
	s.Close()

	db, err := bolt.Open(path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	key := func(id uint64) []byte { return []byte{0, 0, 0, 0, 0, 0, byte(id >> 8), byte(id)} }
	err = db.Update(func(tx *bolt.Tx) error {
		owners := tx.Bucket([]byte("owners"))
		am, bm := owners.Bucket([]byte(alice)).Bucket([]byte("m")), owners.Bucket([]byte(bob)).Bucket([]byte("m"))
		first := bytes.Clone(am.Get(key(a.ID)))
		if err := am.Put(key(a2.ID), first); err != nil { // another id, same owner
			return err
		}
		return bm.Put(key(b.ID), first) // another owner
	})
	db.Close()
	if err != nil {
		t.Fatal(err)
	}

	s = openSealed(t, path, ring(t, 1))
	defer s.Close()
	if _, err := get(t, s, alice, a.ID); err != nil {
		t.Errorf("the record in its own place: %v", err)
	}
	for _, c := range []struct {
		owner string
		id    uint64
	}{{alice, a2.ID}, {bob, b.ID}} {
		if m, err := get(t, s, c.owner, c.id); !errors.Is(err, seal.ErrOpen) {
			t.Errorf("a record moved to memory %d: read as %+v, %v (want seal.ErrOpen)", c.id, m, err)
		}
	}
}

// plainFilled makes a closed plaintext store holding the secrets.
func plainFilled(t *testing.T) (path, owner string, id uint64) {
	t.Helper()
	path = filepath.Join(t.TempDir(), "memory.db")
	s := openSealed(t, path, nil)
	owner = s.OwnerID("o")
	id = fill(t, s, owner)
	s.Close()
	return path, owner, id
}

// TestConvertBothWays: a plaintext store converted holds nothing in the
// clear and reads the same; converted back, it opens without keys.
func TestConvertBothWays(t *testing.T) {
	path, owner, id := plainFilled(t)
	if len(leaked(t, path)) == 0 {
		t.Fatal("the test's secrets are not in the plaintext file: the scan would prove nothing")
	}

	s := openSealed(t, path, ring(t, 1))
	if s.Encrypted() {
		t.Fatal("a plaintext store opened with keys was encrypted without Convert")
	}
	digests := 0
	n, err := s.Convert(ring(t, 1), func(*store.Memory) []byte { digests++; return []byte("new digest") })
	if err != nil {
		t.Fatal(err)
	}
	if n.Memories != 1 || digests != 1 || !s.Encrypted() {
		t.Errorf("converted %+v with %d digests, encrypted %v", n, digests, s.Encrypted())
	}
	check(t, s, owner, id)
	s.Close()
	if found := leaked(t, path); len(found) > 0 {
		t.Errorf("the converted file holds %v in the clear", found)
	}
	if _, err := store.OpenWith(path, store.Options{}); !errors.Is(err, store.ErrKeyRequired) {
		t.Errorf("converted store opened without a key: %v", err)
	}

	s = openSealed(t, path, ring(t, 1))
	if s.OwnerID("o") != owner {
		t.Error("the owner-hashing secret changed in the conversion")
	}
	if _, err := s.Convert(nil, nil); err != nil {
		t.Fatal(err)
	}
	s.Close()
	s = openSealed(t, path, nil)
	defer s.Close()
	if s.Encrypted() {
		t.Error("converted back, the store is still encrypted")
	}
	check(t, s, owner, id)
}

// TestUnfinishedConvertIsDiscarded: a conversion cut short leaves its new
// file beside the store; the store is whole, and the leftover goes at the
// next open.
func TestUnfinishedConvertIsDiscarded(t *testing.T) {
	path, owner, id := plainFilled(t)
	if err := os.WriteFile(path+".convert", []byte("half a file"), 0o600); err != nil {
		t.Fatal(err)
	}
	s := openSealed(t, path, nil)
	defer s.Close()
	if _, err := os.Stat(path + ".convert"); !os.IsNotExist(err) {
		t.Errorf("the unfinished conversion is still there: %v", err)
	}
	check(t, s, owner, id)
}

// TestRotation: with the new key current and the old one in old_keys,
// everything reads; after the pass, the old key is not needed, and alone it
// no longer opens the store.
func TestRotation(t *testing.T) {
	path := filepath.Join(t.TempDir(), "memory.db")
	s := openSealed(t, path, ring(t, 1))
	owner := s.OwnerID("o")
	id := fill(t, s, owner)
	s.Close()

	s = openSealed(t, path, ring(t, 2, 1))
	if !s.Resealing() {
		t.Fatal("a store sealed with the old key does not need resealing")
	}
	check(t, s, owner, id)
	if err := s.BeginReseal(); err != nil {
		t.Fatal(err)
	}
	s.Close()
	// Interrupted here: the new key alone is refused, saying why.
	_, err := store.OpenWith(path, store.Options{Keys: ring(t, 2)})
	if !errors.Is(err, store.ErrWrongKey) || !strings.Contains(err.Error(), "re-encrypted") {
		t.Fatalf("mid-rotation open without the old key: %v", err)
	}

	s = openSealed(t, path, ring(t, 2, 1))
	total := 0
	for {
		n, err := s.ResealOwner(owner, 2)
		if err != nil {
			t.Fatal(err)
		}
		total += n
		if n < 2 {
			break
		}
	}
	n, err := s.ResealShared(100)
	if err != nil {
		t.Fatal(err)
	}
	// The vector and the conversation reference; the job, the held turn
	// and the session. (The memory was sealed anew by check's restatement.)
	if total != 2 || n != 3 {
		t.Errorf("resealed %d owner values and %d shared ones, want 2 and 3", total, n)
	}
	if err := s.FinishReseal(); err != nil {
		t.Fatal(err)
	}
	if s.Resealing() {
		t.Error("still resealing after FinishReseal")
	}
	s.Close()

	s = openSealed(t, path, ring(t, 2))
	check(t, s, owner, id)
	s.Close()
	if _, err := store.OpenWith(path, store.Options{Keys: ring(t, 1)}); !errors.Is(err, store.ErrWrongKey) {
		t.Errorf("the old key alone after the rotation: %v", err)
	}
}
