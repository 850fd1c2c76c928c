package simd

import "encoding/binary"

// DotQ5_0Q8_0 returns the dot product of n elements of a Q5_0 weight row w
// and a Q8_0 activation row x: sum over blocks of
// (d_w*d_x) * sum_j (q5_j-16)*qx[j].
func DotQ5_0Q8_0(n int, w, x []byte) float32 {
	nb := checkBlocks("DotQ5_0Q8_0", n, qk, w, bytesQ5_0, x, bytesQ8_0)
	if fast.Load() && nb > 0 {
		return dotQ5_0Q8_0AVX2(nb, w, x)
	}
	return dotQ5_0Q8_0Generic(nb, w, x)
}

// dotQ5_0Q8_0Generic follows ggml_vec_dot_q5_0_q8_0_generic:
// sumf += (dw*dx)*float(sumi), block by block.
func dotQ5_0Q8_0Generic(nb int, w, x []byte) float32 {
	var sumf float32
	for ib := 0; ib < nb; ib++ {
		bw := w[ib*bytesQ5_0 : (ib+1)*bytesQ5_0]
		bx := x[ib*bytesQ8_0 : (ib+1)*bytesQ8_0]
		qh := binary.LittleEndian.Uint32(bw[2:6])
		qs, qx := bw[6:22], bx[2:34]
		var sumi int32
		for j := range 16 {
			x0 := int32(qs[j]&0x0f|uint8(qh>>j&1)<<4) - 16
			x1 := int32(qs[j]>>4|uint8(qh>>(j+16)&1)<<4) - 16
			sumi += x0*int32(int8(qx[j])) + x1*int32(int8(qx[j+16]))
		}
		sumf += float32((f16At(bw, 0) * f16At(bx, 0)) * float32(sumi))
	}
	return sumf
}
