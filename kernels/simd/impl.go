package simd

import "sync/atomic"

// fast is true while the assembly kernels are in use. It starts as
// hasFast (CPU detection, see impl_*.go) and only ForceGeneric changes it;
// forced records ForceGeneric's setting.
var fast, forced atomic.Bool

func init() { fast.Store(hasFast) }

// Impl names the implementation in use: "avx2" (amd64 with AVX2, FMA and
// F16C) or "generic" (portable Go).
func Impl() string {
	if fast.Load() {
		return fastName
	}
	return "generic"
}

// ForceGeneric pins every primitive to the portable Go version when on is
// true, and returns to the CPU's best version when on is false. It reports
// the previous setting as "was generic forced". It is meant for tests and
// benchmarks; kernels running concurrently may see either version.
func ForceGeneric(on bool) (wasOn bool) {
	wasOn = forced.Swap(on)
	fast.Store(hasFast && !on)
	return wasOn
}
