package simd

import "encoding/binary"

// DotQ5_0Q8_0 returns the dot product of n elements of a Q5_0 weight row w
// and a Q8_0 activation row x: sum over blocks of
// (d_w*d_x) * sum_j (q5_j-16)*qx[j], in llama.cpp's order (8 lanes of
// 4-element sums, fused per block, hsum8; see dotQ5_0Q8_0Generic).
func DotQ5_0Q8_0(n int, w, x []byte) float32 {
	nb := checkBlocks("DotQ5_0Q8_0", n, qk, w, bytesQ5_0, x, bytesQ8_0)
	if fast.Load() && nb > 0 {
		return dotQ5_0Q8_0AVX2(nb, w, x)
	}
	return dotQ5_0Q8_0Generic(nb, w, x)
}

// dotQ5_0Q8_0Generic follows llama.cpp's order for Q5_0 (tinyBLAS_Q0_AVX,
// the path of every Q5_0 matrix on AVX2): per block s = dw*dx (rounded),
// lane j = fma32(s, float32(I_j), lane j) with I_j the exact sum of
// elements 4j..4j+3 of (q5-16)*qx; result hsum8.
func dotQ5_0Q8_0Generic(nb int, w, x []byte) float32 {
	var l [8]float32
	for ib := 0; ib < nb; ib++ {
		bw := w[ib*bytesQ5_0 : (ib+1)*bytesQ5_0]
		bx := x[ib*bytesQ8_0 : (ib+1)*bytesQ8_0]
		qh := binary.LittleEndian.Uint32(bw[2:6])
		qs, qx := bw[6:22], bx[2:34]
		s := f16At(bw, 0) * f16At(bx, 0)
		for j := range 8 {
			var is int32
			for e := 4 * j; e < 4*j+4; e++ {
				var q int32
				if e < 16 {
					q = int32(qs[e]&0x0f | uint8(qh>>e&1)<<4)
				} else {
					q = int32(qs[e-16]>>4 | uint8(qh>>e&1)<<4)
				}
				is += (q - 16) * int32(int8(qx[e]))
			}
			l[j] = fma32(s, float32(is), l[j])
		}
	}
	return hsum8(&l)
}
