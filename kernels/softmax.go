package kernels

// Softmax replaces x by softmax(x) in place, bit for bit as llama.cpp's
// AVX2 build computes ggml_soft_max without scale or mask
// (ggml_compute_forward_soft_max_f32, ggml_vec_soft_max_f32): subtract the
// float32 max; in whole runs of 8, e^ by ggml_v_expf (exp32) and the run's
// float32 sum by _mm256's tree ((e0+e4)+(e2+e6)) + ((e1+e5)+(e3+e7)) added
// to a float64 total; the last len%8 by glibc's expf, each added to the
// total; then multiply by float32(1/total). The MoE router's weights come
// from it (moe.go), so its rounding is llama.cpp's. An empty x is left as
// is; a row of all -Inf becomes NaN, as in ggml.
func Softmax(x []float32) {
	if len(x) == 0 {
		return
	}
	mx := x[0]
	for _, v := range x[1:] {
		if v > mx {
			mx = v
		}
	}
	var sum float64
	i := 0
	for ; i+8 <= len(x); i += 8 {
		e := x[i : i+8 : i+8]
		for j := range e {
			e[j] = exp32(e[j] - mx)
		}
		s := (float32(e[0]+e[4]) + float32(e[2]+e[6])) + (float32(e[1]+e[5]) + float32(e[3]+e[7]))
		sum += float64(s)
	}
	for ; i < len(x); i++ {
		e := expf(x[i] - mx)
		x[i] = e
		sum += float64(e)
	}
	inv := float32(1 / sum)
	for i := range x {
		x[i] *= inv
	}
}
