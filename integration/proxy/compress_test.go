package proxy

import (
	"bytes"
	"compress/flate"
	"compress/gzip"
	"compress/zlib"
	"io"
	"net/http"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/klauspost/compress/zstd"
	"github.com/tidwall/gjson"

	"github.com/caddy-memory/memory/internal/harness"
)

func compress(t testing.TB, enc string, data []byte) []byte {
	t.Helper()
	var b bytes.Buffer
	var w io.WriteCloser
	switch enc {
	case "gzip":
		w = gzip.NewWriter(&b)
	case "deflate":
		w, _ = zlib.NewWriterLevel(&b, zlib.DefaultCompression)
	case "deflate-raw":
		w, _ = flate.NewWriter(&b, flate.DefaultCompression)
	case "zstd":
		zw, err := zstd.NewWriter(&b, zstd.WithEncoderLevel(zstd.SpeedFastest))
		if err != nil {
			t.Fatal(err)
		}
		w = zw
	default:
		t.Fatalf("no encoder for %s", enc)
	}
	if _, err := w.Write(data); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func postEncoded(t *testing.T, c *http.Client, enc string, body []byte) *http.Response {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, harness.CaddyAddr+"/v1/chat/completions", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer sk-compressed")
	req.Header.Set("Content-Encoding", strings.TrimSuffix(enc, "-raw"))
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp
}

// TestCompressedRequestBodies: some clients (Codex CLI among them) compress
// request bodies. They are decoded, remembered, and, when rewritten,
// forwarded uncompressed with the headers fixed.
func TestCompressedRequestBodies(t *testing.T) {
	for _, enc := range []string{"gzip", "zstd", "deflate", "deflate-raw"} {
		t.Run(enc, func(t *testing.T) {
			storage := t.TempDir()
			up := harness.NewFakeLLM(t)
			tester := harness.StartCaddy(t, harness.SiteConfig(storage, up.Addr(), ""))

			// Nothing to inject yet: the compressed body goes on untouched.
			statement := compress(t, enc, harness.ChatBody(false, harness.Msg("user", "I live in Lisbon.")))
			postEncoded(t, tester.Client, enc, statement)
			first := up.Last("/chat/completions")
			if !bytes.Equal(first.Body, statement) || first.Header.Get("Content-Encoding") != strings.TrimSuffix(enc, "-raw") {
				t.Fatalf("a body with nothing to inject was changed (encoding %q)", first.Header.Get("Content-Encoding"))
			}
			harness.Settle(t, storage, 1)

			question := harness.ChatBody(false, harness.Msg("user", "Where do I live?"))
			postEncoded(t, tester.Client, enc, compress(t, enc, question))
			got := up.Last("/chat/completions")
			if ce := got.Header.Get("Content-Encoding"); ce != "" {
				t.Errorf("rewritten body still labelled %q", ce)
			}
			if cl := got.Header.Get("Content-Length"); cl != strconv.Itoa(len(got.Body)) {
				t.Errorf("Content-Length %s for a %d-byte body", cl, len(got.Body))
			}
			if !gjson.ValidBytes(got.Body) || !strings.Contains(string(got.Body), "User lives in Lisbon.") {
				t.Errorf("upstream did not get the decoded, injected body: %.300q", got.Body)
			}
		})
	}
}

func TestUnknownRequestEncodingPassesThrough(t *testing.T) {
	storage := t.TempDir()
	up := harness.NewFakeLLM(t)
	tester := harness.StartCaddy(t, harness.SiteConfig(storage, up.Addr(), ""))
	body := []byte("\x1b\x2a\x00brotli-ish bytes")
	postEncoded(t, tester.Client, "br", body)
	got := up.Last("/chat/completions")
	if !bytes.Equal(got.Body, body) || got.Header.Get("Content-Encoding") != "br" {
		t.Errorf("an encoding the handler cannot read was not passed through untouched")
	}
}

// TestDecompressionBombIsRefused: a small body that decodes to 64 MiB is
// passed on as it came, for the upstream to refuse, and looking at it costs
// the proxy no more than the max_body cap.
func TestDecompressionBombIsRefused(t *testing.T) {
	storage := t.TempDir()
	up := harness.NewFakeLLM(t)
	tester := harness.StartCaddy(t, harness.SiteConfig(storage, up.Addr(), "max_body 1MiB"))
	for _, enc := range []string{"zstd", "gzip"} {
		// A valid chat body whose content is 64 MiB of spaces.
		var plain bytes.Buffer
		plain.WriteString(`{"model":"x","messages":[{"role":"user","content":"hi`)
		plain.Write(bytes.Repeat([]byte(" "), 64<<20))
		plain.WriteString(`"}]}`)
		bomb := compress(t, enc, plain.Bytes())
		plain = bytes.Buffer{}
		if len(bomb) > 1<<20 {
			t.Fatalf("the %s bomb is %d bytes; it must fit under max_body compressed", enc, len(bomb))
		}

		runtime.GC()
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		resp := postEncoded(t, tester.Client, enc, bomb)
		runtime.ReadMemStats(&after)
		if resp.StatusCode != http.StatusRequestEntityTooLarge {
			t.Errorf("%s: status %d, want the upstream's own 413", enc, resp.StatusCode)
		}
		if got := up.Last("/chat/completions"); !bytes.Equal(got.Body, bomb) {
			t.Errorf("%s: the bomb was not passed on as received", enc)
		}
		if grown := after.TotalAlloc - before.TotalAlloc; grown > 32<<20 {
			t.Errorf("%s: decoding a 64 MiB bomb allocated %d MiB; the 1 MiB cap should bound it", enc, grown>>20)
		}
	}
}

// TestCompressedResponseIsLearnedButNotDecodedForTheClient: an upstream
// that compresses anyway is forwarded byte for byte; only the copy is
// decoded, to learn from.
func TestCompressedResponseIsLearnedButNotDecodedForTheClient(t *testing.T) {
	storage := t.TempDir()
	up := harness.NewFakeLLM(t)
	up.Gzip = true
	up.Answer = func([]byte) string { return "Your zqbike route goes along the river." }
	tester := harness.StartCaddy(t, harness.SiteConfig(storage, up.Addr(), ""))
	for _, stream := range []bool{false, true} {
		req, _ := http.NewRequest(http.MethodPost, harness.CaddyAddr+"/v1/chat/completions",
			bytes.NewReader(harness.ChatBody(stream, harness.Msg("user", "How do I cycle to work?"))))
		req.Header.Set("Authorization", "Bearer sk-gzip")
		req.Header.Set("Accept-Encoding", "gzip") // so the client does not decode it either
		resp, err := tester.Client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		got, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.Header.Get("Content-Encoding") != "gzip" || !bytes.Equal(got, up.Last("/chat/completions").Response) {
			t.Fatalf("stream=%v: the client did not get the upstream's compressed bytes", stream)
		}
	}
	harness.Settle(t, storage, 2)
	if res := harness.SearchFor(t, harness.EngineAt(storage), "sk-gzip", "zqbike"); strings.Count(res, "Assistant: Your zqbike route goes along the river.") != 1 {
		t.Errorf("the compressed answer was not learned: %q", res)
	}
}
