package contentenc

import (
	"bytes"
	"compress/flate"
	"compress/gzip"
	"compress/zlib"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"runtime"
	"strings"
	"testing"

	"github.com/klauspost/compress/zstd"
)

// sample is a request-like body with some repetition, as a client compresses it.
func sample(n int) []byte {
	var b bytes.Buffer
	rng := rand.New(rand.NewPCG(1, 2))
	words := []string{"user", "assistant", "Lisbon", "memory", "content", "role", "{", "}", "\"", "日本", "ünïcödé"}
	for b.Len() < n {
		b.WriteString(words[rng.IntN(len(words))])
		b.WriteByte(' ')
	}
	return b.Bytes()[:n]
}

func gzipBytes(t testing.TB, data []byte) []byte {
	t.Helper()
	var b bytes.Buffer
	w := gzip.NewWriter(&b)
	if _, err := w.Write(data); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func zlibBytes(t testing.TB, data []byte) []byte {
	t.Helper()
	var b bytes.Buffer
	w := zlib.NewWriter(&b)
	if _, err := w.Write(data); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func flateBytes(t testing.TB, data []byte) []byte {
	t.Helper()
	var b bytes.Buffer
	w, err := flate.NewWriter(&b, flate.DefaultCompression)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write(data); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// zstdStream compresses with the streaming encoder, which does not declare
// the content size, with the given window (0: the encoder's default).
func zstdStream(t testing.TB, data []byte, window int) []byte {
	t.Helper()
	var b bytes.Buffer
	opts := []zstd.EOption{zstd.WithEncoderConcurrency(1)}
	if window > 0 {
		opts = append(opts, zstd.WithWindowSize(window))
	}
	w, err := zstd.NewWriter(&b, opts...)
	if err != nil {
		t.Fatal(err)
	}
	// Written in pieces, as a client streaming a body does.
	for len(data) > 0 {
		n := min(len(data), 32<<10)
		if _, err := w.Write(data[:n]); err != nil {
			t.Fatal(err)
		}
		data = data[n:]
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// zstdAll compresses in one go: a single-segment frame that declares its
// content size.
func zstdAll(t testing.TB, data []byte) []byte {
	t.Helper()
	e, err := zstd.NewWriter(nil, zstd.WithEncoderConcurrency(1))
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	return e.EncodeAll(data, nil)
}

// coding is one way of producing a Content-Encoding body.
type coding struct {
	name string // test name
	enc  string // Content-Encoding value
	comp func(testing.TB, []byte) []byte
}

var codings = []coding{
	{"gzip", "gzip", gzipBytes},
	{"x-gzip", "x-gzip", gzipBytes},
	{"deflate zlib-wrapped", "deflate", zlibBytes},
	{"deflate raw", "deflate", flateBytes},
	{"zstd single segment", "zstd", zstdAll},
	{"zstd stream", "zstd", func(t testing.TB, d []byte) []byte { return zstdStream(t, d, 64<<10) }},
}

func TestDecodeRoundTrip(t *testing.T) {
	for _, c := range codings {
		for _, n := range []int{0, 1, 1000, 300 << 10} {
			t.Run(fmt.Sprintf("%s/%d", c.name, n), func(t *testing.T) {
				data := sample(n)
				for _, enc := range []string{c.enc, " " + c.enc + " ", strings.ToUpper(c.enc)} {
					got, err := Decode(enc, c.comp(t, data), 1<<20, false)
					if err != nil {
						t.Fatalf("Decode(%q): %v", enc, err)
					}
					if !bytes.Equal(got, data) {
						t.Fatalf("Decode(%q) = %d bytes, want the %d bytes compressed", enc, len(got), len(data))
					}
				}
			})
		}
	}
}

func TestIdentity(t *testing.T) {
	for _, enc := range []string{"", "identity", " Identity ", "IDENTITY", "\tidentity"} {
		if !Identity(enc) {
			t.Errorf("Identity(%q) = false", enc)
		}
	}
	for _, enc := range []string{"gzip", "br", "identity, gzip", "x-identity"} {
		if Identity(enc) {
			t.Errorf("Identity(%q) = true", enc)
		}
	}
	data := []byte(`{"messages":[]}`)
	for _, enc := range []string{"", " Identity "} {
		got, err := Decode(enc, data, int64(len(data)), false)
		if err != nil || !bytes.Equal(got, data) {
			t.Errorf("Decode(%q) = %q, %v; want the data as is", enc, got, err)
		}
	}
}

func TestSupported(t *testing.T) {
	for _, enc := range []string{"gzip", "x-gzip", "deflate", "zstd", " GZIP ", "Zstd"} {
		if !Supported(enc) {
			t.Errorf("Supported(%q) = false", enc)
		}
	}
	for _, enc := range []string{"br", "compress", "x-compress", "gzip, br", "zstd;q=1", "lz4"} {
		if Supported(enc) {
			t.Errorf("Supported(%q) = true", enc)
		}
	}
}

func TestDecodeCap(t *testing.T) {
	const max = 100_000
	for _, c := range codings {
		t.Run(c.name, func(t *testing.T) {
			exact := sample(max)
			got, err := Decode(c.enc, c.comp(t, exact), max, false)
			if err != nil || !bytes.Equal(got, exact) {
				t.Errorf("exactly max bytes: Decode = %d bytes, %v; want all %d", len(got), err, max)
			}
			for _, n := range []int{max + 1, 3 * max} {
				got, err := Decode(c.enc, c.comp(t, sample(n)), max, false)
				if !errors.Is(err, ErrTooLarge) {
					t.Errorf("%d bytes: Decode = %d bytes, %v; want ErrTooLarge", n, len(got), err)
				}
				if got != nil {
					t.Errorf("%d bytes: Decode returned %d bytes with ErrTooLarge", n, len(got))
				}
				// A capped response copy is not a licence to exceed the cap.
				if _, err := Decode(c.enc, c.comp(t, sample(n)), max, true); !errors.Is(err, ErrTooLarge) {
					t.Errorf("%d bytes, partial: err = %v, want ErrTooLarge", n, err)
				}
			}
		})
	}
	t.Run("zstd frame declaring a large window", func(t *testing.T) {
		// 8 MB window, 2 MB of content, a 1 MB cap.
		z := zstdStream(t, sample(2<<20), 8<<20)
		var h zstd.Header
		if err := h.Decode(z); err != nil || h.WindowSize < 8<<20 {
			t.Fatalf("test frame declares window %d (%v), want 8 MB", h.WindowSize, err)
		}
		if got, err := Decode("zstd", z, 1<<20, false); !errors.Is(err, ErrTooLarge) {
			t.Errorf("Decode = %d bytes, %v; want ErrTooLarge", len(got), err)
		}
	})
	t.Run("zstd frame declaring a large content size", func(t *testing.T) {
		z := zstdAll(t, sample(2<<20))
		var h zstd.Header
		if err := h.Decode(z); err != nil || !h.HasFCS || h.FrameContentSize != 2<<20 {
			t.Fatalf("test frame header %+v (%v), want content size 2 MB", h, err)
		}
		if got, err := Decode("zstd", z, 1<<20, false); !errors.Is(err, ErrTooLarge) {
			t.Errorf("Decode = %d bytes, %v; want ErrTooLarge", len(got), err)
		}
	})
	t.Run("identity", func(t *testing.T) {
		data := sample(max + 1)
		if got, err := Decode("", data, max, false); !errors.Is(err, ErrTooLarge) {
			t.Errorf("Decode(identity, max+1 bytes) = %d bytes, %v; want ErrTooLarge", len(got), err)
		}
		if got, err := Decode("identity", data[:max], max, false); err != nil || len(got) != max {
			t.Errorf("Decode(identity, max bytes) = %d bytes, %v", len(got), err)
		}
	})
}

// RFC 9659: a zstd content coding may use a window of up to 8 MB and a
// recipient must be able to decode it. A small body from a compliant
// streaming encoder must therefore decode under a cap smaller than 8 MB, such
// as the handler's default 4 MiB max_body.
func TestDecodeZstdStandardWindowSmallBody(t *testing.T) {
	data := sample(300 << 10)
	for _, window := range []int{2 << 20, 4 << 20, 8 << 20} {
		t.Run(fmt.Sprintf("window %d MiB", window>>20), func(t *testing.T) {
			z := zstdStream(t, data, window)
			var h zstd.Header
			if err := h.Decode(z); err != nil || h.WindowSize != uint64(window) {
				t.Fatalf("test frame declares window %d (%v), want %d", h.WindowSize, err, window)
			}
			got, err := Decode("zstd", z, 4<<20, false)
			if err != nil || !bytes.Equal(got, data) {
				t.Errorf("Decode(300 KiB body, %d MiB window, cap 4 MiB) = %d bytes, %v; want the body", window>>20, len(got), err)
			}
		})
	}
}

func TestDecodePartial(t *testing.T) {
	data := sample(600 << 10)
	for _, c := range codings {
		t.Run(c.name, func(t *testing.T) {
			z := c.comp(t, data)
			cut := z[:len(z)*2/3]
			got, err := Decode(c.enc, cut, 1<<20, true)
			if err != nil {
				t.Fatalf("partial Decode of a truncated stream: %v", err)
			}
			if len(got) == 0 || len(got) >= len(data) || !bytes.Equal(got, data[:len(got)]) {
				t.Errorf("partial Decode = %d bytes, want a non-empty proper prefix of the %d-byte body", len(got), len(data))
			}
			if got, err := Decode(c.enc, cut, 1<<20, false); err == nil {
				t.Errorf("Decode of a truncated stream without partial = %d bytes, nil error", len(got))
			}
			// Whole streams decode the same with partial set.
			if got, err := Decode(c.enc, z, 1<<20, true); err != nil || !bytes.Equal(got, data) {
				t.Errorf("partial Decode of a whole stream = %d bytes, %v", len(got), err)
			}
		})
	}
}

func TestDecodeCorrupt(t *testing.T) {
	data := sample(20 << 10)
	for _, c := range codings {
		t.Run(c.name, func(t *testing.T) {
			z := c.comp(t, data)
			flipped := bytes.Clone(z)
			for i := len(flipped) / 3; i < len(flipped)*2/3; i += 7 {
				flipped[i] ^= 0x5a
			}
			inputs := map[string][]byte{
				"plain text":     []byte("not a compressed body, plainly"),
				"zeros":          make([]byte, 100),
				"first 6 bytes":  z[:6],
				"flipped middle": flipped,
			}
			for name, in := range inputs {
				got, err := Decode(c.enc, in, 1<<20, false)
				if name == "flipped middle" && c.name == "deflate raw" {
					// Raw deflate has no checksum: garbage may decode, but
					// never to the original.
					if err == nil && bytes.Equal(got, data) {
						t.Errorf("%s: corrupted stream decoded to the original", name)
					}
					continue
				}
				if err == nil {
					t.Errorf("%s: Decode = %d bytes, nil error; want an error", name, len(got))
				}
				if errors.Is(err, ErrUnsupported) || errors.Is(err, ErrTooLarge) {
					t.Errorf("%s: corrupt input reported as %v", name, err)
				}
			}
		})
	}
}

func TestDecodeUnsupported(t *testing.T) {
	for _, enc := range []string{"br", "compress", "gzip, br", "zstd, gzip", "lz4"} {
		got, err := Decode(enc, []byte("abc"), 1<<20, false)
		if !errors.Is(err, ErrUnsupported) {
			t.Errorf("Decode(%q) error = %v, want ErrUnsupported", enc, err)
		}
		if got != nil {
			t.Errorf("Decode(%q) returned %q", enc, got)
		}
	}
}

// A few kilobytes that decode to 64 MiB must be refused without the decoder
// ever holding much more than the cap.
func TestDecodeBomb(t *testing.T) {
	zeros := make([]byte, 24<<20)
	bombs := []struct {
		name, enc string
		z         []byte
	}{
		{"gzip", "gzip", gzipBytes(t, zeros)},
		{"deflate zlib", "deflate", zlibBytes(t, zeros)},
		{"deflate raw", "deflate", flateBytes(t, zeros)},
		{"zstd default window", "zstd", zstdStream(t, zeros, 0)},
		{"zstd window within the cap", "zstd", zstdStream(t, zeros, 1<<20)},
		{"zstd single segment", "zstd", zstdAll(t, zeros)},
		{"zstd declaring a 512 MiB window", "zstd", hugeWindow(t, zstdStream(t, zeros, 1<<20))},
	}
	zeros = nil
	const max = 1 << 20
	for _, b := range bombs {
		t.Run(b.name, func(t *testing.T) {
			if len(b.z) > 4<<20 {
				t.Fatalf("bomb is %d bytes compressed; not a bomb", len(b.z))
			}
			for _, partial := range []bool{false, true} {
				runtime.GC()
				var before, after runtime.MemStats
				runtime.ReadMemStats(&before)
				got, err := Decode(b.enc, b.z, max, partial)
				runtime.ReadMemStats(&after)
				if !errors.Is(err, ErrTooLarge) {
					t.Errorf("partial=%v: Decode = %d bytes, %v; want ErrTooLarge", partial, len(got), err)
				}
				alloc := after.TotalAlloc - before.TotalAlloc
				t.Logf("partial=%v: %d KiB allocated", partial, alloc>>10)
				if alloc > 16<<20 {
					t.Errorf("partial=%v: decoding allocated %d MiB for a %d MiB cap", partial, alloc>>20, max>>20)
				}
			}
		})
	}
}

// hugeWindow rewrites the window descriptor of a frame without a declared
// content size to claim a 512 MiB window; the frame stays valid, since its
// matches reach no further than before.
func hugeWindow(t testing.TB, z []byte) []byte {
	t.Helper()
	z = bytes.Clone(z)
	var h zstd.Header
	if err := h.Decode(z); err != nil || h.SingleSegment || h.HasFCS || h.DictionaryID != 0 {
		t.Fatalf("unexpected frame header %+v: %v", h, err)
	}
	z[5] = (29 - 10) << 3 // exponent 19, mantissa 0: 1<<29
	if err := h.Decode(z); err != nil || h.WindowSize != 1<<29 {
		t.Fatalf("window descriptor rewrite gave %d: %v", h.WindowSize, err)
	}
	return z
}

func TestDecodeDoesNotReadPastTheCap(t *testing.T) {
	// A reader that is endless once decompressed: the cap must stop it.
	var b bytes.Buffer
	w := gzip.NewWriter(&b)
	if _, err := io.CopyN(w, zeroReader{}, 8<<20); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := Decode("gzip", b.Bytes(), 1000, false); !errors.Is(err, ErrTooLarge) {
		t.Errorf("err = %v, want ErrTooLarge", err)
	}
}

type zeroReader struct{}

func (zeroReader) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}
