package simd

import "encoding/binary"

// DotQ5_1Q8_1 returns the dot product of n elements of a Q5_1 weight row w
// and a Q8_1 activation row x: sum over blocks of
// (d_w*d_x) * sum_j q5_j*qx[j] + m_w*s_x.
func DotQ5_1Q8_1(n int, w, x []byte) float32 {
	nb := checkBlocks("DotQ5_1Q8_1", n, qk, w, bytesQ5_1, x, bytesQ8_1)
	if fast.Load() && nb > 0 {
		return dotQ5_1Q8_1AVX2(nb, w, x)
	}
	return dotQ5_1Q8_1Generic(nb, w, x)
}

// dotQ5_1Q8_1Generic follows ggml_vec_dot_q5_1_q8_1_generic:
// sumf += ((dw*dx)*float(sumi) + mw*sx), block by block.
func dotQ5_1Q8_1Generic(nb int, w, x []byte) float32 {
	var sumf float32
	for ib := 0; ib < nb; ib++ {
		bw := w[ib*bytesQ5_1 : (ib+1)*bytesQ5_1]
		bx := x[ib*bytesQ8_1 : (ib+1)*bytesQ8_1]
		qh := binary.LittleEndian.Uint32(bw[4:8])
		qs, qx := bw[8:24], bx[4:36]
		var sumi int32
		for j := range 16 {
			x0 := int32(qs[j]&0x0f | uint8(qh>>j&1)<<4)
			x1 := int32(qs[j]>>4 | uint8(qh>>(j+16)&1)<<4)
			sumi += x0*int32(int8(qx[j])) + x1*int32(int8(qx[j+16]))
		}
		sumf += float32(float32((f16At(bw, 0)*f16At(bx, 0))*float32(sumi)) + float32(f16At(bw, 2)*f16At(bx, 2)))
	}
	return sumf
}
