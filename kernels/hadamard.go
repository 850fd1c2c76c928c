package kernels

import "math"

// llama.cpp rotates the keys and values of a quantized KV cache by a
// Walsh-Hadamard matrix before quantizing them (llama_kv_cache's
// attn_rot_k / attn_rot_v, on by default; LLAMA_ATTN_ROT_DISABLE=1 turns
// it off): an orthonormal rotation spreads outlier elements over the
// block, so the per-block scale loses less. Per row of each head:
//
//	K and Q (after RoPE): chunks of nK elements rotated, nK the largest
//	    power of two dividing the head size (64 or more)
//	V, and the attention output rotated back: chunks of 64
//
// only for a quantized type and heads a multiple of 64 (else nothing is
// rotated). Attention is unchanged (q·k and the V mix are rotation
// invariant up to rounding); ggml computes the rotations as the fast
// transform ggml_compute_forward_fwht (a mul_mat hinted
// GGML_HINT_SRC0_IS_HADAMARD), which fwht reproduces bit for bit.

// rotK is the size of the chunks K and Q rows are rotated in (0: none).
func (kv *PagedKV) rotK() int {
	if !kv.Type.Quantized() || kv.HeadDim%64 != 0 {
		return 0
	}
	n := 64
	for kv.HeadDim%(2*n) == 0 {
		n *= 2
	}
	return n
}

// rotV is the size of the chunks V rows and attention outputs are
// rotated in (0: none).
func (kv *PagedKV) rotV() int {
	if !kv.Type.Quantized() || kv.HeadDim%64 != 0 {
		return 0
	}
	return 64
}

// fwht rotates each n-element chunk of x in place as ggml's
// ggml_compute_forward_fwht_f32: the chunk times 1/sqrtf(n), then
// butterflies (u, v) -> (u+v, u-v) over distances 1, 2, 4, ... n/2. Each
// butterfly is one rounded add or subtract (ggml's FMA(u, v, -1) is
// exactly u-v), so the order within a pass does not matter. n is a power
// of two, at least 4 (kiln rotates by 64 or more), dividing len(x).
func fwht(x []float32, n int) {
	if n < 4 {
		panic("kernels: fwht of chunks under 4")
	}
	scale := 1 / float32(math.Sqrt(float64(n)))
	for c := 0; c < len(x); c += n {
		y := x[c : c+n]
		// The scale and the passes at distances 1 and 2, four elements at
		// a time (the same rounded operations as pass after pass).
		for i := 0; i+4 <= n; i += 4 {
			q := (*[4]float32)(y[i : i+4])
			s0, s1, s2, s3 := q[0]*scale, q[1]*scale, q[2]*scale, q[3]*scale
			a0, a1, a2, a3 := s0+s1, s0-s1, s2+s3, s2-s3
			q[0], q[1], q[2], q[3] = a0+a2, a1+a3, a0-a2, a1-a3
		}
		for l := 4; l < n; l <<= 1 {
			for i := 0; i < n; i += 2 * l {
				a, b := y[i:i+l], y[i+l:i+2*l]
				for j := range a {
					u, v := a[j], b[j]
					a[j], b[j] = u+v, u-v
				}
			}
		}
	}
}
