package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/caddy-memory/memory/internal/freeport"
	"github.com/caddy-memory/memory/store"
)

// importConfig is the -import mode: what a POST /import of size bytes
// costs a real Caddy process.
type importConfig struct {
	size    int64
	shape   string // export, long or history
	clients int    // concurrent imports, each under a bearer of its own
	caddy   string // a caddy binary; "" builds ./cmd/caddy
	dir     string
	// searchCache is the storage's search_cache ("": its default).
	searchCache string
}

// importShapes are the bodies the -import mode sends: what GET /export
// writes for a mix of turns and facts; lines of the longest memory an
// export holds (16 KiB of content and 20 versions of history as long);
// and lines of about 4 MiB (the longest a line may be) of tiny history
// versions, the most objects a line's bytes decode into.
var importShapes = []string{"export", "long", "history"}

// runImport starts Caddy with memory_api on a fresh storage, sends the
// imports and reports its resident memory before, at the peak and after,
// and the time they took.
func runImport(c importConfig) error {
	dir, err := os.MkdirTemp(c.dir, "bench-import-")
	if err != nil {
		return err
	}
	if os.Getenv("BENCH_KEEP") == "" {
		defer os.RemoveAll(dir)
	}
	bin := c.caddy
	if bin == "" {
		bin = filepath.Join(dir, "caddy")
		build := exec.Command("go", "build", "-o", bin, "./cmd/caddy")
		build.Stdout, build.Stderr = os.Stderr, os.Stderr
		if err := build.Run(); err != nil {
			return fmt.Errorf("building caddy: %w", err)
		}
	}
	ports, err := freeport.Loopback(2)
	if err != nil {
		return err
	}
	site, admin := ports[0], ports[1]
	settings := ""
	if c.searchCache != "" {
		settings = "search_cache " + c.searchCache
	}
	cfg := fmt.Sprintf(`{
	admin 127.0.0.1:%d
	memory {
		storage default {
			path %s
			%s
		}
	}
}
http://127.0.0.1:%d {
	handle /memory/* {
		memory_api
	}
}
`, admin, filepath.Join(dir, "storage"), settings, site)
	base := fmt.Sprintf("http://127.0.0.1:%d/memory", site)
	pid, stop, err := runCaddy(bin, dir, cfg, base)
	if err != nil {
		return err
	}
	defer stop()
	return measureImport(c, pid, base, filepath.Join(dir, "storage"))
}

// runCaddy writes cfg as dir's Caddyfile and runs the Caddy binary bin on
// it (its data and config in dir, its log in dir/caddy.log) until the
// memory API at base answers: its pid, and stop, which ends it.
func runCaddy(bin, dir, cfg, base string) (pid int, stop func(), err error) {
	if err := os.WriteFile(filepath.Join(dir, "Caddyfile"), []byte(cfg), 0o600); err != nil {
		return 0, nil, err
	}
	cmd := exec.Command(bin, "run", "--config", filepath.Join(dir, "Caddyfile"), "--adapter", "caddyfile")
	cmd.Env = append(os.Environ(), "XDG_DATA_HOME="+dir, "XDG_CONFIG_HOME="+dir)
	logFile, err := os.Create(filepath.Join(dir, "caddy.log"))
	if err != nil {
		return 0, nil, err
	}
	cmd.Stdout, cmd.Stderr = logFile, logFile
	if err := cmd.Start(); err != nil {
		logFile.Close()
		return 0, nil, err
	}
	stop = func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		_ = cmd.Wait()
		logFile.Close()
	}
	if err := waitHealthy(base); err != nil {
		stop()
		return 0, nil, fmt.Errorf("%w (log: %s)", err, filepath.Join(dir, "caddy.log"))
	}
	return cmd.Process.Pid, stop, nil
}

// measureImport sends c's imports to the Caddy process pid serving
// memory_api at base, and prints what they cost it.
func measureImport(c importConfig, pid int, base, storage string) error {
	time.Sleep(2 * time.Second) // let start-up garbage be collected
	before := procStatus(pid)
	// The peak from here on: clear_refs 5 resets VmHWM to the current RSS.
	if err := os.WriteFile(fmt.Sprintf("/proc/%d/clear_refs", pid), []byte("5"), 0); err != nil {
		return fmt.Errorf("resetting the peak RSS: %w", err)
	}
	fmt.Printf("import: %d client(s), %.0f MiB each, shape %s, into Caddy pid %d\n", c.clients, mib(c.size), c.shape, pid)
	start := time.Now()
	peakAnon := samplePeak(func() int64 { return procStatus(pid)["RssAnon"] })
	peakDB := samplePeak(func() int64 { return rssByMapping(pid, storage, "")["memory.db"] })
	var wg sync.WaitGroup
	answers := make([]string, c.clients)
	for i := range c.clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			answers[i] = sendImport(base, fmt.Sprintf("sk-import-%d", i), c.shape, c.size, uint64(i+1))
		}()
	}
	wg.Wait()
	took := time.Since(start)
	after, files := procStatus(pid), rssByMapping(pid, storage, "")
	anon, db := peakAnon(), peakDB()
	time.Sleep(10 * time.Second)
	later := procStatus(pid)
	for i, a := range answers {
		fmt.Printf("import %d: %s\n", i, a)
	}
	fmt.Printf("took %.1f s\n", took.Seconds())
	fmt.Printf("RSS (MiB):   before %4.0f   peak %4.0f (%+.0f)   right after %4.0f   10 s later %4.0f\n",
		mib(before["VmRSS"]), mib(after["VmHWM"]), mib(after["VmHWM"]-before["VmRSS"]), mib(after["VmRSS"]), mib(later["VmRSS"]))
	fmt.Printf("  anonymous: before %4.0f   peak %4.0f (%+.0f)   right after %4.0f   10 s later %4.0f\n",
		mib(before["RssAnon"]), mib(anon), mib(anon-before["RssAnon"]), mib(after["RssAnon"]), mib(later["RssAnon"]))
	fmt.Printf("  memory.db mapped: peak %.0f, right after %.0f; index files mapped right after %.0f\n",
		mib(db), mib(files["memory.db"]), mib(files["index"]))
	return nil
}

func waitHealthy(base string) error {
	deadline := time.Now().Add(time.Minute)
	for time.Now().Before(deadline) {
		req, _ := http.NewRequest(http.MethodGet, base+"/health", nil)
		req.Header.Set("Authorization", "Bearer sk-import-probe")
		if resp, err := http.DefaultClient.Do(req); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	return fmt.Errorf("caddy did not answer /memory/health within a minute")
}

// procStatus reads the sizes (bytes) of /proc/PID/status.
func procStatus(pid int) map[string]int64 {
	out := map[string]int64{}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return out
	}
	for _, line := range strings.Split(string(b), "\n") {
		name, v, ok := strings.Cut(line, ":")
		if !ok || !strings.HasSuffix(v, "kB") {
			continue
		}
		kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(v, "kB")), 10, 64)
		if err == nil {
			out[name] = kb << 10
		}
	}
	return out
}

// samplePeak calls read every 20 ms until the returned function is
// called, which returns the largest value read.
func samplePeak(read func() int64) func() int64 {
	stop, peak := make(chan struct{}), make(chan int64)
	go func() {
		var most int64
		tick := time.NewTicker(20 * time.Millisecond)
		defer tick.Stop()
		for {
			most = max(most, read())
			select {
			case <-stop:
				peak <- most
				return
			case <-tick.C:
			}
		}
	}()
	return func() int64 { close(stop); return <-peak }
}

// sendImport streams size bytes of lines of the shape to POST /import
// under key, and returns the answer's status and counts.
func sendImport(base, key, shape string, size int64, seed uint64) string {
	pr, pw := io.Pipe()
	go func() {
		bw := bufio.NewWriterSize(pw, 256<<10)
		err := writeImport(bw, shape, size, seed)
		if err == nil {
			err = bw.Flush()
		}
		pw.CloseWithError(err)
	}()
	req, _ := http.NewRequestWithContext(context.Background(), http.MethodPost, base+"/import", pr)
	req.Header.Set("Content-Type", "application/x-ndjson")
	req.Header.Set("Authorization", "Bearer "+key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err.Error()
	}
	defer resp.Body.Close()
	var out map[string]any
	raw, _ := io.ReadAll(resp.Body)
	if json.Unmarshal(raw, &out) == nil {
		if errs, ok := out["errors"].([]any); ok {
			out["errors"] = len(errs) // their count is enough here
		}
		raw, _ = json.Marshal(out)
	}
	return fmt.Sprintf("%d %s", resp.StatusCode, bytes.TrimSpace(raw))
}

// writeImport writes lines of the shape until size bytes are written.
func writeImport(w io.Writer, shape string, size int64, seed uint64) error {
	v := newVocab(seed)
	owner := fmt.Sprintf("%032x", seed)
	at := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	var line bytes.Buffer
	enc := json.NewEncoder(&line)
	enc.SetEscapeHTML(false)
	written := int64(0)
	for i := 1; ; i++ {
		at = at.Add(time.Minute)
		m := &store.Memory{ID: uint64(i), Owner: owner, CreatedAt: at, UpdatedAt: at, Mentions: 1, Version: 1,
			Seq: uint64(i), Source: store.SourceRules}
		switch shape {
		case "export":
			p := v.memory(int(seed), i, at)
			// An owner's keys are unique in an export.
			m.Kind, m.Key, m.Content, m.Context, m.Meta = p.Kind, fmt.Sprintf("%s:%d", p.Key, i), p.Content, p.Context, p.Meta
			if m.Kind != "turn" && v.rng.IntN(4) == 0 {
				m.History = []store.Version{{Content: "User liked " + strings.Join(v.words(4), " ") + ".", At: at.Add(-time.Hour), Until: at}}
				m.Version = 2
			}
		case "long":
			m.Kind, m.Key = "note", fmt.Sprintf("note:long:%d", i)
			m.Content = text(v, store.MaxContent)
			for range store.MaxHistory {
				m.History = append(m.History, store.Version{Content: text(v, store.MaxContent), At: at.Add(-time.Hour)})
			}
			m.Version = store.MaxHistory + 1
		case "history":
			m.Kind, m.Key, m.Content = "note", fmt.Sprintf("note:history:%d", i), "A memory with a long history."
			tiny := store.Version{Content: "x", At: at}
			one, _ := json.Marshal(tiny)
			for n := 0; n < (4<<20-4096)/(len(one)+1); n++ {
				m.History = append(m.History, tiny)
			}
		default:
			return fmt.Errorf("-import-shape: %q is none of %v", shape, importShapes)
		}
		line.Reset()
		if err := enc.Encode(m); err != nil {
			return err
		}
		if written += int64(line.Len()); written > size {
			return nil // the body stays within size
		}
		if _, err := w.Write(line.Bytes()); err != nil {
			return err
		}
	}
}

// text is about n bytes of words.
func text(v *vocab, n int) string {
	var b strings.Builder
	for b.Len() < n-32 {
		b.WriteString(v.word())
		b.WriteByte(' ')
	}
	return strings.TrimSpace(b.String())
}
