package simd

import (
	"encoding/binary"
	"math"
)

// DotQ4_KQ8_KGemv returns the dot product of n elements of a Q4_K weight
// row w and a Q8_K activation row x in the order of llama.cpp's repacked
// single-row kernel ggml_gemv_q4_K_8x8_q8_K (AVX2), which its mul_mat_id
// runs for every row routed to a repacked Q4_K expert (the GEMM of
// DotQ4_KQ8_K serves mul_mat only). The integer sums of a whole super-block
// are exact (int16 lanes of at most 16 products of 4-bit by 8-bit quants,
// then int32), and each super-block is folded once:
//
//	iacc   = sum_{s<8} sc[s]*isum(s)          isum(s) = sum of q4*q8 over sub-block s
//	imin   = sum_{s<8} mn[s]*(bs[2s]+bs[2s+1])
//	acc    = fma(float32(iacc), d*d8, acc)
//	accMin = fma(float32(imin), dmin*d8, accMin)
//
// (d*d8 and dmin*d8 rounded float32 products; float32(iacc) rounds to
// nearest even as VCVTDQ2PS does); the result is acc - accMin.
func DotQ4_KQ8_KGemv(n int, w, x []byte) float32 {
	nb := checkBlocks("DotQ4_KQ8_KGemv", n, qkK, w, bytesQ4_K, x, bytesQ8_K)
	if fast.Load() && nb > 0 {
		return dotQ4_KQ8_KGemvAVX2(nb, w, x)
	}
	return dotQ4_KQ8_KGemvGeneric(nb, w, x)
}

// DotQ4_KQ8_KGemvx4 is DotQ4_KQ8_KGemv for four activation rows (see
// dotx4.go): the weight's nibbles and scales unpacked once for the four,
// each out[k] with exactly the bits of the single-row call. (A Q4_K
// expert's product over a group of rows runs GemmQ4_KGemvQ8_K, the same
// bits with panels unpacked once for up to 7 rows.)
func DotQ4_KQ8_KGemvx4(n int, w, x []byte, xStride int, out *[4]float32) {
	nb := checkX4("DotQ4_KQ8_KGemvx4", n, qkK, w, bytesQ4_K, x, bytesQ8_K, xStride, out)
	if fast.Load() && nb > 0 {
		dotQ4_KQ8_KGemvx4AVX2(nb, w, x, xStride, out)
		return
	}
	dotX4Generic(dotQ4_KQ8_KGemvGeneric, nb, w, x, xStride, out)
}

// dotQ4_KQ8_KGemvGeneric is the reference of DotQ4_KQ8_KGemv's order.
func dotQ4_KQ8_KGemvGeneric(nb int, w, x []byte) float32 {
	var acc, accMin float32
	for i := 0; i < nb; i++ {
		bw := w[i*bytesQ4_K : (i+1)*bytesQ4_K]
		bx := x[i*bytesQ8_K : (i+1)*bytesQ8_K]
		sc, mn := scaleMinK4(bw[4:16])
		qs, q8 := bw[16:144], bx[4:260]
		d8 := math.Float32frombits(binary.LittleEndian.Uint32(bx[0:4]))
		dd := float32(f16At(bw, 0) * d8)
		dmd := float32(f16At(bw, 2) * d8)
		var iacc, imin int32
		for g := range 4 { // sub-blocks 2g (low nibbles) and 2g+1 (high)
			q := qs[32*g : 32*g+32]
			lo, hi := q8[64*g:64*g+32], q8[64*g+32:64*g+64]
			var s0, s1 int32
			for l := range 32 {
				s0 += int32(q[l]&0x0f) * int32(int8(lo[l]))
				s1 += int32(q[l]>>4) * int32(int8(hi[l]))
			}
			iacc += int32(sc[2*g])*s0 + int32(sc[2*g+1])*s1
			imin += int32(mn[2*g])*(bsumK(bx, 4*g)+bsumK(bx, 4*g+1)) +
				int32(mn[2*g+1])*(bsumK(bx, 4*g+2)+bsumK(bx, 4*g+3))
		}
		acc = fma32(float32(iacc), dd, acc)
		accMin = fma32(float32(imin), dmd, accMin)
	}
	return acc - accMin
}
