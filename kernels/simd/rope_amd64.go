//go:build amd64 && !purego

package simd

// RoPE rotations in rope_amd64.s; the Go wrappers in rope.go check every
// bound. Strides and halfBytes in bytes, n a positive multiple of 8.

//go:noescape
func ropeInterleavedAVX2(x *float32, heads, stride, n int, cs, csw *float32)

//go:noescape
func ropeInterleaved512(x *float32, heads, stride, n int, cs, csw *float32)

//go:noescape
func ropeHalvesAVX2(x *float32, heads, stride, n, halfBytes int, c, s, sn *float32)

//go:noescape
func ropeHalves512(x *float32, heads, stride, n, halfBytes int, c, s, sn *float32)
