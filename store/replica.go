package store

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"time"

	bolt "go.etcd.io/bbolt"
	bolterrors "go.etcd.io/bbolt/errors"
)

// Shared is a database that the stores of several instances share: the
// source of truth when memories must be the same behind a load balancer
// (store/postgres implements it with PostgreSQL). The store's file is then
// this instance's replica of it: reads stay local, every write transaction
// commits to the shared database before the file, and what other instances
// commit is replayed into the file as it arrives. Whatever a transaction
// does, it does on both, so every method of the store works the same on
// either.
type Shared interface {
	// ID names the database, so a replica made from another one (or from
	// this one before it was recreated) is never taken for current.
	ID() string
	// Write runs one write transaction under the database's writer lock:
	// it passes apply every batch committed after `after`, in order (what
	// other instances wrote), then commits what muts returns as the next
	// batch and returns its sequence number (after, or the last applied,
	// when muts returns none). An error from apply or muts rolls back.
	// The deadline of ctx bounds the wait for the database to answer; a
	// cancellation of ctx is a stop: every call ends at once with it.
	Write(ctx context.Context, after uint64, apply func(Batch) error, muts func() ([]Mutation, error)) (uint64, error)
	// Read returns up to limit batches committed after `after`, in order,
	// without the writer lock.
	Read(ctx context.Context, after uint64, limit int) ([]Batch, error)
	// Snapshot passes every bucket (MutCreate, MutSequence) and row
	// (MutPut) of the current state, parents first, then the batches
	// committed while they were read (they may be read in several short
	// transactions), and returns the sequence number that the whole,
	// applied in order, is at.
	Snapshot(ctx context.Context, fn func(Mutation) error) (uint64, error)
	// Changed is signalled when another instance may have committed.
	Changed() <-chan struct{}
	// Once runs fn unless another instance is running the work of the same
	// name, and reports whether it ran: for background work that must
	// happen once, not once per instance.
	Once(ctx context.Context, name string, fn func() error) (bool, error)
	Close() error
}

// Batch is one committed write transaction.
type Batch struct {
	Seq       uint64
	Mutations []Mutation
}

// ErrUnavailable wraps the errors of a write the shared database did not
// take (unreachable, timed out): nothing was written; it can be retried.
var ErrUnavailable = errors.New("the shared memory database did not take the write (nothing was changed); try again when it answers")

// ErrTrimmed is returned by Shared when the batches after a position are no
// longer all kept: the replica must be made anew from a snapshot.
var ErrTrimmed = errors.New("the shared database no longer keeps the changes this replica needs")

// sharedTimeout bounds one write transaction on the shared database: a
// database that does not answer fails the write (the caller retries or
// fails open) instead of holding up the store.
const sharedTimeout = 5 * time.Second

var (
	keyReplicaSeq = []byte("local:replica_seq")
	keyReplicaOf  = []byte("local:replica_of")
)

func replicaSeq(tx *bolt.Tx) uint64 {
	if m := tx.Bucket(bucketMeta); m != nil {
		return decodeU64(m.Get(keyReplicaSeq))
	}
	return 0
}

func setReplicaSeq(tx *bolt.Tx, seq uint64) error {
	m, err := tx.CreateBucketIfNotExists(bucketMeta)
	if err != nil {
		return err
	}
	return m.Put(keyReplicaSeq, encodeU64(seq))
}

// sharedUpdate is update on a replica (see Shared).
func (s *DB) sharedUpdate(fn func(*kvTx) error) error {
	if !s.current() {
		if err := s.resync(); err != nil {
			return fmt.Errorf("%w: %w", ErrUnavailable, err)
		}
	}
	for attempt := 0; ; attempt++ {
		applied := false
		var forgot []string
		var fnErr error // the transaction's own, passed on as it is
		ctx, cancel := context.WithTimeout(s.stop, sharedTimeout)
		err := s.boltUpdate(func(btx *bolt.Tx) error {
			after := replicaSeq(btx)
			seq, err := s.shared.Write(ctx, after, func(b Batch) error {
				applied = true
				return applyBatch(btx, b, &forgot)
			}, func() ([]Mutation, error) {
				j := &journal{}
				if fnErr = fn(newKV(btx, j)); fnErr != nil {
					return nil, fnErr
				}
				return j.muts, nil
			})
			if err != nil && err != fnErr && !errors.Is(err, ErrTrimmed) {
				return fmt.Errorf("%w: %w", ErrUnavailable, err)
			}
			if err != nil {
				return err
			}
			if seq != after {
				return setReplicaSeq(btx, seq)
			}
			return nil
		})
		cancel()
		if applied && err == nil {
			s.replicated(forgot)
		}
		if errors.Is(err, ErrTrimmed) && attempt == 0 {
			if err := s.resync(); err != nil {
				return err
			}
			continue
		}
		return err
	}
}

// applyBatch replays a batch another instance committed into the file,
// and adds the owners it forgot to forgot.
func applyBatch(tx *bolt.Tx, b Batch, forgot *[]string) error {
	for _, m := range b.Mutations {
		if err := applyMutation(tx, m); err != nil {
			return fmt.Errorf("replaying change %d: %w", b.Seq, err)
		}
		if m.Kind == MutDrop && m.Owner != "" && IsOwnerPartition(m.Bucket, m.Owner) {
			*forgot = append(*forgot, m.Owner)
			// What this instance held of theirs goes too.
			if _, err := deleteJobsIn(newKV(tx, nil).Bucket(bucketHeld), m.Owner); err != nil {
				return err
			}
		}
	}
	return setReplicaSeq(tx, b.Seq)
}

func applyMutation(tx *bolt.Tx, m Mutation) error {
	if m.Kind == MutChange {
		return appendChange(tx, m.Owner, m.N)
	}
	if local(m.Bucket, m.Key) {
		return nil
	}
	create := m.Kind == MutPut || m.Kind == MutCreate || m.Kind == MutSequence
	if m.Kind == MutDrop {
		return dropBucket(tx, m.Bucket)
	}
	b, err := bucketAt(tx, m.Bucket, create)
	if err != nil || b == nil {
		return err
	}
	switch m.Kind {
	case MutPut:
		return b.Put(m.Key, m.Value)
	case MutDelete:
		return b.Delete(m.Key)
	case MutSequence:
		return b.SetSequence(m.N)
	case MutCreate:
		return nil
	}
	return fmt.Errorf("%w: kind %q", errBadMutations, m.Kind)
}

// dropBucket deletes the bucket at an encoded path, if it is there.
func dropBucket(tx *bolt.Tx, path []byte) error {
	parent, name := splitLast(path)
	if name == nil {
		return errBadMutations
	}
	var err error
	if len(parent) == 0 {
		err = tx.DeleteBucket(name)
	} else {
		b, berr := bucketAt(tx, parent, false)
		if berr != nil || b == nil {
			return berr
		}
		err = b.DeleteBucket(name)
	}
	if errors.Is(err, bolterrors.ErrBucketNotFound) {
		return nil
	}
	return err
}

// splitLast splits an encoded path into its parent's path and its last
// name (nil, nil for an empty or damaged path).
func splitLast(p []byte) (parent, name []byte) {
	for off := 0; off < len(p); {
		n, rest := splitName(p[off:])
		if n == nil {
			return nil, nil
		}
		if len(rest) == 0 {
			return p[:off], n
		}
		off = len(p) - len(rest)
	}
	return nil, nil
}

// bucketAt finds (or, with create, makes) the bucket at an encoded path;
// nil when it does not exist.
func bucketAt(tx *bolt.Tx, path []byte, create bool) (*bolt.Bucket, error) {
	var b *bolt.Bucket
	for p := path; len(p) > 0; {
		name, rest := splitName(p)
		if name == nil {
			return nil, errBadMutations
		}
		var next *bolt.Bucket
		if b == nil {
			next = tx.Bucket(name)
		} else {
			next = b.Bucket(name)
		}
		if next == nil && create {
			var err error
			if b == nil {
				next, err = tx.CreateBucket(name)
			} else {
				next, err = b.CreateBucket(name)
			}
			if err != nil {
				return nil, err
			}
		}
		if next == nil {
			return nil, nil
		}
		b, p = next, rest
	}
	return b, nil
}

// sync brings the replica up to date: from a snapshot when it was made
// from another database (or is new), else by replaying what it missed.
func (s *DB) sync() error {
	var of []byte
	_ = s.boltView(func(tx *bolt.Tx) error {
		if m := tx.Bucket(bucketMeta); m != nil {
			of = bytes.Clone(m.Get(keyReplicaOf))
		}
		return nil
	})
	switch id := s.shared.ID(); {
	case id == "" && len(of) == 0:
		return errors.New("the shared memory database does not answer, and this instance has no replica of it yet: " +
			"it cannot start until the database answers")
	case id == "":
		// Start from the replica: reads and injection work; writes wait
		// for the database, and the follower brings the replica up to
		// date (or makes it anew) once it answers.
		s.replicaOf.Store(string(of))
		return nil
	case string(of) != id:
		return s.resync()
	}
	s.replicaOf.Store(string(of))
	forgot, _, err := s.catchUp()
	s.hookMu.Lock()
	s.pendingForgot = append(s.pendingForgot, forgot...) // for OnReplicated
	s.hookMu.Unlock()
	return err
}

// current reports whether the replica is of the database as it answers now
// (false when it answered with another id: the replica must be made anew).
func (s *DB) current() bool {
	id := s.shared.ID()
	return id == "" || id == s.replicaOf.Load()
}

// catchUp replays what other instances committed since the replica's
// position, and reports whether there was any.
func (s *DB) catchUp() (forgot []string, applied bool, err error) {
	if !s.current() {
		return nil, false, s.resync() // resync announces it
	}
	for {
		var after uint64
		_ = s.boltView(func(tx *bolt.Tx) error { after = replicaSeq(tx); return nil })
		ctx, cancel := context.WithTimeout(s.stop, sharedTimeout)
		batches, err := s.shared.Read(ctx, after, 256)
		cancel()
		if errors.Is(err, ErrTrimmed) {
			return forgot, applied, s.resync() // resync announces what it did
		}
		if err != nil || len(batches) == 0 {
			return forgot, applied, err
		}
		var these []string
		err = s.boltUpdate(func(tx *bolt.Tx) error {
			these = these[:0]
			if replicaSeq(tx) != after {
				return nil // a write took them in meanwhile
			}
			for _, b := range batches {
				if err := applyBatch(tx, b, &these); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return forgot, applied, err
		}
		forgot, applied = append(forgot, these...), true
	}
}

// OnReplicated sets fn to be called after changes from other instances
// were replayed into the file (the engine's index follows them), with the
// owners those changes forgot: their bytes are still in the file's free
// pages and in the index's segments until this instance purges them too.
func (s *DB) OnReplicated(fn func(forgot []string)) {
	s.hookMu.Lock()
	s.onReplicated = fn
	pending := s.pendingForgot
	s.pendingForgot = nil
	s.hookMu.Unlock()
	if len(pending) > 0 && fn != nil {
		fn(pending) // forgotten while this instance was away
	}
}

func (s *DB) replicated(forgot []string) {
	s.hookMu.Lock()
	fn := s.onReplicated
	if fn == nil {
		s.pendingForgot = append(s.pendingForgot, forgot...)
	}
	s.hookMu.Unlock()
	if fn != nil {
		fn(forgot)
	}
}

// follow replays other instances' commits as they are announced, and
// every second in case an announcement was missed.
func (s *DB) follow() {
	defer close(s.followDone)
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	failing := false
	for {
		select {
		case <-s.stopFollow:
			return
		case <-s.shared.Changed():
		case <-tick.C:
		}
		s.mu.RLock()
		forgot, applied, err := s.catchUp()
		s.mu.RUnlock()
		if applied {
			s.replicated(forgot)
		}
		// Said once when following fails and once when it recovers, not
		// every second while the database is down.
		if (err != nil) != failing && s.followErr != nil {
			s.followErr(err)
		}
		failing = err != nil
	}
}

// Shared reports whether the store replicates a shared database.
func (s *DB) Shared() bool { return s.shared != nil }

// Once runs fn unless another instance sharing the database runs the work
// of the same name; on a store of its own, it always runs fn.
func (s *DB) Once(ctx context.Context, name string, fn func() error) (bool, error) {
	if s.shared == nil {
		return true, fn()
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	defer context.AfterFunc(s.stop, cancel)()
	return s.shared.Once(ctx, name, fn)
}
