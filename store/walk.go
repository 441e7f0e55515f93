package store

import (
	"bytes"
	"fmt"
	"strings"
)

// walk.go visits every bucket and pair of a bbolt file reachable from its
// root, through pagefile.go's bounds-checked reads, without recursion (the
// file's shape is not trusted). A page that cannot be read is reported and
// passed over with what hangs under it; the walk goes on with its
// siblings, so one damaged page loses only what it held.

// walkVisitor hears what a walk finds. path is the bucket's names from the
// root, valid only during the call.
type walkVisitor interface {
	// bucket: a bucket at path (its last name is its own) with its
	// sequence.
	bucket(path [][]byte, seq uint64)
	// pair: a key and its value in the bucket at path.
	pair(path [][]byte, k, v []byte)
	// damaged: a page of the bucket at path that cannot be read.
	damaged(path [][]byte, err error)
}

// pageRange is a page to read, with the keys its parent says it holds
// (lo inclusive, hi exclusive; nil for no bound).
type pageRange struct {
	id     uint64
	lo, hi []byte
}

// bucketFrame is a bucket being walked: the pages left to read (a stack,
// next on top) and the pairs of the leaf being read.
type bucketFrame struct {
	path  [][]byte
	pages []pageRange
	leaf  []leafElem
	at    int
}

// walker walks one file.
type walker struct {
	pf   *pageFile
	v    walkVisitor
	seen []uint64 // a bit per page of the file: reached already
	// reached counts the pages reached (with overflow).
	reached int64
	stopped bool
}

// stop ends the walk at its next step.
func (w *walker) stop() { w.stopped = true }

func newWalker(pf *pageFile, v walkVisitor) *walker {
	return &walker{pf: pf, v: v, seen: make([]uint64, (pf.meta.highWater+63)/64)}
}

// mark records pages id..id+overflow as reached, false if one was already:
// two parents sharing a page is damage.
func (w *walker) mark(id uint64, overflow uint64) bool {
	for p := id; p <= id+overflow; p++ {
		if w.seen[p/64]&(1<<(p%64)) != 0 {
			return false
		}
	}
	for p := id; p <= id+overflow; p++ {
		w.seen[p/64] |= 1 << (p % 64)
	}
	w.reached += int64(overflow + 1)
	return true
}

func (w *walker) isSeen(p uint64) bool { return w.seen[p/64]&(1<<(p%64)) != 0 }

// run walks from the root bucket.
func (w *walker) run() {
	stack := []*bucketFrame{{pages: []pageRange{{id: w.pf.meta.root}}}}
	for len(stack) > 0 && !w.stopped {
		f := stack[len(stack)-1]
		if f.at < len(f.leaf) {
			e := f.leaf[f.at]
			f.at++
			if !e.bucket {
				w.v.pair(f.path, e.key, e.value)
				continue
			}
			if nf := w.child(f, e); nf != nil {
				stack = append(stack, nf)
			}
			continue
		}
		if len(f.pages) == 0 {
			stack = stack[:len(stack)-1]
			continue
		}
		pr := f.pages[len(f.pages)-1]
		f.pages = f.pages[:len(f.pages)-1]
		f.leaf, f.at = w.read(f.path, pr, &f.pages), 0
	}
}

// child starts walking the bucket a leaf element holds.
func (w *walker) child(f *bucketFrame, e leafElem) *bucketFrame {
	path := append(append([][]byte(nil), f.path...), e.key)
	if len(e.value) < bucketHeader {
		w.v.damaged(path, fmt.Errorf("bucket %q: header of %d bytes", e.key, len(e.value)))
		return nil
	}
	root, seq := order.Uint64(e.value), order.Uint64(e.value[8:])
	w.v.bucket(path, seq)
	nf := &bucketFrame{path: path}
	if root != 0 {
		nf.pages = []pageRange{{id: root}}
		return nf
	}
	inline := e.value[bucketHeader:]
	if len(inline) < pageHeaderSize {
		if len(inline) == 0 {
			return nil // an empty bucket, never written a page
		}
		w.v.damaged(path, fmt.Errorf("bucket %q: inline page of %d bytes", e.key, len(inline)))
		return nil
	}
	if flags := order.Uint16(inline[8:]); flags != flagLeaf {
		w.v.damaged(path, fmt.Errorf("bucket %q: inline page is not a leaf (flags %#x)", e.key, flags))
		return nil
	}
	leaf, err := leafElems(0, inline, int(order.Uint16(inline[10:])))
	if err != nil {
		w.v.damaged(path, fmt.Errorf("bucket %q: inline %w", e.key, err))
		return nil
	}
	nf.leaf = leaf
	return nf
}

// read reads one page of a bucket: a branch pushes its children (in
// order, the first on top), a leaf returns its pairs, copied when they hold
// buckets (their walk reads other pages first).
func (w *walker) read(path [][]byte, pr pageRange, pages *[]pageRange) []leafElem {
	pg, err := w.pf.page(pr.id)
	if err != nil {
		w.v.damaged(path, err)
		return nil
	}
	if !w.mark(pr.id, uint64(len(pg.data)/w.pf.meta.pageSize-1)) {
		w.v.damaged(path, pageErr(pr.id, "reached twice"))
		return nil
	}
	switch pg.flags {
	case flagBranch:
		elems, err := branchElems(pr.id, pg.data, pg.count)
		if err == nil {
			err = inRange(pr, elems[0].key, elems[len(elems)-1].key)
		}
		if err != nil {
			w.v.damaged(path, err)
			return nil
		}
		for i := len(elems) - 1; i >= 0; i-- {
			c := pageRange{id: elems[i].child, lo: bytes.Clone(elems[i].key), hi: pr.hi}
			if i+1 < len(elems) {
				c.hi = bytes.Clone(elems[i+1].key)
			}
			*pages = append(*pages, c)
		}
		return nil
	case flagLeaf:
		elems, err := leafElems(pr.id, pg.data, pg.count)
		if err == nil && len(elems) > 0 {
			err = inRange(pr, elems[0].key, elems[len(elems)-1].key)
		}
		if err != nil {
			w.v.damaged(path, err)
			return nil
		}
		for _, e := range elems {
			if e.bucket {
				data := bytes.Clone(pg.data)
				elems, _ = leafElems(pr.id, data, pg.count)
				break
			}
		}
		return elems
	}
	w.v.damaged(path, pageErr(pr.id, "is not a branch or leaf page (flags %#x)", pg.flags))
	return nil
}

// inRange checks that a page's keys (first to last) lie where its parent
// says.
func inRange(pr pageRange, first, last []byte) error {
	if pr.lo != nil && bytes.Compare(first, pr.lo) < 0 || pr.hi != nil && bytes.Compare(last, pr.hi) >= 0 {
		return pageErr(pr.id, "holds keys outside the range its parent gives it")
	}
	return nil
}

// pathString names a bucket path for a message: printable names as they
// are, others (owner ids are text; memory ids are not) in hex.
func pathString(path [][]byte) string {
	if len(path) == 0 {
		return "(root)"
	}
	parts := make([]string, len(path))
	for i, p := range path {
		if printable(p) {
			parts[i] = string(p)
		} else {
			parts[i] = fmt.Sprintf("%x", p)
		}
	}
	return strings.Join(parts, "/")
}

func printable(b []byte) bool {
	for _, c := range b {
		if c < 0x20 || c > 0x7e {
			return false
		}
	}
	return true
}
