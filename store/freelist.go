package store

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"

	bolt "go.etcd.io/bbolt"
	bolterrors "go.etcd.io/bbolt/errors"
)

// writeFreelist makes one commit that writes the freelist, which every
// other commit leaves out (NoFreelistSync), so that the next open reads the
// list instead of rebuilding it from every page of the file: the whole file
// read (slow from a cold disk, after a reboot), and all of it resident.
// Call it just before closing; the
// next commit drops the list again, so after a crash the next open still
// rebuilds it.
func writeFreelist(b *bolt.DB) error {
	err := updateTx(b, func(tx *bolt.Tx) error {
		tx.DB().NoFreelistSync = false // read by this commit, under the writer lock
		return nil
	})
	if errors.Is(err, bolterrors.ErrDatabaseNotOpen) {
		return nil // closed already
	}
	if err != nil {
		return fmt.Errorf("writing the memory store's freelist (the next start reads the whole file instead): %w", err)
	}
	return nil
}

// bbolt's meta page, after the 16-byte page header: magic, version, page
// size and flags (4 bytes each), the root bucket (16), then the freelist's
// page id, the high-water mark and the transaction id (8 each), in the
// machine's byte order. The file starts with two; the one with the higher
// transaction id is current.
const (
	metaMagic    = 0xED0CDAED
	metaVersion  = 2
	metaFreelist = 16 + 32
	metaTxid     = metaFreelist + 16
	noFreelist   = ^uint64(0)
)

// freelistWritten reports whether the last commit to the file at path wrote
// bbolt's freelist (a clean close does; see writeFreelist), so that opening
// it will not read every page. It answers true when it cannot tell (no file,
// or one it does not recognise): the answer only decides whether to read
// the file ahead.
func freelistWritten(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return true
	}
	defer f.Close()
	head := make([]byte, 64<<10) // two meta pages of up to 32 KB
	n, err := io.ReadFull(f, head)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) {
		return true
	}
	head = head[:n]
	order := binary.NativeEndian
	if len(head) < metaTxid+8 {
		return true
	}
	pageSize := int(order.Uint32(head[24:]))
	var txid, freelist uint64
	valid := false
	for _, off := range []int{0, pageSize} {
		if pageSize < metaTxid+8 || off+metaTxid+8 > len(head) {
			continue
		}
		m := head[off:]
		if order.Uint32(m[16:]) != metaMagic || order.Uint32(m[20:]) != metaVersion {
			continue
		}
		if id := order.Uint64(m[metaTxid:]); !valid || id > txid {
			txid, freelist, valid = id, order.Uint64(m[metaFreelist:]), true
		}
	}
	return !valid || freelist != noFreelist
}

// readAhead reads the file at path once, in order, into the page cache.
// Rebuilding bbolt's freelist reads every page in the order of its trees,
// one page at a time (the mapping is MADV_RANDOM), which from a cold disk is
// an order of magnitude slower than reading the file in order first; the
// rebuild then finds every page cached. (posix_fadvise's WILLNEED reads
// only a little of it.)
func readAhead(path string) {
	f, err := os.Open(path)
	if err != nil {
		return
	}
	defer f.Close()
	_, _ = io.Copy(io.Discard, f)
}
