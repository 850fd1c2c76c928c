//go:build !amd64 || purego

package simd

// No assembly here; fast is never set, so these are never called.

func ropeInterleavedAVX2(*float32, int, int, int, *float32, *float32) {
	panic("simd: no RoPE assembly")
}
func ropeInterleaved512(*float32, int, int, int, *float32, *float32) { panic("simd: no RoPE assembly") }
func ropeHalvesAVX2(*float32, int, int, int, int, *float32, *float32, *float32) {
	panic("simd: no RoPE assembly")
}
func ropeHalves512(*float32, int, int, int, int, *float32, *float32, *float32) {
	panic("simd: no RoPE assembly")
}
