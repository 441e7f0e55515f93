package store

import (
	"bytes"
	"os"
	"strconv"

	bolt "go.etcd.io/bbolt"
	"golang.org/x/sys/unix"
)

// releaseWalked gives back the pages bbolt's open touched while rebuilding
// the freelist (NoFreelistSync): it reads the header of every page of the
// file, which makes the whole file resident in the process though a search
// reads only its owner's pages.
// MADV_DONTNEED on bbolt's read-only shared mapping only unmaps them: the
// data stays in the kernel's page cache and the next read maps it again, so
// nothing is lost, and resident memory shows what the server uses. It must
// run before the DB is shared, as bbolt remaps the file when it grows.
func releaseWalked(b *bolt.DB) {
	st, err := os.Stat(b.Path())
	if err != nil || st.Size() == 0 {
		return
	}
	// A raw syscall on bbolt's own address: building a []byte for
	// unix.Madvise from it would need an unsafe conversion of a uintptr.
	_, _, _ = unix.Syscall(unix.SYS_MADVISE, b.Info().Data, uintptr(st.Size()), unix.MADV_DONTNEED)
}

// ReleaseMapped gives back every page of the store file mapped into the
// process, as releaseWalked does after an open: a pass that read the whole
// file (building the search postings) would otherwise leave all of it
// resident, though a search then reads a few records. It runs inside a
// read transaction, during which bbolt does not remap the file, and over
// the mapping's own extent as the kernel lists it.
func (s *DB) ReleaseMapped() {
	_ = s.view(func(*kvTx) error {
		start := s.bolt.Info().Data
		if end := mappingEnd(start); end > start {
			_, _, _ = unix.Syscall(unix.SYS_MADVISE, start, end-start, unix.MADV_DONTNEED)
		}
		return nil
	})
}

// mappingEnd is the end of the mapping that starts at start, from
// /proc/self/maps; 0 when none does.
func mappingEnd(start uintptr) uintptr {
	b, err := os.ReadFile("/proc/self/maps")
	if err != nil {
		return 0
	}
	for _, line := range bytes.Split(b, []byte("\n")) {
		r, _, _ := bytes.Cut(line, []byte(" "))
		lo, hi, ok := bytes.Cut(r, []byte("-"))
		if !ok {
			continue
		}
		a, err1 := strconv.ParseUint(string(lo), 16, 64)
		e, err2 := strconv.ParseUint(string(hi), 16, 64)
		if err1 == nil && err2 == nil && uintptr(a) == start {
			return uintptr(e)
		}
	}
	return 0
}
