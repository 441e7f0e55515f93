// Package contentenc decodes HTTP content codings (gzip, deflate, zstd) with a
// hard cap on the decoded size, for request bodies and response copies alike:
// a small compressed body must never become a large allocation.
package contentenc

import (
	"bytes"
	"compress/flate"
	"compress/gzip"
	"compress/zlib"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/klauspost/compress/zstd"
)

// zstdWindow is the largest window a zstd content coding may use (RFC 9659).
const zstdWindow = 8 << 20

// ErrTooLarge means the decoded body would exceed the cap.
var ErrTooLarge = errors.New("decoded body exceeds the size limit")

// ErrUnsupported means the coding is not one this package decodes.
var ErrUnsupported = errors.New("unsupported content encoding")

// Identity reports whether a Content-Encoding value means "not encoded".
func Identity(enc string) bool {
	enc = strings.TrimSpace(enc)
	return enc == "" || strings.EqualFold(enc, "identity")
}

// Supported reports whether Decode handles the coding.
func Supported(enc string) bool {
	switch strings.ToLower(strings.TrimSpace(enc)) {
	case "gzip", "x-gzip", "deflate", "zstd":
		return true
	}
	return false
}

// Decode decodes data of the given coding, reading at most max decoded
// bytes. A body that would decode to more returns ErrTooLarge without ever
// holding more than max+1 bytes. When partial is true a stream that ends
// early (a capped copy of a response) decodes to what it holds.
func Decode(enc string, data []byte, max int64, partial bool) ([]byte, error) {
	if Identity(enc) {
		if int64(len(data)) > max {
			return nil, ErrTooLarge
		}
		return data, nil
	}
	var r io.Reader
	var closer func()
	switch strings.ToLower(strings.TrimSpace(enc)) {
	case "gzip", "x-gzip":
		zr, err := gzip.NewReader(bytes.NewReader(data))
		if err != nil {
			return nil, fmt.Errorf("gzip: %w", err)
		}
		r = zr
	case "deflate":
		// HTTP's "deflate" is zlib-wrapped (RFC 9110), but many clients send
		// raw deflate; accept both.
		if zr, err := zlib.NewReader(bytes.NewReader(data)); err == nil {
			r = zr
		} else {
			r = flate.NewReader(bytes.NewReader(data))
		}
	case "zstd":
		// Bound the decoder's own memory too: a frame may declare a huge
		// window. HTTP's zstd coding allows windows up to 8 MB (RFC 9659),
		// which encoders use by default, so that much is always accepted;
		// the output itself is capped below.
		window := uint64(max)
		if window < zstdWindow {
			window = zstdWindow
		}
		zr, err := zstd.NewReader(bytes.NewReader(data),
			zstd.WithDecoderConcurrency(1), zstd.WithDecoderLowmem(true),
			zstd.WithDecoderMaxMemory(window), zstd.WithDecoderMaxWindow(window))
		if err != nil {
			return nil, fmt.Errorf("zstd: %w", err)
		}
		r, closer = zr, zr.Close
	default:
		return nil, fmt.Errorf("%w: %q", ErrUnsupported, enc)
	}
	if closer != nil {
		defer closer()
	}
	out, err := io.ReadAll(io.LimitReader(r, max+1))
	if int64(len(out)) > max {
		return nil, ErrTooLarge
	}
	if err != nil {
		if partial && (errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF)) {
			return out, nil
		}
		if errors.Is(err, zstd.ErrDecoderSizeExceeded) || errors.Is(err, zstd.ErrWindowSizeExceeded) {
			return nil, ErrTooLarge
		}
		return nil, fmt.Errorf("decoding %s: %w", enc, err)
	}
	return out, nil
}
