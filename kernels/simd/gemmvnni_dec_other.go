//go:build !amd64 || purego

package simd

// No AVX-512 decode kernels on this build (see gemmvnni_other.go).

func gemvQ4_KQ8_KV(int, *byte, int, *byte, *float32)      { vnniUnavailable() }
func gemvQ4_KQ8_KIV(int, *byte, int, *byte, *float32)     { vnniUnavailable() }
func dotQ6_KQ8_KV(int, []byte, []byte) float32            { vnniUnavailable(); return 0 }
func gemvQ6_KQ8_KV(int, int, *byte, int, *byte, *float32) { vnniUnavailable() }
func dotQ8_0Q8_0V(int, []byte, []byte) float32            { vnniUnavailable(); return 0 }
