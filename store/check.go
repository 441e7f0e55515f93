package store

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/caddy-memory/memory/internal/seal"
)

// A store whose file is damaged never takes the process down: bbolt
// panics on damaged pages (assertions, slices indexed past their end,
// faults on its mapping), so the file is checked before bbolt opens it
// (Check), every call into bbolt runs under guard (guard.go), and what can
// still be read is copied out by Salvage (salvage.go).

// ErrDamaged is what every call of a damaged store fails with (a
// *DamageError).
var ErrDamaged = errors.New("memory store is damaged")

// DamageError says what is damaged in a store file and what to run.
type DamageError struct {
	Path string
	// What was found: the first problems, in the file's terms.
	What string
}

func (e *DamageError) Error() string {
	return fmt.Sprintf("memory store %s is damaged (%s); requests pass through without memory. "+
		"Stop Caddy and run 'caddy memory salvage --path %s' to copy every record that can still be read into a new file "+
		"(the damaged one is kept beside it), then start Caddy again", e.Path, e.What, dirOf(e.Path))
}

// Is makes a DamageError an ErrDamaged.
func (e *DamageError) Is(target error) bool { return target == ErrDamaged }

// CheckReport is what Check found.
type CheckReport struct {
	Path    string        `json:"path"`
	Pages   int64         `json:"pages"`   // pages reached from the root
	Buckets int64         `json:"buckets"` // owners' partitions and the rest
	Pairs   int64         `json:"pairs"`
	Records int64         `json:"records"` // memory records (read when Records is set)
	Took    time.Duration `json:"took_ns"`
	// Problems are the first problems found (at most maxProblems), More
	// how many others.
	Problems []string `json:"problems,omitempty"`
	More     int      `json:"more_problems,omitempty"`
	// BadRecords: memory records whose bytes do not decode (or, sealed,
	// do not open): lost, one by one, without the file being damaged.
	BadRecords int64 `json:"bad_records,omitempty"`
	// Incomplete: the check stopped at its deadline.
	Incomplete bool `json:"incomplete,omitempty"`
}

// OK reports whether the file is sound as far as it was checked.
func (r *CheckReport) OK() bool { return len(r.Problems) == 0 && r.BadRecords == 0 }

// Err is the report as an error: nil when the structure is sound (bad
// records alone do not make the file damaged: they are skipped as read).
func (r *CheckReport) Err() error {
	if len(r.Problems) == 0 {
		return nil
	}
	what := r.Problems[0]
	if n := len(r.Problems) - 1 + r.More; n > 0 {
		what += fmt.Sprintf(", and %d more problems", n)
	}
	return &DamageError{Path: r.Path, What: what}
}

const maxProblems = 20

func (r *CheckReport) problem(format string, args ...any) {
	if len(r.Problems) < maxProblems {
		r.Problems = append(r.Problems, fmt.Sprintf(format, args...))
	} else {
		r.More++
	}
}

// CheckOptions say how much Check reads.
type CheckOptions struct {
	// Records also decodes every memory record (opening it with Keys when
	// the store is sealed), counting those that do not read.
	Records bool
	Keys    *seal.Ring
}

// Check reads the store file at path page by page, as bbolt's own check
// does (every page reached once, in range, of the right type, its elements
// within it and its keys in order and within what its parent gives it;
// the freelist in range, without duplicates, and free), but in
// bounds-checked code: a damaged file is reported, never a panic. It stops
// at ctx's deadline (Incomplete). Reading the whole file costs about what
// bbolt's own rebuild of its freelist does (docs/performance.md).
func Check(ctx context.Context, path string, o CheckOptions) (*CheckReport, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	// A file another process writes cannot be judged: its pages change
	// under the walk, and would read as damage.
	if err := lockFile(f, time.Second); err != nil {
		return nil, fmt.Errorf("%w: %s is in use, usually by a running Caddy: stop it first, or check a copy", ErrLocked, path)
	}
	return checkFile(ctx, f, path, o)
}

// checkFile is Check of the open file f.
func checkFile(ctx context.Context, f *os.File, path string, o CheckOptions) (*CheckReport, error) {
	start := time.Now()
	r := &CheckReport{Path: path}
	pf, err := pageFileOf(f)
	if err != nil {
		r.problem("%v", err)
		r.Took = time.Since(start)
		return r, nil
	}
	c := &checker{r: r, ctx: ctx, records: o.Records, meta: metaReader{path: path, keys: o.Keys}}
	w := newWalker(pf, c)
	c.w = w
	w.run()
	r.Pages = w.reached
	if c.meta.err != nil {
		return nil, c.meta.err // the key is missing or wrong: nothing can be said of the records
	}
	if !r.Incomplete && pf.meta.freelist != noFreelist {
		checkFreelist(pf, w, r)
	}
	r.Took = time.Since(start)
	return r, nil
}

// checkFreelist checks the written freelist: its ids in range, each once,
// none of them a page in use.
func checkFreelist(pf *pageFile, w *walker, r *CheckReport) {
	ids, err := pf.freelistIDs()
	if err != nil {
		r.problem("freelist: %v", err)
		return
	}
	seen := make(map[uint64]bool, len(ids))
	for _, id := range ids {
		switch {
		case id < 2 || id >= pf.meta.highWater:
			r.problem("freelist: page %d out of the file's %d pages", id, pf.meta.highWater)
		case seen[id]:
			r.problem("freelist: page %d freed twice", id)
		case w.isSeen(id):
			r.problem("freelist: page %d is free and in use", id)
		}
		seen[id] = true
	}
}

// checker counts what the walk finds.
type checker struct {
	r       *CheckReport
	w       *walker
	ctx     context.Context
	records bool
	meta    metaReader
	n       int
}

func (c *checker) bucket([][]byte, uint64) { c.r.Buckets++ }

func (c *checker) pair(path [][]byte, k, v []byte) {
	c.r.Pairs++
	if c.n++; c.n%4096 == 0 && c.ctx.Err() != nil && !c.r.Incomplete {
		c.r.Incomplete = true
		c.w.stop()
	}
	c.meta.pair(path, k, v)
	if owner, ok := recordPath(path); ok {
		c.r.Records++
		if c.records {
			if _, err := c.meta.record(owner, k, v); err != nil {
				c.r.BadRecords++
			}
		}
	}
}

func (c *checker) damaged(path [][]byte, err error) {
	c.r.problem("%s: %v", pathString(path), err)
}

// recordPath reports whether path is an owner's memory records bucket
// (owners/<owner>/m), and whose.
func recordPath(path [][]byte) (owner []byte, ok bool) {
	if len(path) == 3 && string(path[0]) == string(bucketOwners) && string(path[2]) == string(bucketMem) {
		return path[1], true
	}
	return nil, false
}

// dirOf is the storage directory of a store file.
func dirOf(path string) string {
	for i := len(path) - 1; i >= 0; i-- {
		if os.IsPathSeparator(path[i]) {
			return path[:i]
		}
	}
	return "."
}

// metaReader keeps the meta bucket's values as a walk passes them (it
// comes before owners/ in key order), to open sealed records after.
type metaReader struct {
	path   string
	keys   *seal.Ring
	values map[string][]byte
	done   bool
	crypt  *crypt
	secret []byte
	err    error
}

func (m *metaReader) pair(path [][]byte, k, v []byte) {
	if len(path) == 1 && string(path[0]) == string(bucketMeta) {
		if m.values == nil {
			m.values = map[string][]byte{}
		}
		m.values[string(k)] = bytes.Clone(v)
	}
}

// unlock opens the sealing state once the meta bucket was read.
func (m *metaReader) unlock() {
	if m.done {
		return
	}
	m.done = true
	m.secret, m.crypt, m.err = unlockMeta(func(k []byte) []byte { return m.values[string(k)] }, m.path, m.keys)
}

// record decodes a memory record of owner found under key k.
func (m *metaReader) record(owner, k, v []byte) (*Memory, error) {
	m.unlock()
	if m.err != nil {
		return nil, m.err
	}
	plain := v
	if m.crypt != nil {
		var err error
		if plain, err = m.crypt.ring.Open(nil, v, ad(labelMemory, string(owner), k)); err != nil {
			return nil, errCorrupt
		}
	}
	mem := new(Memory)
	if err := decodeMemory(plain, mem); err != nil {
		return nil, err
	}
	if mem.ID != decodeU64(k) || mem.Owner != string(owner) {
		return nil, errCorrupt
	}
	return mem, nil
}
