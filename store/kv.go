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
	// Wrappers are cut from these a few at a time, not allocated one by
	// one: a search opens a dozen buckets and cursors.
	buckets []kvBucket
	cursors []kvCursor
	// The first few come with the transaction itself.
	bucketBuf [6]kvBucket
	cursorBuf [2]kvCursor
}

func newKV(tx *bolt.Tx, j *journal) *kvTx {
	t := &kvTx{tx: tx, j: j}
	t.buckets, t.cursors = t.bucketBuf[:], t.cursorBuf[:]
	return t
}

type kvBucket struct {
	b    *bolt.Bucket
	t    *kvTx
	j    *journal
	path []byte // encoded (see appendName); kept only when journalling
}

func (t *kvTx) newBucket(b *bolt.Bucket, path []byte) *kvBucket {
	if len(t.buckets) == 0 {
		t.buckets = make([]kvBucket, 8)
	}
	w := &t.buckets[0]
	t.buckets = t.buckets[1:]
	*w = kvBucket{b: b, t: t, j: t.j, path: path}
	return w
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
		return t.newBucket(b, nil)
	}
	return t.newBucket(b, appendName(nil, name))
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
		return b.t.newBucket(c, nil)
	}
	return b.t.newBucket(c, appendName(b.path[:len(b.path):len(b.path)], name))
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

func (b *kvBucket) Cursor() *kvCursor {
	t := b.t
	if len(t.cursors) == 0 {
		t.cursors = make([]kvCursor, 4)
	}
	c := &t.cursors[0]
	t.cursors = t.cursors[1:]
	*c = kvCursor{c: b.b.Cursor(), bk: b}
	return c
}

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
