package store

import (
	"bytes"
	"encoding/binary"
	"errors"
)

// MutationKind says what a Mutation does.
type MutationKind byte

// Mutation kinds.
const (
	MutPut      MutationKind = 'p' // Key = Value in Bucket
	MutDelete   MutationKind = 'd' // Key leaves Bucket
	MutCreate   MutationKind = 'c' // Bucket is created
	MutDrop     MutationKind = 'x' // Bucket and all it holds are deleted
	MutSequence MutationKind = 's' // Bucket's sequence becomes N
	MutChange   MutationKind = 'l' // memory N of Owner changed (a change-log entry)
)

// A Mutation is one change a write transaction made to the store, as a
// shared database (Shared) keeps it and other instances replay it. Bucket
// is a path of nested bucket names, encoded as EncodePath does; Owner is
// the owner the row belongs to ("" for the store's own rows), so the
// shared database can keep each owner's rows together and delete them
// with the owner.
type Mutation struct {
	Kind       MutationKind
	Owner      string
	Bucket     []byte
	Key, Value []byte
	N          uint64
}

// journal records a write transaction's mutations in order.
type journal struct {
	muts []Mutation
}

var (
	pathChanges = appendName(nil, bucketChanges)
	pathMeta    = appendName(nil, bucketMeta)
	// localPrefix marks meta keys that describe this instance's file, not
	// the memories (how far it replicated, how far its own index and
	// embeddings got): they are never shared.
	localPrefix = []byte("local:")
)

// local reports whether a row is this instance's own: the change log (each
// instance numbers its own, from the MutChange entries it applies), the
// turns it holds (held.go) and local meta keys.
func local(path, key []byte) bool {
	return bytes.Equal(path, pathChanges) || bytes.Equal(path, pathHeld) ||
		bytes.Equal(path, pathMeta) && bytes.HasPrefix(key, localPrefix)
}

func (j *journal) add(m Mutation) { j.muts = append(j.muts, m) }

func (j *journal) put(path, k, v []byte) {
	if local(path, k) {
		return
	}
	k, v = bytes.Clone(k), bytes.Clone(v)
	j.add(Mutation{Kind: MutPut, Owner: ownerOfRow(path, k, v), Bucket: path, Key: k, Value: v})
}

func (j *journal) del(path, k, old []byte) {
	if local(path, k) {
		return
	}
	k = bytes.Clone(k)
	j.add(Mutation{Kind: MutDelete, Owner: ownerOfRow(path, k, old), Bucket: path, Key: k})
}

func (j *journal) create(path []byte) {
	if local(path, nil) {
		return
	}
	j.add(Mutation{Kind: MutCreate, Owner: ownerOfRow(path, nil, nil), Bucket: path})
}

func (j *journal) drop(path []byte) {
	j.add(Mutation{Kind: MutDrop, Owner: ownerOfRow(path, nil, nil), Bucket: path})
}

func (j *journal) seq(path []byte, n uint64) {
	if local(path, nil) {
		return
	}
	// Only the last value of a bucket's sequence in a transaction matters.
	for i := len(j.muts) - 1; i >= 0 && i >= len(j.muts)-4; i-- {
		if m := &j.muts[i]; m.Kind == MutSequence && bytes.Equal(m.Bucket, path) {
			m.N = n
			return
		}
	}
	j.add(Mutation{Kind: MutSequence, Owner: ownerOfRow(path, nil, nil), Bucket: path, N: n})
}

func (j *journal) change(owner string, id uint64) {
	j.add(Mutation{Kind: MutChange, Owner: owner, N: id})
}

// ownerOfRow names the owner a row of the store belongs to: the owner
// bucket it is in, or, in the store-wide buckets, the owner its key or
// value names.
func ownerOfRow(path, k, v []byte) string {
	first, rest := splitName(path)
	switch {
	case bytes.Equal(first, bucketOwners):
		if o, _ := splitName(rest); o != nil {
			return string(o)
		}
	case bytes.Equal(first, bucketIDs):
		return string(v)
	case bytes.Equal(first, bucketJobs):
		if i := bytes.IndexByte(v, '\n'); i > 0 {
			return string(v[:i])
		}
	case bytes.Equal(first, bucketSessions):
		if i := bytes.IndexByte(k, 0); i > 0 {
			return string(k[:i])
		}
	}
	return ""
}

// EncodePath encodes a path of nested bucket names: each name preceded by
// its length, so a bucket's path is a prefix of the paths below it.
func EncodePath(names ...[]byte) []byte {
	var p []byte
	for _, n := range names {
		p = appendName(p, n)
	}
	return p
}

func appendName(p, name []byte) []byte {
	p = binary.AppendUvarint(p, uint64(len(name)))
	return append(p, name...)
}

// splitName returns the first name of an encoded path and the rest (nil,
// nil for an empty or damaged path).
func splitName(p []byte) (name, rest []byte) {
	n, w := binary.Uvarint(p)
	if w <= 0 || uint64(len(p)-w) < n {
		return nil, nil
	}
	return p[w : w+int(n)], p[w+int(n):]
}

var errBadMutations = errors.New("damaged mutation list")

// EncodeMutations encodes mutations for the shared database's log.
func EncodeMutations(ms []Mutation) []byte {
	var b []byte
	for _, m := range ms {
		b = append(b, byte(m.Kind))
		b = appendName(b, []byte(m.Owner))
		b = appendName(b, m.Bucket)
		b = appendName(b, m.Key)
		b = appendName(b, m.Value)
		b = binary.AppendUvarint(b, m.N)
	}
	return b
}

// DecodeMutations reads what EncodeMutations wrote.
func DecodeMutations(b []byte) ([]Mutation, error) {
	var ms []Mutation
	for len(b) > 0 {
		m := Mutation{Kind: MutationKind(b[0])}
		b = b[1:]
		var fields [4][]byte
		for i := range fields {
			n, w := binary.Uvarint(b)
			if w <= 0 || uint64(len(b)-w) < n {
				return nil, errBadMutations
			}
			fields[i], b = b[w:w+int(n)], b[w+int(n):]
		}
		m.Owner, m.Bucket, m.Key, m.Value = string(fields[0]), fields[1], fields[2], fields[3]
		n, w := binary.Uvarint(b)
		if w <= 0 {
			return nil, errBadMutations
		}
		m.N, b = n, b[w:]
		ms = append(ms, m)
	}
	return ms, nil
}

// IsOwnerPartition reports whether an encoded bucket path is the partition
// of owner: dropping it forgets them.
func IsOwnerPartition(path []byte, owner string) bool {
	return string(path) == string(EncodePath(bucketOwners, []byte(owner)))
}
