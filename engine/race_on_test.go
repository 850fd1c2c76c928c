//go:build race

package engine_test

// raceDetector: the race detector is on (slows the forward ~20x), so the
// heaviest scenario tests run one representative case.
const raceDetector = true
