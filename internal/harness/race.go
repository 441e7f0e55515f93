//go:build race

package harness

// RaceDetector: the race detector is on; every allocation also costs
// shadow memory, so memory bounds are looser.
const RaceDetector = true
