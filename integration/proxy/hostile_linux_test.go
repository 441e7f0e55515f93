package proxy

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/caddy-memory/memory/internal/harness"
)

// TestDeeplyNestedBodiesPassThrough: chat bodies of nothing but nested
// arrays, on every wire format, reach the upstream byte for byte, and the
// process's peak memory grows by a small multiple of what it was sent. Such
// bodies used to cost about 1 GB of stack each while being validated, and
// one of 8 MB overflowed the stack, which ends the process.
func TestDeeplyNestedBodiesPassThrough(t *testing.T) {
	storage := t.TempDir()
	// An upstream that keeps only a hash of what it received.
	var mu sync.Mutex
	got := map[string]int{}
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := sha256.New()
		io.Copy(h, r.Body)
		mu.Lock()
		got[hex.EncodeToString(h.Sum(nil))]++
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"id":"x","choices":[{"message":{"role":"assistant","content":"ok"}}]}`)
	}))
	t.Cleanup(up.Close)
	tester := harness.StartCaddy(t, harness.SiteConfig(storage, strings.TrimPrefix(up.URL, "http://"), "max_body 8MiB"))

	resetPeakRSS(t)
	before := peakRSS(t)
	const concurrent = 8
	medium := append([]byte(`{"model":"m","messages":`), bytes.Repeat([]byte("["), 4<<20)...)
	large := bytes.Repeat([]byte("["), 8<<20-1024) // just under max_body: read, validated, refused
	sent := 0
	for _, path := range []string{"/v1/chat/completions", "/v1/messages", "/api/chat", "/v1/responses"} {
		bodies := [][]byte{large}
		for range concurrent {
			bodies = append(bodies, medium)
		}
		var wg sync.WaitGroup
		for _, body := range bodies {
			wg.Add(1)
			go func() {
				defer wg.Done()
				req, _ := http.NewRequest(http.MethodPost, harness.CaddyAddr+path, bytes.NewReader(body))
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("x-api-key", "sk-nested")
				req.Header.Set("Authorization", "Bearer sk-nested")
				resp, err := tester.Client.Do(req)
				if err != nil {
					t.Errorf("%s: %v", path, err)
					return
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode != http.StatusOK {
					t.Errorf("%s: status %d, want the upstream's 200", path, resp.StatusCode)
				}
			}()
		}
		wg.Wait()
		sent += len(bodies)
	}
	sum := func(b []byte) string { h := sha256.Sum256(b); return hex.EncodeToString(h[:]) }
	mu.Lock()
	defer mu.Unlock()
	if n := got[sum(large)] + got[sum(medium)]; n != sent {
		t.Errorf("the upstream received %d of the %d bodies unchanged", n, sent)
	}
	// Each request in flight holds its body, read into one buffer of its
	// declared size, and the client holds what it sends: a few times the
	// 40 MiB in flight. The recursive validator needed about 1 GB a body.
	// Under the race detector every allocation also costs shadow memory.
	bound := int64(160 << 20)
	if harness.RaceDetector {
		bound *= 4
	}
	if grew := peakRSS(t) - before; grew > bound {
		t.Errorf("peak RSS grew by %d MiB for %d concurrent bodies of 4 MiB and one of 8; the bound is %d MiB", grew>>20, concurrent, bound>>20)
	}
}

// resetPeakRSS sets the process's peak resident size (VmHWM) to its current
// size.
func resetPeakRSS(t *testing.T) {
	t.Helper()
	if err := os.WriteFile("/proc/self/clear_refs", []byte("5"), 0); err != nil {
		t.Fatalf("resetting the peak RSS: %v", err)
	}
}

// peakRSS is the process's peak resident size in bytes since the last reset.
func peakRSS(t *testing.T) int64 {
	t.Helper()
	status, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(status), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return kb << 10
		}
	}
	t.Fatal(fmt.Errorf("no VmHWM in /proc/self/status"))
	return 0
}
