package simd

import (
	"encoding/binary"
	"math"
)

// DotQ2_KQ8_K returns the dot product of n elements of a Q2_K weight row w
// and a Q8_K activation row x (n a multiple of 256).
//
//	Q2_K 84 B / 256: | scales u8[16] | qs u8[64] | d f16 | dmin f16 |
//
// scales[k] holds the 4-bit scale (low nibble) and min (high nibble) of
// elements 16k..16k+15; element 128j+32s+l is (qs[32j+l] >> 2s) & 3, and
// its value d*scale*q - dmin*min.
func DotQ2_KQ8_K(n int, w, x []byte) float32 {
	nb := checkBlocks("DotQ2_KQ8_K", n, qkK, w, bytesQ2_K, x, bytesQ8_K)
	if fast.Load() && nb > 0 {
		return dotQ2_KQ8_KAVX2(nb, w, x)
	}
	return dotQ2_KQ8_KGeneric(nb, w, x)
}

// dotQ2_KQ8_KGeneric follows llama.cpp's ggml_vec_dot_q2_K_q8_K on AVX2
// (Q2_K has no tinyBLAS or repacked path on x86), one 8-lane FMA chain:
// per super-block d = dx*d_w, dmin = -dx*dmin_w (float32); first acc_m =
// fma(dmin, float(min[2m]*bsums[2m] + min[2m+1]*bsums[2m+1]), acc_m),
// then acc_m = fma(d, float(lane m), acc_m) with lane m the exact sum over
// the eight 32-element chunks c of scale * (q2.q8 over elements
// 32c+4m..32c+4m+3); result hsum8(acc).
func dotQ2_KQ8_KGeneric(nb int, w, x []byte) float32 {
	var acc [8]float32
	for i := 0; i < nb; i++ {
		bw := w[i*bytesQ2_K : (i+1)*bytesQ2_K]
		bx := x[i*bytesQ8_K : (i+1)*bytesQ8_K]
		sc, qs, q8 := bw[0:16], bw[16:80], bx[4:260]
		xd := math.Float32frombits(binary.LittleEndian.Uint32(bx[0:4]))
		d := float32(xd * f16At(bw, 80))
		dmin := float32(-xd * f16At(bw, 82))
		for m := range 8 {
			mp := int32(sc[2*m]>>4)*bsumK(bx, 2*m) + int32(sc[2*m+1]>>4)*bsumK(bx, 2*m+1)
			acc[m] = fma32(dmin, float32(mp), acc[m])
		}
		var lane [8]int32
		for e := range qkK {
			j, s, l := e/128, e/32%4, e%32
			q := int32(qs[32*j+l] >> (2 * s) & 3)
			lane[l/4] += int32(sc[e/16]&0x0f) * q * int32(int8(q8[e]))
		}
		for m := range 8 {
			acc[m] = fma32(d, float32(lane[m]), acc[m])
		}
	}
	return hsum8(&acc)
}
