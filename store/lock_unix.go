//go:build unix

package store

import (
	"errors"
	"os"
	"syscall"
	"time"

	bolterrors "go.etcd.io/bbolt/errors"
)

// lockFile takes f's exclusive lock as bbolt does (flock, retried until
// timeout), so that a check reads a file no other process writes; bbolt's
// own lock on the same open file then succeeds at once and keeps it.
func lockFile(f *os.File, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			return nil
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) {
			return err
		}
		if time.Now().After(deadline) {
			return bolterrors.ErrTimeout
		}
		time.Sleep(50 * time.Millisecond)
	}
}
