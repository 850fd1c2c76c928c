//go:build !amd64 || purego

package simd

// The fast entry points are the generic code where no assembly exists
// (hasFast is false there, so these are never selected; they keep the
// dispatchers platform-independent).

func dotF32AVX2(a, b []float32) float32             { return dotF32Generic(a, b) }
func dotF16AVX2(a, b []uint16) float32              { return dotF16Generic(a, b) }
func dotBF16AVX2(a, b []uint16) float32             { return dotBF16Generic(a, b) }
func dotF32F16AVX2(a []float32, b []uint16) float32 { return dotF32F16Generic(a, b) }
func dotF32Lanes8AVX2(a, b []float32) float32       { return lanes8F32(a, b) }
func dotF16Lanes8AVX2(a, b []uint16) float32        { return lanes8F16(a, b) }
func dotBF16Lanes8AVX2(a, b []uint16) float32       { return lanes8BF16(a, b) }

func dotF32Lanes8x4AVX2(int, *float32, *float32, int, *[4]float32) { floatUnavailable() }
func dotF16Lanes8x4AVX2(int, *uint16, *uint16, int, *[4]float32)   { floatUnavailable() }
func dotBF16Lanes8x4AVX2(int, *uint16, *uint16, int, *[4]float32)  { floatUnavailable() }

// floatUnavailable: the pointer-based float kernels have no portable
// stand-in; the dispatchers never call them where hasFast is false.
func floatUnavailable()                                  { panic("simd: float x4 kernel called without AVX2") }
func axpyAVX2(alpha float32, x, y []float32)             { axpyGeneric(alpha, x, y) }
func axpyF16AVX2(alpha float32, x []uint16, y []float32) { axpyF16Generic(alpha, x, y) }
func scaleAVX2(alpha float32, x []float32)               { scaleGeneric(alpha, x) }
func addAVX2(dst, a, b []float32)                        { addGeneric(dst, a, b) }
func mulAVX2(dst, a, b []float32)                        { mulGeneric(dst, a, b) }
func sumSquaresAVX2(x []float32) float32                 { return sumSquaresGeneric(x) }
func maxAVX2(x []float32) float32                        { return maxGeneric(x) }
func f16ToF32RowAVX2(src []uint16, dst []float32)        { f16ToF32RowGeneric(src, dst) }
func f32ToF16RowAVX2(src []float32, dst []uint16)        { f32ToF16RowGeneric(src, dst) }

func dotQ8_0Q8_0AVX2(nb int, w, x []byte) float32 { return dotQ8_0Q8_0Generic(nb, w, x) }
func dotQ4_0Q8_0AVX2(nb int, w, x []byte) float32 { return dotQ4_0Q8_0Generic(nb, w, x) }
func dotQ4_1Q8_1AVX2(nb int, w, x []byte) float32 { return dotQ4_1Q8_1Generic(nb, w, x) }
func dotQ5_0Q8_0AVX2(nb int, w, x []byte) float32 { return dotQ5_0Q8_0Generic(nb, w, x) }
func dotQ5_1Q8_1AVX2(nb int, w, x []byte) float32 { return dotQ5_1Q8_1Generic(nb, w, x) }
func dotQ4_KQ8_KAVX2(nb int, w, x []byte) float32 { return dotQ4_KQ8_KGeneric(nb, w, x) }
func dotQ4_KQ8_KGemvAVX2(nb int, w, x []byte) float32 {
	return dotQ4_KQ8_KGemvGeneric(nb, w, x)
}

func dotQ4_KQ8_KVecAVX2(nb int, w, x []byte) float32 {
	return dotQ4_KQ8_KVecGeneric(nb, w, x)
}
func dotQ5_KQ8_KAVX2(nb int, w, x []byte) float32 { return dotQ5_KQ8_KGeneric(nb, w, x) }
func dotQ2_KQ8_KAVX2(nb int, w, x []byte) float32 { return dotQ2_KQ8_KGeneric(nb, w, x) }
func dotQ3_KQ8_KAVX2(nb int, w, x []byte) float32 { return dotQ3_KQ8_KGeneric(nb, w, x) }
func dotQ6_KQ8_KAVX2(nb int, w, x []byte) float32 { return dotQ6_KQ8_KGeneric(nb, w, x) }

func dotQ8_0Q8_0x4AVX2(nb int, w, x []byte, s int, out *[4]float32) {
	dotX4Generic(dotQ8_0Q8_0Generic, nb, w, x, s, out)
}
func dotQ4_0Q8_0x4AVX2(nb int, w, x []byte, s int, out *[4]float32) {
	dotX4Generic(dotQ4_0Q8_0Generic, nb, w, x, s, out)
}
func dotQ4_KQ8_Kx4AVX2(nb int, w, x []byte, s int, out *[4]float32) {
	dotX4Generic(dotQ4_KQ8_KGeneric, nb, w, x, s, out)
}
func dotQ2_KQ8_Kx4AVX2(nb int, w, x []byte, s int, out *[4]float32) {
	dotX4Generic(dotQ2_KQ8_KGeneric, nb, w, x, s, out)
}
func dotQ3_KQ8_Kx4AVX2(nb int, w, x []byte, s int, out *[4]float32) {
	dotX4Generic(dotQ3_KQ8_KGeneric, nb, w, x, s, out)
}
func dotQ4_KQ8_KGemvx4AVX2(nb int, w, x []byte, s int, out *[4]float32) {
	dotX4Generic(dotQ4_KQ8_KGemvGeneric, nb, w, x, s, out)
}
func dotQ5_KQ8_Kx4AVX2(nb int, w, x []byte, s int, out *[4]float32) {
	dotX4Generic(dotQ5_KQ8_KGeneric, nb, w, x, s, out)
}
func dotQ6_KQ8_Kx4AVX2(nb int, w, x []byte, s int, out *[4]float32) {
	dotX4Generic(dotQ6_KQ8_KGeneric, nb, w, x, s, out)
}

// GEMM entry points: never called without the assembly (run checks fast).

func gemmUnavailable() { panic("simd: GEMM assembly called on a generic build") }

func gemmPackQ8_0(int, *byte, int, *byte)                  { gemmUnavailable() }
func gemmPackQ4_0(int, *byte, int, *byte)                  { gemmUnavailable() }
func gemmActQ8_0x36(int, *byte, *byte)                     { gemmUnavailable() }
func gemmActQ8_0x8(int, *byte, *byte)                      { gemmUnavailable() }
func gemmQ8_0Q8_0x1(int, *byte, *byte, int, *float32, int) { gemmUnavailable() }
func gemmQ8_0Q8_0x2(int, *byte, *byte, int, *float32, int) { gemmUnavailable() }
func gemmQ8_0Q8_0x3(int, *byte, *byte, int, *float32, int) { gemmUnavailable() }
func gemmQ8_0Q8_0x4(int, *byte, *byte, int, *float32, int) { gemmUnavailable() }
func gemmQ4_0Q8_0x1(int, *byte, *byte, int, *float32, int) { gemmUnavailable() }
func gemmQ4_0Q8_0x2(int, *byte, *byte, int, *float32, int) { gemmUnavailable() }
func gemmQ4_0Q8_0x3(int, *byte, *byte, int, *float32, int) { gemmUnavailable() }
func gemmQ4_0Q8_0x4(int, *byte, *byte, int, *float32, int) { gemmUnavailable() }
func gemvQ8_0Q8_0(int, *byte, int, *byte, *float32)        { gemmUnavailable() }
func gemvQ4_0Q8_0(int, *byte, int, *byte, *float32)        { gemmUnavailable() }

func quantizeActQ8_0AVX2(int, *float32, *byte)             { panic("simd: quantizeActQ8_0AVX2 without assembly") }
func gemmPackQ4_K(int, *byte, int, *byte)                  { gemmUnavailable() }
func gemmQ4_KQ8_Kx1(int, *byte, *byte, int, *float32, int) { gemmUnavailable() }
func gemmQ4_KQ8_Kx2(int, *byte, *byte, int, *float32, int) { gemmUnavailable() }
func gemmQ4_KQ8_Kx3(int, *byte, *byte, int, *float32, int) { gemmUnavailable() }
func gemmQ4_KQ8_Kx4(int, *byte, *byte, int, *float32, int) { gemmUnavailable() }
func gemvQ4_KQ8_K(int, *byte, int, *byte, *float32)        { gemmUnavailable() }

func quantizeActQ8_KAVX2(int, *float32, *byte) { panic("simd: quantizeActQ8_KAVX2 without assembly") }

func gemmPackQ6_K(int, *byte, int, *byte)                  { gemmUnavailable() }
func gemmPackQ6_KW(int, *byte, int, *byte)                 { gemmUnavailable() }
func gemmQ6_KQ8_Kx1(int, *byte, *byte, int, *float32, int) { gemmUnavailable() }
func gemmQ6_KQ8_Kx2(int, *byte, *byte, int, *float32, int) { gemmUnavailable() }
func gemmQ6_KQ8_Kx3(int, *byte, *byte, int, *float32, int) { gemmUnavailable() }
func gemmQ6_KQ8_Kx4(int, *byte, *byte, int, *float32, int) { gemmUnavailable() }

func attnUnavailable() { panic("simd: attention assembly called on a generic build") }

func dotF32F16RowsAVX2(*float32, int, *uint16, int, *float32, int) { attnUnavailable() }
func dotF32RowsAVX2(*float32, int, *float32, int, *float32, int)   { attnUnavailable() }
func axpyF16RowsAVX2(*float32, int, *uint16, int, *float32, int)   { attnUnavailable() }
func axpyQ8_0RowsAVX2(*float32, int, *byte, int, *float32, int)    { attnUnavailable() }
func axpyQ4_0RowsAVX2(*float32, int, *byte, int, *float32, int)    { attnUnavailable() }
func expfRowAVX2(*float32, *float32, int)                          { attnUnavailable() }
func axpyQ8_0Rows2AVX2(_, _ *float32, _ int, _ *byte, _ int, _, _ *float32, _ int) {
	attnUnavailable()
}
func axpyQ4_0Rows2AVX2(_, _ *float32, _ int, _ *byte, _ int, _, _ *float32, _ int) {
	attnUnavailable()
}
func axpyF32RowsAVX2(*float32, int, *float32, int, *float32, int) { attnUnavailable() }
func expSumAVX2(*float32, *float32, int, float32) float64         { attnUnavailable(); return 0 }
func swigluAVX2(*float32, *float32, *float32, int)                { attnUnavailable() }

func prefetchAVX2(*byte, int) {}

func gemmQ8_0PQ8_0x1(int, *byte, *byte, int, *float32, int, *float32) { gemmUnavailable() }
func gemmQ8_0PQ8_0x2(int, *byte, *byte, int, *float32, int, *float32) { gemmUnavailable() }
func gemmQ8_0PQ8_0x3(int, *byte, *byte, int, *float32, int, *float32) { gemmUnavailable() }
func gemmQ8_0PQ8_0x4(int, *byte, *byte, int, *float32, int, *float32) { gemmUnavailable() }

func gemmQ4_0PQ8_0x1(int, *byte, *byte, int, *float32, int) { gemmUnavailable() }
func gemmQ4_0PQ8_0x2(int, *byte, *byte, int, *float32, int) { gemmUnavailable() }
func gemmQ4_0PQ8_0x3(int, *byte, *byte, int, *float32, int) { gemmUnavailable() }
func gemmQ4_0PQ8_0x4(int, *byte, *byte, int, *float32, int) { gemmUnavailable() }
func gemmPackQ8_0P(int, *byte, int, *byte)                  { gemmUnavailable() }

func gemmPackQ4_KI(int, *byte, int, *byte)           { gemmUnavailable() }
func gemvQ4_KQ8_KI(int, *byte, int, *byte, *float32) { gemmUnavailable() }

func gemmQ8_0PXQ8_0x1(int, *byte, *byte, int, *float32, int, *float32) { gemmUnavailable() }
func gemmQ8_0PXQ8_0x2(int, *byte, *byte, int, *float32, int, *float32) { gemmUnavailable() }
func gemmQ8_0PXQ8_0x3(int, *byte, *byte, int, *float32, int, *float32) { gemmUnavailable() }
func gemmQ8_0PXQ8_0x4(int, *byte, *byte, int, *float32, int, *float32) { gemmUnavailable() }
func gemmQ4_0PXQ8_0x1(int, *byte, *byte, int, *float32, int)           { gemmUnavailable() }
func gemmQ4_0PXQ8_0x2(int, *byte, *byte, int, *float32, int)           { gemmUnavailable() }
func gemmQ4_0PXQ8_0x3(int, *byte, *byte, int, *float32, int)           { gemmUnavailable() }
func gemmQ4_0PXQ8_0x4(int, *byte, *byte, int, *float32, int)           { gemmUnavailable() }

func gemmQ4_KXQ8_Kx1(int, *byte, *byte, int, *float32, int) { gemmUnavailable() }
func gemmQ4_KXQ8_Kx2(int, *byte, *byte, int, *float32, int) { gemmUnavailable() }
func gemmQ4_KXQ8_Kx3(int, *byte, *byte, int, *float32, int) { gemmUnavailable() }
func gemmQ4_KXQ8_Kx4(int, *byte, *byte, int, *float32, int) { gemmUnavailable() }
func gemmQ6_KXQ8_Kx1(int, *byte, *byte, int, *float32, int) { gemmUnavailable() }
func gemmQ6_KXQ8_Kx2(int, *byte, *byte, int, *float32, int) { gemmUnavailable() }
func gemmQ6_KXQ8_Kx3(int, *byte, *byte, int, *float32, int) { gemmUnavailable() }
func gemmQ6_KXQ8_Kx4(int, *byte, *byte, int, *float32, int) { gemmUnavailable() }
