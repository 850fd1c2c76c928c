package simd

// DotQ8_0Q8_0 returns the dot product of n elements of a Q8_0 weight row w
// and a Q8_0 activation row x in llama.cpp's order (ggml_vec_dot_q8_0_q8_0
// on AVX2, tinyBLAS_Q0_AVX): eight float32 lanes L_0..L_7, for each block
// b in order and each lane j
//
//	s   = float32(dw_b * dx_b)                   (rounded product of the halves)
//	I_j = sum of qw[4j+k]*qx[4j+k], k = 0..3    (exact int32)
//	L_j = fma(s, float32(I_j), L_j)              (one rounding)
//
// and the result hsum8(L) = ((L0+L4)+(L2+L6)) + ((L1+L5)+(L3+L7)).
// Every quant byte (-128 included) gives the exact integer sums.
func DotQ8_0Q8_0(n int, w, x []byte) float32 {
	nb := checkBlocks("DotQ8_0Q8_0", n, qk, w, bytesQ8_0, x, bytesQ8_0)
	if vnni.Load() && nb > 0 {
		return dotQ8_0Q8_0V(nb, w, x) // the AVX2 kernel's bits
	}
	if vexVNNI.Load() && nb > 0 {
		return dotQ8_0XQ8_0(nb, w, x) // the AVX2 kernel's bits
	}
	if fast.Load() && nb > 0 {
		return dotQ8_0Q8_0AVX2(nb, w, x)
	}
	return dotQ8_0Q8_0Generic(nb, w, x)
}

// dotQ8_0Q8_0Generic is DotQ8_0Q8_0's order spelled out in Go: fma32 is
// an exactly rounded fused multiply-add, so the result has the assembly's
// bits on every platform.
func dotQ8_0Q8_0Generic(nb int, w, x []byte) float32 {
	var l [8]float32
	for ib := 0; ib < nb; ib++ {
		bw := w[ib*bytesQ8_0 : (ib+1)*bytesQ8_0]
		bx := x[ib*bytesQ8_0 : (ib+1)*bytesQ8_0]
		s := float32(f16At(bw, 0) * f16At(bx, 0))
		qw, qx := bw[2:34], bx[2:34]
		for j := range 8 {
			var sumi int32
			for k := 4 * j; k < 4*j+4; k++ {
				sumi += int32(int8(qw[k])) * int32(int8(qx[k]))
			}
			l[j] = fma32(s, float32(sumi), l[j])
		}
	}
	return hsum8(&l)
}

// f16At reads the little-endian half at b[off:off+2] as float32.
func f16At(b []byte, off int) float32 {
	return F16ToF32(uint16(b[off]) | uint16(b[off+1])<<8)
}
