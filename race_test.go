//go:build race

package memory

// raceDetector: the race detector is on; every allocation also costs
// shadow memory, so memory bounds are looser.
const raceDetector = true
