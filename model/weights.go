package model

import (
	"fmt"
	"unsafe"

	"kiln/gguf"
	"kiln/kernels"
	"kiln/quant"
)

// Layer holds one transformer block's weights. Matrices are views into the
// mapped file; 1-D tensors are F32 views (or dequantized copies when a file
// stores them in another type).
type Layer struct {
	AttnNorm            []float32      // [Dim]
	Q                   kernels.Matrix // [QDim rows][Dim cols]
	K, V                kernels.Matrix // [KVDim][Dim]
	O                   kernels.Matrix // [Dim][QDim]
	QBias, KBias, VBias []float32      // [QDim], [KVDim], [KVDim]; qwen2 only
	QNorm, KNorm        []float32      // [HeadDim]; qwen3 only ([QDim], [KVDim] for olmoe)
	FFNNorm             []float32      // [Dim]
	Gate, Up            kernels.Matrix // [FFN][Dim]; dense FFN only
	Down                kernels.Matrix // [Dim][FFN]; dense FFN only

	// Mixture of experts (Config.MoE): the router and each expert's
	// SwiGLU, views into the 3-D expert tensors (one contiguous 2-D
	// slice per expert).
	Router  kernels.Matrix // ffn_gate_inp: [Experts][Dim]
	Experts []Expert       // [Experts]

	// Shared expert (Config.SharedFFN > 0, qwen2moe): a SwiGLU MLP every
	// token takes, scaled by sigmoid(SharedGate · x).
	SharedGate kernels.Matrix // ffn_gate_inp_shexp: [1][Dim] (GGUF: 1-D [Dim])
	Shared     Expert         // ffn_{gate,up,down}_shexp: [SharedFFN][Dim], [Dim][SharedFFN]
}

// Expert is one expert's SwiGLU MLP: slices of blk.N.ffn_{gate,up,down}_exps.
type Expert struct {
	Gate, Up kernels.Matrix // [ExpertFFN][Dim]
	Down     kernels.Matrix // [Dim][ExpertFFN]
}

// Weights are all of a model's tensors.
type Weights struct {
	Embed     kernels.Matrix // token_embd.weight: [Vocab][Dim]
	Layers    []Layer
	OutNorm   []float32      // output_norm.weight: [Dim]
	Output    kernels.Matrix // output.weight, or Embed when tied: [Vocab][Dim]
	RopeFreqs []float32      // rope_freqs.weight: [HeadDim/2] divisors of each frequency (llama3 scaling); nil = none
}

// tensorSource is what loadWeights reads: a GGUF file, or a Hugging Face
// folder seen under GGUF tensor names and layouts (hf.go).
type tensorSource interface {
	Tensor(name string) (*gguf.TensorInfo, bool)
	Data(t *gguf.TensorInfo) []byte
}

// loader resolves tensors by name and checks their shapes.
type loader struct {
	f   tensorSource
	err error
}

func (l *loader) tensor(name string, shape ...int) *gguf.TensorInfo {
	if l.err != nil {
		return nil
	}
	t, ok := l.f.Tensor(name)
	if !ok {
		l.err = fmt.Errorf("model: tensor %s is missing from the file", name)
		return nil
	}
	if len(t.Shape) != len(shape) {
		l.err = fmt.Errorf("model: tensor %s has shape %v, want %v", name, t.Shape, shape)
		return nil
	}
	for i, d := range shape {
		if t.Shape[i] != uint64(d) {
			l.err = fmt.Errorf("model: tensor %s has shape %v, want %v", name, t.Shape, shape)
			return nil
		}
	}
	return t
}

// has reports whether the file holds a tensor of that name.
func (l *loader) has(name string) bool { _, ok := l.f.Tensor(name); return ok }

// matrix returns a [rows][cols] weight; GGUF stores it as shape [cols, rows].
func (l *loader) matrix(name string, rows, cols int) kernels.Matrix {
	t := l.tensor(name, cols, rows)
	if t == nil {
		return kernels.Matrix{}
	}
	if !kernels.Supported(t.Type) {
		l.err = fmt.Errorf("model: tensor %s has type %s, which kiln cannot multiply yet (supported: F32, F16, BF16, Q8_0, Q4_0, Q4_1, Q5_0, Q5_1, Q4_K, Q5_K, Q6_K)", name, t.Type)
		return kernels.Matrix{}
	}
	m := kernels.Matrix{Type: t.Type, Rows: rows, Cols: cols, Data: l.f.Data(t)}
	if err := m.Validate(); err != nil {
		l.err = fmt.Errorf("model: tensor %s: %w", name, err)
	}
	return m
}

// experts returns the n [rows][cols] matrices of a 3-D expert tensor,
// which GGUF stores as shape [cols, rows, n]: expert e's matrix is the
// e-th run of rows*RowBytes(cols) bytes.
func (l *loader) experts(name string, rows, cols, n int) []kernels.Matrix {
	t := l.tensor(name, cols, rows, n)
	if t == nil {
		return nil
	}
	if !kernels.Supported(t.Type) {
		l.err = fmt.Errorf("model: tensor %s has type %s, which kiln cannot multiply yet", name, t.Type)
		return nil
	}
	rb, err := t.Type.RowBytes(cols)
	if err != nil {
		l.err = fmt.Errorf("model: tensor %s: %w", name, err)
		return nil
	}
	size := rows * rb
	var expert func(e int) []byte
	if ps, ok := l.f.(interface {
		Parts(*gguf.TensorInfo) [][]byte
	}); ok && ps.Parts(t) != nil {
		// Stacked from one tensor per expert (an HF folder): no copy.
		parts := ps.Parts(t)
		for e, p := range parts {
			if len(p) != size {
				l.err = fmt.Errorf("model: tensor %s, expert %d holds %d bytes, want %d", name, e, len(p), size)
				return nil
			}
		}
		if len(parts) != n {
			l.err = fmt.Errorf("model: tensor %s has %d experts, want %d", name, len(parts), n)
			return nil
		}
		expert = func(e int) []byte { return parts[e] }
	} else {
		data := l.f.Data(t)
		if len(data) < n*size {
			l.err = fmt.Errorf("model: tensor %s holds %d bytes, want %d", name, len(data), n*size)
			return nil
		}
		expert = func(e int) []byte { return data[e*size : (e+1)*size] }
	}
	ms := make([]kernels.Matrix, n)
	for e := range ms {
		ms[e] = kernels.Matrix{Type: t.Type, Rows: rows, Cols: cols, Data: expert(e), MulMatID: true}
		if err := ms[e].Validate(); err != nil {
			l.err = fmt.Errorf("model: tensor %s, expert %d: %w", name, e, err)
			return nil
		}
	}
	return ms
}

// vector returns a 1-D tensor as float32: a view when it is stored as F32.
func (l *loader) vector(name string, n int) []float32 {
	t := l.tensor(name, n)
	if t == nil {
		return nil
	}
	data := l.f.Data(t)
	if t.Type == gguf.TypeF32 {
		return unsafe.Slice((*float32)(unsafe.Pointer(unsafe.SliceData(data))), n)
	}
	out := make([]float32, n)
	if err := quant.Dequantize(t.Type, data, out); err != nil {
		l.err = fmt.Errorf("model: tensor %s: %w", name, err)
		return nil
	}
	return out
}

// loadWeights maps every tensor c needs from f.
func loadWeights(f tensorSource, c *Config) (*Weights, error) {
	l := &loader{f: f}
	w := &Weights{}
	emb, ok := f.Tensor("token_embd.weight")
	if !ok {
		return nil, fmt.Errorf("model: tensor token_embd.weight is missing from the file")
	}
	if len(emb.Shape) != 2 || emb.Shape[0] != uint64(c.Dim) || emb.Shape[1] == 0 || emb.Shape[1] > 1<<24 {
		return nil, fmt.Errorf("model: tensor token_embd.weight has shape %v, want [%d, vocab]", emb.Shape, c.Dim)
	}
	if !quant.CanDequantize(emb.Type) {
		return nil, fmt.Errorf("model: token_embd.weight has type %s, which kiln cannot read", emb.Type)
	}
	c.Vocab = int(emb.Shape[1])
	w.Embed = kernels.Matrix{Type: emb.Type, Rows: c.Vocab, Cols: c.Dim, Data: f.Data(emb)}
	if err := w.Embed.Validate(); err != nil {
		return nil, fmt.Errorf("model: tensor token_embd.weight: %w", err)
	}
	w.OutNorm = l.vector("output_norm.weight", c.Dim)
	if l.has("output.weight") {
		w.Output = l.matrix("output.weight", c.Vocab, c.Dim)
	} else {
		c.Tied = true
		if !kernels.Supported(emb.Type) {
			return nil, fmt.Errorf("model: tied output uses token_embd.weight of type %s, which kiln cannot multiply yet", emb.Type)
		}
		w.Output = w.Embed
	}
	if l.has("rope_freqs.weight") {
		w.RopeFreqs = l.vector("rope_freqs.weight", c.HeadDim/2)
	}
	w.Layers = make([]Layer, c.Layers)
	for i := range w.Layers {
		p := fmt.Sprintf("blk.%d.", i)
		ly := &w.Layers[i]
		ly.AttnNorm = l.vector(p+"attn_norm.weight", c.Dim)
		ly.Q = l.matrix(p+"attn_q.weight", c.QDim(), c.Dim)
		ly.K = l.matrix(p+"attn_k.weight", c.KVDim(), c.Dim)
		ly.V = l.matrix(p+"attn_v.weight", c.KVDim(), c.Dim)
		ly.O = l.matrix(p+"attn_output.weight", c.Dim, c.QDim())
		if c.QKVBias {
			ly.QBias = l.vector(p+"attn_q.bias", c.QDim())
			ly.KBias = l.vector(p+"attn_k.bias", c.KVDim())
			ly.VBias = l.vector(p+"attn_v.bias", c.KVDim())
		}
		if c.QKNormWhole {
			ly.QNorm = l.vector(p+"attn_q_norm.weight", c.QDim())
			ly.KNorm = l.vector(p+"attn_k_norm.weight", c.KVDim())
		} else if c.QKNorm {
			ly.QNorm = l.vector(p+"attn_q_norm.weight", c.HeadDim)
			ly.KNorm = l.vector(p+"attn_k_norm.weight", c.HeadDim)
		}
		ly.FFNNorm = l.vector(p+"ffn_norm.weight", c.Dim)
		if c.MoE() {
			l.moeLayer(ly, p, c)
			continue
		}
		if l.has(p + "ffn_gate_inp.weight") {
			l.err = fmt.Errorf("model: tensor %sffn_gate_inp.weight is a mixture-of-experts router, but metadata %s.expert_count is not set", p, c.Arch)
			break
		}
		ly.Gate = l.matrix(p+"ffn_gate.weight", c.FFN, c.Dim)
		ly.Up = l.matrix(p+"ffn_up.weight", c.FFN, c.Dim)
		ly.Down = l.matrix(p+"ffn_down.weight", c.Dim, c.FFN)
	}
	if l.err != nil {
		return nil, l.err
	}
	if err := checkFinite(w, c.Tied); err != nil {
		return nil, err
	}
	return w, nil
}

// moeLayer maps layer ly's router and experts (prefix p = "blk.N.").
func (l *loader) moeLayer(ly *Layer, p string, c *Config) {
	ly.Router = l.matrix(p+"ffn_gate_inp.weight", c.Experts, c.Dim)
	gate := l.experts(p+"ffn_gate_exps.weight", c.ExpertFFN, c.Dim, c.Experts)
	up := l.experts(p+"ffn_up_exps.weight", c.ExpertFFN, c.Dim, c.Experts)
	down := l.experts(p+"ffn_down_exps.weight", c.Dim, c.ExpertFFN, c.Experts)
	if l.err != nil {
		return
	}
	ly.Experts = make([]Expert, c.Experts)
	for e := range ly.Experts {
		ly.Experts[e] = Expert{Gate: gate[e], Up: up[e], Down: down[e]}
	}
	if c.SharedFFN == 0 {
		return
	}
	// The shared expert's gate is one row, stored 1-D [Dim] or, as
	// convert_hf_to_gguf.py writes HF's [1][Dim] Linear, [Dim, 1] (ggml
	// reads both as {Dim}); llama.cpp multiplies it as a [1][Dim] matrix
	// (mul_mat), so it is one here too.
	name := p + "ffn_gate_inp_shexp.weight"
	shape := []int{c.Dim}
	if t, ok := l.f.Tensor(name); ok && len(t.Shape) == 2 && t.Shape[1] == 1 {
		shape = []int{c.Dim, 1}
	}
	if t := l.tensor(name, shape...); t != nil {
		ly.SharedGate = kernels.Matrix{Type: t.Type, Rows: 1, Cols: c.Dim, Data: l.f.Data(t)}
		if !kernels.Supported(t.Type) {
			l.err = fmt.Errorf("model: tensor %s has type %s, which kiln cannot multiply yet", name, t.Type)
		} else if err := ly.SharedGate.Validate(); err != nil {
			l.err = fmt.Errorf("model: tensor %s: %w", name, err)
		}
	}
	ly.Shared.Gate = l.matrix(p+"ffn_gate_shexp.weight", c.SharedFFN, c.Dim)
	ly.Shared.Up = l.matrix(p+"ffn_up_shexp.weight", c.SharedFFN, c.Dim)
	ly.Shared.Down = l.matrix(p+"ffn_down_shexp.weight", c.Dim, c.SharedFFN)
}
