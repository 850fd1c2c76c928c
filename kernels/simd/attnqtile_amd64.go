//go:build amd64 && !purego

package simd

// Q8_0 attention tile kernels in attnqtile_amd64.s; the Go wrappers in
// attnqtile.go check every bound.

//go:noescape
func attnScoresQ8_0AVX512(nb, n int, qp, k *byte, offs *int32, scale float32, m *[4]float32, gmask int, args *float32, ev *uint8)

//go:noescape
func attnValuesQ8_0AVX512(nb, heads, n int, p *float32, ev *uint8, scl *float32, v *byte, offs *int32, acc *float32, s *[4]float32)

//go:noescape
func expfRowAVX512(y, x *float32, n int) int
