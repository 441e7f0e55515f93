//go:build unix

package memory

import (
	"os"
	"path/filepath"
	"syscall"
)

// lockPorts takes a machine-wide lock on the ports the tests bind.
func lockPorts() (unlock func()) {
	f, err := os.OpenFile(filepath.Join(os.TempDir(), "caddy-memory-test-ports.lock"), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return func() {}
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		f.Close()
		return func() {}
	}
	return func() { f.Close() }
}
