package reference

import (
	"fmt"
	"math"

	"kiln/gguf"
	"kiln/model"
	"kiln/quant"
)

// Model holds every weight of a GGUF model dequantized to float64.
type Model struct {
	Config model.Config
	embed  [][]float64 // [Vocab][Dim]
	layers []layer
	norm   []float64   // [Dim]
	output [][]float64 // [Vocab][Dim]
	freqs  []float64   // [HeadDim/2] rope frequency divisors; nil = 1
}

type layer struct {
	attnNorm, ffnNorm []float64
	wq, wk, wv, wo    [][]float64 // [out][in]
	bq, bk, bv        []float64
	qNorm, kNorm      []float64
	wGate, wUp, wDown [][]float64
	router            [][]float64 // [Experts][Dim]; nil for a dense FFN
	experts           []expert
	shGate            []float64 // [Dim] qwen2moe's shared-expert gate; nil: none
	shared            expert    // qwen2moe's shared expert
}

// expert is one expert's SwiGLU of a mixture-of-experts layer.
type expert struct {
	wGate, wUp, wDown [][]float64
}

// Load dequantizes all of f's weights. Only for small test models.
func Load(f *gguf.File) (*Model, error) {
	cfg, err := model.ConfigFromGGUF(f)
	if err != nil {
		return nil, err
	}
	r := &reader{f: f}
	m := &Model{}
	m.embed = r.matrix("token_embd.weight")
	cfg.Vocab = len(m.embed)
	m.norm = r.vector("output_norm.weight")
	if _, ok := f.Tensor("output.weight"); ok {
		m.output = r.matrix("output.weight")
	} else {
		cfg.Tied = true
		m.output = m.embed
	}
	if _, ok := f.Tensor("rope_freqs.weight"); ok {
		m.freqs = r.vector("rope_freqs.weight")
	}
	for i := 0; i < cfg.Layers; i++ {
		p := fmt.Sprintf("blk.%d.", i)
		l := layer{
			attnNorm: r.vector(p + "attn_norm.weight"),
			ffnNorm:  r.vector(p + "ffn_norm.weight"),
			wq:       r.matrix(p + "attn_q.weight"),
			wk:       r.matrix(p + "attn_k.weight"),
			wv:       r.matrix(p + "attn_v.weight"),
			wo:       r.matrix(p + "attn_output.weight"),
		}
		if cfg.MoE() {
			l.router = r.matrix(p + "ffn_gate_inp.weight")
			gate, up := r.experts(p+"ffn_gate_exps.weight"), r.experts(p+"ffn_up_exps.weight")
			down := r.experts(p + "ffn_down_exps.weight")
			for e := range down {
				l.experts = append(l.experts, expert{gate[e], up[e], down[e]})
			}
			if cfg.SharedFFN > 0 {
				l.shGate = r.vector(p + "ffn_gate_inp_shexp.weight")
				l.shared = expert{r.matrix(p + "ffn_gate_shexp.weight"), r.matrix(p + "ffn_up_shexp.weight"), r.matrix(p + "ffn_down_shexp.weight")}
			}
		} else {
			l.wGate, l.wUp, l.wDown = r.matrix(p+"ffn_gate.weight"), r.matrix(p+"ffn_up.weight"), r.matrix(p+"ffn_down.weight")
		}
		if cfg.QKVBias {
			l.bq, l.bk, l.bv = r.vector(p+"attn_q.bias"), r.vector(p+"attn_k.bias"), r.vector(p+"attn_v.bias")
		}
		if cfg.QKNorm {
			l.qNorm, l.kNorm = r.vector(p+"attn_q_norm.weight"), r.vector(p+"attn_k_norm.weight")
		}
		m.layers = append(m.layers, l)
	}
	if r.err != nil {
		return nil, r.err
	}
	m.Config = cfg
	return m, nil
}

type reader struct {
	f   *gguf.File
	err error
}

func (r *reader) floats(name string) ([]float64, []uint64) {
	if r.err != nil {
		return nil, nil
	}
	t, ok := r.f.Tensor(name)
	if !ok {
		r.err = fmt.Errorf("reference: tensor %s missing", name)
		return nil, nil
	}
	n := int(t.Elements())
	buf := make([]float32, n)
	if err := quant.Dequantize(t.Type, r.f.Data(t), buf); err != nil {
		r.err = fmt.Errorf("reference: %s: %w", name, err)
		return nil, nil
	}
	out := make([]float64, n)
	for i, v := range buf {
		out[i] = float64(v)
	}
	return out, t.Shape
}

func (r *reader) vector(name string) []float64 {
	v, _ := r.floats(name)
	return v
}

func (r *reader) matrix(name string) [][]float64 {
	v, shape := r.floats(name)
	if v == nil {
		return nil
	}
	cols := int(shape[0])
	rows := len(v) / cols
	out := make([][]float64, rows)
	for i := range out {
		out[i] = v[i*cols : (i+1)*cols]
	}
	return out
}

// experts splits a 3-D expert tensor, ggml shape [cols, rows, n], into
// its n [rows][cols] matrices.
func (r *reader) experts(name string) [][][]float64 {
	v, shape := r.floats(name)
	if v == nil {
		return nil
	}
	if len(shape) != 3 {
		r.err = fmt.Errorf("reference: %s has shape %v, want 3 dimensions", name, shape)
		return nil
	}
	cols, rows := int(shape[0]), int(shape[1])
	out := make([][][]float64, shape[2])
	for e := range out {
		out[e] = make([][]float64, rows)
		for i := range out[e] {
			off := (e*rows + i) * cols
			out[e][i] = v[off : off+cols]
		}
	}
	return out
}

// Logits runs tokens through the model from position 0 and returns the
// logits after every position: [len(tokens)][Vocab].
func (m *Model) Logits(tokens []int32) [][]float64 {
	c := m.Config
	hd := c.HeadDim
	group := c.Heads / c.KVHeads
	// keys[l][t] and vals[l][t]: [KVDim] for layer l, position t (contiguous cache).
	keys := make([][][]float64, c.Layers)
	vals := make([][][]float64, c.Layers)
	out := make([][]float64, 0, len(tokens))
	for pos, tok := range tokens {
		x := append([]float64(nil), m.embed[tok]...)
		for li := range m.layers {
			l := &m.layers[li]
			// Attention block: norm, projections, optional biases and QK norms, RoPE.
			xn := rmsnorm(x, l.attnNorm, c.NormEps)
			q := addBias(matvec(l.wq, xn), l.bq)
			k := addBias(matvec(l.wk, xn), l.bk)
			v := addBias(matvec(l.wv, xn), l.bv)
			if c.QKNormWhole {
				q, k = rmsnorm(q, l.qNorm, c.NormEps), rmsnorm(k, l.kNorm, c.NormEps)
			} else if c.QKNorm {
				for h := 0; h < c.Heads; h++ {
					copy(q[h*hd:(h+1)*hd], rmsnorm(q[h*hd:(h+1)*hd], l.qNorm, c.NormEps))
				}
				for h := 0; h < c.KVHeads; h++ {
					copy(k[h*hd:(h+1)*hd], rmsnorm(k[h*hd:(h+1)*hd], l.kNorm, c.NormEps))
				}
			}
			m.rope(q, c.Heads, pos)
			m.rope(k, c.KVHeads, pos)
			keys[li] = append(keys[li], k)
			vals[li] = append(vals[li], v)
			// Causal softmax attention of each query head over positions 0..pos.
			att := make([]float64, c.QDim())
			scale := 1 / math.Sqrt(float64(hd))
			for h := 0; h < c.Heads; h++ {
				kh := h / group
				qh := q[h*hd : (h+1)*hd]
				scores := make([]float64, pos+1)
				maxS := math.Inf(-1)
				for t := 0; t <= pos; t++ {
					scores[t] = dot(qh, keys[li][t][kh*hd:(kh+1)*hd]) * scale
					maxS = math.Max(maxS, scores[t])
				}
				sum := 0.0
				for t := range scores {
					scores[t] = math.Exp(scores[t] - maxS)
					sum += scores[t]
				}
				for t := range scores {
					p := scores[t] / sum
					vt := vals[li][t][kh*hd : (kh+1)*hd]
					for i := 0; i < hd; i++ {
						att[h*hd+i] += p * vt[i]
					}
				}
			}
			o := matvec(l.wo, att)
			for i := range x {
				x[i] += o[i]
			}
			// SwiGLU MLP, or the router's weighted sum of the chosen experts'.
			xn = rmsnorm(x, l.ffnNorm, c.NormEps)
			if l.router == nil {
				d := swiglu(l.wGate, l.wUp, l.wDown, xn)
				for i := range x {
					x[i] += d[i]
				}
				continue
			}
			ids, w := route(matvec(l.router, xn), c.ExpertsUsed, c.ExpertNorm)
			for j, e := range ids {
				d := swiglu(l.experts[e].wGate, l.experts[e].wUp, l.experts[e].wDown, xn)
				for i := range x {
					x[i] += w[j] * d[i]
				}
			}
			if l.shGate != nil {
				// qwen2moe: the shared expert, scaled by sigmoid(shGate · xn).
				g := 1 / (1 + math.Exp(-dot(l.shGate, xn)))
				d := swiglu(l.shared.wGate, l.shared.wUp, l.shared.wDown, xn)
				for i := range x {
					x[i] += g * d[i]
				}
			}
		}
		out = append(out, matvec(m.output, rmsnorm(x, m.norm, c.NormEps)))
	}
	return out
}

// rope rotates each head of x ([heads][HeadDim]) by its position.
// swiglu is Down · (silu(Gate · x) * (Up · x)).
func swiglu(gate, up, down [][]float64, x []float64) []float64 {
	g, u := matvec(gate, x), matvec(up, x)
	for i := range g {
		g[i] = g[i] / (1 + math.Exp(-g[i])) * u[i]
	}
	return matvec(down, g)
}

// route picks the k experts of highest softmax probability (ties: the
// lower index) and their probabilities, renormalised to sum 1 if norm.
func route(logits []float64, k int, norm bool) ([]int, []float64) {
	probs := make([]float64, len(logits))
	mx, sum := math.Inf(-1), 0.0
	for _, v := range logits {
		mx = math.Max(mx, v)
	}
	for i, v := range logits {
		probs[i] = math.Exp(v - mx)
		sum += probs[i]
	}
	taken := make([]bool, len(probs))
	ids, w, total := make([]int, k), make([]float64, k), 0.0
	for j := range ids {
		best := -1
		for e, p := range probs {
			if !taken[e] && (best < 0 || p > probs[best]) {
				best = e
			}
		}
		taken[best] = true
		ids[j], w[j] = best, probs[best]/sum
		total += w[j]
	}
	if norm {
		for j := range w {
			w[j] /= total
		}
	}
	return ids, w
}

func (m *Model) rope(x []float64, heads, pos int) {
	c := m.Config
	hd := c.HeadDim
	for h := 0; h < heads; h++ {
		v := x[h*hd : (h+1)*hd]
		for i := 0; i < hd/2; i++ {
			theta := float64(pos) * float64(c.RopeFreqScale) * math.Pow(float64(c.RopeBase), -2*float64(i)/float64(hd))
			if m.freqs != nil {
				theta /= m.freqs[i]
			}
			a, b := 2*i, 2*i+1 // llama: adjacent pairs
			if c.RopeNeox {
				a, b = i, i+hd/2
			}
			cos, sin := math.Cos(theta), math.Sin(theta)
			v[a], v[b] = v[a]*cos-v[b]*sin, v[a]*sin+v[b]*cos
		}
	}
}

func rmsnorm(x, w []float64, eps float32) []float64 {
	ss := 0.0
	for _, v := range x {
		ss += v * v
	}
	s := 1 / math.Sqrt(ss/float64(len(x))+float64(eps))
	out := make([]float64, len(x))
	for i := range x {
		out[i] = x[i] * s * w[i]
	}
	return out
}

func matvec(w [][]float64, x []float64) []float64 {
	out := make([]float64, len(w))
	for r, row := range w {
		out[r] = dot(row, x)
	}
	return out
}

func dot(a, b []float64) float64 {
	s := 0.0
	for i := range a {
		s += a[i] * b[i]
	}
	return s
}

func addBias(x, b []float64) []float64 {
	for i := range b {
		x[i] += b[i]
	}
	return x
}

// LogSoftmax returns log-probabilities of logits.
func LogSoftmax(logits []float64) []float64 {
	maxL := math.Inf(-1)
	for _, v := range logits {
		maxL = math.Max(maxL, v)
	}
	sum := 0.0
	for _, v := range logits {
		sum += math.Exp(v - maxL)
	}
	lse := maxL + math.Log(sum)
	out := make([]float64, len(logits))
	for i, v := range logits {
		out[i] = v - lse
	}
	return out
}
