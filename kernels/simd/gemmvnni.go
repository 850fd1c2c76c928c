package simd

// The avx512vnni kernel set: the int8 GEMMs on AVX-512 registers with
// VPDPBUSD (u8 x s8 products summed four at a time into int32, exact: no
// intermediate int16 as in VPMADDUBSW + VPMADDWD, no saturation).
//
// Same bits as the AVX2 set, by construction: a block's integer sums are
// exact whichever instructions compute them, and the float part of every
// kernel (conversion of the sums, the scales dw*dx, the fused
// multiply-adds, the order of the lanes and of the final sums) is the AVX2
// kernel's, operation for operation, on wider registers. The tests run
// every GEMM under each kernel set against the generic single-row dots.
//
//	Q8_0 (load-time panels, GemmQ8_0Packed): one ZMM holds quad j of 16
//	  weight rows (two 8-row panels: W_j of each, 272-byte layout as
//	  packed); VPDPBUSD takes the weights as u8 w+128 (one XOR per quad,
//	  shared by the activation rows) and the activation quad as a signed
//	  broadcast operand straight from the x36 form; the offset comes off as
//	  C = -128*sum(x quad) preloaded in the accumulator. Per activation row
//	  and block: 8 x (VPDPBUSD, VCVTDQ2PS, VFMADD) for 16 rows, against 8 x
//	  (VPSIGNB, VPMADDUBSW, VPMADDWD, VCVTDQ2PS, VFMADD) for 8 rows in
//	  AVX2. Three activation rows per call (24 ZMM accumulators, 8 lanes x
//	  16 rows each); an odd last panel runs the same kernel on YMM.

// q80v16 and q80v8: the Q8_0 VNNI kernels for 16 rows (two panels) and 8
// rows (one), by activation rows per call (1..3).
var (
	q80v16 = [3]func(nb int, panel *byte, panelStride int, x *byte, xStride int, out *float32, outStride int){
		gemmQ8_0V16Q8_0x1, gemmQ8_0V16Q8_0x2, gemmQ8_0V16Q8_0x3}
	q80v8 = [3]func(nb int, panel *byte, panelStride int, x *byte, xStride int, out *float32, outStride int){
		gemmQ8_0V8Q8_0x1, gemmQ8_0V8Q8_0x2, gemmQ8_0V8Q8_0x3}
)

// gemmQ8_0PackedVNNI is GemmQ8_0Packed's avx512vnni path (arguments
// checked by the caller, nb > 0, pb bytes per 8-row panel).
func gemmQ8_0PackedVNNI(nb int, panels []byte, pb, rows int, a []byte, aStride, m int, out []float32, outStride int) {
	for r0 := 0; r0 < rows; r0 += 16 {
		k := &q80v16
		if rows-r0 < 16 {
			k = &q80v8
		}
		panel := &panels[r0/8*pb]
		for j := 0; j < m; j += 3 {
			nx := min(3, m-j)
			k[nx-1](nb, panel, pb, &a[j*aStride], aStride, &out[j*outStride+r0], outStride)
		}
	}
}
