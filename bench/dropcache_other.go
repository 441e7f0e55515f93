//go:build !linux

package main

import "errors"

// dropCache is not available here (see dropcache_linux.go).
func dropCache(string) error {
	return errors.New("dropping the page cache of the storage needs Linux (posix_fadvise)")
}
