package simd

import (
	"encoding/binary"
	"math"
)

// DotQ6_KQ8_K returns the dot product of n elements of a Q6_K weight row w
// and a Q8_K activation row x. Per super-block:
//
//	d_w*d_x * sum_i scales[i] * sum_{l<16} (q6[16i+l]-32)*q8[16i+l]
//
// (index layout of q6 in doc.go).
func DotQ6_KQ8_K(n int, w, x []byte) float32 {
	nb := checkBlocks("DotQ6_KQ8_K", n, qkK, w, bytesQ6_K, x, bytesQ8_K)
	if fast.Load() && nb > 0 {
		return dotQ6_KQ8_KAVX2(nb, w, x)
	}
	return dotQ6_KQ8_KGeneric(nb, w, x)
}

// dotQ6_KQ8_KGeneric follows ggml_vec_dot_q6_K_q8_K_generic, with the
// integer part summed exactly per super-block: sumf += (dw*dx)*float(isum).
// The -32 offset of the quants is applied through the Q8_K bsums (each
// covers one 16-element sub-block): sum (q-32)*q8 = sum q*q8 - 32*bsum.
func dotQ6_KQ8_KGeneric(nb int, w, x []byte) float32 {
	var sumf float32
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
		var isum int32
		for s := range 16 {
			var si int32
			for l := 16 * s; l < 16*s+16; l++ {
				si += a[l] * int32(int8(q8[l]))
			}
			bsum := int32(int16(binary.LittleEndian.Uint16(bsums[2*s:])))
			isum += int32(int8(scales[s])) * (si - 32*bsum)
		}
		xd := math.Float32frombits(binary.LittleEndian.Uint32(bx[0:4]))
		sumf += float32(f16At(bw, 208) * xd * float32(isum))
	}
	return sumf
}
