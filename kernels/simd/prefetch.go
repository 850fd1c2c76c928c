package simd

// Prefetch asks the CPU to bring b into its caches (PREFETCHT0 for every
// 64-byte line), without waiting for the data and without reading it into
// registers: a hint that costs a few cycles per line, used to pull weights
// that will be read soon in from DRAM while the core has nothing better to
// do. It has no effect on results and does nothing on the generic build.
func Prefetch(b []byte) {
	if fast.Load() && len(b) > 0 {
		prefetchAVX2(&b[0], len(b))
	}
}
