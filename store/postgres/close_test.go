package postgres

import (
	"context"
	"testing"
	"time"

	"github.com/caddy-memory/memory/internal/pgtest"
	"github.com/caddy-memory/memory/store"
)

// TestCloseEndsCallsAHungDatabaseNeverAnswers: with a database that
// accepts connections and never answers, the calls in flight (a VACUUM
// after a forget, a write, a read, once-only work) end when their caller
// stops (a cancelled context) and Close returns at once, as does the Close
// of an instance still waiting to connect.
func TestCloseEndsCallsAHungDatabaseNeverAnswers(t *testing.T) {
	url := pgtest.Database(t)
	proxy := pgtest.NewProxy(t, url)
	d, err := Open(context.Background(), proxy.URL, nil)
	if err != nil {
		t.Fatal(err)
	}
	inUse := func() int32 { st := d.pool.Stat(); return st.AcquiredConns() + st.ConstructingConns() }
	idle := inUse()
	proxy.Hang()

	d.vacuum <- struct{}{} // as after a forget
	stop, interrupt := context.WithCancel(context.Background())
	ended := make(chan error, 3)
	go func() {
		// The store's deadline for an answer is longer than the test.
		ctx, cancel := context.WithTimeout(stop, time.Minute)
		defer cancel()
		_, err := d.Write(ctx, 0, func(store.Batch) error { return nil }, func() ([]store.Mutation, error) { return nil, nil })
		ended <- err
	}()
	go func() { _, err := d.Read(stop, 0, 10); ended <- err }()
	go func() {
		_, err := d.Once(stop, "consolidate", func() error { return nil })
		ended <- err
	}()
	for deadline := time.Now().Add(5 * time.Second); inUse() < idle+4; {
		if time.Now().After(deadline) {
			t.Fatalf("the calls did not reach the database: %d connections in use", inUse())
		}
		time.Sleep(5 * time.Millisecond)
	}

	waiting, err := Open(ctxFor(t, 300*time.Millisecond), proxy.URL, nil)
	if err != nil {
		t.Fatalf("an unanswered database is waited for in the background: %v", err)
	}

	start := time.Now()
	interrupt()
	for range 3 {
		if err := <-ended; err == nil {
			t.Error("a call the database never answered succeeded")
		}
	}
	d.Close()
	waiting.Close()
	t.Logf("stopped in %v", time.Since(start))
	if took := time.Since(start); took > time.Second {
		t.Errorf("stopping took %v with the database hung", took)
	}
}

func ctxFor(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}
