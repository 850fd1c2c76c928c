package simd

// DotQ4_0Q8_0 returns the dot product of n elements of a Q4_0 weight row w
// and a Q8_0 activation row x: sum over blocks of
// d_w*d_x * sum_j (nib_j-8)*qx[j].
func DotQ4_0Q8_0(n int, w, x []byte) float32 {
	nb := checkBlocks("DotQ4_0Q8_0", n, qk, w, bytesQ4_0, x, bytesQ8_0)
	if fast.Load() && nb > 0 {
		return dotQ4_0Q8_0AVX2(nb, w, x)
	}
	return dotQ4_0Q8_0Generic(nb, w, x)
}

// dotQ4_0Q8_0Generic follows ggml_vec_dot_q4_0_q8_0_generic:
// sumf += (float(sumi)*dw)*dx, block by block.
func dotQ4_0Q8_0Generic(nb int, w, x []byte) float32 {
	var sumf float32
	for ib := 0; ib < nb; ib++ {
		bw := w[ib*bytesQ4_0 : (ib+1)*bytesQ4_0]
		bx := x[ib*bytesQ8_0 : (ib+1)*bytesQ8_0]
		qs, qx := bw[2:18], bx[2:34]
		var sumi int32
		for j := range 16 {
			v0 := int32(qs[j]&0x0f) - 8
			v1 := int32(qs[j]>>4) - 8
			sumi += v0*int32(int8(qx[j])) + v1*int32(int8(qx[j+16]))
		}
		sumf += float32(float32(sumi) * f16At(bw, 0) * f16At(bx, 0))
	}
	return sumf
}
