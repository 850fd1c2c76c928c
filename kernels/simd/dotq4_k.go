package simd

import (
	"encoding/binary"
	"math"
)

// DotQ4_KQ8_K returns the dot product of n elements of a Q4_K weight row w
// and a Q8_K activation row x in the order of llama.cpp's repacked
// q4_K_8x8 GEMM (ggml_gemm_q4_K_8x8_q8_K, AVX2), which llama.cpp uses for
// every Q4_K matrix with a multiple of 8 rows (every real model). Per
// super-block (d, dmin the weight's f16 scales, d8 the Q8_K scale) and per
// 64-element group g = 0..3 (sub-blocks 2g, 2g+1), with exact int32 sums:
//
//	iacc   = sc[2g]*isum(2g) + sc[2g+1]*isum(2g+1)      isum(s) = sum q4*q8
//	imin   = mn[2g]*(bs[4g]+bs[4g+1]) + mn[2g+1]*(bs[4g+2]+bs[4g+3])
//	acc    = fma(float32(iacc), d*d8, acc)
//	accMin = fma(float32(imin), dmin*d8, accMin)
//
// (d*d8 and dmin*d8 rounded float32 products, fma one rounding); the result
// is acc - accMin. For matrices whose row count is not a multiple of 8 see
// DotQ4_KQ8_KVec.
func DotQ4_KQ8_K(n int, w, x []byte) float32 {
	nb := checkBlocks("DotQ4_KQ8_K", n, qkK, w, bytesQ4_K, x, bytesQ8_K)
	if fast.Load() && nb > 0 {
		return dotQ4_KQ8_KAVX2(nb, w, x)
	}
	return dotQ4_KQ8_KGeneric(nb, w, x)
}

// dotQ4_KQ8_KGeneric is the reference of DotQ4_KQ8_K's order: two fused
// multiply-add chains, acc and accMin, each folded once per 64 elements.
func dotQ4_KQ8_KGeneric(nb int, w, x []byte) float32 {
	var acc, accMin float32
	for i := 0; i < nb; i++ {
		bw := w[i*bytesQ4_K : (i+1)*bytesQ4_K]
		bx := x[i*bytesQ8_K : (i+1)*bytesQ8_K]
		sc, mn := scaleMinK4(bw[4:16])
		qs, q8 := bw[16:144], bx[4:260]
		d8 := math.Float32frombits(binary.LittleEndian.Uint32(bx[0:4]))
		dd := float32(f16At(bw, 0) * d8)
		dmd := float32(f16At(bw, 2) * d8)
		for g := range 4 { // 64 elements per group: sub-blocks 2g, 2g+1
			q := qs[32*g : 32*g+32]
			lo, hi := q8[64*g:64*g+32], q8[64*g+32:64*g+64]
			var s0, s1 int32
			for l := range 32 {
				s0 += int32(q[l]&0x0f) * int32(int8(lo[l]))
				s1 += int32(q[l]>>4) * int32(int8(hi[l]))
			}
			iacc := int32(sc[2*g])*s0 + int32(sc[2*g+1])*s1
			imin := int32(mn[2*g])*(bsumK(bx, 4*g)+bsumK(bx, 4*g+1)) +
				int32(mn[2*g+1])*(bsumK(bx, 4*g+2)+bsumK(bx, 4*g+3))
			acc = fma32(float32(iacc), dd, acc)
			accMin = fma32(float32(imin), dmd, accMin)
		}
	}
	return acc - accMin
}

// DotQ4_KQ8_KVec is DotQ4_KQ8_K in the order of ggml_vec_dot_q4_K_q8_K
// (AVX2), which llama.cpp uses for Q4_K matrices whose row count is not a
// multiple of 8 (they are not repacked). Per super-block, with exact int32
// sums, d = d8*d and dmin = -d8*dmin (rounded float32 products):
//
//	lane[m] = sum_g sc[2g]*sum_{e<32, e/4=m} q4[64g+e]*q8[64g+e]
//	        + sc[2g+1]*sum_{e<32, e/4=m} q4[64g+32+e]*q8[64g+32+e]   m = 0..7
//	acc[m]  = fma(d, float32(lane[m]), acc[m])
//	prod[k] = mn[2k]*(bs[4k]+bs[4k+1]) + mn[2k+1]*(bs[4k+2]+bs[4k+3])   k = 0..3
//	accM[k] = fma(dmin, float32(prod[k]), accM[k])
//
// and the result is hsum8(acc) + ((accM[0]+accM[2]) + (accM[1]+accM[3])),
// hsum8(l) = ((l0+l4)+(l2+l6)) + ((l1+l5)+(l3+l7)).
func DotQ4_KQ8_KVec(n int, w, x []byte) float32 {
	nb := checkBlocks("DotQ4_KQ8_KVec", n, qkK, w, bytesQ4_K, x, bytesQ8_K)
	if fast.Load() && nb > 0 {
		return dotQ4_KQ8_KVecAVX2(nb, w, x)
	}
	return dotQ4_KQ8_KVecGeneric(nb, w, x)
}

// dotQ4_KQ8_KVecGeneric is the reference of DotQ4_KQ8_KVec's order.
func dotQ4_KQ8_KVecGeneric(nb int, w, x []byte) float32 {
	var acc [8]float32
	var accM [4]float32
	for i := 0; i < nb; i++ {
		bw := w[i*bytesQ4_K : (i+1)*bytesQ4_K]
		bx := x[i*bytesQ8_K : (i+1)*bytesQ8_K]
		sc, mn := scaleMinK4(bw[4:16])
		qs, q8 := bw[16:144], bx[4:260]
		d8 := math.Float32frombits(binary.LittleEndian.Uint32(bx[0:4]))
		d := float32(d8 * f16At(bw, 0))
		dmin := float32(-d8 * f16At(bw, 2))
		for k := range 4 {
			prod := int32(mn[2*k])*(bsumK(bx, 4*k)+bsumK(bx, 4*k+1)) +
				int32(mn[2*k+1])*(bsumK(bx, 4*k+2)+bsumK(bx, 4*k+3))
			accM[k] = fma32(dmin, float32(prod), accM[k])
		}
		var lane [8]int32
		for g := range 4 {
			q := qs[32*g : 32*g+32]
			lo, hi := q8[64*g:64*g+32], q8[64*g+32:64*g+64]
			for e := range 32 {
				lane[e/4] += int32(sc[2*g])*int32(q[e]&0x0f)*int32(int8(lo[e])) +
					int32(sc[2*g+1])*int32(q[e]>>4)*int32(int8(hi[e]))
			}
		}
		for m := range 8 {
			acc[m] = fma32(d, float32(lane[m]), acc[m])
		}
	}
	return hsum8(&acc) + ((accM[0] + accM[2]) + (accM[1] + accM[3]))
}

// bsumK returns bsums[j] of the Q8_K block bx (int16 at 260+2j).
func bsumK(bx []byte, j int) int32 {
	return int32(int16(binary.LittleEndian.Uint16(bx[260+2*j:])))
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
