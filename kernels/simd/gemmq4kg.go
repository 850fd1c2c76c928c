package simd

// Q4_K GEMMs in DotQ4_KQ8_KGemv's order: the products of a mixture-of-
// experts step. llama.cpp's mul_mat_id over a repacked Q4_K expert tensor
// (repack.cpp, forward_mul_mat_id) multiplies every routed activation row
// with ggml_gemv_q4_K_8x8_q8_K, one row at a time, whatever the group
// size; its super-block fold differs from the GEMM's (DotQ4_KQ8_K's) that
// mul_mat uses:
//
//	iacc   = sum over the 8 sub-blocks of scale*isum        (exact int32)
//	imin   = sum over the 8 sub-blocks of min*(bsum pair)   (exact int32)
//	acc    = fma(float(iacc), d*dx, acc)                     once per super-block
//	accMin = fma(float(imin), dmin*dx, accMin)               once per super-block
//	out    = acc - accMin
//
// The kernels here form those integers exactly as the DotQ4_KQ8_K-order
// GEMM does (the same per-call panels, 8 weight rows per 256-bit vector,
// or 16 per 512-bit one; VPMADDUBSW/VPMADDWD on AVX2, VPDPBUSD/VPDPWSSD on
// the VNNI sets) and differ only in that fold (asmgen's gemv flag), so
// every output has the bits of DotQ4_KQ8_KGemv(n, w_i, x_j): one weight
// panel unpacked once serves up to 4 (AVX2, AVX-VNNI) or 7 (AVX-512 VNNI,
// two panels per call) activation rows, where the single-row dot unpacks
// it again for each.
//
// Decode (m = 1) runs 8-row kernels with the same fold straight from the
// weights (raw rows: gemvQ4_KGQ8_K(V); load-time layout: gemvQ4_KGQ8_KI,
// gemvQ4_KGXQ8_KI, gemvQ4_KGQ8_KIV).

// q4kgv16 and q4kgv8: the avx512vnni kernels (16 and 8 weight rows) by
// activation rows per call.
var (
	q4kgv16 = [q4kvMaxNX]q4kvKernel{gemmQ4_KGV16Q8_Kx1, gemmQ4_KGV16Q8_Kx2, gemmQ4_KGV16Q8_Kx3,
		gemmQ4_KGV16Q8_Kx4, gemmQ4_KGV16Q8_Kx5, gemmQ4_KGV16Q8_Kx6, gemmQ4_KGV16Q8_Kx7}
	q4kgv8 = [q4kvMaxNX]q4kvKernel{gemmQ4_KGV8Q8_Kx1, gemmQ4_KGV8Q8_Kx2, gemmQ4_KGV8Q8_Kx3,
		gemmQ4_KGV8Q8_Kx4, gemmQ4_KGV8Q8_Kx5, gemmQ4_KGV8Q8_Kx6, gemmQ4_KGV8Q8_Kx7}
)

var gemmQ4_KG = gemmKind{
	block: qkK, rows: panelQ4_KRows, panelB: panelQ4_KBlock, wB: bytesQ4_K, actB: bytesQ8_K,
	pack:    gemmPackQ4_K,
	kernels: [4]func(int, *byte, *byte, int, *float32, int){gemmQ4_KGQ8_Kx1, gemmQ4_KGQ8_Kx2, gemmQ4_KGQ8_Kx3, gemmQ4_KGQ8_Kx4},
	vex:     [4]func(int, *byte, *byte, int, *float32, int){gemmQ4_KGXQ8_Kx1, gemmQ4_KGXQ8_Kx2, gemmQ4_KGXQ8_Kx3, gemmQ4_KGXQ8_Kx4},
	gemv:    gemvQ4_KGQ8_K,
	gemvV:   gemvQ4_KGQ8_KV,
	v512:    gemmQ4_KGVNNI,
	generic: dotQ4_KQ8_KGemvGeneric,
}

// gemmQ4_KGVNNI is gemmKind.run's avx512vnni path for GemmQ4_KGemvQ8_K.
func gemmQ4_KGVNNI(nb int, w []byte, wStride, rows int, a []byte, aStride, m int, out []float32, outStride int, panel, pad []byte, tile []float32) {
	gemmQ4_KVNNISet(q4kvGemv, nb, w, wStride, rows, a, aStride, m, out, outStride, panel, pad, tile)
}

var q4kFoldGemv = q4kFold{&gemmQ4_KG, q4kvGemv, gemvQ4_KGQ8_KI, gemvQ4_KGXQ8_KI, gemvQ4_KGQ8_KIV}

// GemmQ4_KGemvQ8_K is GemmQ4_KQ8_K in DotQ4_KQ8_KGemv's order:
// out[j*outStride+i] = DotQ4_KQ8_KGemv(n, w[i*wStride:], a[j*aStride:]),
// the bits of llama.cpp's mul_mat_id over a repacked Q4_K expert, for
// i < rows (any count: rows past the last 8 go through a zero-padded
// panel) and j < m. scratch must hold GemmScratchBytes(n) bytes.
func GemmQ4_KGemvQ8_K(n int, w []byte, wStride, rows int, a []byte, aStride, m int, out []float32, outStride int, scratch []byte) {
	g := &gemmQ4_KG
	nb := g.check("GemmQ4_KGemvQ8_K", n, w, wStride, rows, a, aStride, m, out, outStride, scratch)
	g.run(nb, w, wStride, rows, a, aStride, m, out, outStride, scratch)
}

// GemmQ4_KGemvPacked is GemmQ4_KGemvQ8_K over the load-time layout
// (PackQ4_K; rows a multiple of 8), every m: the same bits.
func GemmQ4_KGemvPacked(n int, panels []byte, rows int, a []byte, aStride, m int, out []float32, outStride int, scratch []byte) {
	gemmQ4_KPacked("GemmQ4_KGemvPacked", &q4kFoldGemv, n, panels, rows, a, aStride, m, out, outStride, scratch)
}
