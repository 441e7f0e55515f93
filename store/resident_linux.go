package store

import (
	"os"

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
