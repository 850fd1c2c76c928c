package simd

import (
	"encoding/binary"
	"math"
)

// DotQ5_KQ8_K returns the dot product of n elements of a Q5_K weight row w
// and a Q8_K activation row x. As Q4_K, with a fifth bit from qh:
// q5[64g+l] = q4 | (qh[l]>>2g & 1)<<4, q5[64g+32+l] = q4' | (qh[l]>>(2g+1) & 1)<<4.
func DotQ5_KQ8_K(n int, w, x []byte) float32 {
	nb := checkBlocks("DotQ5_KQ8_K", n, qkK, w, bytesQ5_K, x, bytesQ8_K)
	if fast.Load() && nb > 0 {
		return dotQ5_KQ8_KFast(nb, w, x)
	}
	return dotQ5_KQ8_KGeneric(nb, w, x)
}

// dotQ5_KQ8_KFast is the fast set's single-row dot (nb > 0): the
// avx512vnni or the AVX2 kernel, the same bits.
func dotQ5_KQ8_KFast(nb int, w, x []byte) float32 {
	if vnni.Load() {
		return dotQ5_KQ8_KV(nb, w, x)
	}
	return dotQ5_KQ8_KAVX2(nb, w, x)
}

// dotQ5_KQ8_KGeneric follows llama.cpp's ggml_vec_dot_q5_K_q8_K on AVX2
// (Q5_K is not repacked on x86): per super-block d = dx*d_w and dmin =
// -dx*dmin_w (float32), summs = fma32(dmin, float32(sum_k min_k *
// (bsums[2k]+bsums[2k+1])), summs); lane m = the exact sum over the eight
// 32-element chunks c of scale_c * (q5.q8 over elements 32c+4m..32c+4m+3),
// acc_m = fma32(d, float32(lane m), acc_m); result hsum8(acc) + summs.
func dotQ5_KQ8_KGeneric(nb int, w, x []byte) float32 {
	var acc [8]float32
	var summs float32
	for i := 0; i < nb; i++ {
		bw := w[i*bytesQ5_K : (i+1)*bytesQ5_K]
		bx := x[i*bytesQ8_K : (i+1)*bytesQ8_K]
		sc, mn := scaleMinK4(bw[4:16])
		qh, qs, q8 := bw[16:48], bw[48:176], bx[4:260]
		xd := math.Float32frombits(binary.LittleEndian.Uint32(bx[0:4]))
		d := float32(xd * f16At(bw, 0))
		dmin := float32(-xd * f16At(bw, 2))
		summs = fma32(dmin, float32(minsTimesBsums(&mn, bx[260:292])), summs)
		var lane [8]int32
		for g := range 4 {
			q := qs[32*g : 32*g+32]
			lo, hi := q8[64*g:64*g+32], q8[64*g+32:64*g+64]
			s0, s1 := int32(sc[2*g]), int32(sc[2*g+1])
			for l := range 32 {
				v0 := int32(q[l]&0x0f) | int32(qh[l]>>(2*g)&1)<<4
				v1 := int32(q[l]>>4) | int32(qh[l]>>(2*g+1)&1)<<4
				lane[l/4] += s0*v0*int32(int8(lo[l])) + s1*v1*int32(int8(hi[l]))
			}
		}
		for m := range 8 {
			acc[m] = fma32(d, float32(lane[m]), acc[m])
		}
	}
	return hsum8(&acc) + summs
}
