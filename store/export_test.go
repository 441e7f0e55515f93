package store

// FreelistWritten exposes freelistWritten to the package's external tests.
var FreelistWritten = freelistWritten

// Path exposes the file's path to the package's external tests.
func (s *DB) Path() string { return s.path }

// SetResyncChunk sets how many changes a replica made at open writes per
// transaction, until restore.
func SetResyncChunk(n int) (restore func()) {
	old := resyncChunk
	resyncChunk = n
	return func() { resyncChunk = old }
}
