//go:build !race

package tokenizer

const raceDetector = false
