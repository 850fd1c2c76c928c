package simd

import (
	"encoding/binary"
	"math"
)

// DotQ6_KQ8_K returns the dot product of n elements of a Q6_K weight row w
// and a Q8_K activation row x, in the order of llama.cpp's AVX2
// ggml_vec_dot_q6_K_q8_K (which llama.cpp uses for every Q6_K matrix):
// per super-block, with d = d_x*d_w (one rounded float32 product),
//
//	lane[m] = sum sc*q*q8 over the elements 32c+4m..32c+4m+3, c = 0..7
//	          - 32*(bsums[2m]*sc[2m] + bsums[2m+1]*sc[2m+1])       (exact int32)
//	acc[m]  = fma(d, float32(lane[m]), acc[m])                    m = 0..7
//
// and the result is hsum8(acc) (q unsigned 0..63; index layout in doc.go).
// The lanes keep the elements in which llama.cpp's VPMADDWD leaves them,
// but take the -32 offset of sub-blocks 2m, 2m+1: the sum over all lanes
// is the exact integer dot, its split over lanes is llama.cpp's.
func DotQ6_KQ8_K(n int, w, x []byte) float32 {
	nb := checkBlocks("DotQ6_KQ8_K", n, qkK, w, bytesQ6_K, x, bytesQ8_K)
	if fast.Load() && nb > 0 {
		return dotQ6_KQ8_KFast(nb, w, x)
	}
	return dotQ6_KQ8_KGeneric(nb, w, x)
}

// dotQ6_KQ8_KFast is the fast set's single-row dot (nb > 0): the
// avx512vnni, avxvnni or AVX2 kernel, the same bits.
func dotQ6_KQ8_KFast(nb int, w, x []byte) float32 {
	if vnni.Load() {
		return dotQ6_KQ8_KV(nb, w, x)
	}
	if vexVNNI.Load() {
		return dotQ6_KXQ8_K(nb, w, x)
	}
	return dotQ6_KQ8_KAVX2(nb, w, x)
}

// dotQ6_KQ8_KGeneric is DotQ6_KQ8_K's reference: the 8 integer lanes per
// super-block, each folded with one fused multiply-add (fma32).
//
//	element e = 32c + b (c = 0..7 chunk, b = 0..31):  lane b/4
//	scale of e: sc[e/16];  offset of lane m: sub-blocks 2m, 2m+1
func dotQ6_KQ8_KGeneric(nb int, w, x []byte) float32 {
	var acc [8]float32
	var a [256]int32 // unsigned 6-bit quants, in element order
	for i := 0; i < nb; i++ {
		bw := w[i*bytesQ6_K : (i+1)*bytesQ6_K]
		bx := x[i*bytesQ8_K : (i+1)*bytesQ8_K]
		ql, qh, scales, q8, bsums := bw[0:128], bw[128:192], bw[192:208], bx[4:260], bx[260:292]
		for h := range 2 {
			l4, l2, o := ql[64*h:64*h+64], qh[32*h:32*h+32], a[128*h:128*h+128]
			for l := range 32 {
				o[l] = int32(l4[l]&0x0f | (l2[l]>>0&3)<<4)
				o[l+32] = int32(l4[l+32]&0x0f | (l2[l]>>2&3)<<4)
				o[l+64] = int32(l4[l]>>4 | (l2[l]>>4&3)<<4)
				o[l+96] = int32(l4[l+32]>>4 | (l2[l]>>6&3)<<4)
			}
		}
		var lane [8]int32
		for c := range 8 {
			for b := range 32 {
				e := 32*c + b
				lane[b/4] += int32(int8(scales[e/16])) * a[e] * int32(int8(q8[e]))
			}
		}
		for m := range 8 {
			bs0 := int32(int16(binary.LittleEndian.Uint16(bsums[4*m:])))
			bs1 := int32(int16(binary.LittleEndian.Uint16(bsums[4*m+2:])))
			lane[m] -= 32 * (bs0*int32(int8(scales[2*m])) + bs1*int32(int8(scales[2*m+1])))
		}
		d := float32(math.Float32frombits(binary.LittleEndian.Uint32(bx[0:4])) * f16At(bw, 208))
		for m := range 8 {
			acc[m] = fma32(d, float32(lane[m]), acc[m])
		}
	}
	return hsum8(&acc)
}
