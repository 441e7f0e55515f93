//go:build !race

package harness

const RaceDetector = false
