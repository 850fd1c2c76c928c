package kernels

import "kiln/kernels/simd"

// exp32 is ggml's vectorised ggml_v_expf for one element (simd.VExpf):
// e^x within about 2 ulp, the exp of llama.cpp's AVX2 softmax and SiLU.
func exp32(x float32) float32 { return simd.VExpf(x) }

// expf is glibc's expf bit for bit (simd.Expf): ggml's flash attention
// rescales its running sums with it, and its scalar tails use it.
func expf(x float32) float32 { return simd.Expf(x) }
