package store

import (
	"bytes"

	bolt "go.etcd.io/bbolt"
)

// Change says that the memory ID of Owner changed at sequence Seq. Readers of
// the log load the memory's current state; a missing or inactive memory means
// it must leave the index. Replaying a change is therefore idempotent.
type Change struct {
	Seq   uint64
	Owner string
	ID    uint64
}

func (t *Tx) logChange(owner string, id uint64) (uint64, error) {
	if t.tx.j != nil {
		// Each instance numbers its own log: the change travels as one.
		t.tx.j.change(owner, id)
	}
	return appendChangeSeq(t.tx.tx, owner, id)
}

func appendChange(tx *bolt.Tx, owner string, id uint64) error {
	_, err := appendChangeSeq(tx, owner, id)
	return err
}

func appendChangeSeq(tx *bolt.Tx, owner string, id uint64) (uint64, error) {
	b := tx.Bucket(bucketChanges)
	if b == nil {
		var err error
		if b, err = tx.CreateBucket(bucketChanges); err != nil {
			return 0, err
		}
	}
	b.FillPercent = appendFill
	seq, err := b.NextSequence()
	if err != nil {
		return 0, err
	}
	v := make([]byte, 0, len(owner)+8)
	v = append(v, owner...)
	v = append(v, encodeU64(id)...)
	return seq, b.Put(encodeU64(seq), v)
}

// LastSeq is the sequence number of the latest change in this snapshot.
func (t *Tx) LastSeq() uint64 { return t.tx.Bucket(bucketChanges).Sequence() }

// LastSeq is the sequence number of the latest committed change.
func (s *DB) LastSeq() uint64 {
	var seq uint64
	_ = s.View(func(t *Tx) error { seq = t.LastSeq(); return nil })
	return seq
}

// Changes returns up to limit changes with a sequence number above after, and
// the oldest sequence number still in the log (0 when the log is empty).
func (s *DB) Changes(after uint64, limit int) (changes []Change, oldest uint64, err error) {
	err = s.View(func(t *Tx) error {
		changes, oldest = t.Changes(after, limit)
		return nil
	})
	return changes, oldest, err
}

// Changes is DB.Changes in this snapshot.
func (t *Tx) Changes(after uint64, limit int) (changes []Change, oldest uint64) {
	c := t.tx.Bucket(bucketChanges).Cursor()
	if k, _ := c.First(); k != nil {
		oldest = decodeU64(k)
	}
	for k, v := c.Seek(encodeU64(after + 1)); k != nil && len(changes) < limit; k, v = c.Next() {
		if len(v) < 8 {
			continue
		}
		changes = append(changes, Change{
			Seq:   decodeU64(k),
			Owner: string(v[:len(v)-8]),
			ID:    decodeU64(v[len(v)-8:]),
		})
	}
	return changes, oldest
}

// ChangedSince reports whether the log holds a change of owner's after
// sequence after, reading at most limit entries: ok is false when there
// are more (or the log no longer reaches back to after).
func (t *Tx) ChangedSince(after uint64, owner string, limit int) (changed, ok bool) {
	c := t.tx.Bucket(bucketChanges).Cursor()
	if k, _ := c.First(); k == nil || decodeU64(k) > after+1 {
		return false, false // trimmed past after
	}
	n := 0
	for k, v := c.Seek(encodeU64(after + 1)); k != nil; k, v = c.Next() {
		if n++; n > limit {
			return false, false
		}
		if len(v) == len(owner)+8 && string(v[:len(owner)]) == owner {
			return true, true
		}
	}
	return false, true
}

// TrimChanges drops log entries up to and including seq. Call it only once
// every index shard has durably applied them.
func (s *DB) TrimChanges(seq uint64) (int, error) {
	n := 0
	err := s.updateLocal(func(tx *kvTx) error {
		c := tx.Bucket(bucketChanges).Cursor()
		end := encodeU64(seq)
		for k, _ := c.First(); k != nil && bytes.Compare(k, end) <= 0; k, _ = c.First() {
			if err := c.Delete(); err != nil {
				return err
			}
			n++
		}
		return nil
	})
	return n, err
}
