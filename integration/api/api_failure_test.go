package api

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/caddy-memory/memory/internal/harness"
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
	req, _ := http.NewRequest(http.MethodGet, harness.CaddyAddr+path, nil)
	req.SetBasicAuth("admin", "s3cret")
	resp, err := (&http.Client{Timeout: 20 * time.Second}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	return resp, body, err
}

// TestAnExportSkipsADamagedRecordAndSaysSo: one bad record is one bad
// record. A backup taken while one record cannot be read holds every other
// memory, and tells its reader how many it passed over (a trailer, after
// the last line, since that is only known at the end), so a backup job can
// tell a whole export from one that is not. Every record unreadable is an
// error answer, and /health says the storage is damaged.
func TestAnExportSkipsADamagedRecordAndSaysSo(t *testing.T) {
	storage := t.TempDir()
	up := harness.NewFakeLLM(t)
	cfg := harness.APIConfig(t, storage, up.Addr(), "")
	a := harness.APICall{T: t, Client: harness.StartCaddy(t, cfg).Client}
	owner := harness.EngineAt(storage).OwnerID("sk-backup")
	var jsonl bytes.Buffer
	for i := 1; i <= 600; i++ {
		fmt.Fprintf(&jsonl, `{"id":%d,"owner":%q,"kind":"note","content":"Backed-up memory %d. %s"}`+"\n", 5000+i, owner, i, strings.Repeat("All work and no play. ", 45))
	}
	if status, out := a.Do("POST", "/memory/admin/import", "admin", jsonl.Bytes()); status != http.StatusOK || out["imported"] != 600.0 {
		t.Fatalf("import: %d %v", status, out)
	}
	resp, whole, err := get(t, "/memory/admin/export?owner=sk-backup")
	if resp.StatusCode != http.StatusOK || err != nil || bytes.Count(whole, []byte("\n")) != 600 {
		t.Fatalf("the export before any damage: %d, %d lines, %v", resp.StatusCode, bytes.Count(whole, []byte("\n")), err)
	}
	if got := resp.Trailer.Get("X-Memory-Skipped-Damaged"); got != "0" {
		t.Errorf("a whole export's trailer says %q damaged records were skipped, want 0", got)
	}

	// One record damaged two thirds in.
	harness.UnloadCaddy(t)
	damage(t, storage, owner, func(id uint64) bool { return id == 5400 })
	harness.StartCaddy(t, cfg)
	resp, cut, err := get(t, "/memory/admin/export?owner=sk-backup")
	if resp.StatusCode != http.StatusOK || err != nil {
		t.Fatalf("an export with one damaged record: %d, %v; want the others", resp.StatusCode, err)
	}
	// What each line holds, by id (salience is computed as of the export,
	// so the lines' bytes differ in it).
	held := func(jsonl []byte) map[int]string {
		out := map[int]string{}
		for _, line := range bytes.Split(bytes.TrimSpace(jsonl), []byte("\n")) {
			var m struct {
				ID      int    `json:"id"`
				Content string `json:"content"`
			}
			if json.Unmarshal(line, &m) != nil {
				t.Fatalf("an export line that is not JSON: %.100q", line)
			}
			out[m.ID] = m.Content
		}
		return out
	}
	want, got := held(whole), held(cut)
	delete(want, 5400)
	if !maps.Equal(got, want) {
		t.Errorf("the export holds %d memories; want the 599 intact ones as before", len(got))
	}
	if got := resp.Trailer.Get("X-Memory-Skipped-Damaged"); got != "1" {
		t.Errorf("the trailer says %q damaged records were skipped, want 1", got)
	}

	// Every record damaged: the export is empty and says why, and /health
	// says the storage serves degraded and what to run.
	harness.UnloadCaddy(t)
	damage(t, storage, owner, func(uint64) bool { return true })
	harness.StartCaddy(t, cfg)
	resp, body, err := get(t, "/memory/admin/export?owner=sk-backup")
	if resp.StatusCode != http.StatusOK || err != nil || len(body) != 0 || resp.Trailer.Get("X-Memory-Skipped-Damaged") != "600" {
		t.Errorf("an export that can read no record: %d, %d bytes, trailer %q (%v); want none and 600 skipped",
			resp.StatusCode, len(body), resp.Trailer.Get("X-Memory-Skipped-Damaged"), err)
	}
	resp, body, _ = get(t, "/memory/admin/health")
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), `"degraded"`) || !strings.Contains(string(body), "caddy memory salvage") {
		t.Errorf("/health while no record can be read: %d %s, want degraded, saying what to run", resp.StatusCode, body)
	}
}

// TestAnExportNobodyReadsStallsNoOne: any key holder can export their own
// memories and stop reading. Their export must not hold the store while it
// waits for them: a read transaction kept open across the writes to the
// client blocks bbolt's remap when the file grows, and with it every later
// write and read of every owner (the proxy's searches, /health).
func TestAnExportNobodyReadsStallsNoOne(t *testing.T) {
	storage := t.TempDir()
	up := harness.NewFakeLLM(t)
	cfg := harness.APIConfig(t, storage, up.Addr(), "")
	a := harness.APICall{T: t, Client: harness.StartCaddy(t, cfg).Client}
	client := &http.Client{Timeout: 15 * time.Second}
	// importAs writes n memories of about 15 KB for owner in one request.
	batch := 0
	importAs := func(owner string, n int) error {
		var jsonl bytes.Buffer
		for i := 0; i < n; i++ {
			batch++
			fmt.Fprintf(&jsonl, `{"kind":"note","content":"Memory %d of %s. %s"}`+"\n", batch, owner, strings.Repeat("All work and no play. ", 700))
		}
		req, _ := http.NewRequest(http.MethodPost, harness.CaddyAddr+"/memory/import", &jsonl)
		req.Header.Set("Content-Type", "application/x-ndjson")
		req.Header.Set("Authorization", "Bearer "+owner)
		resp, err := client.Do(req)
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		if body, _ := io.ReadAll(resp.Body); resp.StatusCode != http.StatusOK {
			return fmt.Errorf("%d %s", resp.StatusCode, body)
		}
		return nil
	}
	// About 6 MB to export: more than the sockets between the client and
	// Caddy hold, so the export waits for a reader that never comes.
	for range 4 {
		if err := importAs("sk-slow", 100); err != nil {
			t.Fatal(err)
		}
	}
	conn, err := net.Dial("tcp", strings.TrimPrefix(harness.CaddyAddr, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_ = conn.(*net.TCPConn).SetReadBuffer(4096)
	fmt.Fprintf(conn, "GET /memory/export HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer sk-slow\r\n\r\n")
	status, err := bufio.NewReaderSize(conn, 64).ReadString('\n')
	if err != nil || !strings.Contains(status, " 200 ") {
		t.Fatalf("the export did not begin: %q %v", status, err)
	}

	// Another owner writes until the file has outgrown what bbolt mapped
	// when the export began (the next power of two of its size): a remap.
	file := filepath.Join(storage, "memory.db")
	mapped := int64(32 << 10)
	for mapped < fileSize(t, file) {
		mapped *= 2
	}
	i := 0
	for ; fileSize(t, file) <= mapped; i++ {
		if i == 40 {
			t.Fatalf("the store file stayed at %d bytes (mapped %d) after 40 imports", fileSize(t, file), mapped)
		}
		start := time.Now()
		if err := importAs("sk-writer", 50); err != nil {
			t.Fatalf("another owner's import waited for the export nobody reads (%v after %d imports, the file at %d bytes): %v",
				time.Since(start).Round(time.Millisecond), i, fileSize(t, file), err)
		}
	}
	t.Logf("%d imports of another owner grew the file past the %d bytes mapped while the export waited", i, mapped)
	if status, out := a.Do("GET", "/memory/memories?limit=1", "sk-writer", nil); status != http.StatusOK {
		t.Errorf("another owner's read while the export waits: %d %v", status, out)
	}
	if status, out := a.Do("GET", "/memory/health", "sk-writer", nil); status != http.StatusOK {
		t.Errorf("/health while the export waits: %d %v", status, out)
	}
}

func fileSize(t *testing.T, path string) int64 {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Size()
}
