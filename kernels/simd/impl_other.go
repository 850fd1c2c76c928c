//go:build !amd64 || purego

package simd

// No assembly on this platform (or with the purego tag): the generic Go
// code is the only implementation.
const cpuLevel = implGeneric

// CPUFeatures says that no CPU feature is used on this build.
func CPUFeatures() string { return "no assembly on this platform or build (purego)" }
