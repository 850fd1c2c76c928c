//go:build race

package tokenizer

// raceDetector: under -race, sync.Pool drops a share of what is put back
// on purpose (to expose misuse), so pooled scratch reallocates and the
// allocation tests cannot hold.
const raceDetector = true
