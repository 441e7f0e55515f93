// Package store owns the bbolt file that is the source of truth for memories:
// the schema, the Memory record, upserts by stable key with history, soft and
// hard deletes, the change log that numbers every change, the durable queue
// of turns waiting to be extracted, and the sessions waiting to be
// distilled. It knows nothing about HTTP, Bleve or wire formats.
//
// Layout of the file:
//
//	meta/      "secret" → 32 random bytes (HMAC key for owner ids), "shards" → K
//	owners/    <owner id> → bucket { m/: id → Memory record (codec.go), k/: key → id,
//	                                 r/: response id → conversation id,
//	                                 v/: id → embedding (optional) }
//	ids/       id → owner id (find a memory's partition from its id alone)
//	changes/   seq → owner id + id (every change, in the transaction that made it)
//	jobs/      seq → job bytes (opaque to the store)
//	distill/   owner id + 0 + session → how far its turns were distilled
//
// Each owner is a nested bucket, so nothing can be read across owners by
// accident and forgetting an owner is one DeleteBucket.
//
// It is public, not internal, because it is one of the units the design
// names (DESIGN.md): the storage format is what every instance and tool
// that opens a storage directory agrees on. A user of it may rely on a
// storage opened with Open holding the memories as Memory records, each
// with its history and each change numbered in the change log; the rest
// serves this module's own packages and may change with it.
package store

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"

	bolt "go.etcd.io/bbolt"
	bolterrors "go.etcd.io/bbolt/errors"

	"github.com/caddy-memory/memory/internal/seal"
)

var (
	bucketMeta    = []byte("meta")
	bucketOwners  = []byte("owners")
	bucketIDs     = []byte("ids")
	bucketChanges = []byte("changes")
	bucketJobs    = []byte("jobs")

	bucketMem  = []byte("m")
	bucketKeys = []byte("k")
	bucketRefs = []byte("r")
	// bucketVectors holds optional embeddings: id → text hash + vector.
	bucketVectors = []byte("v")

	// rootBuckets are made when a store is created.
	rootBuckets = [][]byte{bucketMeta, bucketOwners, bucketIDs, bucketChanges, bucketJobs}

	keySecret = []byte("secret")
	keyShards = []byte("shards")
	keySchema = []byte("schema")
)

// schemaVersion 3: records may be codecV3, which earlier versions cannot
// read (2: codecV2).
const schemaVersion = 3

// ErrLocked is returned by Open when another process (or another open handle in
// this process) holds the file.
var ErrLocked = errors.New("memory store is locked")

// ErrInvalid is returned for a write that can never succeed as given.
var ErrInvalid = errors.New("invalid memory")

// ErrNotFound is returned when a memory does not exist for the given owner.
var ErrNotFound = errors.New("memory not found")

// DB is an open store. It is safe for concurrent use.
type DB struct {
	// mu lets Compact swap the file: every transaction holds it for reading.
	mu      sync.RWMutex
	bolt    *bolt.DB
	secret  []byte
	crypt   *crypt // nil: a plaintext store
	path    string
	timeout time.Duration
	clock   func() time.Time

	// shared, when set, is the database this file replicates (replica.go).
	shared       Shared
	hookMu       sync.Mutex
	onReplicated func(forgot []string)
	// pendingForgot: owners forgotten by replays before OnReplicated.
	pendingForgot []string
	followErr     func(error)
	replicaOf     atomic.Value // string: the id of the database the replica is of
	opening       bool         // until OpenWith returns: nothing else uses the file
	stopFollow    chan struct{}
	closeShared   sync.Once
	followDone    chan struct{}
	// stop ends every call to the shared database (Interrupt, Close).
	stop      context.Context
	interrupt context.CancelFunc

	damage damage // guard.go
	// skipped counts the damaged records passed over (Tx.skip).
	skipped atomic.Uint64
	// checked is what the check at open found (nil for a new file).
	checked *CheckReport
}

// Checked is what the check of the file at open found: nil for a file
// created by this open.
func (s *DB) Checked() *CheckReport { return s.checked }

func (s *DB) newTx(tx *kvTx) *Tx {
	return &Tx{tx: tx, now: s.now().UTC(), c: s.crypt, db: s}
}

// SkippedRecords is how many damaged records reads have passed over since
// the store opened (see ErrRecordDamaged).
func (s *DB) SkippedRecords() uint64 { return s.skipped.Load() }

// UseClock makes the store's transactions read the time from now (tests
// age memories with it). Call it before the store is shared.
func (s *DB) UseClock(now func() time.Time) { s.clock = now }

func (s *DB) now() time.Time {
	if s.clock != nil {
		return s.clock()
	}
	return time.Now()
}

func (s *DB) view(fn func(*kvTx) error) error {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.boltView(func(tx *bolt.Tx) error { return fn(newKV(tx, nil)) })
}

// update runs fn in a write transaction. On a store that replicates a
// shared database, the transaction first takes in what other instances
// committed, and commits to the shared database before the file
// (replica.go).
func (s *DB) update(fn func(*kvTx) error) error {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.shared != nil {
		if err := s.refuseDamaged(); err != nil {
			return err
		}
		return s.guard(func() error { return s.sharedUpdate(fn) })
	}
	return s.boltUpdate(func(tx *bolt.Tx) error { return fn(newKV(tx, nil)) })
}

// updateLocal runs fn in a write transaction of this instance's file
// alone: for rows no other instance reads (the change log, local marks).
func (s *DB) updateLocal(fn func(*kvTx) error) error {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.boltUpdate(func(tx *bolt.Tx) error { return fn(newKV(tx, nil)) })
}

// Options configure OpenWith.
type Options struct {
	// LockTimeout bounds the wait for the file lock; zero means one second.
	LockTimeout time.Duration
	// Keys open an encrypted store, and seal a new one. A plaintext store
	// opened with keys stays in plaintext until Convert.
	Keys *seal.Ring
	// Shared, when set, makes the file this instance's replica of a
	// database other instances share (see Shared). The store closes it.
	Shared Shared
	// SharedError hears when following the shared database in the
	// background fails (err), and when it works again (nil), for the log.
	SharedError func(error)
}

// Open opens (creating if needed) the plaintext store file at path. It
// waits at most lockTimeout for the file lock; a zero timeout means one
// second.
func Open(path string, lockTimeout time.Duration) (*DB, error) {
	return OpenWith(path, Options{LockTimeout: lockTimeout})
}

// OpenWith opens (creating if needed) the store file at path. An encrypted
// store that o.Keys do not open is refused with ErrKeyRequired or
// ErrWrongKey before anything in the file is written.
func OpenWith(path string, o Options) (*DB, error) {
	s, err := openWith(path, o)
	if err != nil && o.Shared != nil {
		o.Shared.Close()
	}
	return s, err
}

func openWith(path string, o Options) (*DB, error) {
	lockTimeout := o.LockTimeout
	if lockTimeout <= 0 {
		lockTimeout = time.Second
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("creating memory storage directory: %w", err)
	}
	b, report, err := openBolt(path, lockTimeout)
	if errors.Is(err, bolterrors.ErrTimeout) {
		return nil, fmt.Errorf("%w: %s is held by another process, usually another running Caddy; "+
			"use 'caddy reload' to change the configuration of the running server, "+
			"or give this instance a storage of its own (its own path, or with a url its own replica)", ErrLocked, path)
	}
	var de *DamageError
	if errors.As(err, &de) {
		return nil, err
	}
	if err != nil {
		return nil, fmt.Errorf("opening memory store %s: %w", path, err)
	}
	s := &DB{bolt: b, path: path, timeout: lockTimeout, shared: o.Shared, followErr: o.SharedError, opening: true, checked: report}
	s.stop, s.interrupt = context.WithCancel(context.Background())
	if s.shared != nil {
		if err := s.sync(); err != nil {
			b.Close()
			return nil, err
		}
	}
	var secret []byte
	err = s.guard(func() error {
		return b.View(func(tx *bolt.Tx) error {
			var err error
			secret, s.crypt, err = unlock(tx, path, o.Keys)
			return err
		})
	})
	if err != nil {
		b.Close() // not Close: nothing, not even the freelist, is written
		return nil, err
	}
	// A compaction or conversion cut short (a crash, kill -9) leaves its
	// new file behind; the old file is still whole, and the next one
	// starts from nothing. Removed only once this process holds the lock,
	// so it is never another process's work in progress.
	_ = os.Remove(compactPath(path))
	_ = os.Remove(convertPath(path))
	// A new store (no secret yet) is sealed from the start when keys are
	// given (init).
	if err := s.init(secret, o.Keys); err != nil {
		b.Close()
		return nil, err
	}
	s.opening = false
	if s.shared != nil {
		s.stopFollow, s.followDone = make(chan struct{}), make(chan struct{})
		go s.follow()
	}
	return s, nil
}

func (s *DB) init(secret []byte, keys *seal.Ring) error {
	if secret != nil {
		// Nothing to write when the file is made and current: a replica
		// can then start while the shared database does not answer.
		ready := false
		_ = s.view(func(tx *kvTx) error {
			ready = true
			for _, name := range rootBuckets {
				ready = ready && tx.Bucket(name) != nil
			}
			ready = ready && decodeU64(tx.Bucket(bucketMeta).Get(keySchema)) == schemaVersion
			return nil
		})
		if ready {
			s.secret = append([]byte(nil), secret...)
			return nil
		}
	}
	return s.update(func(tx *kvTx) error {
		for _, name := range rootBuckets {
			if _, err := tx.CreateBucketIfNotExists(name); err != nil {
				return err
			}
		}
		meta := tx.Bucket(bucketMeta)
		if secret == nil && meta.Get(keySecret) != nil {
			// Another instance sharing the database made it meanwhile.
			var err error
			if secret, s.crypt, err = unlock(tx.tx, s.path, keys); err != nil {
				return err
			}
		}
		if v := meta.Get(keySchema); v != nil && decodeU64(v) > schemaVersion {
			return fmt.Errorf("memory store %s was written by a newer version (schema %d); upgrade the module or use another storage path", s.path, decodeU64(v))
		}
		if err := meta.Put(keySchema, encodeU64(schemaVersion)); err != nil {
			return err
		}
		if secret == nil {
			secret = make([]byte, 32)
			if _, err := rand.Read(secret); err != nil {
				return err
			}
			s.crypt = newCrypt(keys, secret)
			if err := sealMeta(meta, secret, s.crypt); err != nil {
				return err
			}
		}
		s.secret = append([]byte(nil), secret...)
		return nil
	})
}

// Interrupt ends the calls to the shared database in flight, and fails
// every later one at once (ErrUnavailable), for a stop that cannot wait
// for a database that does not answer. Local work (HoldJobs, reads) goes
// on; Close follows.
func (s *DB) Interrupt() { s.interrupt() }

// Close closes the file, and the shared database (its calls in flight
// end).
func (s *DB) Close() error {
	var err error
	s.interrupt()
	s.closeShared.Do(func() {
		if s.stopFollow != nil {
			close(s.stopFollow)
			<-s.followDone
		}
		if s.shared != nil {
			defer func() { err = errors.Join(err, s.shared.Close()) }()
		}
	})
	s.mu.Lock()
	defer s.mu.Unlock()
	if d := s.Damaged(); d != nil {
		return errors.Join(err, closeDamaged(s.bolt))
	}
	err = errors.Join(err, s.guard(func() error { return writeFreelist(s.bolt) }))
	return errors.Join(err, s.guard(s.bolt.Close))
}

// closeDamaged closes the file of a damaged store, writing nothing. A
// transaction that panicked may have left bbolt's locks held, and its
// Close would wait for them for ever: it is given a moment, then left (the
// process keeps the file open until it exits).
func closeDamaged(b *bolt.DB) error {
	done := make(chan error, 1)
	go func() {
		debug.SetPanicOnFault(true)
		defer func() {
			if r := recover(); r != nil {
				done <- fmt.Errorf("closing the damaged memory store: %v", r)
			}
		}()
		done <- b.Close()
	}()
	select {
	case err := <-done:
		return err
	case <-time.After(2 * time.Second):
		return errors.New("the damaged memory store did not close (a transaction that failed on the damage holds its lock); it stays open until Caddy exits")
	}
}

// Compact rewrites the file with only its live data and replaces it. Freed
// pages of a bbolt file keep the bytes they held until reused; after
// Compact, nothing deleted remains in the file. Every other use of the store
// waits while it runs (about 1 s per 100 MB).
func (s *DB) Compact() (before, after int64, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if d := s.Damaged(); d != nil {
		return 0, 0, d // a compaction reads every page: salvage reads what it can
	}
	err = s.guard(func() error {
		before, after, err = s.compact()
		return err
	})
	return before, after, err
}

func (s *DB) compact() (before, after int64, err error) {
	tmp := compactPath(s.path)
	_ = os.Remove(tmp)
	if st, err := os.Stat(s.path); err == nil {
		before = st.Size()
	}
	dst, err := bolt.Open(tmp, 0o600, boltOptions(s.timeout))
	if err != nil {
		return 0, 0, fmt.Errorf("compacting the memory store: %w", err)
	}
	if err := bolt.Compact(dst, s.bolt, 64<<20); err != nil {
		dst.Close()
		os.Remove(tmp)
		return 0, 0, fmt.Errorf("compacting the memory store: %w", err)
	}
	_ = writeFreelist(dst) // best effort: without it the reopen below rebuilds the list
	if err := dst.Close(); err != nil {
		os.Remove(tmp)
		return 0, 0, err
	}
	if err := s.bolt.Close(); err != nil {
		return 0, 0, err
	}
	// From here the store must end up open again, on the new file or the old.
	renameErr := os.Rename(tmp, s.path)
	if renameErr == nil {
		syncDir(filepath.Dir(s.path))
	}
	b, _, err := openBolt(s.path, s.timeout)
	if err != nil {
		return 0, 0, fmt.Errorf("reopening the memory store after compaction: %w", err)
	}
	s.bolt = b
	if st, err := os.Stat(s.path); err == nil {
		after = st.Size()
	}
	return before, after, renameErr
}

// compactPath is where Compact writes the new file.
func compactPath(path string) string { return path + ".compact" }

// syncDir makes a rename in dir durable.
func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		_ = d.Sync()
		d.Close()
	}
}

// OwnerID turns a raw owner value (an API key, a user name) into the id stored
// on disk: a keyed hash, so raw credentials never reach the file or the logs,
// and the same value always maps to the same partition of this store.
func (s *DB) OwnerID(raw string) string {
	m := hmac.New(sha256.New, s.secret)
	m.Write([]byte(raw))
	return hex.EncodeToString(m.Sum(nil)[:16])
}

// Shards returns the index shard count recorded at creation, recording want
// if none is recorded yet.
func (s *DB) Shards(want int) (int, error) {
	var k int
	_ = s.view(func(tx *kvTx) error {
		k = int(decodeU64(tx.Bucket(bucketMeta).Get(keyShards)))
		return nil
	})
	if k > 0 {
		return k, nil
	}
	err := s.update(func(tx *kvTx) error {
		meta := tx.Bucket(bucketMeta)
		if v := meta.Get(keyShards); v != nil {
			k = int(decodeU64(v))
			return nil
		}
		k = want
		return meta.Put(keyShards, encodeU64(uint64(want)))
	})
	return k, err
}

func encodeU64(v uint64) []byte {
	b := make([]byte, 8)
	binary.BigEndian.PutUint64(b, v)
	return b
}

func decodeU64(b []byte) uint64 {
	if len(b) != 8 {
		return 0
	}
	return binary.BigEndian.Uint64(b)
}

// Cursor reads a named position (a change sequence) that a background task
// keeps in the store.
func (s *DB) Cursor(name string) uint64 {
	var v uint64
	_ = s.view(func(tx *kvTx) error {
		v = decodeU64(tx.Bucket(bucketMeta).Get([]byte("cursor:" + name)))
		return nil
	})
	return v
}

// Mark reads a named text a background task keeps in the store ("" for
// none).
func (s *DB) Mark(name string) string {
	var v string
	_ = s.view(func(tx *kvTx) error {
		v = string(tx.Bucket(bucketMeta).Get([]byte("mark:" + name)))
		return nil
	})
	return v
}

// SetMark records a named text.
func (t *Tx) SetMark(name, value string) error {
	return t.tx.Bucket(bucketMeta).Put([]byte("mark:"+name), []byte(value))
}

// SetCursor records a named position.
func (t *Tx) SetCursor(name string, seq uint64) error {
	return t.tx.Bucket(bucketMeta).Put([]byte("cursor:"+name), encodeU64(seq))
}

// LocalCursor reads a named position this instance keeps for itself (how
// far its own index or embedder followed the change log): never shared
// with other instances, as each numbers its own log.
func (s *DB) LocalCursor(name string) uint64 {
	var v uint64
	_ = s.view(func(tx *kvTx) error {
		meta := tx.Bucket(bucketMeta)
		b := meta.Get(localCursorKey(name))
		if b == nil {
			b = meta.Get([]byte("cursor:" + name)) // kept there before replicas
		}
		v = decodeU64(b)
		return nil
	})
	return v
}

// SetLocalCursor records a position LocalCursor reads.
func (s *DB) SetLocalCursor(name string, seq uint64) error {
	return s.updateLocal(func(tx *kvTx) error {
		return tx.Bucket(bucketMeta).Put(localCursorKey(name), encodeU64(seq))
	})
}

func localCursorKey(name string) []byte {
	return append(append([]byte(nil), localPrefix...), "cursor:"+name...)
}
