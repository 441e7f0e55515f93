package store

import (
	"crypto/hmac"
	"crypto/sha256"
	"errors"
	"fmt"

	bolt "go.etcd.io/bbolt"

	"github.com/caddy-memory/memory/internal/seal"
)

// An encrypted store seals every value that holds what a user said or what
// can be learnt from it: memory records (with their history and search
// digests), embeddings, conversation references, pending turns, sessions
// waiting to be distilled, and the owner-hashing secret. Keys of buckets
// that would otherwise hold text (memory keys such as
// "preference:marzipan", response ids, session names) are replaced by a
// keyed hash. What stays in the clear: owner ids (already keyed hashes),
// memory ids, change sequences, counts and use times.
//
// A sealed value is bound to its place (see ad): a record copied onto
// another id or owner does not open there.

// ErrKeyRequired is returned when an encrypted store is opened without a
// key.
var ErrKeyRequired = errors.New("memory storage is encrypted and no key is configured")

// ErrWrongKey is returned when an encrypted store is opened with keys that
// do not include the one it is sealed with.
var ErrWrongKey = errors.New("memory storage is encrypted with another key")

// Labels of sealed values (the first byte of their associated data) and of
// keyed names.
const (
	labelMemory  = 'm'
	labelVector  = 'v'
	labelRef     = 'r'
	labelJob     = 'j'
	labelHeld    = 'h'
	labelSession = 's'
	labelKey     = 'k'
	labelSecret  = 'x'
	labelCheck   = 'c'
)

// Keys of meta in an encrypted store.
var (
	// keySealed is a known value sealed with the key the whole store is
	// sealed with; it is how Open tells a missing or wrong key apart,
	// before anything is read or written.
	keySealed = []byte("sealed")
	// keyRotating names the key a re-encryption pass seals with, while it
	// runs (the previous key is still needed until it ends).
	keyRotating = []byte("rotating_to")
	checkText   = []byte("caddy-memory sealed store")
)

// crypt is how an encrypted store seals; nil for a plaintext one.
type crypt struct {
	ring *seal.Ring
	// names keys the hashes that replace bucket keys holding text. It is
	// derived from the owner-hashing secret, so it outlives key rotations.
	names []byte
}

func newCrypt(ring *seal.Ring, secret []byte) *crypt {
	if ring == nil {
		return nil
	}
	return &crypt{ring: ring, names: derive(secret, "bucket keys")}
}

// derive is a sub-key of the store's secret for one purpose.
func derive(secret []byte, purpose string) []byte {
	m := hmac.New(sha256.New, secret)
	m.Write([]byte("caddy-memory " + purpose))
	return m.Sum(nil)
}

// ad is the associated data of a value: what it is, whose, and its key.
func ad(label byte, owner string, key []byte) []byte {
	b := make([]byte, 0, 2+len(owner)+len(key))
	b = append(b, label)
	b = append(b, owner...)
	b = append(b, 0)
	return append(b, key...)
}

// name is the bucket key for a text key: the text itself in a plaintext
// store, a keyed hash of it in an encrypted one.
func (c *crypt) name(label byte, text string) []byte {
	if c == nil {
		return []byte(text)
	}
	m := hmac.New(sha256.New, c.names)
	m.Write([]byte{label})
	m.Write([]byte(text))
	return m.Sum(nil)[:16]
}

// seal returns plain sealed for its place, or plain in a plaintext store.
func (c *crypt) seal(label byte, owner string, key, plain []byte) []byte {
	if c == nil {
		return plain
	}
	return c.ring.Seal(nil, plain, ad(label, owner, key))
}

// Encrypted reports whether the store seals its values.
func (s *DB) Encrypted() bool {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.crypt != nil
}

// KeyID is the id of the key the store seals with ("" for a plaintext
// store).
func (s *DB) KeyID() string {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.crypt == nil {
		return ""
	}
	return s.crypt.ring.Current().ID()
}

// DigestKey keys the search digests of an encrypted store (nil for a
// plaintext one): derived from the owner-hashing secret, which is sealed,
// so it is stable across rotations and known to no one without the key.
func (s *DB) DigestKey() []byte {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.digestKey(s.crypt != nil)
}

// DigestKeyFor is the DigestKey the store has once converted to keys (nil:
// to plaintext), for Convert's digests.
func (s *DB) DigestKeyFor(keys *seal.Ring) []byte {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.digestKey(keys != nil)
}

func (s *DB) digestKey(encrypted bool) []byte {
	if !encrypted {
		return nil
	}
	return derive(s.secret, "term digests")
}

// open returns the plaintext of a value read in this transaction: the
// value itself in a plaintext store. Opened values are kept in the
// transaction's arena, so, like the file's own bytes, they stay good until
// the transaction ends.
func (t *Tx) open(label byte, owner string, key, v []byte) ([]byte, error) {
	if t.c == nil || v == nil {
		return v, nil
	}
	need := len(v) - seal.Overhead
	if need < 0 {
		return nil, errCorrupt
	}
	if cap(t.arena)-len(t.arena) < need {
		t.arena = make([]byte, 0, max(arenaChunk, need))
	}
	start := len(t.arena)
	out, err := t.c.ring.Open(t.arena, v, ad(label, owner, key))
	if err != nil {
		return nil, fmt.Errorf("opening a sealed value: %w (%w)", errCorrupt, err)
	}
	t.arena = out
	return out[start:len(out):len(out)], nil
}

// arenaChunk is the size of the blocks a transaction opens values into.
const arenaChunk = 64 << 10

func (t *Tx) seal(label byte, owner string, key, plain []byte) []byte {
	return t.c.seal(label, owner, key, plain)
}

func (t *Tx) name(label byte, text string) []byte { return t.c.name(label, text) }

// unlock reads the sealing state of an opened file: it decides, before
// anything is written, whether ring opens it, and returns the secret.
// A file without a secret is new: it is sealed with ring when one is given.
func unlock(tx *bolt.Tx, path string, ring *seal.Ring) (secret []byte, c *crypt, err error) {
	meta := tx.Bucket(bucketMeta)
	if meta == nil {
		return nil, nil, nil
	}
	return unlockMeta(meta.Get, path, ring)
}

// unlockMeta is unlock over the meta bucket's values, however they are
// read (Check and Salvage read them from the file's pages).
func unlockMeta(get func(k []byte) []byte, path string, ring *seal.Ring) (secret []byte, c *crypt, err error) {
	check, raw := get(keySealed), get(keySecret)
	if check == nil {
		return raw, nil, nil // plaintext (or new)
	}
	sealedWith, _ := seal.KeyID(check)
	rotating := string(get(keyRotating))
	if ring == nil {
		return nil, nil, fmt.Errorf("%w: %s is sealed with key id %s; add to its storage in the global memory option "+
			"encryption { key <the key> } with the key it was encrypted with (nothing was read or changed)", ErrKeyRequired, path, sealedWith)
	}
	if _, err := ring.Open(nil, check, ad(labelCheck, "", keySealed)); err != nil {
		if rotating != "" && ring.Key(rotating) != nil {
			return nil, nil, fmt.Errorf("%w: %s is being re-encrypted from key id %s to key id %s and that has not finished; "+
				"keep the previous key in old_keys until the log says the re-encryption is done (nothing was read or changed)",
				ErrWrongKey, path, sealedWith, rotating)
		}
		return nil, nil, fmt.Errorf("%w: %s is sealed with key id %s, and the configured key (id %s) and old_keys do not include it; "+
			"configure the key it was encrypted with (during a rotation, the new one as key and the previous one in old_keys; nothing was read or changed)",
			ErrWrongKey, path, sealedWith, ring.Current().ID())
	}
	secret, err = ring.Open(nil, raw, ad(labelSecret, "", keySecret))
	if err != nil {
		return nil, nil, fmt.Errorf("memory storage %s: its secret does not open with its own key (id %s): the file is damaged; restore it from a backup", path, sealedWith)
	}
	return secret, newCrypt(ring, secret), nil
}

// sealMeta writes the secret and the check value sealed with c's current
// key (or the secret in the clear, for a plaintext store).
func sealMeta(meta interface {
	Put(k, v []byte) error
	Delete(k []byte) error
}, secret []byte, c *crypt) error {
	if c == nil {
		for _, k := range [][]byte{keySealed, keyRotating} {
			if err := meta.Delete(k); err != nil {
				return err
			}
		}
		return meta.Put(keySecret, secret)
	}
	if err := meta.Put(keySecret, c.seal(labelSecret, "", keySecret, secret)); err != nil {
		return err
	}
	return meta.Put(keySealed, c.seal(labelCheck, "", keySealed, checkText))
}
