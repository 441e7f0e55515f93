package store

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"strings"
	"sync/atomic"

	bolt "go.etcd.io/bbolt"
)

// guard.go contains what bbolt does with a damaged page at run time: it
// panics (an assertion, a slice indexed past its end, or, with faults
// turned into panics, a read past its mapping). Every call into bbolt runs
// under guard, which turns the panic into an error; a panic raised inside
// bbolt marks the store damaged: from then on every write is refused
// (writing through a damaged freelist could overwrite what is intact), and
// reads go on, each under guard, so what is intact can still be read and
// exported. A panic raised by this module's own code is returned as an
// error with its stack, and does not mark the store.

// damage is the first damage found in a running store.
type damage struct {
	err atomic.Pointer[DamageError]
	// onDamaged hears of it, once.
	onDamaged atomic.Pointer[func(error)]
}

// Damaged returns the damage found in the store (a *DamageError), or nil.
func (s *DB) Damaged() error {
	if e := s.damage.err.Load(); e != nil {
		return e
	}
	return nil
}

// OnDamaged sets fn to be called (on its own goroutine, once) when the
// store is found damaged while running.
func (s *DB) OnDamaged(fn func(error)) { s.damage.onDamaged.Store(&fn) }

// markDamaged records damage, the first time.
func (s *DB) markDamaged(what string) *DamageError {
	e := &DamageError{Path: s.path, What: what}
	if s.damage.err.CompareAndSwap(nil, e) {
		if fn := s.damage.onDamaged.Load(); fn != nil {
			go (*fn)(e)
		}
		return e
	}
	return s.damage.err.Load()
}

// guard runs fn, a call into bbolt, turning a panic into an error (and
// faults on the file's mapping into panics meanwhile).
func (s *DB) guard(fn func() error) (err error) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		r := recover()
		if r == nil {
			return
		}
		p, ok := r.(*boltPanic)
		if !ok {
			p = &boltPanic{value: r}
			p.where, p.inBolt = inBolt()
		}
		if p.inBolt {
			err = s.markDamaged(fmt.Sprintf("%v, in %s", p.value, p.where))
			return
		}
		err = fmt.Errorf("memory store: internal error (please report it): %v\n%s", p.value, debug.Stack())
	}()
	return fn()
}

// boltPanic is a panic recovered, and raised again once a transaction was
// let go, with where it was first raised.
type boltPanic struct {
	value  any
	where  string
	inBolt bool
}

// updateTx runs fn in a write transaction of b, as bbolt's Update does but
// for a panic: Update's answer to one is a rollback that, without a
// written freelist, rebuilds it by walking every page of the file on a
// goroutine of its own, where damage panics beyond any recover. This lets
// the transaction go without that walk (the store is marked damaged and
// writes no more), then raises the panic again for guard.
func updateTx(b *bolt.DB, fn func(*bolt.Tx) error) error {
	tx, err := b.Begin(true)
	if err != nil {
		return err
	}
	defer func() {
		r := recover()
		if r == nil {
			return
		}
		p := &boltPanic{value: r}
		p.where, p.inBolt = inBolt()
		func() {
			defer func() { _ = recover() }() // its own state may be damaged too
			_ = tx.Rollback()
		}()
		panic(p)
	}()
	if err := fn(tx); err != nil {
		_ = tx.Rollback()
		return err
	}
	return tx.Commit()
}

// inBolt reports whether the panic being recovered was raised in bbolt's
// code (or by a fault reading its mapping), and where: called from the
// deferred recover, the frames below it are the panic's.
func inBolt() (where string, ok bool) {
	pc := make([]uintptr, 64)
	n := runtime.Callers(3, pc)
	frames := runtime.CallersFrames(pc[:n])
	for {
		f, more := frames.Next()
		fn := f.Function
		switch {
		case strings.HasPrefix(fn, "runtime."):
			if fn == "runtime.sigpanic" {
				where = "a read of the file's mapping"
			}
		case strings.HasPrefix(fn, "go.etcd.io/bbolt"):
			return fn[strings.LastIndex(fn, "/")+1:], true
		default:
			// The first frame outside the runtime is where it was raised.
			return where, where != ""
		}
		if !more {
			return where, where != ""
		}
	}
}

// boltView is bbolt's View under guard.
func (s *DB) boltView(fn func(*bolt.Tx) error) error {
	return s.guard(func() error { return s.bolt.View(fn) })
}

// boltUpdate is bbolt's Update under guard, refused once the store is
// damaged.
func (s *DB) boltUpdate(fn func(*bolt.Tx) error) error {
	if err := s.refuseDamaged(); err != nil {
		return err
	}
	return s.guard(func() error { return updateTx(s.bolt, fn) })
}

// refuseDamaged is the error of a write to a damaged store.
func (s *DB) refuseDamaged() error {
	if e := s.damage.err.Load(); e != nil {
		return e
	}
	return nil
}
