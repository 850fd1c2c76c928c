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
			wGate:    r.matrix(p + "ffn_gate.weight"),
			wUp:      r.matrix(p + "ffn_up.weight"),
			wDown:    r.matrix(p + "ffn_down.weight"),
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
			if c.QKNorm {
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
			// SwiGLU MLP.
			xn = rmsnorm(x, l.ffnNorm, c.NormEps)
			g := matvec(l.wGate, xn)
			u := matvec(l.wUp, xn)
			for i := range g {
				g[i] = g[i] / (1 + math.Exp(-g[i])) * u[i]
			}
			d := matvec(l.wDown, g)
			for i := range x {
				x[i] += d[i]
			}
		}
		out = append(out, matvec(m.output, rmsnorm(x, m.norm, c.NormEps)))
	}
	return out
}

// rope rotates each head of x ([heads][HeadDim]) by its position.
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
