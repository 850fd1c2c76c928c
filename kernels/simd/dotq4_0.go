package simd

// Q4_0 weights have two summation orders, after the two kernels llama.cpp
// (AVX2) picks between by the weight matrix's row count:
//
//	DotQ4_0Q8_0       Rows%8 == 0: the repacked q4_0_8x8 GEMM; one float32
//	                  accumulator, per block acc = fma(float(I_b), s_b, acc)
//	DotQ4_0Q8_0Lanes  Rows%8 != 0: tinyBLAS_Q0_AVX; 8 float32 lanes, lane j
//	                  over elements 4j..4j+3 of every block, hsum8 at the end
//
// where s_b = float32(dw_b*dx_b) (a rounded product of the two f16 scales)
// and I_b the exact integer dot of block b's quants ((nib-8)*q).

// DotQ4_0Q8_0 returns the dot product of n elements of a Q4_0 weight row w
// and a Q8_0 activation row x in llama.cpp's order for weight matrices with
// Rows%8 == 0 (every real model's): per block b, in order,
// acc = fma32(float32(I_b), dw_b*dx_b, acc), where I_b is the exact
// integer sum of (nib-8)*qx over the block and dw_b*dx_b is rounded to
// float32 before the fused multiply-add.
func DotQ4_0Q8_0(n int, w, x []byte) float32 {
	nb := checkBlocks("DotQ4_0Q8_0", n, qk, w, bytesQ4_0, x, bytesQ8_0)
	if fast.Load() && nb > 0 {
		return dotQ4_0Q8_0AVX2(nb, w, x)
	}
	return dotQ4_0Q8_0Generic(nb, w, x)
}

// dotQ4_0Q8_0Generic follows ggml_gemm_q4_0_8x8_q8_0 (AVX2): per block
// sumf = fma(float(sumi), dw*dx, sumf).
func dotQ4_0Q8_0Generic(nb int, w, x []byte) float32 {
	var sumf float32
	for ib := 0; ib < nb; ib++ {
		bw := w[ib*bytesQ4_0 : (ib+1)*bytesQ4_0]
		bx := x[ib*bytesQ8_0 : (ib+1)*bytesQ8_0]
		sumi := isumQ4_0(bw[2:18], bx[2:34])
		s := float32(f16At(bw, 0) * f16At(bx, 0))
		sumf = fma32(float32(sumi), s, sumf)
	}
	return sumf
}

// isumQ4_0 is the exact integer dot of one Q4_0 block's 16 quant bytes qs
// (element j in the low nibble of qs[j], element j+16 in the high one)
// with 32 int8 activation quants qx: sum_j (nib_j-8)*qx[j].
func isumQ4_0(qs, qx []byte) int32 {
	var sumi int32
	for j := range 16 {
		v0 := int32(qs[j]&0x0f) - 8
		v1 := int32(qs[j]>>4) - 8
		sumi += v0*int32(int8(qx[j])) + v1*int32(int8(qx[j+16]))
	}
	return sumi
}

// DotQ4_0Q8_0Lanes returns the dot product of n elements of a Q4_0 weight
// row w and a Q8_0 activation row x in llama.cpp's order for weight
// matrices with Rows%8 != 0 (not repacked; llamafile's tinyBLAS_Q0_AVX):
// 8 float32 lanes L_0..L_7, and per block b, in order, for each lane j
//
//	L_j = fma32(s_b, float32(I_bj), L_j)      s_b = float32(dw_b*dx_b)
//	I_bj = sum_{e=4j}^{4j+3} (q_e-8)*qx_e     (exact integer)
//
// where element e < 16 is the low nibble of qs[e] and e >= 16 the high
// nibble of qs[e-16]; the result is hsum8(L) =
// ((L0+L4)+(L2+L6)) + ((L1+L5)+(L3+L7)).
func DotQ4_0Q8_0Lanes(n int, w, x []byte) float32 {
	nb := checkBlocks("DotQ4_0Q8_0Lanes", n, qk, w, bytesQ4_0, x, bytesQ8_0)
	if fast.Load() && nb > 0 {
		return dotQ4_0Q8_0LanesAVX2(nb, w, x)
	}
	return dotQ4_0Q8_0LanesGeneric(nb, w, x)
}

// dotQ4_0Q8_0LanesGeneric is DotQ4_0Q8_0Lanes in Go.
func dotQ4_0Q8_0LanesGeneric(nb int, w, x []byte) float32 {
	var l [8]float32
	for ib := 0; ib < nb; ib++ {
		bw := w[ib*bytesQ4_0 : (ib+1)*bytesQ4_0]
		bx := x[ib*bytesQ8_0 : (ib+1)*bytesQ8_0]
		qs, qx := bw[2:18], bx[2:34]
		s := float32(f16At(bw, 0) * f16At(bx, 0))
		for j := range 8 {
			var sumi int32
			for e := 4 * j; e < 4*j+4; e++ {
				var q int32
				if e < 16 {
					q = int32(qs[e]&0x0f) - 8
				} else {
					q = int32(qs[e-16]>>4) - 8
				}
				sumi += q * int32(int8(qx[e]))
			}
			l[j] = fma32(s, float32(sumi), l[j])
		}
	}
	return hsum8(&l)
}

// DotQ4_0Q8_0Lanesx4 is DotQ4_0Q8_0Lanes for four activation rows
// (xStride bytes apart; see dotx4.go): out[k] has exactly the bits of
// DotQ4_0Q8_0Lanes(n, w, x[k*xStride:]).
func DotQ4_0Q8_0Lanesx4(n int, w, x []byte, xStride int, out *[4]float32) {
	nb := checkX4("DotQ4_0Q8_0Lanesx4", n, qk, w, bytesQ4_0, x, bytesQ8_0, xStride, out)
	if fast.Load() && nb > 0 {
		dotQ4_0Q8_0Lanesx4AVX2(nb, w, x, xStride, out)
		return
	}
	dotX4Generic(dotQ4_0Q8_0LanesGeneric, nb, w, x, xStride, out)
}
