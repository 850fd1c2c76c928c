package simd

// The avxvnni kernel set (AVX-VNNI without AVX-512, e.g. Intel's client
// cores since Alder Lake) runs the AVX2 set's load-time Q8_0 and Q4_0
// kernels with their integer sums by VEX-encoded VPDPBUSD on YMM
// (gemmQ8_0PXQ8_0x*, gemmQ4_0PXQ8_0x* in gemm_amd64.s; Go's assembler has
// no VEX form of the instruction, so asmgen writes its bytes): Q8_0 keeps
// the sign trick, VPDPBUSD(|w|, x*sign(w)) replacing VPMADDUBSW + VPMADDWD;
// Q4_0 sums the nibbles times the activation quads into int32 directly.
//
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
//	  packed); VPDPBUSD takes the activation as u8 x+128 (the XOR part of
//	  GemmActQ8_0Q8_0's form, written once per row) and the weights as they
//	  are, with the offset's correction C = -128*sum(w quad) preloaded in
//	  the accumulator: it depends on the weights only, so one VPDPBUSD and
//	  one VPSUBD per block and quad serve every activation row, and it
//	  stays in a register (parking it in memory and broadcasting it per
//	  quad cost a third of the speed). Per activation row and block: 8 x
//	  (VPDPBUSD, VCVTDQ2PS, VFMADD) for 16 rows, against 8 x (VPSIGNB,
//	  VPMADDUBSW, VPMADDWD, VCVTDQ2PS, VFMADD) for 8 rows in AVX2; exact
//	  for every byte on either side. Three activation rows per call (24 ZMM
//	  accumulators, 8 lanes x 16 rows each); an odd last panel runs the
//	  same kernel on YMM.
//
//	Q4_0 (load-time panels, GemmQ4_0Packed): the 16-row panel's quad k
//	  (low nibbles rows 0..7, high nibbles rows 8..15 of one 32-byte word
//	  P_k) becomes one ZMM of 16 rows' unsigned nibbles (a broadcast load,
//	  a word shift by 0 or 4 per half, a mask), which VPDPBUSD multiplies
//	  by the signed activation quad directly; per activation row and block
//	  8 x VPDPBUSD then the AVX2 kernel's subtraction of 8*sum(x), one
//	  conversion and one FMA for 16 rows (AVX2: 2 x (8 VPMADDUBSW, 7
//	  VPADDW, VPMADDWD, VPSUBD, VCVTDQ2PS, VFMADD)). Up to 8 activation
//	  rows per call share the nibble split.

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

// q40v: the Q4_0 VNNI kernels by activation rows per call (1..8).
var q40v = [8]func(nb int, panel *byte, x *byte, xStride int, out *float32, outStride int){
	gemmQ4_0VQ8_0x1, gemmQ4_0VQ8_0x2, gemmQ4_0VQ8_0x3, gemmQ4_0VQ8_0x4,
	gemmQ4_0VQ8_0x5, gemmQ4_0VQ8_0x6, gemmQ4_0VQ8_0x7, gemmQ4_0VQ8_0x8}

// gemmQ4_0PackedVNNI is GemmQ4_0Packed's avx512vnni path (arguments
// checked by the caller, nb > 0, pb bytes per 16-row panel).
func gemmQ4_0PackedVNNI(nb int, panels []byte, pb, rows int, a []byte, aStride, m int, out []float32, outStride int) {
	for r0 := 0; r0 < rows; r0 += 16 {
		panel := &panels[r0/16*pb]
		for j := 0; j < m; j += 8 {
			nx := min(8, m-j)
			q40v[nx-1](nb, panel, &a[j*aStride], aStride, &out[j*outStride+r0], outStride)
		}
	}
}
