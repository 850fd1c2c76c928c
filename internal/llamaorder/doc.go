// Package llamaorder is a test-support reference of the exact float
// summation orders llama.cpp's CPU backend (the oracle's build: commit
// 80fb11ac, haswell variant, AVX2+FMA) uses in its matrix products. It is
// slow, scalar and allocates; it exists so that kiln's fast kernels can be
// brought to the same orders and checked bit for bit.
//
// Verified against dumps of llama.cpp's intermediate tensors: with these
// products (and kiln's RoPE, flash attention, RMSNorm and SwiGLU, which
// already match), kiln's logits on every synthetic golden in
// testdata/oracle equal llama.cpp's to ~1e-7 in log-probability.
//
// The recipes (T = any number of activation rows; llama.cpp picks by the
// weight matrix, not the batch, for batches of >= 2 rows, with one
// exception: its repacked GEMMs (Q4_0, Q4_K with Rows%8 == 0) take
// activation rows 4 at a time and run the last T%4 rows, and single-token
// decode, through gemv kernels of another order; kiln keeps the GEMM order
// for every row, because a row's result must not depend on its batch.
// Measured on a smollm2-135m-shaped Q4_K model: positions in whole groups
// of 4 agree to 1e-7, the last T%4 to 2e-2..6e-2):
//
//	F32/F16/BF16, Rows%4 == 0  llamafile tinyBLAS: activations converted to
//	                           the weight type; 8 float32 lanes, lane j a fused
//	                           chain over elements k ≡ j (mod 8); hsum8.
//	F32/F16, Rows%4 != 0       ggml_vec_dot_f32/f16: 4x8 lanes over steps of
//	                           32; (a0+a2)+(a1+a3); fold high 4 lanes onto low;
//	                           (t0+t1)+(t2+t3); tail fused scalar.
//	BF16, Rows%4 != 0          ggml_vec_dot_bf16: c=(c1+c3)+(c2+c4), g=hi+lo,
//	                           (g0+g2)+(g1+g3); tail in double. (F16's tail
//	                           is summed in double too.)
//	Q8_0, Q5_0; Q4_0 with      per block, lane j = fma(dw*dx, float(int dot of
//	Rows%8 != 0                elements 4j..4j+3), lane j); hsum8.
//	Q4_0, Rows%8 == 0          repacked q4_0_8x8 GEMM: acc = fma(float(block
//	                           int sum), dw*dx, acc).
//	Q4_K, Rows%8 == 0          repacked q4_K_8x8 GEMM: per 64 elements
//	                           acc = fma(float(sc0*isum0+sc1*isum1), d*d8, acc),
//	                           accMin likewise with mins and bsums; acc-accMin.
//	Q4_K, Rows%8 != 0; Q6_K    ggml_vec_dot_q4_K/q6_K_q8_K AVX2 lane layouts.
//	Q4_1, Q5_1 (every shape)   ggml_vec_dot_q4_1/q5_1_q8_1: per block
//	                           summs = fma(m_w, s_x, summs), lane j =
//	                           fma(dw*dx, float(I_j), lane j); hsum8 + summs.
//	Q5_K (every shape)         ggml_vec_dot_q5_K_q8_K: lanes as Q4_K's vec
//	                           dot into one 8-lane FMA chain, summs =
//	                           fma(-dx*dmin, float(exact min sum), summs);
//	                           hsum8 + summs.
//
// where hsum8(l) = ((l0+l4)+(l2+l6)) + ((l1+l5)+(l3+l7)) (hsum_float_8).
package llamaorder
