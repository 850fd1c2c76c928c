//go:build amd64 && !purego

package simd

// Q4_0 lane-order dots in quant_amd64.s. nb > 0 blocks; w and x hold at
// least nb blocks each (x4: four rows xStride bytes apart), checked by the
// dispatchers.

//go:noescape
func dotQ4_0Q8_0LanesAVX2(nb int, w, x []byte) float32

//go:noescape
func dotQ4_0Q8_0Lanesx4AVX2(nb int, w, x []byte, xStride int, out *[4]float32)
