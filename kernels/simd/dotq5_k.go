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
		return dotQ5_KQ8_KAVX2(nb, w, x)
	}
	return dotQ5_KQ8_KGeneric(nb, w, x)
}

// dotQ5_KQ8_KGeneric follows ggml_vec_dot_q5_K_q8_K_generic, with the
// integer part summed exactly per super-block (float order as Q4_K).
func dotQ5_KQ8_KGeneric(nb int, w, x []byte) float32 {
	var sumf float32
	for i := 0; i < nb; i++ {
		bw := w[i*bytesQ5_K : (i+1)*bytesQ5_K]
		bx := x[i*bytesQ8_K : (i+1)*bytesQ8_K]
		sc, mn := scaleMinK4(bw[4:16])
		qh, qs, q8 := bw[16:48], bw[48:176], bx[4:260]
		var isum int32
		for g := range 4 {
			q := qs[32*g : 32*g+32]
			lo, hi := q8[64*g:64*g+32], q8[64*g+32:64*g+64]
			var s0, s1 int32
			for l := range 32 {
				v0 := int32(q[l]&0x0f) | int32(qh[l]>>(2*g)&1)<<4
				v1 := int32(q[l]>>4) | int32(qh[l]>>(2*g+1)&1)<<4
				s0 += v0 * int32(int8(lo[l]))
				s1 += v1 * int32(int8(hi[l]))
			}
			isum += int32(sc[2*g])*s0 + int32(sc[2*g+1])*s1
		}
		xd := math.Float32frombits(binary.LittleEndian.Uint32(bx[0:4]))
		summs := minsTimesBsums(&mn, bx[260:292])
		sumf += float32(f16At(bw, 0) * xd * float32(isum))
		sumf -= float32(f16At(bw, 2) * xd * float32(summs))
	}
	return sumf
}
