package simd

// DotQ8_0Q8_0 returns the dot product of n elements of a Q8_0 weight row w
// and a Q8_0 activation row x: sum over blocks of
// (d_w*d_x) * sum_j qw[j]*qx[j].
func DotQ8_0Q8_0(n int, w, x []byte) float32 {
	nb := checkBlocks("DotQ8_0Q8_0", n, qk, w, bytesQ8_0, x, bytesQ8_0)
	if fast.Load() && nb > 0 {
		return dotQ8_0Q8_0AVX2(nb, w, x)
	}
	return dotQ8_0Q8_0Generic(nb, w, x)
}

// dotQ8_0Q8_0Generic follows ggml_vec_dot_q8_0_q8_0_generic:
// sumf += float(sumi) * (dw*dx), block by block. The float32()
// conversions forbid fused multiply-adds, so the result is the same bits on
// every platform and equals the assembly's.
func dotQ8_0Q8_0Generic(nb int, w, x []byte) float32 {
	var sumf float32
	for ib := 0; ib < nb; ib++ {
		bw := w[ib*bytesQ8_0 : (ib+1)*bytesQ8_0]
		bx := x[ib*bytesQ8_0 : (ib+1)*bytesQ8_0]
		qw, qx := bw[2:34], bx[2:34]
		var sumi int32
		for j := range 32 {
			sumi += int32(int8(qw[j])) * int32(int8(qx[j]))
		}
		sumf += float32(float32(sumi) * (f16At(bw, 0) * f16At(bx, 0)))
	}
	return sumf
}

// f16At reads the little-endian half at b[off:off+2] as float32.
func f16At(b []byte, off int) float32 {
	return F16ToF32(uint16(b[off]) | uint16(b[off+1])<<8)
}
