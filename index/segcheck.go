package index

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
)

// A segment file ends with the CRC-32 (IEEE) of every byte before it,
// which zap writes and never reads back: a segment damaged on disk opens,
// and fails (or panics) only at a search that reads the damaged bytes,
// which may be any later one. Checking every segment at open finds the
// damage once, before the shard serves: it is then rebuilt from the store
// (see openShard). Sealed segments are checked as they lie on disk: the
// CRC covers the bytes as written.

// checkSegments verifies the CRC of every segment file of the shard at
// path; nil when there is none (a shard not made yet).
func checkSegments(path string) error {
	files, err := filepath.Glob(filepath.Join(path, "store", "*.zap"))
	if err != nil {
		return err
	}
	for _, f := range files {
		if err := checkSegment(f); err != nil {
			return err
		}
	}
	return nil
}

func checkSegment(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return err
	}
	if st.Size() < 4 {
		return fmt.Errorf("segment %s: %d bytes, cut short", filepath.Base(path), st.Size())
	}
	h := crc32.NewIEEE()
	if _, err := io.Copy(h, io.NewSectionReader(f, 0, st.Size()-4)); err != nil {
		return fmt.Errorf("segment %s: %w", filepath.Base(path), err)
	}
	var want [4]byte
	if _, err := f.ReadAt(want[:], st.Size()-4); err != nil {
		return fmt.Errorf("segment %s: %w", filepath.Base(path), err)
	}
	if got := h.Sum32(); got != binary.BigEndian.Uint32(want[:]) {
		return fmt.Errorf("segment %s: checksum %08x, the file says %08x", filepath.Base(path), got, binary.BigEndian.Uint32(want[:]))
	}
	return nil
}
