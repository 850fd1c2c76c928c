//go:build amd64 && !purego

package simd

// Quantized dots in quant_amd64.s. nb > 0 blocks; w and x hold at least
// nb blocks each (checked by the dispatchers).

//go:noescape
func dotQ8_0Q8_0AVX2(nb int, w, x []byte) float32

//go:noescape
func dotQ4_0Q8_0AVX2(nb int, w, x []byte) float32

//go:noescape
func dotQ4_1Q8_1AVX2(nb int, w, x []byte) float32

//go:noescape
func dotQ5_0Q8_0AVX2(nb int, w, x []byte) float32

//go:noescape
func dotQ5_1Q8_1AVX2(nb int, w, x []byte) float32

//go:noescape
func dotQ4_KQ8_KAVX2(nb int, w, x []byte) float32

//go:noescape
func dotQ4_KQ8_KVecAVX2(nb int, w, x []byte) float32

//go:noescape
func dotQ4_KQ8_KGemvAVX2(nb int, w, x []byte) float32

//go:noescape
func dotQ5_KQ8_KAVX2(nb int, w, x []byte) float32

//go:noescape
func dotQ6_KQ8_KAVX2(nb int, w, x []byte) float32

// In quantk23_amd64.s.

//go:noescape
func dotQ2_KQ8_KAVX2(nb int, w, x []byte) float32

//go:noescape
func dotQ3_KQ8_KAVX2(nb int, w, x []byte) float32

//go:noescape
func dotQ2_KQ8_Kx4AVX2(nb int, w, x []byte, xStride int, out *[4]float32)

//go:noescape
func dotQ3_KQ8_Kx4AVX2(nb int, w, x []byte, xStride int, out *[4]float32)

// One weight row against four activation rows (xStride bytes apart).

//go:noescape
func dotQ8_0Q8_0x4AVX2(nb int, w, x []byte, xStride int, out *[4]float32)

//go:noescape
func dotQ4_0Q8_0x4AVX2(nb int, w, x []byte, xStride int, out *[4]float32)

//go:noescape
func dotQ4_KQ8_Kx4AVX2(nb int, w, x []byte, xStride int, out *[4]float32)

//go:noescape
func dotQ4_KQ8_KGemvx4AVX2(nb int, w, x []byte, xStride int, out *[4]float32)

//go:noescape
func dotQ5_KQ8_Kx4AVX2(nb int, w, x []byte, xStride int, out *[4]float32)

//go:noescape
func dotQ6_KQ8_Kx4AVX2(nb int, w, x []byte, xStride int, out *[4]float32)

// Activation quantization in quantact_amd64.s. nb > 0.

//go:noescape
func quantizeActQ8_0AVX2(nb int, x *float32, dst *byte)

//go:noescape
func quantizeActQ8_KAVX2(nb int, x *float32, dst *byte)

//go:noescape
func prefetchAVX2(p *byte, n int)
