package api

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"

	"github.com/caddy-memory/memory/internal/engine"
	"github.com/caddy-memory/memory/store"
)

// An import's memory is bounded by a batch, never by its body: the lines
// are read and stored importBatchLines or importBatchBytes at a time, each
// batch one engine call (one transaction, indexed before the next is
// read). Decoded whole, a 64 MiB import cost the process about 2.6 GB.
const (
	importBatchLines = 256
	importBatchBytes = 256 << 10
	// maxImportLine is the longest line read; a longer one is reported and
	// skipped. The longest memory an export writes (16 KiB of content and
	// 20 versions as long, every byte escaped) fits in it.
	maxImportLine = 4 << 20
	// maxImportErrors bounds the errors an answer lists; failed counts
	// them all.
	maxImportErrors = 100
)

// importResult is the answer to POST /import.
type importResult struct {
	Imported   int `json:"imported"`
	Replaced   int `json:"replaced"`
	Renumbered int `json:"renumbered"`
	// Failed counts the lines not stored; Errors says why, for the first
	// maxImportErrors of them.
	Failed int           `json:"failed"`
	Errors []importError `json:"errors"`
}

type importError struct {
	Line    int    `json:"line"`
	Message string `json:"message"`
}

func (r *importResult) bad(line int, err error) {
	r.Failed++
	if len(r.Errors) < maxImportErrors {
		r.Errors = append(r.Errors, importError{Line: line, Message: err.Error()})
	}
}

// importJSONL serves POST /import: JSON lines as GET /export writes them.
// Importing the same lines twice leaves the same memories. Lines that are
// not valid memories are reported and skipped; the rest are stored. The
// owner can be remapped with owner/owner_id (in self mode, always the caller).
func (h *Handler) importJSONL(w http.ResponseWriter, r *http.Request) {
	remap, err := h.ownerOf(r, queryOwner(r), false)
	if err != nil {
		h.fail(w, err)
		return
	}
	if r.ContentLength > h.cfg.MaxImport {
		// Refused before a batch is stored (a body of unknown length is
		// found too large only once read that far).
		h.fail(w, importTooLarge(h.cfg.MaxImport))
		return
	}
	release, busy := h.cfg.Imports.enter(remap)
	if busy != nil {
		w.Header().Set("Retry-After", retryImportAfter)
		writeError(w, busy)
		return
	}
	defer release()
	imp, err := h.cfg.Engine.NewImport(h.cfg.Mode == Admin)
	if err != nil {
		h.fail(w, err)
		return
	}
	im := &importer{imp: imp, ctx: r.Context(), remap: remap}
	im.res.Errors = []importError{}
	if err := im.run(http.MaxBytesReader(w, r.Body, h.cfg.MaxImport)); err != nil {
		var tooLarge *http.MaxBytesError
		var unread *readError
		var ae *apiError
		switch {
		case errors.As(err, &tooLarge):
			ae = importTooLarge(tooLarge.Limit)
		case errors.As(err, &unread):
			ae = badRequest("line %d: %v", unread.line, unread.err)
		default:
			ae = h.errorOf(w, err)
		}
		if im.done > 0 {
			// The batches before are stored: say so, and the way on.
			ae = errorf(ae.status, ae.code, "%s (the lines up to %d were imported; an import is idempotent: send the whole file again)", ae.message, im.done)
		}
		writeError(w, ae)
		return
	}
	if im.kept == 0 {
		if im.res.Failed == 0 {
			h.fail(w, badRequest("the body holds no memories; send JSON lines as GET /export writes them"))
			return
		}
		writeJSON(w, http.StatusBadRequest, im.res)
		return
	}
	writeJSON(w, http.StatusOK, im.res)
}

// ImportResult is what an import stored and what it could not.
type ImportResult = importResult

// Import reads JSON lines, as GET /export writes them, from r into e, a
// batch at a time, as POST /import does (for tools without the HTTP API:
// caddy memory import). Every line keeps its owner id unless ownerID
// names one owner for them all, as owner_id= does; keepIDs keeps a line's
// id where it is free. An error stops it: the lines before were stored.
func Import(ctx context.Context, e *engine.Engine, r io.Reader, keepIDs bool, ownerID string) (ImportResult, error) {
	if ownerID != "" && !validOwnerID(ownerID) {
		return ImportResult{}, fmt.Errorf("%q is not an owner id (32 hex characters)", ownerID)
	}
	imp, err := e.NewImport(keepIDs)
	if err != nil {
		return ImportResult{}, err
	}
	im := &importer{imp: imp, ctx: ctx, remap: ownerID}
	im.res.Errors = []importError{}
	err = im.run(r)
	if err != nil && im.done > 0 {
		err = fmt.Errorf("%w (the lines up to %d were imported; an import is idempotent: run it again)", err, im.done)
	}
	return im.res, err
}

func importTooLarge(limit int64) *apiError {
	return errorf(http.StatusRequestEntityTooLarge, "too_large", "the import is larger than %d bytes; split it", limit)
}

// importer reads an import's lines and stores them a batch at a time.
type importer struct {
	imp   *engine.Import
	ctx   context.Context
	remap string // the owner every line is stored for; "" keeps each line's
	res   importResult
	batch []*store.Memory
	lines []int // batch[i] is from line lines[i]
	size  int   // bytes of the batch's lines
	kept  int   // lines handed to the engine, in all
	done  int   // the lines up to this one are stored or reported
}

func (im *importer) run(body io.Reader) error {
	br := bufio.NewReaderSize(body, 64<<10)
	var buf []byte
	for n := 1; ; n++ {
		line, tooLong, err := readLine(br, buf[:0])
		buf = line
		if err != nil && err != io.EOF {
			return &readError{line: n, err: err}
		}
		if raw := bytes.TrimSpace(line); tooLong {
			im.res.bad(n, fmt.Errorf("the line is longer than %d bytes", maxImportLine))
		} else if len(raw) > 0 {
			im.add(n, raw)
		}
		if len(im.batch) >= importBatchLines || im.size >= importBatchBytes || err == io.EOF {
			if ferr := im.flush(n); ferr != nil || err == io.EOF {
				return ferr
			}
		}
	}
}

// readError is a body that could not be read to its end.
type readError struct {
	line int
	err  error
}

func (e *readError) Error() string { return e.err.Error() }
func (e *readError) Unwrap() error { return e.err }

// readLine appends the next line of br (its newline included) to buf; a
// line longer than maxImportLine is read to its end but not kept.
func readLine(br *bufio.Reader, buf []byte) (line []byte, tooLong bool, err error) {
	for {
		chunk, err := br.ReadSlice('\n')
		if !tooLong && len(buf)+len(chunk) > maxImportLine {
			tooLong, buf = true, buf[:0]
		}
		if !tooLong {
			buf = append(buf, chunk...)
		}
		if err != bufio.ErrBufferFull {
			return buf, tooLong, err
		}
	}
}

// add checks line n and puts it in the batch, or reports it.
func (im *importer) add(n int, raw []byte) {
	m, err := parseLine(raw)
	if err == nil && im.remap == "" && !validOwnerID(m.Owner) {
		err = errors.New("owner must be an owner id (32 hex characters); to store every line for one owner, name it: owner= or owner_id= on POST /import, --owner or --owner-id on caddy memory import")
	}
	if err == nil {
		err = checkMemoryFields(m.Kind, m.Content, m.Key, m.Session, m.Meta)
	}
	if err != nil {
		im.res.bad(n, err)
		return
	}
	if im.remap != "" {
		m.Owner = im.remap
	}
	im.batch, im.lines = append(im.batch, m), append(im.lines, n)
	im.size += len(raw)
}

// flush stores the batch; through is the last line read.
func (im *importer) flush(through int) error {
	if len(im.batch) > 0 {
		ops, errs, err := im.imp.Batch(im.ctx, im.batch)
		if err != nil {
			return err
		}
		for i, op := range ops {
			switch {
			case errs[i] != nil:
				im.res.bad(im.lines[i], errs[i])
			case op == store.Imported:
				im.res.Imported++
			case op == store.Replaced:
				im.res.Replaced++
			case op == store.Renumbered:
				im.res.Renumbered++
			}
		}
		im.kept += len(im.batch)
	}
	clear(im.batch) // the memories are stored: let them go
	im.batch, im.lines, im.size, im.done = im.batch[:0], im.lines[:0], 0, through
	return nil
}

// parseLine reads one exported memory strictly.
func parseLine(raw []byte) (*store.Memory, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	var l importLine
	if err := dec.Decode(&l); err != nil {
		return nil, bodyError(err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("more than one JSON value on the line")
	}
	m := &l.Memory
	m.History, m.Meta = l.History, l.Meta
	return m, nil
}
