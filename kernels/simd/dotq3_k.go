package simd

import (
	"encoding/binary"
	"math"
)

// DotQ3_KQ8_K returns the dot product of n elements of a Q3_K weight row w
// and a Q8_K activation row x (n a multiple of 256).
//
//	Q3_K 110 B / 256: | hmask u8[32] | qs u8[64] | scales u8[12] | d f16 |
//
// Element 128j+32s+l is ((qs[32j+l] >> 2s) & 3) - 4 when bit 4j+s of
// hmask[l] is clear (that bit unchanged otherwise), -4..3; its value is
// d*scale*q with the 6-bit signed scale of elements 16k..16k+15
// (scaleQ3K).
func DotQ3_KQ8_K(n int, w, x []byte) float32 {
	nb := checkBlocks("DotQ3_KQ8_K", n, qkK, w, bytesQ3_K, x, bytesQ8_K)
	if fast.Load() && nb > 0 {
		return dotQ3_KQ8_KAVX2(nb, w, x)
	}
	return dotQ3_KQ8_KGeneric(nb, w, x)
}

// dotQ3_KQ8_KGeneric follows llama.cpp's ggml_vec_dot_q3_K_q8_K on AVX2
// (Q3_K has no tinyBLAS or repacked path on x86): per super-block d =
// dx*d_w (float32), acc_m = fma(d, float(lane m), acc_m) with lane m the
// exact sum over the eight 32-element chunks c of scale * (q3.q8 over
// elements 32c+4m..32c+4m+3); result hsum8(acc).
func dotQ3_KQ8_KGeneric(nb int, w, x []byte) float32 {
	var acc [8]float32
	for i := 0; i < nb; i++ {
		bw := w[i*bytesQ3_K : (i+1)*bytesQ3_K]
		bx := x[i*bytesQ8_K : (i+1)*bytesQ8_K]
		hm, qs, q8 := bw[0:32], bw[32:96], bx[4:260]
		sc := scaleQ3K(bw[96:108])
		xd := math.Float32frombits(binary.LittleEndian.Uint32(bx[0:4]))
		d := float32(xd * f16At(bw, 108))
		var lane [8]int32
		for e := range qkK {
			j, s, l := e/128, e/32%4, e%32
			q := int32(qs[32*j+l] >> (2 * s) & 3)
			if hm[l]>>(4*j+s)&1 == 0 {
				q -= 4
			}
			lane[l/4] += int32(sc[e/16]) * q * int32(int8(q8[e]))
		}
		for m := range 8 {
			acc[m] = fma32(d, float32(lane[m]), acc[m])
		}
	}
	return hsum8(&acc)
}

// scaleQ3K unpacks the sixteen 6-bit scales of a Q3_K super-block (12
// bytes s), minus 32: scale k has its low 4 bits in nibble k/8 of
// s[k%8] and its high 2 bits in bits 2(k/4)..2(k/4)+1 of s[8+k%4].
func scaleQ3K(s []byte) (sc [16]int8) {
	s = s[:12]
	for k := range 16 {
		lo := s[k%8] >> (4 * (k / 8)) & 0x0f
		hi := s[8+k%4] >> (2 * (k / 4)) & 3
		sc[k] = int8(lo|hi<<4) - 32
	}
	return sc
}
