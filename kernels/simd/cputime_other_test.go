//go:build !linux

package simd

// threadCPUTime: no per-thread CPU clock here (benchmarks report wall
// time only).
func threadCPUTime() (int64, bool) { return 0, false }
