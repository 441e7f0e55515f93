package store

import (
	bolt "go.etcd.io/bbolt"
)

// kvTx, kvBucket and kvCursor are the store's view of bbolt. On a store
// that replicates a shared database (replica.go), a write transaction
// journals every change it makes to the file, in order, so the same
// changes can be committed to the shared database and replayed by the
// other instances. With no journal they only pass calls through.
type kvTx struct {
	tx *bolt.Tx
	j  *journal // nil: nothing is recorded
}

type kvBucket struct {
	b    *bolt.Bucket
	j    *journal
	path []byte // encoded (see appendName); kept only when journalling
}

type kvCursor struct {
	c    *bolt.Cursor
	bk   *kvBucket
	k, v []byte // where the cursor is, for Delete's journal entry
}

func (t *kvTx) Writable() bool { return t.tx.Writable() }

func (t *kvTx) wrap(b *bolt.Bucket, name []byte) *kvBucket {
	if b == nil {
		return nil
	}
	if t.j == nil {
		return &kvBucket{b: b}
	}
	return &kvBucket{b: b, j: t.j, path: appendName(nil, name)}
}

func (t *kvTx) Bucket(name []byte) *kvBucket { return t.wrap(t.tx.Bucket(name), name) }

func (t *kvTx) CreateBucket(name []byte) (*kvBucket, error) {
	b, err := t.tx.CreateBucket(name)
	if err != nil {
		return nil, err
	}
	if t.j != nil {
		t.j.create(appendName(nil, name))
	}
	return t.wrap(b, name), nil
}

func (t *kvTx) CreateBucketIfNotExists(name []byte) (*kvBucket, error) {
	if b := t.Bucket(name); b != nil {
		return b, nil
	}
	return t.CreateBucket(name)
}

func (b *kvBucket) child(c *bolt.Bucket, name []byte) *kvBucket {
	if c == nil {
		return nil
	}
	if b.j == nil {
		return &kvBucket{b: c}
	}
	return &kvBucket{b: c, j: b.j, path: appendName(b.path[:len(b.path):len(b.path)], name)}
}

func (b *kvBucket) Bucket(name []byte) *kvBucket { return b.child(b.b.Bucket(name), name) }

func (b *kvBucket) CreateBucket(name []byte) (*kvBucket, error) {
	c, err := b.b.CreateBucket(name)
	if err != nil {
		return nil, err
	}
	nb := b.child(c, name)
	if b.j != nil {
		b.j.create(nb.path)
	}
	return nb, nil
}

func (b *kvBucket) CreateBucketIfNotExists(name []byte) (*kvBucket, error) {
	if c := b.Bucket(name); c != nil {
		return c, nil
	}
	return b.CreateBucket(name)
}

func (b *kvBucket) DeleteBucket(name []byte) error {
	if err := b.b.DeleteBucket(name); err != nil {
		return err
	}
	if b.j != nil {
		b.j.drop(appendName(b.path[:len(b.path):len(b.path)], name))
	}
	return nil
}

func (b *kvBucket) Get(k []byte) []byte { return b.b.Get(k) }

func (b *kvBucket) Put(k, v []byte) error {
	if err := b.b.Put(k, v); err != nil {
		return err
	}
	if b.j != nil {
		b.j.put(b.path, k, v)
	}
	return nil
}

func (b *kvBucket) Delete(k []byte) error {
	if b.j != nil {
		// The old value names the owner of a row in a shared bucket.
		if old := b.b.Get(k); old != nil {
			b.j.del(b.path, k, old)
		}
	}
	return b.b.Delete(k)
}

// setFill sets how full bbolt packs the bucket's pages (appendFill for
// keys that only grow).
func (b *kvBucket) setFill(f float64) { b.b.FillPercent = f }

func (b *kvBucket) Stats() bolt.BucketStats { return b.b.Stats() }

func (b *kvBucket) Sequence() uint64 { return b.b.Sequence() }

func (b *kvBucket) SetSequence(n uint64) error {
	if err := b.b.SetSequence(n); err != nil {
		return err
	}
	if b.j != nil {
		b.j.seq(b.path, n)
	}
	return nil
}

func (b *kvBucket) NextSequence() (uint64, error) {
	n, err := b.b.NextSequence()
	if err == nil && b.j != nil {
		b.j.seq(b.path, n)
	}
	return n, err
}

func (b *kvBucket) ForEach(fn func(k, v []byte) error) error { return b.b.ForEach(fn) }

func (b *kvBucket) ForEachBucket(fn func(k []byte) error) error { return b.b.ForEachBucket(fn) }

func (b *kvBucket) Cursor() *kvCursor { return &kvCursor{c: b.b.Cursor(), bk: b} }

func (c *kvCursor) at(k, v []byte) ([]byte, []byte) {
	if c.bk.j != nil {
		c.k, c.v = k, v
	}
	return k, v
}

func (c *kvCursor) First() ([]byte, []byte)        { return c.at(c.c.First()) }
func (c *kvCursor) Last() ([]byte, []byte)         { return c.at(c.c.Last()) }
func (c *kvCursor) Next() ([]byte, []byte)         { return c.at(c.c.Next()) }
func (c *kvCursor) Prev() ([]byte, []byte)         { return c.at(c.c.Prev()) }
func (c *kvCursor) Seek(k []byte) ([]byte, []byte) { return c.at(c.c.Seek(k)) }
func (c *kvCursor) Bucket() *kvBucket              { return c.bk }

// Delete removes the pair under the cursor.
func (c *kvCursor) Delete() error {
	if c.bk.j != nil && c.k != nil && c.v != nil {
		c.bk.j.del(c.bk.path, c.k, c.v)
	}
	return c.c.Delete()
}
