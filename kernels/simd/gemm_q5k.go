package simd

// Q5_K GEMM (GemmQ5_KQ8_K): Q4_K's quants plus a fifth bit, in
// llama.cpp's ggml_vec_dot_q5_K_q8_K order (DotQ5_KQ8_K: 8 float32 lanes
// per output, the mins folded once per super-block into a ninth
// accumulator, out = hsum8(lanes) + summs).
//
// Shapes: per-call 8-row panels (gemmPackQ5_K, 2368 B per super-block,
// layout in internal/asmgen/kquant5.go), as Q6_K's: the quants of chunks
// 2p and 2p+1 interleaved by element pair so that one VPMADDWD applies
// both chunks' scales to the int16 VPMADDUBSW sums (|.| <= 4*31*128),
// the mins as int16 pairs against the bsums' pair sums. The AVX2 and
// AVX-VNNI kernels take one panel against up to 4 activation rows (their
// lane accumulators in the frame); the avx512vnni kernels two panels (16
// rows per ZMM register) against up to 3, accumulators in registers.
// Every set forms the same exact int32 lane and min sums and applies the
// same float operations in the same order as dotQ5_KQ8_KGeneric, so every
// output has the single-row dot's bits (tests: gemm_q5k_test.go).

const (
	panelQ5_KRows  = 8
	panelQ5_KBlock = 2368 // per 256 elements: 64*32 + 4*32 + 4*32 + 2*8*4
)

// Two 8-row panels fit the scratch's panel area (compile-time check).
const _ = uint(qkK/qk*gemmMaxPanelB - 2*panelQ5_KBlock)

var gemmQ5_K = gemmKind{
	block: qkK, rows: panelQ5_KRows, panelB: panelQ5_KBlock, wB: bytesQ5_K, actB: bytesQ8_K,
	pack:    gemmPackQ5_K,
	kernels: [4]func(int, *byte, *byte, int, *float32, int){gemmQ5_KQ8_Kx1, gemmQ5_KQ8_Kx2, gemmQ5_KQ8_Kx3, gemmQ5_KQ8_Kx4},
	vex:     [4]func(int, *byte, *byte, int, *float32, int){gemmQ5_KXQ8_Kx1, gemmQ5_KXQ8_Kx2, gemmQ5_KXQ8_Kx3, gemmQ5_KXQ8_Kx4},
	generic: dotQ5_KQ8_KGeneric,
	single:  dotQ5_KQ8_KFast,
}

// GemmQ5_KQ8_K is GemmQ6_KQ8_K for Q5_K weights: out[j*outStride+i] =
// DotQ5_KQ8_K(n, w[i*wStride:], a[j*aStride:]) for i < rows, j < m, the
// activation rows Q8_K as they are; scratch holds GemmScratchBytes(n)
// bytes. From gemmQ5_KPanelMin activation rows on (gemmQ5_KVNNIMin on the
// avx512vnni set, for matrices of at least 16 rows) it repacks the
// weights into panels per call; below, it runs the exact x4 and single-row
// dots, which need no repacking. Both give the same bits.
func GemmQ5_KQ8_K(n int, w []byte, wStride, rows int, a []byte, aStride, m int, out []float32, outStride int, scratch []byte) {
	g := &gemmQ5_K
	nb := g.check("GemmQ5_KQ8_K", n, w, wStride, rows, a, aStride, m, out, outStride, scratch)
	if vnni.Load() && nb > 0 && rows >= 16 && m >= gemmQ5_KVNNIMin {
		gemmQ5_KVNNI(nb, w, wStride, rows, a, aStride, m, out, outStride, scratch)
		return
	}
	if fast.Load() && nb > 0 && rows > 0 && m > 0 && m < gemmQ5_KPanelMin {
		gemmQ5_KDots(nb, w, wStride, rows, a, aStride, m, out, outStride)
		return
	}
	g.run(nb, w, wStride, rows, a, aStride, m, out, outStride, scratch)
}

// gemmQ5_KPanelMin and gemmQ5_KVNNIMin: the activation rows from which
// GemmQ5_KQ8_K repacks (AVX2/AVX-VNNI sets; avx512vnni set). Measured
// with BenchmarkGemmQ5_K (256 rows, n = 2048, CPU time on a loaded
// 2-vCPU Xeon): at m = 8 the panels take 85-88 us on every set against
// 114-134 us for the x4 dots, at m = 4 both 56-70 us (noise), at m = 16
// 125-200 us against 250-320 us.
const (
	gemmQ5_KPanelMin = 8
	gemmQ5_KVNNIMin  = 8
)

// q5kv16: the Q5_K avx512vnni kernels by activation rows per call (1..3).
var q5kv16 = [3]func(nb int, panel *byte, x *byte, xStride int, out *float32, outStride int){
	gemmQ5_KV16Q8_Kx1, gemmQ5_KV16Q8_Kx2, gemmQ5_KV16Q8_Kx3}

// gemmQ5_KVNNI is GemmQ5_KQ8_K's avx512vnni panel path (arguments checked,
// nb, rows, m > 0): 16 rows at a time as one 16-row panel (the two 8-row
// panels interleaved by 32-byte vector, 2*panelQ5_KBlock bytes per
// super-block: one 64-byte load per panel quantity), rows past the last
// multiple of 16 through the AVX2 panel path.
func gemmQ5_KVNNI(nb int, w []byte, wStride, rows int, a []byte, aStride, m int, out []float32, outStride int, scratch []byte) {
	r0 := 0
	for ; r0+16 <= rows; r0 += 16 {
		gemmPackQ5_KW(nb, &w[r0*wStride], wStride, &scratch[0])
		gemmPackQ5_KW(nb, &w[(r0+8)*wStride], wStride, &scratch[32])
		for j := 0; j < m; j += 3 {
			nx := min(3, m-j)
			q5kv16[nx-1](nb, &scratch[0], &a[j*aStride], aStride, &out[j*outStride+r0], outStride)
		}
	}
	if r0 < rows {
		gemmQ5_K.run(nb, w[r0*wStride:], wStride, rows-r0, a, aStride, m, out[r0:], outStride, scratch)
	}
}

// gemmQ5_KDots is GemmQ5_KQ8_K on the AVX2 dots (arguments checked, nb,
// rows, m > 0), as gemmQ6_KDots: rows 16 at a time, activation rows 4 at
// a time through the x4 dot, a tail of 2 or 3 rows (m >= 4) by rerunning
// the x4 dot on the last four (the same bits), m < 4 by single-row dots.
func gemmQ5_KDots(nb int, w []byte, wStride, rows int, a []byte, aStride, m int, out []float32, outStride int) {
	const rowBlock = 16
	var o [4]float32
	for r0 := 0; r0 < rows; r0 += rowBlock {
		r1 := min(rows, r0+rowBlock)
		j := 0
		for ; j+4 <= m; j += 4 {
			for i := r0; i < r1; i++ {
				dotQ5_KQ8_Kx4AVX2(nb, w[i*wStride:], a[j*aStride:], aStride, &o)
				for jj := range 4 {
					out[(j+jj)*outStride+i] = o[jj]
				}
			}
		}
		switch rem := m - j; {
		case rem == 0:
		case rem >= 2 && m >= 4:
			j0 := m - 4
			for i := r0; i < r1; i++ {
				dotQ5_KQ8_Kx4AVX2(nb, w[i*wStride:], a[j0*aStride:], aStride, &o)
				for jj := j; jj < m; jj++ {
					out[jj*outStride+i] = o[jj-j0]
				}
			}
		default:
			for ; j < m; j++ {
				for i := r0; i < r1; i++ {
					out[j*outStride+i] = dotQ5_KQ8_KFast(nb, w[i*wStride:], a[j*aStride:])
				}
			}
		}
	}
}
