package store

import (
	"bytes"
	"context"
	"fmt"
	"time"

	bolt "go.etcd.io/bbolt"
)

// resync makes the replica anew from a snapshot of the shared database.
// Every memory it held before or holds after gets a change-log entry, so
// the index drops what is gone and takes what is new.
//
// While the store opens, nothing reads the file yet, and it is written in
// transactions of resyncChunk changes: a database of a million memories
// would otherwise be one transaction of gigabytes. An interrupted one is
// redone at the next open (the replica names its database only at the
// end). Once open, it is one transaction, so readers never see the replica
// half made; its memory then grows with the database, for the rare
// instance that falls behind the log while running.
func (s *DB) resync() error {
	if err := s.refuseDamaged(); err != nil {
		return err
	}
	return s.guard(s.resyncFile)
}

func (s *DB) resyncFile() error {
	if s.opening {
		return s.remake(resyncChunk)
	}
	return s.remake(0)
}

// resyncChunk is a variable so a test can make a small database span chunks.
var resyncChunk = 50_000

func (s *DB) remake(every int) error {
	ctx, cancel := context.WithTimeout(s.stop, time.Hour)
	defer cancel()
	w := &chunked{db: s.bolt, every: every}
	defer w.rollback()
	before := map[string][]uint64{}
	err := w.do(func(tx *bolt.Tx) error {
		before = memoriesOf(tx)
		return clearShared(tx)
	})
	if err != nil {
		return s.remakeFailed(err)
	}
	seq, err := s.shared.Snapshot(ctx, func(m Mutation) error {
		return w.do(func(tx *bolt.Tx) error { return applyMutation(tx, m) })
	})
	if err != nil {
		return s.remakeFailed(err)
	}
	var after map[string][]uint64
	if err := w.do(func(tx *bolt.Tx) error { after = memoriesOf(tx); return nil }); err != nil {
		return s.remakeFailed(err)
	}
	var gone []string // owners the replica had and the database no longer has
	for o := range before {
		if _, ok := after[o]; !ok {
			gone = append(gone, o)
		}
	}
	for _, held := range []map[string][]uint64{before, after} {
		for o, ids := range held {
			for _, id := range ids {
				if err := w.do(func(tx *bolt.Tx) error { return appendChange(tx, o, id) }); err != nil {
					return s.remakeFailed(err)
				}
			}
		}
	}
	err = w.do(func(tx *bolt.Tx) error {
		if err := setReplicaSeq(tx, seq); err != nil {
			return err
		}
		return tx.Bucket(bucketMeta).Put(keyReplicaOf, []byte(s.shared.ID()))
	})
	if err == nil {
		err = w.commit()
	}
	if err != nil {
		return s.remakeFailed(err)
	}
	s.replicaOf.Store(s.shared.ID())
	s.replicated(gone)
	return nil
}

func (s *DB) remakeFailed(err error) error {
	return fmt.Errorf("making this instance's replica of the shared memory database: %w", err)
}

// memoriesOf lists the ids of every owner's memories.
func memoriesOf(tx *bolt.Tx) map[string][]uint64 {
	held := map[string][]uint64{}
	owners := tx.Bucket(bucketOwners)
	if owners == nil {
		return held
	}
	_ = owners.ForEachBucket(func(o []byte) error {
		ids := []uint64{}
		if mem := owners.Bucket(o).Bucket(bucketMem); mem != nil {
			_ = mem.ForEach(func(k, _ []byte) error {
				ids = append(ids, decodeU64(k))
				return nil
			})
		}
		held[string(o)] = ids
		return nil
	})
	return held
}

// clearShared deletes everything the shared database holds, and the name
// of the database the replica is of; the change log, held turns and local
// marks stay.
func clearShared(tx *bolt.Tx) error {
	var roots [][]byte
	_ = tx.ForEach(func(name []byte, _ *bolt.Bucket) error {
		roots = append(roots, bytes.Clone(name))
		return nil
	})
	for _, name := range roots {
		switch {
		case bytes.Equal(name, bucketChanges), bytes.Equal(name, bucketHeld):
		case bytes.Equal(name, bucketMeta):
			var drop [][]byte
			m := tx.Bucket(bucketMeta)
			_ = m.ForEach(func(k, _ []byte) error {
				if !bytes.HasPrefix(k, localPrefix) || bytes.Equal(k, keyReplicaOf) {
					drop = append(drop, bytes.Clone(k))
				}
				return nil
			})
			for _, k := range drop {
				if err := m.Delete(k); err != nil {
					return err
				}
			}
		default:
			if err := tx.DeleteBucket(name); err != nil {
				return err
			}
		}
	}
	return nil
}

// chunked runs steps in write transactions of every steps each (0: all
// in one), committing as it goes.
type chunked struct {
	db    *bolt.DB
	tx    *bolt.Tx
	n     int
	every int
}

func (c *chunked) do(step func(*bolt.Tx) error) error {
	if c.tx == nil {
		tx, err := c.db.Begin(true)
		if err != nil {
			return err
		}
		c.tx = tx
	}
	if err := step(c.tx); err != nil {
		return err
	}
	if c.n++; c.every > 0 && c.n >= c.every {
		return c.commit()
	}
	return nil
}

func (c *chunked) commit() error {
	if c.tx == nil {
		return nil
	}
	err := c.tx.Commit()
	c.tx, c.n = nil, 0
	return err
}

func (c *chunked) rollback() {
	if c.tx != nil {
		_ = c.tx.Rollback()
		c.tx = nil
	}
}
