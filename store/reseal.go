package store

import (
	"bytes"
	"errors"
	"fmt"

	bolt "go.etcd.io/bbolt"

	"github.com/caddy-memory/memory/internal/seal"
)

// Rotation: after the key changes (the new key configured as the key, the
// previous one in old_keys), every value is sealed again with the new key,
// a batch at a time, while the store is in use. The pass is idempotent
// (it looks for values sealed with any other key), so after a crash it
// simply runs again. The check value is sealed with the new key last:
// until then Open insists on the previous key being configured.

// Resealing reports whether values sealed with another key than the
// current one may remain.
func (s *DB) Resealing() bool {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.crypt == nil {
		return false
	}
	var stale bool
	_ = s.boltView(func(tx *bolt.Tx) error {
		stale = !seal.SealedWith(tx.Bucket(bucketMeta).Get(keySealed), s.crypt.ring.Current())
		return nil
	})
	return stale
}

// CheckKeys says whether ring opens the open encrypted store, as UseKeys
// needs, changing nothing: a configuration being loaded is checked before
// it replaces the running one.
func (s *DB) CheckKeys(ring *seal.Ring) error {
	s.mu.RLock()
	defer s.mu.RUnlock()
	_, err := s.unlockWith(ring)
	return err
}

// UseKeys replaces the keys of an open encrypted store (a configuration
// reloaded with a rotated key); they must still open it.
func (s *DB) UseKeys(ring *seal.Ring) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, err := s.unlockWith(ring)
	if err == nil {
		s.crypt = c
	}
	return err
}

// unlockWith opens the open encrypted store's values with ring; s.mu held.
func (s *DB) unlockWith(ring *seal.Ring) (c *crypt, err error) {
	if s.crypt == nil || ring == nil {
		return nil, errors.New("keys apply to an encrypted store")
	}
	err = s.boltView(func(tx *bolt.Tx) error {
		_, c, err = unlock(tx, s.path, ring)
		return err
	})
	return c, err
}

// BeginReseal records that values are being sealed with the current key,
// so that an Open without the previous key says why it is still needed.
func (s *DB) BeginReseal() error {
	return s.Update(func(t *Tx) error {
		return t.tx.Bucket(bucketMeta).Put(keyRotating, []byte(t.c.ring.Current().ID()))
	})
}

// FinishReseal seals the secret and the check value with the current key:
// from now on the previous keys are not needed.
func (s *DB) FinishReseal() error {
	return s.Update(func(t *Tx) error {
		meta := t.tx.Bucket(bucketMeta)
		if err := meta.Delete(keyRotating); err != nil {
			return err
		}
		return sealMeta(meta, s.secret, t.c)
	})
}

// ResealOwner seals again with the current key up to limit values of
// owner's partition sealed with another key, and says how many it did.
func (s *DB) ResealOwner(owner string, limit int) (int, error) {
	n := 0
	err := s.Update(func(t *Tx) error {
		if t.c == nil {
			return nil
		}
		ob := t.tx.Bucket(bucketOwners).Bucket([]byte(owner))
		if ob == nil {
			return nil
		}
		for _, l := range []struct {
			bucket []byte
			label  byte
		}{{bucketMem, labelMemory}, {bucketVectors, labelVector}, {bucketRefs, labelRef}} {
			b := ob.Bucket(l.bucket)
			if b == nil {
				continue
			}
			done, err := t.reseal(b, limit-n, t.sealedStale, func(k, v []byte) ([]byte, error) {
				plain, err := t.open(l.label, owner, k, v)
				if err != nil {
					return nil, err
				}
				return t.seal(l.label, owner, k, plain), nil
			})
			n += done
			if err != nil || n >= limit {
				return err
			}
		}
		return nil
	})
	return n, err
}

// ResealShared seals again with the current key up to limit values outside
// the owners' partitions (pending and held turns, waiting sessions).
func (s *DB) ResealShared(limit int) (int, error) {
	n := 0
	err := s.Update(func(t *Tx) error {
		if t.c == nil {
			return nil
		}
		jobStale := func(v []byte) bool {
			_, data, _ := bytes.Cut(v, []byte{'\n'})
			return t.sealedStale(data)
		}
		for _, q := range []struct {
			bucket []byte
			label  byte
		}{{bucketJobs, labelJob}, {bucketHeld, labelHeld}} {
			b := t.tx.Bucket(q.bucket)
			if b == nil {
				continue
			}
			done, err := t.reseal(b, limit-n, jobStale, func(k, v []byte) ([]byte, error) {
				return resealJob(t, t, q.label, k, v)
			})
			n += done
			if err != nil || n >= limit {
				return err
			}
		}
		sessions, _ := t.sessions()
		if sessions == nil {
			return nil
		}
		done, err := t.reseal(sessions, limit-n, t.sealedStale, func(k, v []byte) ([]byte, error) {
			st, ok := t.decodeSession(k, v)
			if !ok {
				return nil, nil
			}
			return t.encodeSession(k, st), nil
		})
		n += done
		return err
	})
	return n, err
}

// sealedStale reports whether a sealed value is sealed with another key
// than the current one.
func (t *Tx) sealedStale(v []byte) bool { return !seal.SealedWith(v, t.c.ring.Current()) }

// reseal rewrites, with fn, up to limit values of b that are stale (fn may
// return nil to leave one as it is).
func (t *Tx) reseal(b *kvBucket, limit int, stale func(v []byte) bool, fn func(k, v []byte) ([]byte, error)) (int, error) {
	type kv struct{ k, v []byte }
	var todo []kv
	c := b.Cursor()
	for k, v := c.First(); k != nil && len(todo) < limit; k, v = c.Next() {
		if v == nil || !stale(v) {
			continue
		}
		todo = append(todo, kv{bytes.Clone(k), bytes.Clone(v)})
	}
	n := 0
	for _, e := range todo {
		nv, err := fn(e.k, e.v)
		if err != nil {
			return n, fmt.Errorf("sealing again: %w", err)
		}
		if nv == nil {
			continue
		}
		if err := b.Put(e.k, nv); err != nil {
			return n, err
		}
		n++
	}
	return n, nil
}
