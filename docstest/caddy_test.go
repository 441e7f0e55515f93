//go:build unix

package docstest_test

import (
	"bytes"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/caddy-memory/memory/internal/freeport"
)

// The docs talk to Caddy where Caddyfile.example puts it, the site on
// localhost:8080 (and Caddy's admin endpoint on localhost:2019). The test
// runs that Caddy on ports the OS picks instead (MEMORY_PORT, CADDY_ADMIN),
// so that it runs beside a Caddy on Caddyfile.example and beside other
// tests, and points the examples' URLs at them (onPort).
const docSite = "localhost:8080"

// adminPassword is the operator's password the docs' admin examples use
// (curl -u 'admin:secret'); the README's admin mount reads its hash from
// MEMORY_ADMIN_HASH.
const adminPassword = "secret"

// onPort is blocks with the docs' site address (localhost:8080, or
// 127.0.0.1:8080) on port instead.
func onPort(blocks []block, port string) []block {
	out := make([]block, len(blocks))
	for i, b := range blocks {
		b.lines = append([]string(nil), b.lines...)
		for j, l := range b.lines {
			l = strings.ReplaceAll(l, docSite, "localhost:"+port)
			b.lines[j] = strings.ReplaceAll(l, "127.0.0.1:8080", "127.0.0.1:"+port)
		}
		out[i] = b
	}
	return out
}

// buildCaddy builds ./cmd/caddy into a temporary directory.
func buildCaddy(t *testing.T, root string) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "caddy")
	cmd := exec.Command("go", "build", "-o", bin, "./cmd/caddy")
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build ./cmd/caddy: %v\n%s", err, out)
	}
	return bin
}

// hashPassword is what the README tells the operator to put in
// MEMORY_ADMIN_HASH: caddy hash-password's answer.
func hashPassword(t *testing.T, bin, password string) string {
	t.Helper()
	out, err := exec.Command(bin, "hash-password", "--plaintext", password).Output()
	if err != nil {
		t.Fatalf("caddy hash-password: %v", err)
	}
	return strings.TrimSpace(string(out))
}

// exampleWithAdmin is Caddyfile.example with the admin mount of the
// README's Management API section added to its site, as the README tells
// an operator to do: the `handle /memory/admin/* {...}` block, copied as
// written (indented one level), just before the key holders'
// `handle /memory/* {`.
func exampleWithAdmin(root string) (string, error) {
	example, err := os.ReadFile(filepath.Join(root, "Caddyfile.example"))
	if err != nil {
		return "", err
	}
	blocks, err := readBlocks(root, "README.md")
	if err != nil {
		return "", err
	}
	var mount []string
	for _, b := range blocks {
		if !b.caddyfile() {
			continue
		}
		for i, l := range b.lines {
			if !strings.HasPrefix(strings.TrimSpace(l), "handle /memory/admin/* {") {
				continue
			}
			indent := l[:len(l)-len(strings.TrimLeft(l, "\t"))]
			for _, m := range b.lines[i:] {
				mount = append(mount, "\t"+strings.TrimPrefix(m, indent))
				if m == indent+"}" {
					break
				}
			}
			break
		}
	}
	if len(mount) == 0 {
		return "", fmt.Errorf("README.md: no caddy block with a `handle /memory/admin/* {` mount")
	}
	const anchor = "\thandle /memory/* {\n"
	i := strings.Index(string(example), anchor)
	if i < 0 {
		return "", fmt.Errorf("Caddyfile.example: no %q to put the admin mount before", strings.TrimSpace(anchor))
	}
	return string(example[:i]) + strings.Join(mount, "\n") + "\n" + string(example[i:]), nil
}

// syncBuffer collects a process's output.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// runCaddy starts `caddy run` on the Caddyfile with a data directory of
// its own (so each doc file starts from an empty storage), waits until the
// site and the admin endpoint answer, and stops it when the test ends. It
// returns the port of the site.
func runCaddy(t *testing.T, bin, caddyfile string, env []string) string {
	t.Helper()
	ports, err := freeport.Loopback(2)
	if err != nil {
		t.Fatal(err)
	}
	site, admin := strconv.Itoa(ports[0]), "localhost:"+strconv.Itoa(ports[1])
	dir := t.TempDir()
	cfg := filepath.Join(dir, "Caddyfile")
	if err := os.WriteFile(cfg, []byte(caddyfile), 0o600); err != nil {
		t.Fatal(err)
	}
	log := new(syncBuffer)
	cmd := exec.Command(bin, "run", "--config", cfg, "--adapter", "caddyfile")
	cmd.Env = append([]string{
		"PATH=" + os.Getenv("PATH"),
		"HOME=" + dir,
		"XDG_DATA_HOME=" + filepath.Join(dir, "data"),
		"XDG_CONFIG_HOME=" + filepath.Join(dir, "config"),
		"MEMORY_PORT=" + site,
		"CADDY_ADMIN=" + admin,
	}, env...)
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		t.Fatalf("start caddy: %v", err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(os.Interrupt)
		select {
		case <-exited:
		case <-time.After(20 * time.Second):
			_ = cmd.Process.Kill()
			<-exited
			t.Errorf("caddy did not stop within 20s of SIGINT; its log:\n%s", log)
		}
	})
	deadline := time.Now().Add(60 * time.Second)
	for {
		select {
		case <-exited:
			t.Fatalf("caddy exited before it served; its log:\n%s", log)
		default:
		}
		if up("http://"+admin+"/config/") && up("http://127.0.0.1:"+site+"/memory/ui/") {
			if strings.Contains(log.String(), "input is not formatted") {
				t.Errorf("caddy warns that the Caddyfile (Caddyfile.example with the README's admin mount) is not formatted:\n%s", log)
			}
			return site
		}
		if time.Now().After(deadline) {
			t.Fatalf("caddy did not answer on %s and %s within 60s; its log:\n%s", site, admin, log)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func up(url string) bool {
	resp, err := http.Get(url)
	if err != nil {
		return false
	}
	resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}
