package index

import (
	"context"
	"errors"
	"fmt"

	"github.com/blevesearch/bleve/v2"
)

// A shard whose files fail as they are read or written (a damaged segment,
// a block of an encrypted one that does not open) is Damaged from then on:
// the store still holds every memory, so the shard is only rebuilt from it.
// Its owners are no longer held (Holds is false), so the engine searches
// their records meanwhile; a search of it fails with ErrDamaged; changes
// for it are skipped, as for a shard being rebuilt; Rebuild makes it Ready
// again. OnDamaged tells the engine, which rebuilds it in the background.
// A shard that does not open at all is recreated empty at Open instead.

// ErrDamaged is what a search of a damaged shard fails with (a
// *DamageError): the caller may search the owner's records instead.
var ErrDamaged = errors.New("memory index shard is damaged")

// DamageError says which shard is damaged, and what failed.
type DamageError struct {
	Shard int
	Path  string
	Err   error
}

func (e *DamageError) Error() string {
	return fmt.Sprintf("memory index shard %s is damaged (%v); it is being rebuilt from the store", e.Path, e.Err)
}

// Is makes a DamageError an ErrDamaged.
func (e *DamageError) Is(target error) bool { return target == ErrDamaged }

func (e *DamageError) Unwrap() error { return e.Err }

// OnDamaged sets fn to be called, on its own goroutine, when a shard is
// found damaged (once per damage, until Rebuild replaces it).
func (x *Index) OnDamaged(fn func(shard int, err error)) { x.onDamaged.Store(&fn) }

// use runs fn on the index of owner's shard, with the shard read-locked
// (so neither Close nor a rebuild's swap happens under it): the zero value
// while the shard is being rebuilt, a *DamageError once it is damaged, and
// a panic of Bleve's readers (damaged bytes can make them index past a
// slice's end) as an error.
func use[T any](ctx context.Context, x *Index, owner string, fn func(idx bleve.Index) (T, error)) (v T, err error) {
	s, unlock, err := x.shardFor(owner)
	if err != nil {
		return v, err
	}
	idx, state := s.idx, s.state
	func() {
		defer func() {
			if r := recover(); r != nil {
				err = fmt.Errorf("reading the shard failed: %v", r)
			}
		}()
		if state == Ready && idx != nil {
			v, err = fn(idx)
		}
	}()
	unlock()
	if state == Damaged {
		return v, &DamageError{Shard: s.i, Path: s.path, Err: errors.New("found damaged earlier")}
	}
	return v, x.checked(ctx, s, idx, err)
}

// checked passes on err, a read or write of shard s that used its index
// idx, unless it says the files are damaged: then s is marked Damaged and
// a *DamageError returned. Call without s.mu held. A cancelled search, or a
// closed index, says nothing of the files.
func (x *Index) checked(ctx context.Context, s *shard, idx bleve.Index, err error) error {
	switch {
	case err == nil:
		return nil
	case ctx.Err() != nil,
		errors.Is(err, ErrClosed), errors.Is(err, bleve.ErrorIndexClosed),
		errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return err
	}
	x.markDamaged(s, idx, err)
	return &DamageError{Shard: s.i, Path: s.path, Err: err}
}

// markDamaged marks s damaged after err, unless the index that failed
// (idx) was replaced meanwhile by a rebuild.
func (x *Index) markDamaged(s *shard, idx bleve.Index, err error) {
	s.mu.Lock()
	first := s.idx == idx && s.state != Damaged
	if first {
		s.state = Damaged
	}
	s.mu.Unlock()
	if fn := x.onDamaged.Load(); first && fn != nil {
		go (*fn)(s.i, err)
	}
}
