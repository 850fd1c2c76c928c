//go:build !amd64 || purego

package simd

// No assembly on this platform (or with the purego tag): the generic Go
// code is the only implementation.
const (
	hasFast  = false
	fastName = "generic"
)
