package store

import (
	"fmt"
)

// Held turns. On a store that replicates a shared database, a turn the
// client was already answered for must be kept even when the database does
// not answer (and when the instance stops meanwhile): it is held in this
// instance's file alone, in its own bucket that is never replicated (see
// local), sealed like a job, until a transaction that stores what it
// taught deletes it. No other instance sees it, so none learns it twice.
// Forgetting its owner (here, or replayed from another instance) drops it.

// bucketHeld: seq → a held job, as jobs/ holds them. Made at the first
// hold: a replica made before it must still open while the database does
// not answer.
var bucketHeld = []byte("held")

var pathHeld = appendName(nil, bucketHeld)

// HoldJobs keeps jobs in this instance's file alone: a local write, that
// works while the shared database does not answer.
func (s *DB) HoldJobs(jobs []Job) error {
	return s.updateLocal(func(tx *kvTx) error {
		b, err := tx.CreateBucketIfNotExists(bucketHeld)
		if err != nil {
			return err
		}
		return s.newTx(tx).putJobs(b, labelHeld, jobs)
	})
}

// HeldJobs returns up to limit held jobs, oldest first. One whose data does
// not open comes with none (see decodeJob).
func (s *DB) HeldJobs(limit int) ([]Job, error) { return s.readJobs(bucketHeld, labelHeld, limit) }

// HeldCount counts the held jobs.
func (s *DB) HeldCount() int {
	n := 0
	_ = s.view(func(tx *kvTx) error {
		if b := tx.Bucket(bucketHeld); b != nil {
			n = b.Stats().KeyN
		}
		return nil
	})
	return n
}

// HasHeld reports whether a held job is still there (forgetting its owner
// drops it).
func (t *Tx) HasHeld(seq uint64) bool {
	b := t.tx.Bucket(bucketHeld)
	return b != nil && b.Get(encodeU64(seq)) != nil
}

// DeleteHeld marks a held job done, in the transaction that stores what it
// taught (in the file only: the shared database never had it).
func (t *Tx) DeleteHeld(seq uint64) error {
	b := t.tx.Bucket(bucketHeld)
	if b == nil {
		return fmt.Errorf("no held turn %d", seq)
	}
	return b.Delete(encodeU64(seq))
}
