package index

import (
	"bytes"
	"encoding/base64"
	"path/filepath"
	"strings"
	"testing"

	"github.com/caddy-memory/memory/internal/seal"
)

// TestHooksChainToTheBinarys: the module's hooks leave another module's
// index files to the hooks that binary installed before them, writing and
// reading, and seal only their own storages' files. Before, installing them
// replaced the process-wide hooks, and the other module's sealed files no
// longer opened.
func TestHooksChainToTheBinarys(t *testing.T) {
	ours, theirs := t.TempDir(), t.TempDir()
	ring, err := seal.NewRing(base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{7}, seal.KeySize)), nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := UseKeys(ours, ring, false); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { UseKeys(ours, nil, false) })

	// Another module's hooks: they reverse the bytes of its files.
	var wrote, read []string
	reverse := func(b []byte) []byte {
		out := make([]byte, len(b))
		for i, c := range b {
			out[len(b)-1-i] = c
		}
		return out
	}
	prevW := func(context []byte) (string, func([]byte) []byte, error) {
		wrote = append(wrote, string(context))
		return "other/1", reverse, nil
	}
	prevR := func(id string, context []byte) (func([]byte) ([]byte, error), error) {
		read = append(read, string(context))
		return func(b []byte) ([]byte, error) { return reverse(b), nil }, nil
	}
	w, r := chainHooks(prevW, prevR)

	theirFile := []byte(filepath.Join(theirs, "index", "000001.zap"))
	id, proc, err := w(theirFile)
	if err != nil || id != "other/1" || string(proc([]byte("abc"))) != "cba" {
		t.Fatalf("another module's file was not written through its hook: %q %v", id, err)
	}
	open, err := r(id, theirFile)
	if err != nil {
		t.Fatalf("another module's sealed file does not open: %v", err)
	}
	if got, _ := open([]byte("cba")); string(got) != "abc" {
		t.Errorf("another module's file read as %q", got)
	}

	ourFile := []byte(filepath.Join(ours, "shard-0", "000001.zap"))
	id, proc, err = w(ourFile)
	if err != nil || !strings.HasPrefix(id, hookPrefix) {
		t.Fatalf("our file was not sealed by our hook: %q %v", id, err)
	}
	sealed := proc([]byte("zqsecret"))
	if bytes.Contains(sealed, []byte("zqsecret")) {
		t.Error("our file was written in the clear")
	}
	open, err = r(id, ourFile)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := open(sealed); err != nil || string(got) != "zqsecret" {
		t.Errorf("our sealed file reads %q, %v", got, err)
	}
	if len(wrote) != 1 || len(read) != 1 {
		t.Errorf("the other module's hooks saw %v written and %v read, want its own file once each", wrote, read)
	}
}
