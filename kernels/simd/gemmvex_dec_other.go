//go:build !amd64 || purego

package simd

// No AVX-VNNI decode kernels on this build (see avx2_other.go).

func gemvQ4_KXQ8_KI(int, *byte, int, *byte, *float32) { gemmUnavailable() }
func dotQ6_KXQ8_K(int, []byte, []byte) float32        { gemmUnavailable(); return 0 }
func dotQ8_0XQ8_0(int, []byte, []byte) float32        { gemmUnavailable(); return 0 }
