package store

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	bolt "go.etcd.io/bbolt"

	"github.com/caddy-memory/memory/internal/seal"
)

// convertPath is where Convert writes the new file.
func convertPath(path string) string { return path + ".convert" }

// Converted counts what Convert rewrote.
type Converted struct {
	Memories   int   `json:"memories"`
	Values     int   `json:"values"`
	BytesAfter int64 `json:"file_bytes"`
}

// Convert rewrites the whole store sealed with keys, or in plaintext when
// keys is nil, and carries on with the new file. It writes a complete new
// file beside the old one and renames it over the old one only once it is
// whole and synced: a crash at any point leaves either the old store or the
// new one, never a mix (the next Open removes an unfinished new file).
// digest, if not nil, gives each memory its search digest for the new store
// (keyed digests come and go with encryption). Every other use of the store
// waits while it runs.
func (s *DB) Convert(keys *seal.Ring, digest func(*Memory) []byte) (Converted, error) {
	var n Converted
	if s.shared != nil {
		return n, errors.New("encrypting or decrypting a shared memory database in place is not supported: " +
			"export its memories (GET /export of memory_api), and import them into a new database configured with the encryption wanted")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if d := s.Damaged(); d != nil {
		return n, d
	}
	err := s.guard(func() error {
		var err error
		n, err = s.convert(keys, digest)
		return err
	})
	return n, err
}

func (s *DB) convert(keys *seal.Ring, digest func(*Memory) []byte) (Converted, error) {
	var n Converted
	tmp := convertPath(s.path)
	_ = os.Remove(tmp)
	dst, err := bolt.Open(tmp, 0o600, boltOptions(s.timeout))
	if err != nil {
		return n, fmt.Errorf("converting the memory store: %w", err)
	}
	to := newCrypt(keys, s.secret)
	err = s.bolt.View(func(src *bolt.Tx) error {
		from := &Tx{tx: newKV(src, nil), now: s.now().UTC(), c: s.crypt}
		return (&converter{from: from, to: to, secret: s.secret, digest: digest, n: &n}).run(dst)
	})
	if err == nil {
		_ = writeFreelist(dst)
	}
	if cerr := dst.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(tmp)
		return n, fmt.Errorf("converting the memory store (it is unchanged): %w", err)
	}
	if err := s.bolt.Close(); err != nil {
		os.Remove(tmp)
		return n, err
	}
	// From here the store must end up open again, on the new file or the old.
	renameErr := os.Rename(tmp, s.path)
	if renameErr == nil {
		syncDir(filepath.Dir(s.path))
		s.crypt = to
	}
	b, _, err := openBolt(s.path, s.timeout)
	if err != nil {
		return n, fmt.Errorf("reopening the memory store after conversion: %w", err)
	}
	s.bolt = b
	if st, err := os.Stat(s.path); err == nil {
		n.BytesAfter = st.Size()
	}
	return n, renameErr
}

// converter copies a store from one sealing to another.
type converter struct {
	from   *Tx    // the old file, and its sealing
	to     *crypt // the new sealing
	secret []byte
	digest func(*Memory) []byte
	n      *Converted
}

func (c *converter) run(dst *bolt.DB) error {
	src := c.from.tx.tx
	// Buckets other than owners are copied in one transaction each; an
	// owner's partition in one.
	return src.ForEach(func(name []byte, b *bolt.Bucket) error {
		if bytes.Equal(name, bucketOwners) {
			return c.owners(dst, b)
		}
		return dst.Update(func(tx *bolt.Tx) error {
			out, err := tx.CreateBucket(name)
			if err != nil {
				return err
			}
			switch {
			case bytes.Equal(name, bucketMeta):
				return c.meta(b, out)
			case bytes.Equal(name, bucketJobs):
				return c.values(b, out, c.job(labelJob))
			case bytes.Equal(name, bucketHeld):
				return c.values(b, out, c.job(labelHeld))
			case bytes.Equal(name, bucketSessions):
				return c.sessions(b, out)
			}
			return copyBucket(b, out)
		})
	})
}

// job seals a job again (of jobs/ or held/, by label).
func (c *converter) job(label byte) func(k, v []byte) ([]byte, error) {
	return func(k, v []byte) ([]byte, error) {
		return resealJob(c.from, &Tx{c: c.to}, label, k, v)
	}
}

// resealJob opens a job with from's sealing and seals it with to's.
func resealJob(from, to *Tx, label byte, k, v []byte) ([]byte, error) {
	owner, _, _ := bytes.Cut(v, []byte{'\n'})
	j := from.decodeJob(label, decodeU64(k), v)
	if j.Data == nil {
		return nil, fmt.Errorf("pending turn %d does not open", decodeU64(k))
	}
	return to.encodeJob(label, decodeU64(k), Job{Owner: string(owner), Data: j.Data}), nil
}

// values copies b's pairs with their values rewritten by fn (nil: dropped).
func (c *converter) values(b, out *bolt.Bucket, fn func(k, v []byte) ([]byte, error)) error {
	out.FillPercent = appendFill
	if err := out.SetSequence(b.Sequence()); err != nil {
		return err
	}
	return b.ForEach(func(k, v []byte) error {
		if v == nil {
			return fmt.Errorf("unexpected bucket %q", k)
		}
		nv, err := fn(k, v)
		if err != nil || nv == nil {
			return err
		}
		c.n.Values++
		return out.Put(k, nv)
	})
}

func (c *converter) meta(b, out *bolt.Bucket) error {
	if err := b.ForEach(func(k, v []byte) error {
		switch {
		case bytes.Equal(k, keySecret), bytes.Equal(k, keySealed), bytes.Equal(k, keyRotating):
			return nil // sealed anew below
		}
		return out.Put(k, v)
	}); err != nil {
		return err
	}
	return sealMeta(out, c.secret, c.to)
}

func (c *converter) sessions(b, out *bolt.Bucket) error {
	to := &Tx{c: c.to}
	return b.ForEach(func(k, v []byte) error {
		st, ok := c.from.decodeSession(k, v)
		if !ok {
			return nil // unreadable before too; a waiting session is not worth failing for
		}
		nk := to.sessionKey(st.Owner, st.Session)
		c.n.Values++
		return out.Put(nk, to.encodeSession(nk, st))
	})
}

func (c *converter) owners(dst *bolt.DB, owners *bolt.Bucket) error {
	if err := dst.Update(func(tx *bolt.Tx) error {
		out, err := tx.CreateBucket(bucketOwners)
		if err != nil {
			return err
		}
		return out.SetSequence(owners.Sequence())
	}); err != nil {
		return err
	}
	return owners.ForEachBucket(func(owner []byte) error {
		return dst.Update(func(tx *bolt.Tx) error {
			ob, err := tx.Bucket(bucketOwners).CreateBucket(owner)
			if err != nil {
				return err
			}
			return c.owner(string(owner), owners.Bucket(owner), ob)
		})
	})
}

// owner converts one owner's partition: its memories first, then the
// buckets that refer to them.
func (c *converter) owner(owner string, in, out *bolt.Bucket) error {
	if err := out.SetSequence(in.Sequence()); err != nil {
		return err
	}
	to := &Tx{c: c.to}
	keys := map[uint64]string{} // memory id → its key, for the keys bucket
	names := [][]byte{bucketMem}
	if err := in.ForEachBucket(func(name []byte) error {
		if !bytes.Equal(name, bucketMem) {
			names = append(names, bytes.Clone(name))
		}
		return nil
	}); err != nil {
		return err
	}
	for _, name := range names {
		b := in.Bucket(name)
		if b == nil {
			continue
		}
		nb, err := out.CreateBucket(name)
		if err != nil {
			return err
		}
		if err := c.ownerBucket(owner, name, b, nb, to, keys); err != nil {
			return err
		}
	}
	return nil
}

func (c *converter) ownerBucket(owner string, name []byte, b, nb *bolt.Bucket, to *Tx, keys map[uint64]string) error {
	switch {
	case bytes.Equal(name, bucketMem):
		return c.values(b, nb, func(k, v []byte) ([]byte, error) {
			v, err := c.from.open(labelMemory, owner, k, v)
			if err != nil {
				return nil, fmt.Errorf("memory %d of owner %s: %w", decodeU64(k), owner, err)
			}
			m := new(Memory)
			if err := decodeMemory(v, m); err != nil {
				return nil, fmt.Errorf("memory %d of owner %s: %w", decodeU64(k), owner, err)
			}
			keys[decodeU64(k)] = m.Key
			if c.digest != nil {
				m.Digest = c.digest(m)
			} else {
				var p Peek
				if err := p.read(v); err != nil {
					return nil, fmt.Errorf("memory %d of owner %s: %w", decodeU64(k), owner, err)
				}
				m.Digest = p.Terms()
			}
			c.n.Memories++
			return to.seal(labelMemory, owner, k, encodeMemory(m)), nil
		})
	case bytes.Equal(name, bucketKeys):
		// The key of each entry is the key of the memory it points to
		// (read above), named anew.
		return b.ForEach(func(k, v []byte) error {
			key, ok := keys[decodeU64(v)]
			if !ok || !bytes.Equal(c.from.name(labelKey, key), k) {
				return nil // no longer the memory's key
			}
			return nb.Put(to.name(labelKey, key), v)
		})
	case bytes.Equal(name, bucketRefs):
		return b.ForEach(func(k, v []byte) error {
			pv, err := c.from.open(labelRef, owner, k, v)
			if err != nil {
				return fmt.Errorf("a conversation reference of owner %s: %w", owner, err)
			}
			ref, conversation := parseRef(c.from.c, k, pv)
			nk := to.name(labelRef, ref)
			c.n.Values++
			return nb.Put(nk, to.seal(labelRef, owner, nk, refValue(c.to, ref, conversation)))
		})
	case bytes.Equal(name, bucketVectors):
		return c.values(b, nb, func(k, v []byte) ([]byte, error) {
			v, err := c.from.open(labelVector, owner, k, v)
			if err != nil {
				return nil, fmt.Errorf("an embedding of owner %s: %w", owner, err)
			}
			return to.seal(labelVector, owner, k, v), nil
		})
	}
	return copyBucket(b, nb)
}

// copyBucket copies b, nested buckets and sequences included, into out.
func copyBucket(b, out *bolt.Bucket) error {
	if err := out.SetSequence(b.Sequence()); err != nil {
		return err
	}
	out.FillPercent = appendFill
	return b.ForEach(func(k, v []byte) error {
		if v != nil {
			return out.Put(k, v)
		}
		nb, err := out.CreateBucket(k)
		if err != nil {
			return err
		}
		return copyBucket(b.Bucket(k), nb)
	})
}
