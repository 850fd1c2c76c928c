package model

import "kiln/kernels"

// Mixture-of-experts FFN, as llama.cpp's build_moe_ffn computes it for
// qwen3moe, qwen2moe, olmoe and llama (Mixtral) with softmax gating:
//
//	logits  = Router · xn                      [T][Experts] (ffn_gate_inp: llama-quantize keeps it F32; mul_mat's order)
//	probs   = softmax(logits)                  over all experts (kernels.Softmax: ggml_soft_max's bits)
//	ids     = argsort(probs, descending)[:k]   k = ExpertsUsed; ties: the lower expert first
//	w       = probs[ids]                       [T][k]
//	w      /= max(sum(w), 2^-14)               if ExpertNorm (qwen3moe, llama; ggml_sum_rows in float64, clamp, div)
//	y_j     = Down_ids[j] · (silu(Gate_ids[j] · xn) * (Up_ids[j] · xn))
//	out     = ((y_0*w_0 + y_1*w_1) + y_2*w_2) + ...   ggml_mul, then the ggml_add chain in slot order
//
// Rows are grouped per expert and each expert's matrices multiply its
// group with the ordinary MatMul kernels (in mul_mat_id's orders:
// Matrix.MulMatID), all experts of a step in one Pool.MulMatID call per
// projection; every output is one dot of one row, so a row's result does
// not depend on which rows share its batch or its expert's group.

// moeScratch holds the MoE activations, grown with the batch.
type moeScratch struct {
	logits  []float32 // [T][Experts] router logits, then probabilities
	ids     []int32   // [T][k] chosen experts, by slot
	weights []float32 // [T][k] their weights
	count   []int     // [Experts] rows routed to each expert
	start   []int     // [Experts+1] offsets of each expert's group in grouped order
	rowOf   []int32   // [T*k] the input row of each grouped position: (row, slot) pairs grouped by expert, rows ascending within a group
	pos     []int32   // [T*k] the grouped position of pair row*k+slot
	gate    []float32 // [T*k][ExpertFFN] in grouped order
	up      []float32 // [T*k][ExpertFFN]
	out     []float32 // [T*k][Dim] y_j of every row and slot, in grouped order
	ops     []kernels.ExpertOp
	shGate  []float32 // [T] the shared expert's gate (shexp.go)
	shOut   []float32 // [T][Dim] the shared expert's output
}

func (s *moeScratch) ensure(c *Config, t int) {
	k := c.ExpertsUsed
	s.logits = grow(s.logits, t*c.Experts)
	if cap(s.ids) < t*k {
		s.ids, s.rowOf, s.pos = make([]int32, t*k), make([]int32, t*k), make([]int32, t*k)
	}
	s.ids, s.rowOf, s.pos = s.ids[:t*k], s.rowOf[:t*k], s.pos[:t*k]
	s.weights = grow(s.weights, t*k)
	if len(s.count) != c.Experts {
		s.count, s.start = make([]int, c.Experts), make([]int, c.Experts+1)
		s.ops = make([]kernels.ExpertOp, 0, 2*c.Experts)
	}
	s.gate = grow(s.gate, t*k*c.ExpertFFN)
	s.up = grow(s.up, t*k*c.ExpertFFN)
	s.out = grow(s.out, t*k*c.Dim)
}

// route turns one row's router probabilities (already softmaxed, len =
// Experts) into its k = len(ids) experts and weights, as build_moe_ffn
// does after ggml_soft_max: ggml_argsort descending then the first k
// (ties keep the lower expert first: llama.cpp's std::sort is an insertion
// sort, so stable, up to 16 experts; beyond that its order among exactly
// equal probabilities is unspecified), ggml_get_rows of the probabilities,
// and with norm ggml_sum_rows (float64 sum, rounded to float32), a clamp to
// 6.103515625e-5 (the smallest normal half) and ggml_div.
func route(probs []float32, norm bool, ids []int32, weights []float32) {
	k := len(ids)
	// Selection: slot j takes the best expert not yet taken; a strictly
	// greater probability wins, so among equals the lowest index does.
	n := 0
	for e, p := range probs {
		// Insert e into the sorted top list if it beats the last kept one.
		if n == k && !(p > probs[ids[k-1]]) {
			continue
		}
		j := min(n, k-1)
		for j > 0 && p > probs[ids[j-1]] {
			ids[j] = ids[j-1]
			j--
		}
		ids[j] = int32(e)
		n = min(n+1, k)
	}
	for j, e := range ids {
		weights[j] = probs[e]
	}
	if !norm {
		return
	}
	var sum float64
	for _, w := range weights {
		sum += float64(w)
	}
	s := max(float32(sum), 6.103515625e-5)
	for j := range weights {
		weights[j] /= s
	}
}

// moeFFN writes into s.proj the mixture-of-experts FFN of layer l for the
// T normalised rows in s.xn.
func (m *Model) moeFFN(l *Layer, T int) {
	c, p, s := &m.Config, m.pool, &m.scratch
	ms := &s.moe
	ms.ensure(c, T)
	k, E, D, F := c.ExpertsUsed, c.Experts, c.Dim, c.ExpertFFN

	// Router and routing, row by row.
	p.MatMul(ms.logits, &l.Router, s.xn, T)
	for i := 0; i < T; i++ {
		probs := ms.logits[i*E : (i+1)*E]
		kernels.Softmax(probs)
		route(probs, c.ExpertNorm, ms.ids[i*k:(i+1)*k], ms.weights[i*k:(i+1)*k])
	}

	// Group (row, slot) pairs by expert: a counting sort, rows ascending
	// within each group.
	clear(ms.count)
	for _, e := range ms.ids {
		ms.count[e]++
	}
	ms.start[0] = 0
	for e := 0; e < E; e++ {
		ms.start[e+1] = ms.start[e] + ms.count[e]
	}
	clear(ms.count) // now: filled so far
	for rs, e := range ms.ids {
		g := ms.start[e] + ms.count[e]
		ms.rowOf[g], ms.pos[rs] = int32(rs/k), int32(g)
		ms.count[e]++
	}

	// Every expert over its group in one MulMatID each for gate and up
	// (each row of xn converted once, shared by the gate and up of its k
	// experts) and for down (over the SwiGLU rows, already grouped); the
	// outputs stay in grouped order.
	ms.ops = ms.ops[:0]
	for e := 0; e < E; e++ {
		a, b := ms.start[e], ms.start[e+1]
		if a == b {
			continue
		}
		x := &l.Experts[e]
		ms.ops = append(ms.ops,
			kernels.ExpertOp{Dst: ms.gate[a*F : b*F], W: &x.Gate, Rows: ms.rowOf[a:b]},
			kernels.ExpertOp{Dst: ms.up[a*F : b*F], W: &x.Up, Rows: ms.rowOf[a:b]})
	}
	p.MulMatID(s.xn[:T*D], T, ms.ops)
	kernels.SiLUMulRows(p, ms.gate[:T*k*F], ms.up[:T*k*F], T*k, F)
	ms.ops = ms.ops[:0]
	for e := 0; e < E; e++ {
		a, b := ms.start[e], ms.start[e+1]
		if a == b {
			continue
		}
		ms.ops = append(ms.ops, kernels.ExpertOp{Dst: ms.out[a*D : b*D], W: &l.Experts[e].Down, First: a, N: b - a})
	}
	p.MulMatID(ms.gate[:T*k*F], T*k, ms.ops)
	clear(ms.ops)

	// Weighted sum in slot order: each product rounded, then added
	// (ggml_mul, then ggml_add), never fused.
	for i := 0; i < T; i++ {
		dst := s.proj[i*D : (i+1)*D]
		for j := 0; j < k; j++ {
			g := int(ms.pos[i*k+j])
			y, w := ms.out[g*D:(g+1)*D], ms.weights[i*k+j]
			if j == 0 {
				for d := range dst {
					dst[d] = float32(y[d] * w)
				}
				continue
			}
			for d := range dst {
				dst[d] += float32(y[d] * w)
			}
		}
	}
}
