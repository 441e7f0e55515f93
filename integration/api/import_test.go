package api

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"runtime"
	"runtime/metrics"
	"strings"
	"testing"
	"time"

	"github.com/caddyserver/caddy/v2/caddytest"

	"github.com/caddy-memory/memory/internal/harness"
	"github.com/caddy-memory/memory/store"
)

// TestImportHeapIsBoundedByABatch: a 32 MiB import through Caddy grows the
// heap's live size by a few batches, not by the body. Decoded whole, as it
// once was, the body's memories were all live at once until the last was
// stored, and indexed all at once.
func TestImportHeapIsBoundedByABatch(t *testing.T) {
	storage := t.TempDir()
	tester := harness.StartCaddy(t, harness.APIConfig(t, storage, harness.NewFakeLLM(t).Addr(), ""))
	const size = 32 << 20
	// The owner first holds more memories than are searched from their
	// records: the index enrols them all at once (enrol.go), a cost of the
	// owner's size that is not the import's.
	if status, out := streamImport(t, tester, "sk-bulk", func(w io.Writer) error { return writeMemories(w, 1<<20) }); status != http.StatusOK {
		t.Fatalf("first import: %d %v", status, out)
	}
	runtime.GC() // what lives before, marked now
	base := liveHeap()
	peak := sampleLiveHeap()
	status, out := streamImport(t, tester, "sk-bulk", func(w io.Writer) error { return writeMemories(w, size) })
	grew := peak() - base
	if errs, _ := out["errors"].([]any); status != http.StatusOK || len(errs) != 0 || out["imported"].(float64) < 1000 {
		t.Fatalf("import: %d %v", status, out)
	}
	t.Logf("%.0f memories: the live heap grew by %.1f MiB at most", out["imported"], float64(grew)/(1<<20))
	// What stays is the batch being stored and indexed (Bleve analyses a
	// batch's text into about ten times its size), the search postings of
	// the memories imported, caches: about 20 MiB here, against 211 MiB
	// when the body was decoded whole.
	if grew > size {
		t.Errorf("a %d MiB import grew the live heap by %.1f MiB, more than its body; it should hold a batch at a time", size>>20, float64(grew)/(1<<20))
	}
}

// writeMemories writes lines as GET /export does, of memories with some
// history, until about size bytes.
func writeMemories(w io.Writer, size int) error {
	bw := bufio.NewWriterSize(w, 64<<10)
	at := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	words := strings.Fields("tea garden bicycle harbour violin lantern orchard pepper saddle quartz meadow kettle")
	for i, n := 1, 0; n < size; i++ {
		var b strings.Builder
		for j := 0; b.Len() < 8<<10; j++ {
			b.WriteString(words[(i*j+j/3)%len(words)] + " ")
		}
		m := store.Memory{ID: uint64(i), Owner: fmt.Sprintf("%032x", 1), Kind: "note", Key: fmt.Sprintf("note:%d", i),
			Content: b.String(), CreatedAt: at, UpdatedAt: at, Mentions: 1, Version: 3,
			History: []store.Version{{Content: b.String()[:4096], At: at}, {Content: b.String()[4096:], At: at}}}
		line, err := json.Marshal(m)
		if err != nil {
			return err
		}
		n += len(line) + 1
		bw.Write(line)
		bw.WriteByte('\n')
	}
	return bw.Flush()
}

// streamImport sends what write writes to POST /memory/import under key
// (self mode), as it is written, and returns the answer.
func streamImport(t *testing.T, tester *caddytest.Tester, key string, write func(io.Writer) error) (int, map[string]any) {
	t.Helper()
	pr, pw := io.Pipe()
	go func() { pw.CloseWithError(write(pw)) }()
	status, out, err := sendImport(tester, key, pr)
	if err != nil {
		t.Fatal(err)
	}
	return status, out
}

// sendImport posts body to /memory/import under key and returns the
// answer; safe outside the test's goroutine.
func sendImport(tester *caddytest.Tester, key string, body io.Reader) (int, map[string]any, error) {
	req, _ := http.NewRequest(http.MethodPost, harness.CaddyAddr+"/memory/import", body)
	req.Header.Set("Content-Type", "application/x-ndjson")
	req.Header.Set("Authorization", "Bearer "+key)
	// An import of tens of MiB stores and indexes its batches before it
	// answers: on 2 cores shared with the other test packages that takes
	// longer than the tester's timeout for one request, and how long is not
	// what these tests check.
	c := *tester.Client
	c.Timeout = 3 * time.Minute
	resp, err := c.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	var out map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		return 0, nil, fmt.Errorf("import answer: %w", err)
	}
	return resp.StatusCode, out, nil
}

// liveHeap is the heap's live size as the last collection marked it.
func liveHeap() int64 {
	s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	metrics.Read(s)
	return int64(s[0].Value.Uint64())
}

// sampleLiveHeap reads the live heap every millisecond until the returned
// function is called, which returns the largest size seen. Each collection
// during the import marks what it holds at that moment, so a body held
// whole is seen by every one of them.
func sampleLiveHeap() func() int64 {
	stop, peak := make(chan struct{}), make(chan int64)
	go func() {
		most := liveHeap()
		tick := time.NewTicker(time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				peak <- max(most, liveHeap())
				return
			case <-tick.C:
				most = max(most, liveHeap())
			}
		}
	}()
	return func() int64 { close(stop); return <-peak }
}

// TestConcurrentImportsAreBounded: imports of one storage run one per
// owner and two in all; one more is refused with 429, Retry-After and a
// JSON error that says what to do, and goes through once one has ended.
func TestConcurrentImportsAreBounded(t *testing.T) {
	storage := t.TempDir()
	tester := harness.StartCaddy(t, harness.APIConfig(t, storage, harness.NewFakeLLM(t).Addr(), ""))
	a := harness.APICall{T: t, Client: tester.Client}
	line := func(content string) []byte {
		return harness.MustBytes(store.Memory{Owner: fmt.Sprintf("%032x", 1), Kind: "note", Content: content})
	}
	// held starts an import under key whose body stays open until the
	// returned function is called, which returns the import's status. It
	// returns once the import's first batch (256 lines) is stored: the
	// import is running.
	held := func(key string) func() int {
		t.Helper()
		pr, pw := io.Pipe()
		status := make(chan int, 1)
		go func() {
			code, out, err := sendImport(tester, key, pr)
			if err != nil || code != http.StatusOK {
				t.Errorf("the held import of %s: %d %v %v", key, code, out, err)
			}
			status <- code
		}()
		go func() {
			for i := range 256 {
				pw.Write(append(line(fmt.Sprintf("Held import %d of %s.", i, key)), '\n'))
			}
		}()
		for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
			_, out := a.Do("GET", "/memory/stats", key, nil)
			if n, _ := out["memories"].(map[string]any)["total"].(float64); n == 256 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("the held import of %s stored no batch: %v", key, out)
			}
		}
		return func() int { pw.Close(); return <-status }
	}
	// refused sends a small import under key (admin: "admin") and returns
	// the code of its refusal.
	refused := func(path, key string) string {
		t.Helper()
		req, _ := http.NewRequest(http.MethodPost, harness.CaddyAddr+path, strings.NewReader(string(line("A small import."))))
		req.Header.Set("Content-Type", "application/x-ndjson")
		if key == "admin" {
			req.SetBasicAuth("admin", "s3cret")
		} else {
			req.Header.Set("Authorization", "Bearer "+key)
		}
		resp, err := tester.Client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var out map[string]map[string]string
		json.NewDecoder(resp.Body).Decode(&out)
		if resp.StatusCode != http.StatusTooManyRequests || resp.Header.Get("Retry-After") == "" || out["error"]["message"] == "" {
			t.Errorf("%s under %s while other imports run: %d, Retry-After %q, %v; want 429 with Retry-After and a message",
				path, key, resp.StatusCode, resp.Header.Get("Retry-After"), out)
		}
		return out["error"]["code"]
	}

	endA := held("sk-a")
	if code := refused("/memory/import", "sk-a"); code != "import_running" {
		t.Errorf("a second import of one owner: %q, want import_running", code)
	}
	endB := held("sk-b")
	if code := refused("/memory/import", "sk-b"); code != "import_running" {
		t.Errorf("a second import of another owner: %q, want import_running", code)
	}
	// Two run: a third owner, and an operator's import of every owner's
	// lines, wait.
	if code := refused("/memory/import", "sk-c"); code != "imports_busy" {
		t.Errorf("a third import: %q, want imports_busy", code)
	}
	if code := refused("/memory/admin/import?owner=sk-d", "admin"); code != "imports_busy" {
		t.Errorf("an operator's import beside two: %q, want imports_busy", code)
	}
	if status := endA(); status != http.StatusOK {
		t.Fatalf("the held import ended with %d", status)
	}
	if status, out := a.Do("POST", "/memory/import", "sk-c", line("Imported once another ended.")); status != http.StatusOK {
		t.Errorf("an import after one ended: %d %v", status, out)
	}
	if status := endB(); status != http.StatusOK {
		t.Fatalf("the held import ended with %d", status)
	}
}
