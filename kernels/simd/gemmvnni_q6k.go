package simd

// Q6_K on the avx512vnni kernel set (GemmQ6_KQ8_K from gemmQ6_KVNNIMin
// activation rows on, for matrices of at least 16 rows): the AVX2 panel
// kernel's arithmetic on 16 weight rows per ZMM register.
//
// Shapes: the weight rows go 16 at a time into one per-call 16-row panel
// (gemmPackQ6_KW of rows 0..7 and of rows 8..15: the 8-row panel's
// 32-byte units of both side by side, 2*2592 <= 8*gemmMaxPanelB = 5376 B
// per super-block in the scratch's panel area), so that one 64-byte load
// holds a panel quantity of all 16 rows, rows 0..7 in the low half, and
// the scales are memory operands (no inserts, no copies into the frame;
// 1.1-1.2x the two-panel form's speed). The activation rows go 3 per
// call (gemmQ6_KV16Q8_Kx1..x3): 3 rows x 8 lane accumulators = 24 ZMM
// registers of float32 accumulators, held in registers for the whole call
// (the AVX2 kernel keeps its 8-row ones in the frame). Rows past the last
// multiple of 16 (an odd 8-row panel, a partial panel) take the AVX2 path.
//
// Integers: per super-block, lane m and activation row, as in the AVX2
// kernel (layout and proof of range in internal/asmgen/kquant.go), the
// int16 VPMADDUBSW sums of chunks 2p and 2p+1 (unsigned 6-bit quants times
// signed activation bytes, |pair| <= 2*63*128, |sum of two| <= 32256: no
// saturation) get both chunks' scales from one word multiply-add, and the
// -32 offset comes from the bsums against -32*sc:
//
//	I = sum_p VPDPWSSD(S_p, SC2[2p+m/4]) + VPDPWSSD(SCB[m], bsums pair)
//
// VPDPWSSD (AVX512-VNNI) is VPMADDWD followed by VPADDD, exact in int32
// (the non-saturating form), so I is the AVX2 kernel's int32 bit for bit.
// (VPDPBUSD does not pay here: a dword of four u8 x s8 products would mix
// two chunks, or two lanes, with different scales.)
//
// Floats: the same operations in the same order as gemmQ6_KQ8_Kx*: per
// super-block dx*d (one rounded product), per lane A = fma(dx*d, float(I),
// A), and out = ((A0+A4)+(A2+A6)) + ((A1+A5)+(A3+A7)) at the end, lane by
// lane for each of the 16 rows. So every output has DotQ6_KQ8_K's bits;
// the tests run GemmQ6_KQ8_K under every kernel set against the generic
// single-row dot.

// A 16-row panel fits the scratch's panel area (compile-time check).
const _ = uint(qkK/qk*gemmMaxPanelB - 2*panelQ6_KBlock)

// q6kv16: the Q6_K VNNI kernels by activation rows per call (1..3).
var q6kv16 = [3]func(nb int, panel *byte, x *byte, xStride int, out *float32, outStride int){
	gemmQ6_KV16Q8_Kx1, gemmQ6_KV16Q8_Kx2, gemmQ6_KV16Q8_Kx3}

// gemmQ6_KVNNI is GemmQ6_KQ8_K's avx512vnni panel path (arguments checked,
// nb, rows, m > 0).
func gemmQ6_KVNNI(nb int, w []byte, wStride, rows int, a []byte, aStride, m int, out []float32, outStride int, scratch []byte) {
	r0 := 0
	for ; r0+16 <= rows; r0 += 16 {
		gemmPackQ6_KW(nb, &w[r0*wStride], wStride, &scratch[0])
		gemmPackQ6_KW(nb, &w[(r0+8)*wStride], wStride, &scratch[32])
		for j := 0; j < m; j += 3 {
			nx := min(3, m-j)
			q6kv16[nx-1](nb, &scratch[0], &a[j*aStride], aStride, &out[j*outStride+r0], outStride)
		}
	}
	if r0 < rows {
		gemmQ6_K.run(nb, w[r0*wStride:], wStride, rows-r0, a, aStride, m, out[r0:], outStride, scratch)
	}
}
