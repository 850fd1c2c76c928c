package simd

// DotQ4_1Q8_1 returns the dot product of n elements of a Q4_1 weight row w
// and a Q8_1 activation row x: sum over blocks of
// (d_w*d_x) * sum_j nib_j*qx[j] + m_w*s_x, where s_x = d_x*sum_j qx[j],
// in llama.cpp's order (see dotQ4_1Q8_1Generic).
func DotQ4_1Q8_1(n int, w, x []byte) float32 {
	nb := checkBlocks("DotQ4_1Q8_1", n, qk, w, bytesQ4_1, x, bytesQ8_1)
	if fast.Load() && nb > 0 {
		return dotQ4_1Q8_1AVX2(nb, w, x)
	}
	return dotQ4_1Q8_1Generic(nb, w, x)
}

// dotQ4_1Q8_1Generic follows llama.cpp's ggml_vec_dot_q4_1_q8_1 on AVX2
// (the path of every Q4_1 matrix there: no tinyBLAS or repacked form):
// per block summs = fma32(m_w, s_x, summs) (the C compiler contracts
// "summs += m*s"), s = d_w*d_x rounded, lane j = fma32(s, float32(I_j),
// lane j) with I_j the exact sum of elements 4j..4j+3 of nib*qx; result
// hsum8(lanes) + summs.
func dotQ4_1Q8_1Generic(nb int, w, x []byte) float32 {
	var l [8]float32
	var summs float32
	for ib := 0; ib < nb; ib++ {
		bw := w[ib*bytesQ4_1 : (ib+1)*bytesQ4_1]
		bx := x[ib*bytesQ8_1 : (ib+1)*bytesQ8_1]
		summs = fma32(f16At(bw, 2), f16At(bx, 2), summs)
		s := float32(f16At(bw, 0) * f16At(bx, 0))
		qs, qx := bw[4:20], bx[4:36]
		for j := range 8 {
			var is int32
			for e := 4 * j; e < 4*j+4; e++ {
				var q int32
				if e < 16 {
					q = int32(qs[e] & 0x0f)
				} else {
					q = int32(qs[e-16] >> 4)
				}
				is += q * int32(int8(qx[e]))
			}
			l[j] = fma32(s, float32(is), l[j])
		}
	}
	return hsum8(&l) + summs
}
