// Package seal owns the encryption keys of a memory storage and sealing
// data with them: AES-256-GCM, a fresh nonce for every value, the value's
// place in the storage as associated data, and the id of the key in front
// so that each value names the key that opens it (rotation then works value
// by value). The store and the index both seal through it.
package seal

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
)

// KeySize is the size of a key: AES-256.
const KeySize = 32

// Format of a sealed value: Version, the key's id (IDSize bytes), the
// nonce (NonceSize), then the ciphertext and its GCM tag.
const (
	Version   = 0xE1
	IDSize    = 4
	NonceSize = 12
	// Overhead is what sealing adds to a value.
	Overhead = 1 + IDSize + NonceSize + 16
)

// ErrUnknownKey: the value was sealed with a key that is not in the ring.
var ErrUnknownKey = errors.New("sealed with a key that is not configured")

// ErrOpen: the value does not open with the key it names. It was altered,
// moved to another place in the storage (the associated data differs), or
// sealed with another key of the same id.
var ErrOpen = errors.New("sealed value does not open: altered, moved, or sealed with another key")

// Key is one encryption key.
type Key struct {
	id   [IDSize]byte
	aead cipher.AEAD
}

// ParseKey reads a key written as base64 (standard or URL alphabet, padded
// or not) or hex; it must decode to KeySize bytes.
func ParseKey(s string) (*Key, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return nil, errors.New("the key is empty (an unset environment variable?); generate one with: head -c32 /dev/urandom | base64")
	}
	var raw []byte
	if len(s) == 2*KeySize {
		if b, err := hex.DecodeString(s); err == nil {
			raw = b
		}
	}
	if raw == nil {
		for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
			if b, err := enc.DecodeString(s); err == nil {
				raw = b
				break
			}
		}
	}
	if raw == nil {
		return nil, errors.New("the key is neither base64 nor hex; generate one with: head -c32 /dev/urandom | base64")
	}
	if len(raw) != KeySize {
		return nil, fmt.Errorf("the key is %d bytes, it must be %d (AES-256); generate one with: head -c32 /dev/urandom | base64", len(raw), KeySize)
	}
	return NewKey(raw)
}

// NewKey makes a Key of KeySize raw bytes.
func NewKey(raw []byte) (*Key, error) {
	if len(raw) != KeySize {
		return nil, fmt.Errorf("a key is %d bytes, not %d", KeySize, len(raw))
	}
	block, err := aes.NewCipher(raw)
	if err != nil {
		return nil, err
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, err
	}
	k := &Key{aead: aead}
	// The id is a hash of the key under its own label: it names the key in
	// files and messages and tells nothing about it.
	sum := sha256.Sum256(append([]byte("caddy-memory key id\x00"), raw...))
	copy(k.id[:], sum[:])
	return k, nil
}

// ID names the key (8 hex digits), in files and in messages.
func (k *Key) ID() string { return hex.EncodeToString(k.id[:]) }

// Ring is the current key, which seals, and the old keys, which still open
// what they sealed until it is sealed again (rotation). A nil *Ring is a
// plaintext storage.
type Ring struct {
	current *Key
	old     []*Key
}

// NewRing parses a current key and old keys. An old key equal to the
// current one is dropped.
func NewRing(current string, old []string) (*Ring, error) {
	k, err := ParseKey(current)
	if err != nil {
		return nil, fmt.Errorf("key: %w", err)
	}
	r := &Ring{current: k}
	for i, o := range old {
		ok, err := ParseKey(o)
		if err != nil {
			return nil, fmt.Errorf("old_keys[%d]: %w", i, err)
		}
		if ok.id != k.id {
			r.old = append(r.old, ok)
		}
	}
	return r, nil
}

// RingOf makes a ring of parsed keys.
func RingOf(current *Key, old ...*Key) *Ring { return &Ring{current: current, old: old} }

// Current is the key that seals.
func (r *Ring) Current() *Key { return r.current }

// Old are the keys that only open.
func (r *Ring) Old() []*Key { return r.old }

// Key returns the key of the ring with id, or nil.
func (r *Ring) Key(id string) *Key {
	if r == nil {
		return nil
	}
	if r.current.ID() == id {
		return r.current
	}
	for _, k := range r.old {
		if k.ID() == id {
			return k
		}
	}
	return nil
}

// IDs lists the ids of the ring's keys, the current one first.
func (r *Ring) IDs() []string {
	ids := []string{r.current.ID()}
	for _, k := range r.old {
		ids = append(ids, k.ID())
	}
	return ids
}

// Seal appends to dst the sealed form of plain, bound to ad (the value's
// place: opening it elsewhere fails).
func (r *Ring) Seal(dst, plain, ad []byte) []byte {
	return r.current.Seal(dst, plain, ad)
}

// Seal appends to dst the sealed form of plain under k.
func (k *Key) Seal(dst, plain, ad []byte) []byte {
	n := len(dst)
	dst = append(dst, make([]byte, 1+IDSize+NonceSize, 1+IDSize+NonceSize+len(plain)+16)...)
	dst[n] = Version
	copy(dst[n+1:], k.id[:])
	nonce := dst[n+1+IDSize : n+1+IDSize+NonceSize]
	fillNonce(nonce)
	return k.aead.Seal(dst, nonce, plain, ad)
}

// Open appends to dst the plaintext of a sealed value, with the ring's key
// it names.
func (r *Ring) Open(dst, sealed, ad []byte) ([]byte, error) {
	id, ok := KeyID(sealed)
	if !ok {
		return nil, ErrOpen
	}
	k := r.Key(id)
	if k == nil {
		return nil, fmt.Errorf("%w (key id %s)", ErrUnknownKey, id)
	}
	h := 1 + IDSize + NonceSize
	out, err := k.aead.Open(dst, sealed[1+IDSize:h], sealed[h:], ad)
	if err != nil {
		return nil, ErrOpen
	}
	return out, nil
}

// KeyID is the id of the key that sealed a value, and whether it looks
// sealed at all.
func KeyID(sealed []byte) (string, bool) {
	if len(sealed) < Overhead || sealed[0] != Version {
		return "", false
	}
	return hex.EncodeToString(sealed[1 : 1+IDSize]), true
}

// SealedWith reports whether a value is sealed with k.
func SealedWith(sealed []byte, k *Key) bool {
	return len(sealed) >= Overhead && sealed[0] == Version && string(sealed[1:1+IDSize]) == string(k.id[:])
}

// Nonces are a random prefix drawn once per process and a counter: unique
// without a system call per value, which a random nonce each would cost
// (the index seals every block it writes).
var (
	noncePrefix [4]byte
	nonceCount  atomic.Uint64
)

func init() {
	if _, err := rand.Read(noncePrefix[:]); err != nil {
		panic("seal: no randomness for nonces: " + err.Error())
	}
	var start [8]byte
	if _, err := rand.Read(start[:]); err != nil {
		panic("seal: no randomness for nonces: " + err.Error())
	}
	// A random start, so that two processes drawing the same prefix
	// (one chance in four billion) still do not share nonces.
	nonceCount.Store(binary.LittleEndian.Uint64(start[:]) >> 1)
}

func fillNonce(n []byte) {
	copy(n, noncePrefix[:])
	binary.BigEndian.PutUint64(n[4:], nonceCount.Add(1))
}
