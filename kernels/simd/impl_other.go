//go:build !amd64 || purego

package simd

// No assembly on this platform (or with the purego tag): the generic Go
// code is the only implementation.
var cpuSets = [numImpls]bool{implGeneric: true}

// CPUFeatures says that no CPU feature is used on this build.
func CPUFeatures() string { return "no assembly on this platform or build (purego)" }
