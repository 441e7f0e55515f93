package store

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"os"
)

// pagefile.go reads a bbolt file's pages with bounds-checked Go, never
// through bbolt: bbolt trusts its file, and a damaged page makes it index
// past a mapping or a slice, or fail an assertion, sometimes on a goroutine
// of its own where nothing can recover the panic (rebuilding the freelist
// at open). Check (check.go) walks the file with it before bbolt is given
// the file, and Salvage (salvage.go) reads what can still be read.
//
// The format, in the machine's byte order: every page starts with a
// 16-byte header (id 8, flags 2, count 2, overflow 4), and spans
// 1+overflow pages. Pages 0 and 1 are meta pages; a branch page holds
// count elements of 16 bytes (pos 4, key size 4, child page 8), a leaf page
// count elements of 16 bytes (flags 4, pos 4, key size 4, value size 4),
// pos counted from the element itself. A leaf element flagged as a bucket
// has a value that is a bucket header (root page 8, sequence 8), followed,
// when the root is 0, by the bucket's only page, inline.

const (
	pageHeaderSize = 16
	elemSize       = 16
	bucketHeader   = 16

	flagBranch   = 0x01
	flagLeaf     = 0x02
	flagMeta     = 0x04
	flagFreelist = 0x10
	flagBucket   = 0x01 // of a leaf element

	// maxPageSpan bounds what one page (with its overflow) may claim, so a
	// damaged overflow count cannot make a read allocate gigabytes. A
	// memory record is at most a few hundred KiB; bbolt's own limit on a
	// value is 2 GiB, which this store never nears.
	maxPageSpan = 64 << 20
)

var order = binary.NativeEndian

// fileMeta is the current meta page of a bbolt file.
type fileMeta struct {
	pageSize   int
	root       uint64 // the root bucket's page
	rootSeq    uint64
	freelist   uint64 // noFreelist: not written (NoFreelistSync)
	highWater  uint64 // pages at or above it are not in use
	txid       uint64
	fileSize   int64
	brokenMeta int // meta pages that did not validate (0, 1 or 2)
}

// pageFile is an open bbolt file read page by page.
type pageFile struct {
	f    *os.File
	meta fileMeta
	buf  []byte
}

// errNotBolt: the file is not a bbolt file at all (or both of its meta
// pages are damaged).
var errNotBolt = errors.New("not a memory store file (no valid bbolt meta page)")

// openPageFile opens path and reads its current meta page: the valid one
// (magic, version, checksum) with the higher transaction id.
func openPageFile(path string) (*pageFile, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	p, err := pageFileOf(f)
	if p == nil {
		f.Close()
	}
	return p, err
}

// pageFileOf reads the meta page of the open file f, which the caller
// closes.
func pageFileOf(f *os.File) (*pageFile, error) {
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	p := &pageFile{f: f}
	if p.meta, err = readMeta(f, st.Size()); err != nil && p.meta.pageSize == 0 {
		return nil, err
	}
	return p, err // a file cut short still has pages to read
}

func (p *pageFile) Close() error { return p.f.Close() }

// readMeta finds the current meta page. The page size is read from
// whichever meta page validates; bbolt writes both with the same one.
func readMeta(r io.ReaderAt, size int64) (fileMeta, error) {
	var best fileMeta
	found := false
	head := make([]byte, 128)
	try := func(off int64) (fileMeta, bool) {
		if _, err := r.ReadAt(head, off); err != nil {
			return fileMeta{}, false
		}
		m := head[pageHeaderSize:]
		if order.Uint32(m[0:]) != metaMagic || order.Uint32(m[4:]) != metaVersion ||
			order.Uint16(head[8:]) != flagMeta {
			return fileMeta{}, false
		}
		h := fnv.New64a()
		h.Write(m[:56])
		if h.Sum64() != order.Uint64(m[56:]) {
			return fileMeta{}, false
		}
		fm := fileMeta{
			pageSize: int(order.Uint32(m[8:])),
			root:     order.Uint64(m[16:]), rootSeq: order.Uint64(m[24:]),
			freelist: order.Uint64(m[32:]), highWater: order.Uint64(m[40:]),
			txid: order.Uint64(m[48:]), fileSize: size,
		}
		if fm.pageSize < 512 || fm.pageSize > 1<<16 || fm.pageSize&(fm.pageSize-1) != 0 {
			return fileMeta{}, false
		}
		return fm, true
	}
	m0, ok0 := try(0)
	pageSize := int64(4096)
	if ok0 {
		pageSize = int64(m0.pageSize)
	}
	m1, ok1 := try(pageSize)
	if !ok0 && !ok1 {
		// The first meta page is damaged: find the second at every page
		// size bbolt may have used.
		for ps := int64(512); ps <= 1<<16 && !ok1; ps *= 2 {
			if m1, ok1 = try(ps); ok1 && int64(m1.pageSize) != ps {
				ok1 = false
			}
		}
	}
	for i, m := range []fileMeta{m0, m1} {
		if ![]bool{ok0, ok1}[i] {
			continue
		}
		if !found || m.txid > best.txid {
			best, found = m, true
		}
	}
	for _, ok := range []bool{ok0, ok1} {
		if !ok {
			best.brokenMeta++
		}
	}
	if !found {
		return fileMeta{}, errNotBolt
	}
	if best.highWater < 2 || best.root < 2 || best.root >= best.highWater {
		return fileMeta{}, fmt.Errorf("meta page: root page %d outside the file's %d pages", best.root, best.highWater)
	}
	if need := int64(best.highWater) * int64(best.pageSize); need > size {
		return best, fmt.Errorf("the file is %d bytes, its meta page says it uses %d: it was cut short", size, need)
	}
	return best, nil
}

// rawPage is one page as read: its header and its bytes (with overflow).
type rawPage struct {
	id    uint64
	flags uint16
	count int
	data  []byte // the whole page, header included
}

// pageError is a page that cannot be read as what it should be.
type pageError struct {
	Page uint64
	What string
}

func (e *pageError) Error() string { return fmt.Sprintf("page %d: %s", e.Page, e.What) }

func pageErr(id uint64, format string, args ...any) error {
	return &pageError{Page: id, What: fmt.Sprintf(format, args...)}
}

// page reads page id. The bytes are valid until the next call.
func (p *pageFile) page(id uint64) (rawPage, error) {
	ps := p.meta.pageSize
	if id < 2 || id >= p.meta.highWater {
		return rawPage{}, pageErr(id, "out of the file's %d pages", p.meta.highWater)
	}
	if cap(p.buf) < ps {
		p.buf = make([]byte, ps)
	}
	b := p.buf[:ps]
	if _, err := p.f.ReadAt(b, int64(id)*int64(ps)); err != nil {
		return rawPage{}, pageErr(id, "unreadable: %v", err)
	}
	if got := order.Uint64(b); got != id {
		return rawPage{}, pageErr(id, "says it is page %d", got)
	}
	overflow := uint64(order.Uint32(b[12:]))
	if id+overflow >= p.meta.highWater || (overflow+1)*uint64(ps) > maxPageSpan {
		return rawPage{}, pageErr(id, "overflow of %d pages runs past the file", overflow)
	}
	if overflow > 0 {
		n := int(overflow+1) * ps
		if cap(p.buf) < n {
			nb := make([]byte, n)
			copy(nb, b)
			p.buf = nb
		}
		b = p.buf[:n]
		if _, err := p.f.ReadAt(b[ps:], int64(id+1)*int64(ps)); err != nil {
			return rawPage{}, pageErr(id, "overflow unreadable: %v", err)
		}
	}
	return rawPage{id: id, flags: order.Uint16(b[8:]), count: int(order.Uint16(b[10:])), data: b}, nil
}

// leafElem is one pair of a leaf page.
type leafElem struct {
	bucket bool
	key    []byte
	value  []byte
}

// leafElems reads a leaf page's pairs (of a page read from the file, or a
// bucket's inline page), checking every offset, and that keys ascend.
func leafElems(id uint64, data []byte, count int) ([]leafElem, error) {
	if pageHeaderSize+count*elemSize > len(data) {
		return nil, pageErr(id, "%d elements do not fit in %d bytes", count, len(data))
	}
	out := make([]leafElem, count)
	for i := range count {
		at := pageHeaderSize + i*elemSize
		e := data[at:]
		flags, pos := order.Uint32(e), uint64(order.Uint32(e[4:]))
		ks, vs := uint64(order.Uint32(e[8:])), uint64(order.Uint32(e[12:]))
		start := uint64(at) + pos
		if flags&^flagBucket != 0 || start+ks+vs > uint64(len(data)) || ks == 0 {
			return nil, pageErr(id, "element %d is out of its page", i)
		}
		out[i] = leafElem{bucket: flags&flagBucket != 0, key: data[start : start+ks], value: data[start+ks : start+ks+vs]}
		if i > 0 && string(out[i-1].key) >= string(out[i].key) {
			return nil, pageErr(id, "keys out of order at element %d", i)
		}
	}
	return out, nil
}

// branchElem is one child of a branch page.
type branchElem struct {
	key   []byte
	child uint64
}

func branchElems(id uint64, data []byte, count int) ([]branchElem, error) {
	if count == 0 || pageHeaderSize+count*elemSize > len(data) {
		return nil, pageErr(id, "%d elements do not fit in %d bytes", count, len(data))
	}
	out := make([]branchElem, count)
	for i := range count {
		at := pageHeaderSize + i*elemSize
		e := data[at:]
		pos, ks := uint64(order.Uint32(e)), uint64(order.Uint32(e[4:]))
		start := uint64(at) + pos
		if start+ks > uint64(len(data)) || ks == 0 {
			return nil, pageErr(id, "element %d is out of its page", i)
		}
		out[i] = branchElem{key: data[start : start+ks], child: order.Uint64(e[8:])}
		if i > 0 && string(out[i-1].key) >= string(out[i].key) {
			return nil, pageErr(id, "keys out of order at element %d", i)
		}
	}
	return out, nil
}

// freelistIDs reads the freelist page's ids.
func (p *pageFile) freelistIDs() ([]uint64, error) {
	id := p.meta.freelist
	pg, err := p.page(id)
	if err != nil {
		return nil, err
	}
	if pg.flags != flagFreelist {
		return nil, pageErr(id, "is not the freelist (flags %#x)", pg.flags)
	}
	start, n := pageHeaderSize, uint64(pg.count)
	if pg.count == 0xFFFF {
		if len(pg.data) < pageHeaderSize+8 {
			return nil, pageErr(id, "freelist count missing")
		}
		n, start = order.Uint64(pg.data[pageHeaderSize:]), pageHeaderSize+8
	}
	if n > uint64(len(pg.data)-start)/8 {
		return nil, pageErr(id, "freelist of %d ids does not fit its page", n)
	}
	ids := make([]uint64, n)
	for i := range ids {
		ids[i] = order.Uint64(pg.data[start+8*i:])
	}
	return ids, nil
}
