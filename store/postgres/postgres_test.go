package postgres

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/caddy-memory/memory/internal/pgtest"
	"github.com/caddy-memory/memory/internal/seal"
	"github.com/caddy-memory/memory/store"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

// replica opens a store in its own directory replicating the database at
// url, as one instance would.
func replica(t *testing.T, url string) *store.DB {
	t.Helper()
	sh, err := Open(context.Background(), url, func(msg string, err error) { t.Logf("%s: %v", msg, err) })
	if err != nil {
		t.Fatal(err)
	}
	s, err := store.OpenWith(filepath.Join(t.TempDir(), "memory.db"), store.Options{Shared: sh})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func upsert(t *testing.T, s *store.DB, owner, content string) *store.Memory {
	t.Helper()
	var m *store.Memory
	err := s.Update(func(tx *store.Tx) error {
		var err error
		m, _, err = tx.Upsert(owner, store.Put{Kind: "fact", Content: content})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func contents(t *testing.T, s *store.DB, owner string) []string {
	t.Helper()
	var out []string
	err := s.View(func(tx *store.Tx) error {
		return tx.Scan(owner, 0, func(m *store.Memory) (bool, error) {
			if m.Active(time.Now()) {
				out = append(out, m.Content)
			}
			return true, nil
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// eventually waits up to two seconds for cond, as a user of another
// instance would.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(2 * time.Second); !cond(); {
		if time.Now().After(deadline) {
			t.Fatalf("after 2 s: %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestTwoReplicasShareMemories(t *testing.T) {
	url := pgtest.Database(t)
	a, b := replica(t, url), replica(t, url)
	if a.OwnerID("key-1") != b.OwnerID("key-1") {
		t.Fatal("the two instances hash owners differently; they must share the secret")
	}
	owner := a.OwnerID("key-1")
	m := upsert(t, a, owner, "I keep bees in Tromsø")
	eventually(t, "B has A's memory", func() bool { return len(contents(t, b, owner)) == 1 })

	// B's write after it continues A's numbering: ids never collide.
	m2 := upsert(t, b, owner, "my sister is called Ana")
	if m2.ID == m.ID {
		t.Fatalf("both instances gave id %d", m.ID)
	}
	eventually(t, "A has B's memory", func() bool { return len(contents(t, a, owner)) == 2 })

	// Each replica's change log names both memories, for its own index.
	for _, s := range []*store.DB{a, b} {
		cs, _, _ := s.Changes(0, 100)
		seen := map[uint64]bool{}
		for _, c := range cs {
			seen[c.ID] = true
		}
		if !seen[m.ID] || !seen[m2.ID] {
			t.Fatalf("a replica's change log misses a memory: %+v", cs)
		}
	}

	// Forgetting through A: gone from B, and from the database's rows and log.
	if err := a.Update(func(tx *store.Tx) error { _, err := tx.ForgetOwner(owner); return err }); err != nil {
		t.Fatal(err)
	}
	eventually(t, "B forgot the owner", func() bool { return len(contents(t, b, owner)) == 0 })
	conn, err := pgx.Connect(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	for _, q := range []string{
		`SELECT count(*) FROM memory_rows WHERE owner = $1`,
		`SELECT count(*) FROM memory_log WHERE owner = $1 AND seq < (SELECT max(seq) FROM memory_log)`,
		`SELECT count(*) FROM memory_rows WHERE position(convert_to('Tromsø', 'UTF8') in value) > 0 OR owner = $1`,
	} {
		var n int
		if err := conn.QueryRow(context.Background(), q, owner).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n != 0 {
			t.Errorf("%s: %d rows left after forgetting the owner", q, n)
		}
	}
	// The dead tuples holding the owner's bytes are vacuumed at once.
	eventually(t, "memory_rows vacuumed after the forget", func() bool {
		var vacuumed bool
		err := conn.QueryRow(context.Background(),
			`SELECT last_vacuum IS NOT NULL FROM pg_stat_user_tables WHERE relname = 'memory_rows'`).Scan(&vacuumed)
		return err == nil && vacuumed
	})
}

func TestInstancesStartTogetherOnAnEmptyDatabase(t *testing.T) {
	url := pgtest.Database(t)
	const n = 4
	stores := make([]*store.DB, n)
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sh, err := Open(context.Background(), url, nil)
			if err != nil {
				errs <- err
				return
			}
			stores[i], err = store.OpenWith(filepath.Join(t.TempDir(), "memory.db"), store.Options{Shared: sh})
			if err != nil {
				errs <- err
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	for _, s := range stores {
		defer s.Close()
		if s.OwnerID("k") != stores[0].OwnerID("k") {
			t.Fatal("instances that started together hash owners differently")
		}
	}
}

func TestNewInstanceStartsFromTheDatabase(t *testing.T) {
	url := pgtest.Database(t)
	a := replica(t, url)
	owner := a.OwnerID("k")
	for i := range 50 {
		upsert(t, a, owner, "fact number "+string(rune('a'+i%26))+string(rune('a'+i/26)))
	}
	c := replica(t, url)
	if got := len(contents(t, c, owner)); got != 50 {
		t.Fatalf("a new instance has %d of 50 memories", got)
	}
	if cs, _, _ := c.Changes(0, 1000); len(cs) < 50 {
		t.Fatalf("a new instance's change log has %d entries; its index would miss memories", len(cs))
	}
}

func TestReplicaBehindTheTrimmedLogIsMadeAnew(t *testing.T) {
	url := pgtest.Database(t)
	a := replica(t, url)
	owner := a.OwnerID("k")
	upsert(t, a, owner, "first")
	sh, err := Open(context.Background(), url, nil)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	b, err := store.OpenWith(filepath.Join(dir, "memory.db"), store.Options{Shared: sh})
	if err != nil {
		t.Fatal(err)
	}
	if err := b.HoldJobs([]store.Job{{Owner: owner, Data: []byte("a turn held")}}); err != nil {
		t.Fatal(err)
	}
	b.Close()
	upsert(t, a, owner, "second")
	upsert(t, a, owner, "third")
	if err := a.Update(func(tx *store.Tx) error { return nil }); err != nil {
		t.Fatal(err)
	}
	// Everything in the log is trimmed, as after an hour down.
	if err := sh2(t, url).trim(context.Background(), 0); err != nil {
		t.Fatal(err)
	}
	sh, err = Open(context.Background(), url, nil)
	if err != nil {
		t.Fatal(err)
	}
	b, err = store.OpenWith(filepath.Join(dir, "memory.db"), store.Options{Shared: sh})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if got := contents(t, b, owner); len(got) != 3 {
		t.Fatalf("the replica made anew has %q", got)
	}
	if n := b.HeldCount(); n != 1 {
		t.Errorf("the replica made anew holds %d turns, want the 1 it held", n)
	}
}

func sh2(t *testing.T, url string) *DB {
	d, err := Open(context.Background(), url, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	return d
}

func TestOnceRunsOnOneInstanceAtATime(t *testing.T) {
	url := pgtest.Database(t)
	a, b := sh2(t, url), sh2(t, url)
	inside := make(chan struct{})
	release := make(chan struct{})
	go a.Once(context.Background(), "consolidate", func() error { close(inside); <-release; return nil })
	<-inside
	ran, err := b.Once(context.Background(), "consolidate", func() error { return nil })
	if err != nil || ran {
		t.Fatalf("a second instance ran the same work at once (ran %v, err %v)", ran, err)
	}
	if ran, _ := b.Once(context.Background(), "distill", func() error { return nil }); !ran {
		t.Fatal("other work was held up by the lock")
	}
	close(release)
	eventually(t, "the lock is free again", func() bool {
		ran, _ := b.Once(context.Background(), "consolidate", func() error { return nil })
		return ran
	})
}

// BenchmarkWrite measures one write transaction through the shared
// database: the writer lock, the replay check, the rows and the log entry,
// the commit of both. With MEMORY_TEST_DATABASE_URL, on that server.
func BenchmarkWrite(b *testing.B) {
	url := pgtest.Database(b)
	sh, err := Open(context.Background(), url, nil)
	if err != nil {
		b.Fatal(err)
	}
	s, err := store.OpenWith(filepath.Join(b.TempDir(), "memory.db"), store.Options{Shared: sh})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	owner := s.OwnerID("bench")
	b.ResetTimer()
	for i := range b.N {
		err := s.Update(func(tx *store.Tx) error {
			_, _, err := tx.Upsert(owner, store.Put{Kind: "turn", Content: fmt.Sprintf("turn %d: the user said something worth keeping about their garden", i)})
			return err
		})
		if err != nil {
			b.Fatal(err)
		}
	}
}

func TestDatabaseDownRefusesWritesAndKeepsReads(t *testing.T) {
	url := pgtest.Database(t)
	a, b := replica(t, url), replica(t, url)
	owner := a.OwnerID("k")
	upsert(t, a, owner, "kept before the outage")
	eventually(t, "B has the memory", func() bool { return len(contents(t, b, owner)) == 1 })

	pgtest.Stop(t)
	err := a.Update(func(tx *store.Tx) error {
		_, _, err := tx.Upsert(owner, store.Put{Kind: "fact", Content: "written during the outage"})
		return err
	})
	if !errors.Is(err, store.ErrUnavailable) {
		t.Fatalf("a write with the database down: %v, want ErrUnavailable", err)
	}
	if got := contents(t, a, owner); len(got) != 1 {
		t.Fatalf("the refused write is in the replica: %q", got)
	}
	if got := contents(t, b, owner); len(got) != 1 {
		t.Fatalf("reads with the database down: %q", got)
	}
	pgtest.Start(t)

	upsert(t, a, owner, "written after the outage")
	eventually(t, "B follows again", func() bool { return len(contents(t, b, owner)) == 2 })
}

func TestInstanceStartsFromItsReplicaWhileTheDatabaseIsDown(t *testing.T) {
	url := pgtest.Database(t)
	path := filepath.Join(t.TempDir(), "memory.db")
	open := func() (*store.DB, error) {
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		defer cancel()
		sh, err := Open(ctx, url, nil)
		if err != nil {
			return nil, err
		}
		return store.OpenWith(path, store.Options{Shared: sh})
	}
	a, err := open()
	if err != nil {
		t.Fatal(err)
	}
	owner := a.OwnerID("k")
	upsert(t, a, owner, "known before the restart")
	a.Close()

	pgtest.Stop(t)
	if _, err := Open(context.Background(), url, nil); err != nil {
		t.Fatalf("opening an unreachable database should wait for it in the background: %v", err)
	}
	if _, err := store.OpenWith(filepath.Join(t.TempDir(), "memory.db"), store.Options{Shared: sh2(t, url)}); err == nil {
		t.Fatal("an instance without a replica started with the database down; it cannot know the owner secret")
	}
	a, err = open()
	if err != nil {
		t.Fatalf("an instance with a replica must start while the database is down: %v", err)
	}
	defer a.Close()
	if a.OwnerID("k") != owner {
		t.Fatal("the owner secret changed")
	}
	if got := contents(t, a, owner); len(got) != 1 {
		t.Fatalf("started from its replica with %q", got)
	}
	pgtest.Start(t)
	eventually(t, "writes work once the database answers", func() bool {
		return a.Update(func(tx *store.Tx) error {
			_, _, err := tx.Upsert(owner, store.Put{Kind: "fact", Content: "after"})
			return err
		}) == nil
	})
}

// TestEncryptedStorageKeepsOnlySealedValuesInTheDatabase: with
// encryption, PostgreSQL holds the same sealed values as the file, and a
// second instance with the key reads them.
func TestEncryptedStorageKeepsOnlySealedValuesInTheDatabase(t *testing.T) {
	url := pgtest.Database(t)
	keys, err := seal.NewRing(base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{7}, seal.KeySize)), nil)
	if err != nil {
		t.Fatal(err)
	}
	open := func() *store.DB {
		s, err := store.OpenWith(filepath.Join(t.TempDir(), "memory.db"), store.Options{Shared: sh2(t, url), Keys: keys})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	}
	a := open()
	owner := a.OwnerID("sk-raw-owner-key")
	upsert(t, a, owner, "I keep zqplaintextbees in Tromsø")
	b := open()
	if got := contents(t, b, owner); len(got) != 1 || !strings.Contains(got[0], "zqplaintextbees") {
		t.Fatalf("another instance with the key reads %q", got)
	}
	conn, err := pgx.Connect(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	for _, secret := range []string{"zqplaintextbees", "sk-raw-owner-key", "Tromsø"} {
		var n int
		err := conn.QueryRow(context.Background(), `SELECT (SELECT count(*) FROM memory_rows WHERE position(convert_to($1, 'UTF8') in value) > 0 OR position(convert_to($1, 'UTF8') in key) > 0)
			+ (SELECT count(*) FROM memory_log WHERE position(convert_to($1, 'UTF8') in mutations) > 0)`, secret).Scan(&n)
		if err != nil {
			t.Fatal(err)
		}
		if n != 0 {
			t.Errorf("%q is in the clear in %d rows of the database", secret, n)
		}
	}
	// Without the key, an instance refuses to open it.
	if _, err := store.OpenWith(filepath.Join(t.TempDir(), "memory.db"), store.Options{Shared: sh2(t, url)}); !errors.Is(err, store.ErrKeyRequired) {
		t.Fatalf("opening without the key: %v, want ErrKeyRequired", err)
	}
}

// TestLastWriteOfARowInATransactionCounts: the database keeps the state a
// transaction ended with, however many times it wrote a row: a replica
// made from it anew has what the writer has.
func TestLastWriteOfARowInATransactionCounts(t *testing.T) {
	url := pgtest.Database(t)
	a := replica(t, url)
	owner := a.OwnerID("k")
	err := a.Update(func(tx *store.Tx) error {
		gone, _, err := tx.Upsert(owner, store.Put{Kind: "fact", Key: "k1", Content: "first, then purged"})
		if err != nil {
			return err
		}
		if _, _, err := tx.Upsert(owner, store.Put{Kind: "fact", Key: "k2", Content: "version one"}); err != nil {
			return err
		}
		if _, _, err := tx.Upsert(owner, store.Put{Kind: "fact", Key: "k2", Content: "version two"}); err != nil {
			return err
		}
		return tx.Purge(owner, gone.ID)
	})
	if err != nil {
		t.Fatal(err)
	}
	want := strings.Join(contents(t, a, owner), "|")
	if want != "version two" {
		t.Fatalf("the writer has %q", want)
	}
	if got := strings.Join(contents(t, replica(t, url), owner), "|"); got != want {
		t.Fatalf("a replica made from the database has %q, the writer %q", got, want)
	}
}

// TestHeldTurnsStayWithTheirInstance: turns held while the database did not
// answer are this instance's alone (no other instance learns them too),
// and forgetting their owner, through either instance, drops them. (A
// replica made anew keeps them: TestReplicaBehindTheTrimmedLogIsMadeAnew.)
func TestHeldTurnsStayWithTheirInstance(t *testing.T) {
	url := pgtest.Database(t)
	a, b := replica(t, url), replica(t, url)
	ana, bob := a.OwnerID("key-ana"), a.OwnerID("key-bob")
	if err := a.HoldJobs([]store.Job{{Owner: ana, Data: []byte("ana's turn")}, {Owner: bob, Data: []byte("bob's turn")}}); err != nil {
		t.Fatal(err)
	}
	upsert(t, a, ana, "written after the hold")
	eventually(t, "B follows A", func() bool { return len(contents(t, b, ana)) == 1 })
	if n := b.HeldCount(); n != 0 {
		t.Fatalf("B holds %d of A's turns", n)
	}
	if jobs, _ := b.Jobs(10); len(jobs) != 0 {
		t.Fatalf("B has A's held turns as jobs: %v", jobs)
	}
	if n := a.HeldCount(); n != 2 {
		t.Fatalf("A holds %d turns, want 2", n)
	}

	// Forgotten through B: A's replay drops Ana's held turn.
	if err := b.Update(func(tx *store.Tx) error { _, err := tx.ForgetOwner(ana); return err }); err != nil {
		t.Fatal(err)
	}
	eventually(t, "A drops the held turn of an owner B forgot", func() bool { return a.HeldCount() == 1 })
	// Forgotten through A: in the same transaction.
	var f store.Forgotten
	err := a.Update(func(tx *store.Tx) error {
		var err error
		f, err = tx.ForgetOwner(bob)
		return err
	})
	if err != nil || f.Jobs != 1 || a.HeldCount() != 0 {
		t.Fatalf("forgetting Bob through A: %+v, %v; %d turns still held", f, err, a.HeldCount())
	}
}
