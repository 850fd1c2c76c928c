package quant

// Activation quantizers: what llama.cpp's CPU backend runs on x86 with AVX2
// (ggml-cpu/arch/x86/quants.c, quantize_row_q8_0 / _q8_1 / _q8_K) to turn a
// float32 activation row into the vec_dot_type of a quantized weight
// (Q4_0/Q5_0/Q8_0 weights -> Q8_0, Q4_1/Q5_1 -> Q8_1, K-quants -> Q8_K).
// Integer dot products only agree with llama.cpp bit for bit when both sides
// quantize activations identically.
//
// Differences from the reference quantizers (QuantizeQ8_0/QuantizeQ8_1):
//
//   - rounding: _mm256_round_ps(v, _MM_ROUND_NEAREST) rounds half to even;
//     the reference uses roundf, half away from zero (x*id = 2.5 gives 2,
//     not 3);
//   - inverse scale: id = 127/amax, not 1/(amax/127), which can differ in
//     the last bit and so move a value across a rounding boundary;
//   - amax: a tree of _mm256_max_ps over 8 lanes (a > b ? a : b per lane),
//     which matters only for NaN inputs;
//   - conversion: cvtps2dq then saturating packs, so NaN gives -128 and
//     nothing wraps;
//   - the half scale d uses F16C (F32ToF16), equal to ggml's portable
//     conversion except in NaN payloads.
//
// Q8_K has no AVX2 quantizer in llama.cpp: QuantizeActQ8_K is QuantizeQ8_K.
// (The AVX2 "repack" path for Q4_K weights quantizes 4 rows at a time with
// ggml_quantize_mat_q8_K_4x8, interleaving blocks; its values equal these
// except when a block holds both +amax and -amax, where it may pick the
// opposite sign for d and every q. Products d_w*d_a*q are then equal, so dot
// products agree. Checked against the haswell library on the gen.h inputs:
// 4256 blocks, 352 sign flips, no other difference; its Q8_0 twin,
// ggml_quantize_mat_q8_0_4x8, matched quantize_row_q8_0 byte for byte.)

// maxAbsAVX returns max |x[0:32]| computed as the AVX2 code does: four 8-lane
// vectors folded with max_ps (lane-wise a > b ? a : b), then the 8 lanes
// folded 8 -> 4 -> 2 -> 1 in the same order as the movehl/movehdup sequence.
func maxAbsAVX(x []float32) float32 {
	_ = x[31]
	mx := func(a, b float32) float32 {
		if a > b {
			return a
		}
		return b
	}
	var m [8]float32
	for k := 0; k < 8; k++ {
		m[k] = fabsf(x[k])
	}
	for v := 1; v < 4; v++ {
		for k := 0; k < 8; k++ {
			m[k] = mx(m[k], fabsf(x[8*v+k]))
		}
	}
	var m4 [4]float32
	for k := 0; k < 4; k++ {
		m4[k] = mx(m[4+k], m[k]) // _mm_max_ps(high128, low128)
	}
	m4[0] = mx(m4[0], m4[2]) // _mm_max_ps(max4, movehl(max4))
	m4[1] = mx(m4[1], m4[3])
	return mx(m4[0], m4[1]) // _mm_max_ss(max4, movehdup(max4))
}

// actQuant32 quantizes one 32-element block as the AVX2 code: returns d and
// writes the 32 quants to qs; sum is the int32 sum of the unsaturated quants.
func actQuant32(x []float32, qs []byte) (d float32, sum int32) {
	maxScalar := maxAbsAVX(x)
	d = maxScalar / 127
	var id float32
	if maxScalar != 0 {
		id = 127 / maxScalar
	}
	for j := 0; j < 32; j++ {
		v := cvtps2dq(roundEven(x[j] * id))
		qs[j] = byte(sat8(v))
		sum += v // int32, wrapping like _mm256_add_epi32
	}
	return d, sum
}

// QuantizeActQ8_0 quantizes an activation row to Q8_0 exactly as llama.cpp's
// x86 AVX2 quantize_row_q8_0. Whole blocks only (panics otherwise).
func QuantizeActQ8_0(x []float32, dst []byte) {
	nb := blocks("Q8_0", len(dst), len(x), QK8_0, BlockBytesQ8_0)
	for i := 0; i < nb; i++ {
		y := dst[i*BlockBytesQ8_0 : (i+1)*BlockBytesQ8_0]
		d, _ := actQuant32(x[i*QK8_0:(i+1)*QK8_0], y[2:34])
		putF16(y, d)
	}
}

// QuantizeActQ8_1 quantizes an activation row to Q8_1 exactly as llama.cpp's
// x86 AVX2 quantize_row_q8_1: as QuantizeActQ8_0, plus s = half(d * sum)
// where sum adds the int32 quants before saturation (identical for finite
// input) and d is the unrounded float32 scale.
func QuantizeActQ8_1(x []float32, dst []byte) {
	nb := blocks("Q8_1", len(dst), len(x), QK8_1, BlockBytesQ8_1)
	for i := 0; i < nb; i++ {
		y := dst[i*BlockBytesQ8_1 : (i+1)*BlockBytesQ8_1]
		d, sum := actQuant32(x[i*QK8_1:(i+1)*QK8_1], y[4:36])
		putF16(y, d)
		putF16(y[2:], d*float32(sum))
	}
}

// QuantizeActQ8_K quantizes an activation row to Q8_K as llama.cpp's x86 CPU
// backend does (it calls the reference quantizer; see QuantizeQ8_K).
func QuantizeActQ8_K(x []float32, dst []byte) { QuantizeQ8_K(x, dst) }
