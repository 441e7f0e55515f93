// Package reqbody owns reading and replacing a request body whose size is
// bounded: read at most a limit, give the whole body back when it is
// larger, and replace it with every header that describes it.
package reqbody

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"strconv"
)

// Read reads at most max bytes of the request body. When the body is
// larger, complete is false and r.Body is restored to the whole body, the
// read part stitched back in front of the rest.
func Read(r *http.Request, max int64) (body []byte, complete bool, err error) {
	if r.Body == nil || r.Body == http.NoBody {
		return nil, false, nil
	}
	if r.ContentLength > max {
		return nil, false, nil
	}
	// A declared length is read into one buffer of its size, not one that
	// doubles as it fills (twice the memory, for a body near max_body).
	var b bytes.Buffer
	if r.ContentLength > 0 {
		b.Grow(int(r.ContentLength) + bytes.MinRead)
	}
	_, err = b.ReadFrom(io.LimitReader(r.Body, max+1))
	buf := b.Bytes()
	if err != nil || int64(len(buf)) > max {
		r.Body = stitched{io.MultiReader(bytes.NewReader(buf), r.Body), r.Body}
		if err != nil {
			return nil, false, fmt.Errorf("reading request body: %w", err)
		}
		return nil, false, nil
	}
	return buf, true, nil
}

// stitched is a body whose first bytes were already read: reads see them
// again, Close closes the original.
type stitched struct {
	io.Reader
	io.Closer
}

// Set replaces the request body and every header that describes it.
func Set(r *http.Request, b []byte) {
	r.Body = io.NopCloser(bytes.NewReader(b))
	r.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(b)), nil }
	r.ContentLength = int64(len(b))
	r.Header.Set("Content-Length", strconv.Itoa(len(b)))
	r.TransferEncoding = nil
}

// WriterOnly hides every method but Write, so io.Copy cannot find a
// ReadFrom that would bypass the wrapper's Write.
type WriterOnly struct{ io.Writer }
