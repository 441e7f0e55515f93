package store

// FreelistWritten exposes freelistWritten to the package's external tests.
var FreelistWritten = freelistWritten
