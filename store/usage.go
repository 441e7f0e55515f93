package store

import (
	"encoding/binary"
	"time"
)

// bucketUsage, in an owner's partition, holds how each memory has been
// used: id → Usage. It is apart from the record so that counting a use
// rewrites a few bytes, not the record, and changes nothing the index
// holds.
var bucketUsage = []byte("u")

// Usage is how a memory has been used and how it has aged.
type Usage struct {
	// Uses counts the times it was injected or returned by a recall.
	Uses int
	// LastUsed is when it last was (zero: never).
	LastUsed time.Time
	// Boost is how often the consolidation promoted it (facts the owner's
	// later conversations keep confirming), 0 to 3.
	Boost int
}

func encodeUsage(u Usage) []byte {
	b := binary.AppendUvarint(nil, uint64(u.Uses))
	var last int64
	if !u.LastUsed.IsZero() {
		last = u.LastUsed.UnixNano()
	}
	b = binary.AppendVarint(b, last)
	return binary.AppendUvarint(b, uint64(u.Boost))
}

func decodeUsage(v []byte) Usage {
	d := decoder{b: v}
	u := Usage{Uses: int(d.uvarint())}
	if last, n := binary.Varint(d.b); n > 0 {
		d.b = d.b[n:]
		if last != 0 {
			u.LastUsed = time.Unix(0, last).UTC()
		}
	}
	u.Boost = int(d.uvarint())
	if d.err {
		return Usage{}
	}
	return u
}

// Usage returns how memory id of owner has been used.
func (t *Tx) Usage(owner string, id uint64) Usage {
	ob, err := t.ownerBucket(owner, false)
	if err != nil {
		return Usage{}
	}
	if ub := ob.Bucket(bucketUsage); ub != nil {
		if v := ub.Get(encodeU64(id)); v != nil {
			return decodeUsage(v)
		}
	}
	return Usage{}
}

// usageBucket returns the owner's usage bucket, made on first use.
func (t *Tx) usageBucket(owner string) (*kvBucket, error) {
	ob, err := t.ownerBucket(owner, false)
	if err != nil {
		return nil, err
	}
	return ob.CreateBucketIfNotExists(bucketUsage)
}

// Used counts uses of the owner's memories (id → times), the last at at.
// Memories gone meanwhile are passed over.
func (t *Tx) Used(owner string, uses map[uint64]int, at time.Time) error {
	ub, err := t.usageBucket(owner)
	if err != nil {
		return nil // the owner is gone
	}
	mem := t.tx.Bucket(bucketOwners).Bucket([]byte(owner)).Bucket(bucketMem)
	for id, n := range uses {
		if mem.Get(encodeU64(id)) == nil {
			continue
		}
		u := decodeUsage(ub.Get(encodeU64(id)))
		u.Uses += n
		if at.After(u.LastUsed) {
			u.LastUsed = at.UTC()
		}
		if err := ub.Put(encodeU64(id), encodeUsage(u)); err != nil {
			return err
		}
	}
	return nil
}

// SetBoost records how often memory id of owner was promoted, at at (which
// counts as its last use).
func (t *Tx) SetBoost(owner string, id uint64, boost int, at time.Time) error {
	ub, err := t.usageBucket(owner)
	if err != nil {
		return err
	}
	u := decodeUsage(ub.Get(encodeU64(id)))
	u.Boost = boost
	if at.After(u.LastUsed) {
		u.LastUsed = at.UTC()
	}
	return ub.Put(encodeU64(id), encodeUsage(u))
}
