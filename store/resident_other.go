//go:build !linux

package store

import bolt "go.etcd.io/bbolt"

// releaseWalked is a no-op where resident memory is not measured the Linux
// way (see resident_linux.go).
func releaseWalked(*bolt.DB) {}

// ReleaseMapped is a no-op here (see resident_linux.go).
func (s *DB) ReleaseMapped() {}
