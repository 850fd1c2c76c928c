package simd

import (
	"encoding/binary"
	"math"
)

// DotQ4_KQ8_K returns the dot product of n elements of a Q4_K weight row w
// and a Q8_K activation row x. Per super-block:
//
//	d_w*d_x * sum_s scale[s] * sum_l q4[32s+l]*q8[32s+l]
//	  - dmin_w*d_x * sum_j min[j/2] * bsums[j]
func DotQ4_KQ8_K(n int, w, x []byte) float32 {
	nb := checkBlocks("DotQ4_KQ8_K", n, qkK, w, bytesQ4_K, x, bytesQ8_K)
	if fast.Load() && nb > 0 {
		return dotQ4_KQ8_KAVX2(nb, w, x)
	}
	return dotQ4_KQ8_KGeneric(nb, w, x)
}

// dotQ4_KQ8_KGeneric follows ggml_vec_dot_q4_K_q8_K_generic, except that
// the integer part is summed exactly per super-block instead of in 8 lanes:
// sumf += (dw*dx)*float(isum); sumf -= (dminw*dx)*float(summs), super-block
// by super-block, with no fused operations (the assembly does the same).
func dotQ4_KQ8_KGeneric(nb int, w, x []byte) float32 {
	var sumf float32
	for i := 0; i < nb; i++ {
		bw := w[i*bytesQ4_K : (i+1)*bytesQ4_K]
		bx := x[i*bytesQ8_K : (i+1)*bytesQ8_K]
		sc, mn := scaleMinK4(bw[4:16])
		qs, q8 := bw[16:144], bx[4:260]
		var isum int32
		for g := range 4 { // 64 elements per group: sub-blocks 2g, 2g+1
			q := qs[32*g : 32*g+32]
			lo, hi := q8[64*g:64*g+32], q8[64*g+32:64*g+64]
			var s0, s1 int32
			for l := range 32 {
				s0 += int32(q[l]&0x0f) * int32(int8(lo[l]))
				s1 += int32(q[l]>>4) * int32(int8(hi[l]))
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

// scaleMinK4 unpacks the eight 6-bit scales and mins of a Q4_K/Q5_K
// super-block (get_scale_min_k4 in ggml-quants.c):
//
//	j < 4:  scale = s[j] & 63                      min = s[j+4] & 63
//	j >= 4: scale = s[j+4]&15 | (s[j-4]>>6)<<4     min = s[j+4]>>4 | (s[j]>>6)<<4
func scaleMinK4(s []byte) (sc, mn [8]uint8) {
	s = s[:12]
	for j := range 4 {
		sc[j] = s[j] & 63
		mn[j] = s[j+4] & 63
	}
	for j := 4; j < 8; j++ {
		sc[j] = s[j+4]&0x0f | (s[j-4]>>6)<<4
		mn[j] = s[j+4]>>4 | (s[j]>>6)<<4
	}
	return sc, mn
}

// minsTimesBsums returns sum_j mn[j/2] * bsums[j] over the 16 int16 bsums
// of a Q8_K block (each bsum covers 16 elements, each min 32).
func minsTimesBsums(mn *[8]uint8, bsums []byte) int32 {
	bsums = bsums[:32]
	var s int32
	for j := range 16 {
		s += int32(mn[j/2]) * int32(int16(binary.LittleEndian.Uint16(bsums[2*j:])))
	}
	return s
}
