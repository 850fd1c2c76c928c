package synth

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
)

// Tensor is one entry of a synthetic model's tensor directory and the rule
// that fills it.
type Tensor struct {
	Name  string
	Shape []uint64 // ggml order: Shape[0] is the row length (input dimension)

	// Values drawn i.i.d. from N(Mean, Std^2), unless Fixed is set.
	Mean, Std float64
	Fixed     []float32 // exact contents (rope_freqs), len = product of Shape
}

// Rows is the number of rows (product of Shape[1:]).
func (t *Tensor) Rows() int {
	n := 1
	for _, d := range t.Shape[1:] {
		n *= int(d)
	}
	return n
}

// Tensors is the tensor directory of s (after defaults): names and ggml
// shapes as llama.cpp's converters write them for s.Arch, and the
// distribution each is drawn from (see the package doc for the scales).
// s.VocabSize must be set.
//
//	rope_freqs.weight            [headDim/2]            llama with RopeScaling
//	token_embd.weight            [dim, vocab]
//	blk.N.attn_norm.weight       [dim]
//	blk.N.attn_q.weight          [dim, heads*headDim]   (+ .bias [heads*headDim] for qwen2)
//	blk.N.attn_k.weight          [dim, kvHeads*headDim] (+ .bias for qwen2)
//	blk.N.attn_v.weight          [dim, kvHeads*headDim] (+ .bias for qwen2)
//	blk.N.attn_q_norm.weight     [headDim]              qwen3, qwen3moe ([heads*headDim] olmoe)
//	blk.N.attn_k_norm.weight     [headDim]              qwen3, qwen3moe ([kvHeads*headDim] olmoe)
//	blk.N.attn_output.weight     [heads*headDim, dim]
//	blk.N.ffn_norm.weight        [dim]
//	blk.N.ffn_gate.weight        [dim, ffn]             dense
//	blk.N.ffn_up.weight          [dim, ffn]             dense
//	blk.N.ffn_down.weight        [ffn, dim]             dense
//	blk.N.ffn_gate_inp.weight    [dim, experts]         experts: the router
//	blk.N.ffn_gate_exps.weight   [dim, effn, experts]   experts (effn = ExpertFFN)
//	blk.N.ffn_up_exps.weight     [dim, effn, experts]   experts
//	blk.N.ffn_down_exps.weight   [effn, dim, experts]   experts
//	blk.N.ffn_gate_inp_shexp.weight [dim]               qwen2moe: the shared expert's gate
//	blk.N.ffn_gate_shexp.weight  [dim, sffn]            qwen2moe (sffn = SharedFFN)
//	blk.N.ffn_up_shexp.weight    [dim, sffn]            qwen2moe
//	blk.N.ffn_down_shexp.weight  [sffn, dim]            qwen2moe
//	output_norm.weight           [dim]
//	output.weight                [dim, vocab]           unless Tied
func (s Spec) Tensors() ([]Tensor, error) {
	if err := s.Validate(); err != nil {
		return nil, err
	}
	s = s.withDefaults()
	if s.VocabSize <= 0 {
		return nil, fmt.Errorf("synth: vocab size not set")
	}
	dim, vocab := uint64(s.Dim), uint64(s.VocabSize)
	qDim := uint64(s.Heads * s.HeadDim)
	kvDim := uint64(s.KVHeads * s.HeadDim)
	ffn, hd := uint64(s.FFN), uint64(s.HeadDim)

	proj := func(fanIn uint64) float64 { return 1 / math.Sqrt(float64(fanIn)) }
	residual := 1.0 // Spec.ResidualScale
	if s.ResidualScale > 0 {
		residual = s.ResidualScale
	}
	// A V bias passes straight through attention (the weights sum to 1) into
	// the residual stream, the same vector at every position: kept small so
	// deep qwen2 models do not drift to one output whatever the input.
	const normStd, qkBiasStd, vBiasStd, logitStd = 0.1, 0.5, 0.1, 2.0
	norm := func(name string, n uint64) Tensor {
		return Tensor{Name: name, Shape: []uint64{n}, Mean: 1, Std: normStd}
	}
	mat := func(name string, in, out uint64, std float64) Tensor {
		return Tensor{Name: name, Shape: []uint64{in, out}, Std: std}
	}

	var ts []Tensor
	if s.RopeScaling != nil {
		ts = append(ts, Tensor{Name: "rope_freqs.weight", Shape: []uint64{hd / 2},
			Fixed: llama3RopeFactors(s.HeadDim, s.RopeTheta, *s.RopeScaling)})
	}
	embStd := 1.0
	if s.Tied {
		// token_embd is also the output matrix: size it for the logits.
		embStd = logitStd / math.Sqrt(float64(dim))
	}
	ts = append(ts, mat("token_embd.weight", dim, vocab, embStd))
	for l := 0; l < s.Layers; l++ {
		p := fmt.Sprintf("blk.%d.", l)
		ts = append(ts, norm(p+"attn_norm.weight", dim))
		ts = append(ts, mat(p+"attn_q.weight", dim, qDim, proj(dim)))
		if s.Arch == "qwen2" || s.Arch == "qwen2moe" {
			ts = append(ts, Tensor{Name: p + "attn_q.bias", Shape: []uint64{qDim}, Std: qkBiasStd})
		}
		ts = append(ts, mat(p+"attn_k.weight", dim, kvDim, proj(dim)))
		if s.Arch == "qwen2" || s.Arch == "qwen2moe" {
			ts = append(ts, Tensor{Name: p + "attn_k.bias", Shape: []uint64{kvDim}, Std: qkBiasStd})
		}
		ts = append(ts, mat(p+"attn_v.weight", dim, kvDim, proj(dim)))
		if s.Arch == "qwen2" || s.Arch == "qwen2moe" {
			ts = append(ts, Tensor{Name: p + "attn_v.bias", Shape: []uint64{kvDim}, Std: vBiasStd})
		}
		if s.Arch == "qwen3" || s.Arch == "qwen3moe" {
			ts = append(ts, norm(p+"attn_q_norm.weight", hd), norm(p+"attn_k_norm.weight", hd))
		}
		if s.Arch == "olmoe" {
			ts = append(ts, norm(p+"attn_q_norm.weight", qDim), norm(p+"attn_k_norm.weight", kvDim))
		}
		ts = append(ts, mat(p+"attn_output.weight", qDim, dim, residual*proj(qDim)))
		ts = append(ts, norm(p+"ffn_norm.weight", dim))
		if s.Experts > 0 {
			// Router logits about N(0, 1) per expert (the normalised input
			// has RMS about 1), so each token's choice is clear-cut. A
			// token's FFN output is a convex combination of ExpertsUsed
			// experts' (weights near 1/k), whose spread is about 1/sqrt(k)
			// of one expert's: ffn_down_exps is sqrt(k) wider, so the
			// branch adds to the stream as much as a dense FFN does (else
			// deep models drift to a few outputs whatever the input).
			ne, effn := uint64(s.Experts), uint64(s.ExpertFFN)
			downStd := residual * proj(effn) * math.Sqrt(float64(s.ExpertsUsed))
			if s.Arch == "qwen2moe" || s.Arch == "olmoe" {
				// Not renormalised: the k chosen weights keep their softmax
				// probabilities, whose sum is well below 1 (about 0.45 for
				// 2 of 8 at these logits, 0.26 for 4 of 60); widen the
				// experts by the inverse so the branch is as large.
				downStd /= topKMass(s.Experts, s.ExpertsUsed)
			}
			ts = append(ts, mat(p+"ffn_gate_inp.weight", dim, ne, proj(dim)))
			ts = append(ts, Tensor{Name: p + "ffn_gate_exps.weight", Shape: []uint64{dim, effn, ne}, Std: proj(dim)})
			ts = append(ts, Tensor{Name: p + "ffn_up_exps.weight", Shape: []uint64{dim, effn, ne}, Std: proj(dim)})
			ts = append(ts, Tensor{Name: p + "ffn_down_exps.weight", Shape: []uint64{effn, dim, ne}, Std: downStd})
			if s.Arch == "qwen2moe" {
				// The shared expert's gate logit about N(0, 1): sigmoid
				// weights spread over (0, 1), none saturated.
				sffn := uint64(s.SharedFFN)
				ts = append(ts, Tensor{Name: p + "ffn_gate_inp_shexp.weight", Shape: []uint64{dim}, Std: proj(dim)})
				ts = append(ts, mat(p+"ffn_gate_shexp.weight", dim, sffn, proj(dim)))
				ts = append(ts, mat(p+"ffn_up_shexp.weight", dim, sffn, proj(dim)))
				ts = append(ts, mat(p+"ffn_down_shexp.weight", sffn, dim, residual*proj(sffn)))
			}
			continue
		}
		ts = append(ts, mat(p+"ffn_gate.weight", dim, ffn, proj(dim)))
		ts = append(ts, mat(p+"ffn_up.weight", dim, ffn, proj(dim)))
		ts = append(ts, mat(p+"ffn_down.weight", ffn, dim, residual*proj(ffn)))
	}
	ts = append(ts, norm("output_norm.weight", dim))
	if !s.Tied {
		ts = append(ts, mat("output.weight", dim, vocab, logitStd/math.Sqrt(float64(dim))))
	}
	return ts, nil
}

// topKMass estimates the expected sum of the k largest of the softmax of n
// i.i.d. N(0, 1) logits (the router's, at the scales above): the mean over
// 256 draws from a fixed seed, so every plan gets the same value.
func topKMass(n, k int) float64 {
	r := rand.New(rand.NewPCG(1, 2))
	p := make([]float64, n)
	var total float64
	const draws = 256
	for range draws {
		var sum float64
		for i := range p {
			p[i] = math.Exp(r.NormFloat64())
			sum += p[i]
		}
		slices.Sort(p)
		var top float64
		for _, v := range p[n-k:] {
			top += v
		}
		total += top / sum
	}
	return total / draws
}
