package seal

import (
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"strings"
	"testing"
)

func key(b byte) string { return base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{b}, KeySize)) }

func TestParseKeyForms(t *testing.T) {
	raw := bytes.Repeat([]byte{7}, KeySize)
	forms := []string{
		base64.StdEncoding.EncodeToString(raw), base64.RawStdEncoding.EncodeToString(raw),
		base64.URLEncoding.EncodeToString(raw), hex.EncodeToString(raw), " " + hex.EncodeToString(raw) + "\n",
	}
	var id string
	for _, f := range forms {
		k, err := ParseKey(f)
		if err != nil {
			t.Fatalf("%q: %v", f, err)
		}
		if id != "" && k.ID() != id {
			t.Errorf("%q: id %s, other forms %s", f, k.ID(), id)
		}
		id = k.ID()
	}
	for _, bad := range []string{"", "  ", "not a key!", base64.StdEncoding.EncodeToString(raw[:16]), "{env.MEMORY_KEY}"} {
		_, err := ParseKey(bad)
		if err == nil {
			t.Errorf("%q parsed", bad)
		} else if !strings.Contains(err.Error(), "head -c32 /dev/urandom | base64") {
			t.Errorf("%q: the error does not say how to make a key: %v", bad, err)
		}
	}
}

func TestSealOpen(t *testing.T) {
	r, err := NewRing(key(1), nil)
	if err != nil {
		t.Fatal(err)
	}
	plain := []byte("User is allergic to marzipan.")
	ad := []byte("m/owner/7")
	a, b := r.Seal(nil, plain, ad), r.Seal(nil, plain, ad)
	if bytes.Equal(a, b) {
		t.Error("two seals of one value are equal: the nonce is not fresh")
	}
	if bytes.Contains(a, []byte("marzipan")) {
		t.Error("the sealed value holds the plaintext")
	}
	if len(a) != len(plain)+Overhead {
		t.Errorf("sealed %d bytes, want %d", len(a), len(plain)+Overhead)
	}
	got, err := r.Open(nil, a, ad)
	if err != nil || !bytes.Equal(got, plain) {
		t.Fatalf("Open: %q, %v", got, err)
	}
	if id, ok := KeyID(a); !ok || id != r.Current().ID() {
		t.Errorf("KeyID %q %v, want %s", id, ok, r.Current().ID())
	}
}

// TestSwapDetected: a value moved to another place (another record, another
// owner) does not open there.
func TestSwapDetected(t *testing.T) {
	r, _ := NewRing(key(1), nil)
	v := r.Seal(nil, []byte("secret"), []byte("m/alice/1"))
	for _, ad := range []string{"m/alice/2", "m/bob/1", "v/alice/1", ""} {
		if _, err := r.Open(nil, v, []byte(ad)); !errors.Is(err, ErrOpen) {
			t.Errorf("opened at %q: %v", ad, err)
		}
	}
	tampered := bytes.Clone(v)
	tampered[len(tampered)-1] ^= 1
	if _, err := r.Open(nil, tampered, []byte("m/alice/1")); !errors.Is(err, ErrOpen) {
		t.Errorf("tampered value: %v", err)
	}
}

func TestWrongAndOldKeys(t *testing.T) {
	old, _ := NewRing(key(1), nil)
	v := old.Seal(nil, []byte("secret"), nil)

	other, _ := NewRing(key(2), nil)
	if _, err := other.Open(nil, v, nil); !errors.Is(err, ErrUnknownKey) || !strings.Contains(err.Error(), old.Current().ID()) {
		t.Errorf("another key: %v (want ErrUnknownKey naming %s)", err, old.Current().ID())
	}
	rotated, err := NewRing(key(2), []string{key(1), key(2)})
	if err != nil {
		t.Fatal(err)
	}
	if len(rotated.Old()) != 1 {
		t.Errorf("old keys %v: the current key is not an old one", rotated.IDs())
	}
	if got, err := rotated.Open(nil, v, nil); err != nil || string(got) != "secret" {
		t.Errorf("old key: %q %v", got, err)
	}
	if SealedWith(v, rotated.Current()) || !SealedWith(v, old.Current()) {
		t.Error("SealedWith does not tell the keys apart")
	}
}
