package store

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	bolt "go.etcd.io/bbolt"
	bolterrors "go.etcd.io/bbolt/errors"
)

// boltOptions are the options every open of the file uses.
func boltOptions(timeout time.Duration) *bolt.Options {
	return &bolt.Options{
		Timeout: timeout,
		// Writing the freelist with every commit costs proxied requests
		// throughput (docs/performance.md). It is written once, at close
		// (writeFreelist); only an open after a crash rebuilds it, reading
		// every page of the file.
		NoFreelistSync: true,
		FreelistType:   bolt.FreelistMapType,
	}
}

// CheckTimeout bounds the check of a store file at open. A check cut short
// lets the file open: what it did not reach is still contained by guard.
var CheckTimeout = 2 * time.Minute

// openBolt opens the file with boltOptions, once Check found its pages
// sound: the check runs on the file bbolt opens, under its lock (taken
// here, kept by bbolt), before bbolt reads a page. When bbolt will rebuild
// the freelist (after a crash), the file is read ahead first, and what the
// rebuild read is not kept resident. A damaged file is a *DamageError.
func openBolt(path string, timeout time.Duration) (*bolt.DB, *CheckReport, error) {
	if !freelistWritten(path) {
		readAhead(path)
	}
	var report *CheckReport
	o := boltOptions(timeout)
	o.OpenFile = func(name string, flag int, mode os.FileMode) (*os.File, error) {
		f, err := os.OpenFile(name, flag, mode)
		if err != nil {
			return nil, err
		}
		if err := lockFile(f, timeout); err != nil {
			f.Close()
			return nil, err
		}
		if st, err := f.Stat(); err != nil || st.Size() == 0 {
			return f, err // new: bbolt writes its first pages
		}
		ctx, cancel := context.WithTimeout(context.Background(), CheckTimeout)
		defer cancel()
		report, err = checkFile(ctx, f, name, CheckOptions{})
		if err == nil {
			err = report.Err()
		}
		if err != nil {
			f.Close()
			return nil, err
		}
		return f, nil
	}
	var b *bolt.DB
	err := containOpen(path, func() (err error) {
		b, err = bolt.Open(path, 0o600, o)
		return err
	})
	if err == nil {
		releaseWalked(b)
	}
	return b, report, err
}

// containOpen runs an open of the file, turning a panic of bbolt's (the
// check passed, yet bbolt disagrees) into a *DamageError.
func containOpen(path string, fn func() error) (err error) {
	s := &DB{path: path}
	err = s.guard(fn)
	if d := s.Damaged(); d != nil {
		return d
	}
	var de *DamageError
	if errors.As(err, &de) || errors.Is(err, bolterrors.ErrTimeout) {
		return err
	}
	if errors.Is(err, bolterrors.ErrInvalid) || errors.Is(err, bolterrors.ErrChecksum) || errors.Is(err, bolterrors.ErrVersionMismatch) {
		return &DamageError{Path: path, What: fmt.Sprintf("its meta pages do not open: %v", err)}
	}
	return err
}
