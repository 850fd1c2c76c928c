package model

import (
	"errors"
	"fmt"

	"kiln/kernels"
	"kiln/quant"
)

// ErrNonFinite marks weights or logits that are NaN or infinite: a corrupt
// file, or a tensor whose type in the directory is not the type its bytes
// were written as (the data then decodes to garbage).
var ErrNonFinite = errors.New("model: NaN or infinite values")

// likelyCause is said with every ErrNonFinite.
const likelyCause = "the file is likely corrupt, or a tensor's type is not what its data was written as (kiln inspect --tensors lists the types; download or convert the file again)"

// firstNonFinite is the index of the first NaN or ±Inf in x, or -1.
func firstNonFinite(x []float32) int {
	for i, v := range x {
		if v-v != 0 { // NaN - NaN and Inf - Inf are NaN; finite - itself is 0
			return i
		}
	}
	return -1
}

// checkLogits fails when a logit row of Forward is not finite.
func checkLogits(logits []float32, b *Batch, vocab int) error {
	i := firstNonFinite(logits)
	if i < 0 {
		return nil
	}
	row := i / vocab
	pos := int32(-1)
	if row < len(b.LogitRows) && int(b.LogitRows[row]) < len(b.Positions) {
		pos = b.Positions[b.LogitRows[row]]
	}
	return fmt.Errorf("%w: the logits at position %d are %v (token %d): %s", ErrNonFinite, pos, logits[i], i%vocab, likelyCause)
}

// samplesPerMatrix is how many stretches of a weight matrix the load-time
// check decodes: enough that a matrix of garbage (a wrong type byte gives
// NaN or infinite block scales every few dozen blocks) is caught, few
// enough that the check costs a few milliseconds on a model of gigabytes.
const samplesPerMatrix = 64

// sampleElems is the length of one stretch (whole blocks of at least this
// many elements).
const sampleElems = 256

// checkFinite is Load's cheap check for a corrupt or mis-typed file: every
// 1-D tensor (norms, biases, frequency factors) in full, and of each weight
// matrix samplesPerMatrix evenly spaced stretches, decoded.
func checkFinite(w *Weights, tied bool) error {
	vec := func(name string, x []float32) error {
		if i := firstNonFinite(x); i >= 0 {
			return fmt.Errorf("%w: tensor %s holds %v at element %d: %s", ErrNonFinite, name, x[i], i, likelyCause)
		}
		return nil
	}
	var buf []float32
	// stacked samples the matrices in parts as one tensor (the experts of a
	// 3-D tensor, each its own slice: one mapping's consecutive runs in a
	// GGUF, separate HF tensors in a folder): samplesPerMatrix stretches
	// over all of them, none crossing from one part to the next.
	stacked := func(name string, parts ...*kernels.Matrix) error {
		typ := parts[0].Type
		bs, bb := typ.BlockSize(), typ.BlockBytes()
		if bs <= 0 || bb <= 0 || len(parts[0].Data) < bb {
			return nil
		}
		per := max(1, sampleElems/bs) // blocks per stretch
		perPart := len(parts[0].Data) / bb
		nblocks := perPart * len(parts)
		if cap(buf) < per*bs {
			buf = make([]float32, per*bs)
		}
		for s := 0; s < samplesPerMatrix; s++ {
			first := int(int64(s) * int64(nblocks) / samplesPerMatrix)
			part, at := first/perPart, first%perPart
			n := min(per, perPart-at)
			if n <= 0 || len(parts[part].Data) < (at+n)*bb {
				continue
			}
			out := buf[:n*bs]
			if err := quant.Dequantize(typ, parts[part].Data[at*bb:(at+n)*bb], out); err != nil {
				return nil // a type kiln cannot decode here is refused elsewhere
			}
			if i := firstNonFinite(out); i >= 0 {
				return fmt.Errorf("%w: tensor %s holds %v at element %d: %s", ErrNonFinite, name, out[i], first*bs+i, likelyCause)
			}
		}
		return nil
	}
	mat := func(name string, m *kernels.Matrix) error { return stacked(name, m) }
	firstErr := func(errs ...error) error {
		for _, err := range errs {
			if err != nil {
				return err
			}
		}
		return nil
	}
	if err := firstErr(vec("output_norm.weight", w.OutNorm), vec("rope_freqs.weight", w.RopeFreqs),
		mat("token_embd.weight", &w.Embed)); err != nil {
		return err
	}
	if !tied {
		if err := mat("output.weight", &w.Output); err != nil {
			return err
		}
	}
	for i := range w.Layers {
		ly := &w.Layers[i]
		p := fmt.Sprintf("blk.%d.", i)
		if err := firstErr(
			vec(p+"attn_norm.weight", ly.AttnNorm), vec(p+"ffn_norm.weight", ly.FFNNorm),
			vec(p+"attn_q.bias", ly.QBias), vec(p+"attn_k.bias", ly.KBias), vec(p+"attn_v.bias", ly.VBias),
			vec(p+"attn_q_norm.weight", ly.QNorm), vec(p+"attn_k_norm.weight", ly.KNorm),
			mat(p+"attn_q.weight", &ly.Q), mat(p+"attn_k.weight", &ly.K), mat(p+"attn_v.weight", &ly.V),
			mat(p+"attn_output.weight", &ly.O), mat(p+"ffn_gate.weight", &ly.Gate),
			mat(p+"ffn_up.weight", &ly.Up), mat(p+"ffn_down.weight", &ly.Down)); err != nil {
			return err
		}
		if ly.Experts == nil {
			continue
		}
		gate, up, down := make([]*kernels.Matrix, len(ly.Experts)), make([]*kernels.Matrix, len(ly.Experts)), make([]*kernels.Matrix, len(ly.Experts))
		for e := range ly.Experts {
			x := &ly.Experts[e]
			gate[e], up[e], down[e] = &x.Gate, &x.Up, &x.Down
		}
		if err := firstErr(mat(p+"ffn_gate_inp.weight", &ly.Router), stacked(p+"ffn_gate_exps.weight", gate...),
			stacked(p+"ffn_up_exps.weight", up...), stacked(p+"ffn_down_exps.weight", down...)); err != nil {
			return err
		}
	}
	return nil
}
