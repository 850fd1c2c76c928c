//go:build !amd64 || purego

package simd

// The AVX-512 tile kernels exist only as assembly; vnni is never set here.

func attnScoresQ8_0AVX512(nb, n int, qp, k *byte, offs *int32, scale float32, m *[4]float32, gmask int, args *float32, ev *uint8) {
	panic("simd: attnScoresQ8_0AVX512 without assembly")
}

func attnValuesQ8_0AVX512(nb, heads, n int, p *float32, ev *uint8, scl *float32, v *byte, offs *int32, acc *float32, s *[4]float32) {
	panic("simd: attnValuesQ8_0AVX512 without assembly")
}

func expfRowAVX512(y, x *float32, n int) int { panic("simd: expfRowAVX512 without assembly") }
