package memory

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"
)

// damage rewrites, in the closed store file of storage, the records of
// owner's memories that pick chooses as bytes no codec reads: what a
// flipped sector or a torn page leaves.
func damage(t *testing.T, storage, owner string, pick func(id uint64) bool) int {
	t.Helper()
	db, err := bolt.Open(filepath.Join(storage, "memory.db"), 0o600, &bolt.Options{Timeout: 5 * time.Second})
	if err != nil {
		t.Fatalf("opening the store file to damage it (is it still open?): %v", err)
	}
	defer db.Close()
	n := 0
	err = db.Update(func(tx *bolt.Tx) error {
		mem := tx.Bucket([]byte("owners")).Bucket([]byte(owner)).Bucket([]byte("m"))
		var ids [][]byte
		_ = mem.ForEach(func(k, _ []byte) error {
			if pick(binary.BigEndian.Uint64(k)) {
				ids = append(ids, bytes.Clone(k))
			}
			return nil
		})
		for _, k := range ids {
			if err := mem.Put(k, []byte{0x03, 0xff}); err != nil {
				return err
			}
			n++
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// get sends an admin GET through Caddy and returns the response, its body
// as far as it could be read, and the error that ended the reading.
func get(t *testing.T, path string) (*http.Response, []byte, error) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, caddyAddr+path, nil)
	req.SetBasicAuth("admin", "s3cret")
	resp, err := (&http.Client{Timeout: 20 * time.Second}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	return resp, body, err
}

// TestAFailedExportFailsAtTheClient: a backup job must be able to tell a
// whole export from one that failed. A read error after the answer began
// aborts the transfer (the client's read fails, as curl's exit status
// does); one before it is an error answer; and /health says unhealthy
// while the store's records cannot be read.
func TestAFailedExportFailsAtTheClient(t *testing.T) {
	storage := t.TempDir()
	up := newFakeLLM(t)
	cfg := apiConfig(t, storage, up.addr(), "")
	a := apiCall{t, startCaddy(t, cfg).Client}
	owner := engineAt(storage).OwnerID("sk-backup")
	var jsonl bytes.Buffer
	for i := 1; i <= 600; i++ {
		fmt.Fprintf(&jsonl, `{"id":%d,"owner":%q,"kind":"note","content":"Backed-up memory %d. %s"}`+"\n", 5000+i, owner, i, strings.Repeat("All work and no play. ", 45))
	}
	if status, out := a.do("POST", "/memory/admin/import", "admin", jsonl.Bytes()); status != http.StatusOK || out["imported"] != 600.0 {
		t.Fatalf("import: %d %v", status, out)
	}
	resp, whole, err := get(t, "/memory/admin/export?owner=sk-backup")
	if resp.StatusCode != http.StatusOK || err != nil || bytes.Count(whole, []byte("\n")) != 600 {
		t.Fatalf("the export before any damage: %d, %d lines, %v", resp.StatusCode, bytes.Count(whole, []byte("\n")), err)
	}

	// One record damaged two thirds in: the answer has begun (its first
	// 64 KiB are out) when the read fails.
	unloadCaddy(t)
	damage(t, storage, owner, func(id uint64) bool { return id == 5400 })
	startCaddy(t, cfg)
	resp, cut, err := get(t, "/memory/admin/export?owner=sk-backup")
	if err == nil {
		t.Errorf("an export cut short at a damaged record read as a whole one: %d, %d of %d bytes, %d lines",
			resp.StatusCode, len(cut), len(whole), bytes.Count(cut, []byte("\n")))
	} else {
		t.Logf("the client's read failed after %d of %d bytes: %v", len(cut), len(whole), err)
	}
	if n := bytes.Count(cut, []byte("\n")); n >= 399 || !bytes.HasPrefix(cut, whole[:100]) {
		t.Errorf("the cut export has %d whole lines and begins %.100q; want the first of the 399 before the damaged record", n, cut)
	}

	// Every record damaged: nothing can be exported, which is an error
	// answer, and the store is unhealthy.
	unloadCaddy(t)
	damage(t, storage, owner, func(uint64) bool { return true })
	startCaddy(t, cfg)
	resp, body, err := get(t, "/memory/admin/export?owner=sk-backup")
	if resp.StatusCode != http.StatusInternalServerError || err != nil || !strings.Contains(string(body), "damaged") {
		t.Errorf("an export that cannot read its first record: %d %q (%v), want 500 saying why", resp.StatusCode, body, err)
	}
	resp, body, _ = get(t, "/memory/admin/health")
	if resp.StatusCode != http.StatusServiceUnavailable || !strings.Contains(string(body), "damaged") {
		t.Errorf("/health while no record can be read: %d %s, want 503 saying why", resp.StatusCode, body)
	}
}
