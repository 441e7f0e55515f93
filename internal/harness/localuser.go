package harness

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/caddyserver/caddy/v2/caddytest"
)

// ExampleUnderTest is Caddyfile.example as the tests run it: the shipped
// file, its global options given the test server's admin endpoint, a
// storage in storage, Caddy's log as JSON in logFile, and extra global
// options. Its environment (MEMORY_PORT, MEMORY_UPSTREAM, MEMORY_BIND) is
// the test's.
func ExampleUnderTest(t *testing.T, storage, logFile, extra string) string {
	t.Helper()
	src, err := os.ReadFile(RepoFile("Caddyfile.example"))
	if err != nil {
		t.Fatal(err)
	}
	s := string(src)
	at := strings.Index(s, "{\n\tdefault_bind")
	if at < 0 {
		t.Fatal("Caddyfile.example's global options do not start with default_bind")
	}
	globals := fmt.Sprintf(`{
	admin %s
	grace_period 1ns
	log {
		output file %s
		format json
	}
	memory {
		storage default {
			path %s
			index_shards 4
		}
	}
%s`, AdminListen, logFile, storage, extra)
	return s[:at] + globals + s[at+2:]
}

// OllamaChat sends a keyless Ollama chat request (as Ollama's own clients
// Do) through c, with more headers, and returns what the upstream got.
func OllamaChat(t *testing.T, c *http.Client, up *FakeLLM, headers map[string]string, text string) []byte {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, CaddyAddr+"/api/chat", bytes.NewReader(MustBytes(map[string]any{
		"model": "llama3.2", "stream": false, "messages": []any{Msg("user", text)}})))
	for k, v := range headers {
		if k == "Host" {
			req.Host = v
			continue
		}
		req.Header.Set(k, v)
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d", resp.StatusCode)
	}
	return up.Last("/api/chat").Body
}

// From is a client whose connections to Caddy say, in a PROXY protocol
// header, that they come from ip: a client elsewhere on the network, as
// Caddy's proxy_protocol listener wrapper hands it to the handlers.
func From(ip string) *http.Client {
	return &http.Client{Timeout: 20 * time.Second, Transport: &http.Transport{DisableKeepAlives: true,
		DialContext: func(ctx context.Context, _, addr string) (net.Conn, error) {
			c, err := (&net.Dialer{}).DialContext(ctx, "tcp", "127.0.0.1:"+Port)
			if err != nil {
				return nil, err
			}
			_, err = fmt.Fprintf(c, "PROXY TCP4 %s 127.0.0.1 40000 %s\r\n", ip, Port)
			return c, err
		}}}
}

// LogLines are the entries of a JSON log file whose message starts with
// Msg.
func LogLines(t *testing.T, file, msg string) []map[string]any {
	t.Helper()
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []map[string]any
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var e map[string]any
		if json.Unmarshal(sc.Bytes(), &e) == nil && strings.HasPrefix(fmt.Sprint(e["msg"]), msg) {
			out = append(out, e)
		}
	}
	return out
}

const NoOwnerMsg = "chat request passed on without memory"

// ExposedExample runs Caddyfile.example with MEMORY_BIND=0.0.0.0 on Port
// in front of a fake upstream, its listener taking a PROXY protocol header
// From 127.0.0.1 (as from a load balancer), so that from() can be a client
// elsewhere on the network. It returns the upstream, the storage, Caddy's
// log file and the tester.
func ExposedExample(t *testing.T) (*FakeLLM, string, string, *caddytest.Tester) {
	t.Helper()
	up := NewFakeLLM(t)
	storage, logFile := t.TempDir(), filepath.Join(t.TempDir(), "caddy.log")
	t.Setenv("MEMORY_PORT", Port)
	t.Setenv("MEMORY_UPSTREAM", up.URL)
	t.Setenv("MEMORY_BIND", "0.0.0.0")
	wrapper := `	servers {
		listener_wrappers {
			proxy_protocol {
				allow 127.0.0.1/32
			}
		}
	}
`
	return up, storage, logFile, StartCaddy(t, ExampleUnderTest(t, storage, logFile, wrapper))
}
