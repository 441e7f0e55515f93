//go:build !unix

package app

import "os"

// lockDir creates dir. Elsewhere than on Unix it takes no lock: a second
// process using the same replica fails on the store's own file lock, with
// an error that names the replica setting.
func lockDir(dir string) (unlock func(), ok bool, err error) {
	return func() {}, true, os.MkdirAll(dir, 0o700)
}
