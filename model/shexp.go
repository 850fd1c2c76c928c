package model

import "kiln/kernels"

// The shared expert of qwen2moe, as llama.cpp's qwen2moe graph computes it
// after build_moe_ffn, for the same normalised rows xn:
//
//	g    = SharedGate · xn                   [T][1] (ffn_gate_inp_shexp, mul_mat)
//	g    = silu(g) / g                       the sigmoid, as ggml_silu then ggml_div
//	y    = Down · (silu(Gate · xn) * (Up · xn))   [T][Dim] (build_ffn, SwiGLU)
//	out  = moe_out + y*g                     ggml_mul rounded, then ggml_add
//
// silu of a one-element row is ggml_vec_silu_f32's scalar tail,
// x/(1+expf(-x)) with glibc's expf, not the 8-wide vector exp
// (kernels.SiLUDivScalar).

// denseFFN is the width of the SwiGLU MLP that uses the scratch's gate and
// up buffers: the dense FFN, the shared expert, or 0 (experts only).
func (c *Config) denseFFN() int {
	if !c.MoE() {
		return c.FFN
	}
	return c.SharedFFN
}

// sharedExpert adds layer l's gated shared expert of the T rows in s.xn to
// s.proj, which holds the routed experts' sum.
func (m *Model) sharedExpert(l *Layer, T int) {
	c, p, s := &m.Config, m.pool, &m.scratch
	ms := &s.moe
	D, F := c.Dim, c.SharedFFN
	ms.shGate = grow(ms.shGate, T)
	ms.shOut = grow(ms.shOut, T*D)

	p.MatMul(ms.shGate, &l.SharedGate, s.xn, T)
	for i, g := range ms.shGate {
		ms.shGate[i] = kernels.SiLUDivScalar(g)
	}

	s.gateUp = [2]kernels.MatMulOp{{Dst: s.gate, W: &l.Shared.Gate}, {Dst: s.up, W: &l.Shared.Up}}
	p.MatMuls(s.xn, T, s.gateUp[:])
	kernels.SiLUMulRows(p, s.gate, s.up, T, F)
	p.MatMul(ms.shOut, &l.Shared.Down, s.gate, T)

	for i := 0; i < T; i++ {
		g := ms.shGate[i]
		dst, y := s.proj[i*D:(i+1)*D], ms.shOut[i*D:(i+1)*D]
		for d := range dst {
			dst[d] += float32(y[d] * g)
		}
	}
}
