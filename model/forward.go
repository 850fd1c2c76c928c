package model

import (
	"fmt"

	"kiln/kernels"
)

// scratch holds Forward's activations, grown to the largest batch seen and
// reused, so the per-step path allocates nothing in steady state.
type scratch struct {
	tokens int       // rows the buffers below hold
	x      []float32 // [T][Dim] residual stream
	xn     []float32 // [T][Dim] normalised input of the current sublayer
	q      []float32 // [T][QDim]
	k, v   []float32 // [T][KVDim]
	att    []float32 // [T][QDim] attention output
	proj   []float32 // [T][Dim] output of attn_output / ffn_down
	gate   []float32 // [T][FFN]
	up     []float32 // [T][FFN]
	rows   []float32 // [R][Dim] final hidden states of the logit rows
	logits []float32 // [R][Vocab]
	attn   kernels.AttnBatch
	qkv    [3]kernels.MatMulOp // Q, K, V products of one normalised input
	gateUp [2]kernels.MatMulOp // gate and up products of one normalised input
	moe    moeScratch          // mixture-of-experts FFN (moe.go)
}

func grow(buf []float32, n int) []float32 {
	if cap(buf) < n {
		return make([]float32, n)
	}
	return buf[:n]
}

func (s *scratch) ensure(c *Config, t, r int) {
	if t > s.tokens {
		s.tokens = t
		s.x = grow(s.x, t*c.Dim)
		s.xn = grow(s.xn, t*c.Dim)
		s.q = grow(s.q, t*c.QDim())
		s.k = grow(s.k, t*c.KVDim())
		s.v = grow(s.v, t*c.KVDim())
		s.att = grow(s.att, t*c.QDim())
		s.proj = grow(s.proj, t*c.Dim)
		if w := c.denseFFN(); w > 0 {
			s.gate = grow(s.gate, t*w)
			s.up = grow(s.up, t*w)
		}
	}
	s.x, s.xn = s.x[:t*c.Dim], s.xn[:t*c.Dim]
	s.q, s.k, s.v, s.att = s.q[:t*c.QDim()], s.k[:t*c.KVDim()], s.v[:t*c.KVDim()], s.att[:t*c.QDim()]
	s.proj = s.proj[:t*c.Dim]
	if w := c.denseFFN(); w > 0 {
		s.gate, s.up = s.gate[:t*w], s.up[:t*w]
	}
	s.rows = grow(s.rows, r*c.Dim)
	s.logits = grow(s.logits, r*c.Vocab)
}

// Forward runs one batch: it writes every new token's keys and values into
// the pages its block table names and returns the logits of b.LogitRows as
// [len(LogitRows)][Vocab]. The returned slice is reused by the next call.
func (m *Model) Forward(b *Batch, kv *KVStore) ([]float32, error) {
	c := &m.Config
	if err := b.Validate(c, kv); err != nil {
		return nil, err
	}
	if len(kv.Layers) != c.Layers {
		return nil, errKVShape(len(kv.Layers), c.Layers)
	}
	w := m.Weights
	p := m.pool
	s := &m.scratch
	T, R := len(b.Tokens), len(b.LogitRows)
	s.ensure(c, T, R)

	// Embedding lookup: one dequantized row per token.
	for i, tok := range b.Tokens {
		w.Embed.Row(int(tok), s.x[i*c.Dim:(i+1)*c.Dim])
	}

	// Per-sequence views for attention, rebuilt each step (no allocation
	// once the slice has grown).
	at := &s.attn
	at.Q, at.Out, at.Positions, at.Heads = s.q, s.att, b.Positions, c.Heads
	at.Scale = 0 // kernels: 1/sqrtf(HeadDim), exactly as llama.cpp computes it
	at.Seqs = at.Seqs[:0]
	for i := 0; i < b.NumSeqs(); i++ {
		at.Seqs = append(at.Seqs, kernels.AttnSeq{Start: int(b.SeqStarts[i]), End: int(b.SeqStarts[i+1]), BlockTable: b.BlockTables[i]})
	}

	for li := range w.Layers {
		l := &w.Layers[li]
		cache := kv.Layers[li]

		// Attention: x += O · attn(rope(Q·norm(x)), rope(K·norm(x)), V·norm(x)).
		kernels.RMSNormRows(p, s.xn, s.x, l.AttnNorm, T, c.Dim, c.NormEps)
		// One dispatch for Q, K and V: the input is quantized once.
		s.qkv = [3]kernels.MatMulOp{{Dst: s.q, W: &l.Q}, {Dst: s.k, W: &l.K}, {Dst: s.v, W: &l.V}}
		p.MatMuls(s.xn, T, s.qkv[:])
		if c.QKVBias {
			kernels.AddBias(s.q, l.QBias, T)
			kernels.AddBias(s.k, l.KBias, T)
			kernels.AddBias(s.v, l.VBias, T)
		}
		if c.QKNormWhole {
			// olmoe: each token's whole projection is one row.
			kernels.RMSNormRows(p, s.q, s.q, l.QNorm, T, c.QDim(), c.NormEps)
			kernels.RMSNormRows(p, s.k, s.k, l.KNorm, T, c.KVDim(), c.NormEps)
		} else if c.QKNorm {
			// Each head's vector is normalised on its own: rows of HeadDim.
			kernels.RMSNormRows(p, s.q, s.q, l.QNorm, T*c.Heads, c.HeadDim, c.NormEps)
			kernels.RMSNormRows(p, s.k, s.k, l.KNorm, T*c.KVHeads, c.HeadDim, c.NormEps)
		}
		m.rope.Apply(s.q, T, c.Heads, b.Positions)
		m.rope.Apply(s.k, T, c.KVHeads, b.Positions)
		for i := 0; i < b.NumSeqs(); i++ {
			lo, hi := int(b.SeqStarts[i]), int(b.SeqStarts[i+1])
			if err := cache.Store(b.BlockTables[i], b.Positions[lo:hi], s.k[lo*c.KVDim():hi*c.KVDim()], s.v[lo*c.KVDim():hi*c.KVDim()]); err != nil {
				return nil, fmt.Errorf("model: layer %d: %w", li, err)
			}
		}
		if err := p.Attention(cache, at); err != nil {
			return nil, fmt.Errorf("model: layer %d: %w", li, err)
		}
		p.MatMul(s.proj, &l.O, s.att, T)
		kernels.Add(s.x, s.x, s.proj)

		// MLP: x += Down · (silu(Gate·norm(x)) * Up·norm(x)), or the
		// mixture of experts of such MLPs (moe.go).
		kernels.RMSNormRows(p, s.xn, s.x, l.FFNNorm, T, c.Dim, c.NormEps)
		if c.MoE() {
			m.moeFFN(l, T)
			if c.SharedFFN > 0 {
				m.sharedExpert(l, T)
			}
			kernels.Add(s.x, s.x, s.proj)
			continue
		}
		s.gateUp = [2]kernels.MatMulOp{{Dst: s.gate, W: &l.Gate}, {Dst: s.up, W: &l.Up}}
		p.MatMuls(s.xn, T, s.gateUp[:])
		kernels.SiLUMulRows(p, s.gate, s.up, T, c.FFN)
		p.MatMul(s.proj, &l.Down, s.gate, T)
		kernels.Add(s.x, s.x, s.proj)
	}

	// Final norm and vocabulary projection, only for the rows that need logits.
	if R == 0 {
		return s.logits[:0], nil
	}
	for i, r := range b.LogitRows {
		copy(s.rows[i*c.Dim:(i+1)*c.Dim], s.x[int(r)*c.Dim:(int(r)+1)*c.Dim])
	}
	kernels.RMSNormRows(p, s.rows, s.rows, w.OutNorm, R, c.Dim, c.NormEps)
	p.MatMul(s.logits, &w.Output, s.rows, R)
	if err := checkLogits(s.logits, b, c.Vocab); err != nil {
		return nil, err
	}
	return s.logits, nil
}

// Hidden returns the final-norm hidden rows of the last Forward's
// LogitRows, [len(LogitRows)][Dim]: the output norm applied, the LM head
// not (what llama.cpp's embeddings pool). The slice is reused by the next
// call.
func (m *Model) Hidden() []float32 { return m.scratch.rows }
