package store

// FreelistWritten exposes freelistWritten to the package's external tests.
var FreelistWritten = freelistWritten

// Path exposes the file's path to the package's external tests.
func (s *DB) Path() string { return s.path }
