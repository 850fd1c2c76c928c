//go:build amd64 && !purego

package simd

// Float kernels in float_amd64.s. Callers (the dispatchers) guarantee
// len > 0 and equal lengths.

//go:noescape
func dotF32AVX2(a, b []float32) float32

//go:noescape
func dotF16AVX2(a, b []uint16) float32

//go:noescape
func dotBF16AVX2(a, b []uint16) float32

//go:noescape
func dotF32Lanes8AVX2(a, b []float32) float32

//go:noescape
func dotF16Lanes8AVX2(a, b []uint16) float32

//go:noescape
func dotBF16Lanes8AVX2(a, b []uint16) float32

// The x4 Lanes8 kernels take n > 0 elements (a multiple of 8), the first
// weight and activation elements, and the activation row stride in bytes.

//go:noescape
func dotF32Lanes8x4AVX2(n int, w, x *float32, xStrideBytes int, out *[4]float32)

//go:noescape
func dotF16Lanes8x4AVX2(n int, w, x *uint16, xStrideBytes int, out *[4]float32)

//go:noescape
func dotBF16Lanes8x4AVX2(n int, w, x *uint16, xStrideBytes int, out *[4]float32)

//go:noescape
func dotF32F16AVX2(a []float32, b []uint16) float32

//go:noescape
func axpyAVX2(alpha float32, x, y []float32)

//go:noescape
func axpyF16AVX2(alpha float32, x []uint16, y []float32)

//go:noescape
func scaleAVX2(alpha float32, x []float32)

//go:noescape
func addAVX2(dst, a, b []float32)

//go:noescape
func mulAVX2(dst, a, b []float32)

//go:noescape
func sumSquaresAVX2(x []float32) float32

//go:noescape
func maxAVX2(x []float32) float32

//go:noescape
func f16ToF32RowAVX2(src []uint16, dst []float32)

//go:noescape
func f32ToF16RowAVX2(src []float32, dst []uint16)
