package model

import (
	"fmt"
	"strings"
	"unsafe"

	"kiln/gguf"
	"kiln/quant"
	"kiln/safetensors"
)

// Mixture-of-experts Hugging Face folders (Qwen2MoeForCausalLM,
// Qwen3MoeForCausalLM, OlmoeForCausalLM, MixtralForCausalLM), read as
// llama.cpp's convert_hf_to_gguf.py reads them (Qwen2MoeModel,
// Qwen3MoeModel, OlmoeModel, LlamaModel):
//
//   - config.json: num_local_experts or num_experts (the script's
//     find_hparam order) is expert_count, num_experts_per_tok
//     expert_used_count; Qwen's moe_intermediate_size is
//     expert_feed_forward_length and Qwen2-MoE's
//     shared_expert_intermediate_size expert_shared_feed_forward_length.
//     Mixtral's and OLMoE's experts are intermediate_size wide.
//   - Router: mlp.gate (Mixtral: block_sparse_moe.gate) -> ffn_gate_inp.
//   - Experts: mlp.experts.E.{gate,up,down}_proj (Mixtral:
//     block_sparse_moe.experts.E.{w1,w3,w2}), each [rows][cols], stacked
//     over E into the 3-D ffn_{gate,up,down}_exps, GGUF shape
//     [cols, rows, experts]. LoadHF does not copy them: each expert's
//     matrix is a view of its own HF tensor (hfTensor.parts).
//   - Qwen2-MoE's shared expert: mlp.shared_expert.{gate,up,down}_proj ->
//     ffn_{gate,up,down}_shexp, and mlp.shared_expert_gate (a [1][dim]
//     Linear) -> ffn_gate_inp_shexp, GGUF shape [dim, 1] as the script
//     writes it.
//   - The script writes ffn_gate_inp and ffn_gate_inp_shexp in F32 whatever
//     the checkpoint's dtype (its always-F32 list); LoadHF widens them too,
//     so a folder and its conversion compute the same router logits.
//
// What llama.cpp's graphs fix rather than read is checked against
// config.json, so a folder kiln loads computes what transformers computes:
// qwen3moe renormalises the chosen experts' weights (norm_topk_prob must
// not be false), qwen2moe and olmoe do not (norm_topk_prob must not be
// true); every layer is sparse (decoder_sparse_step 1, no mlp_only_layers);
// OLMoE's norms use epsilon 1e-5 (the script writes 1e-5 whatever
// config.json says) and clip_qkv is unset.

// hfExperts reads the mixture-of-experts fields of hc into c (Arch and
// FFN set), naming the config.json key in any error.
func hfExperts(c *Config, hc *HFConfig, tr archTraits) error {
	countKey, count := "num_local_experts", hc.NumLocalExperts
	if count == nil {
		countKey, count = "num_experts", hc.NumExperts
	}
	if count == nil {
		return fmt.Errorf("num_local_experts / num_experts is missing: %s is a mixture of experts", hc.Architectures[0])
	}
	if *count <= 0 || *count > maxExperts {
		return fmt.Errorf("%s = %d is out of range 1..%d", countKey, *count, maxExperts)
	}
	if hc.NumExpertsPerTok == nil {
		return fmt.Errorf("num_experts_per_tok is missing")
	}
	if k := *hc.NumExpertsPerTok; k <= 0 || k > *count {
		return fmt.Errorf("num_experts_per_tok = %d is out of range 1..%s (%d)", k, countKey, *count)
	}
	c.Experts, c.ExpertsUsed = *count, *hc.NumExpertsPerTok
	c.ExpertNorm = !tr.noNorm
	width := func(key string, v *int) (int, error) {
		if v == nil {
			return 0, fmt.Errorf("%s is missing", key)
		}
		if *v <= 0 || *v > 1<<24 {
			return 0, fmt.Errorf("%s = %d is out of range", key, *v)
		}
		return *v, nil
	}
	var err error
	c.ExpertFFN = c.FFN
	if !tr.ffnExperts {
		if c.ExpertFFN, err = width("moe_intermediate_size", hc.MoEIntermediateSize); err != nil {
			return err
		}
	}
	if tr.shared {
		if c.SharedFFN, err = width("shared_expert_intermediate_size", hc.SharedExpertIntermediateSize); err != nil {
			return err
		}
	}
	if p := hc.NormTopKProb; p != nil && *p != c.ExpertNorm {
		return fmt.Errorf("norm_topk_prob = %v is not supported for %s: llama.cpp's %s graph always uses %v", *p, hc.Architectures[0], c.Arch, c.ExpertNorm)
	}
	if s := hc.DecoderSparseStep; s != nil && *s != 1 {
		return fmt.Errorf("decoder_sparse_step = %d is not supported: every layer must be sparse (llama.cpp's %s has no dense layers)", *s, c.Arch)
	}
	if len(hc.MLPOnlyLayers) > 0 {
		return fmt.Errorf("mlp_only_layers = %v is not supported: every layer must be sparse (llama.cpp's %s has no dense layers)", hc.MLPOnlyLayers, c.Arch)
	}
	if c.Arch == "olmoe" {
		if len(hc.ClipQKV) > 0 && string(hc.ClipQKV) != "null" {
			return fmt.Errorf("clip_qkv = %s is not supported (llama.cpp's olmoe graph does not clip)", hc.ClipQKV)
		}
		if c.NormEps != 1e-5 {
			return fmt.Errorf("rms_norm_eps = %g is not supported for OlmoeForCausalLM: llama.cpp's converter writes 1e-5 for olmoe whatever config.json says", c.NormEps)
		}
		if c.KVHeads != c.Heads || c.QDim() != c.Dim {
			return fmt.Errorf("num_key_value_heads %d and num_attention_heads*head_dim %d: olmoe needs kv heads = heads and heads*head_dim = hidden_size", c.KVHeads, c.QDim())
		}
	}
	return nil
}

// hfExpertTensors lists layer p's (GGUF prefix g) router, stacked experts
// and, for qwen2moe, shared expert, in the order the script emits them
// (the experts, merged when the layer's last one is read, as down, gate,
// up; Mixtral's as w1, w2, w3).
func hfExpertTensors(c *Config, p, g string) []hfName {
	router, exp := p+"mlp.gate.weight", p+"mlp.experts.%d.%s.weight"
	gate, up, down := "gate_proj", "up_proj", "down_proj"
	if c.Arch == "llama" {
		router, exp = p+"block_sparse_moe.gate.weight", p+"block_sparse_moe.experts.%d.%s.weight"
		gate, up, down = "w1", "w3", "w2"
	}
	stack := func(proj, gguf string, rows, cols int) hfName {
		parts := make([]string, c.Experts)
		for e := range parts {
			parts[e] = fmt.Sprintf(exp, e, proj)
		}
		return hfName{gguf: g + gguf, shape: []int{c.Experts, rows, cols}, parts: parts}
	}
	ns := []hfName{{hf: router, gguf: g + "ffn_gate_inp.weight", shape: []int{c.Experts, c.Dim}}}
	if c.Arch == "llama" {
		ns = append(ns,
			stack(gate, "ffn_gate_exps.weight", c.ExpertFFN, c.Dim),
			stack(down, "ffn_down_exps.weight", c.Dim, c.ExpertFFN),
			stack(up, "ffn_up_exps.weight", c.ExpertFFN, c.Dim))
	} else {
		ns = append(ns,
			stack(down, "ffn_down_exps.weight", c.Dim, c.ExpertFFN),
			stack(gate, "ffn_gate_exps.weight", c.ExpertFFN, c.Dim),
			stack(up, "ffn_up_exps.weight", c.ExpertFFN, c.Dim))
	}
	if c.SharedFFN > 0 {
		ns = append(ns,
			hfName{hf: p + "mlp.shared_expert.gate_proj.weight", gguf: g + "ffn_gate_shexp.weight", shape: []int{c.SharedFFN, c.Dim}},
			hfName{hf: p + "mlp.shared_expert.up_proj.weight", gguf: g + "ffn_up_shexp.weight", shape: []int{c.SharedFFN, c.Dim}},
			hfName{hf: p + "mlp.shared_expert.down_proj.weight", gguf: g + "ffn_down_shexp.weight", shape: []int{c.Dim, c.SharedFFN}},
			hfName{hf: p + "mlp.shared_expert_gate.weight", gguf: g + "ffn_gate_inp_shexp.weight", shape: []int{1, c.Dim}},
		)
	}
	return ns
}

// hfStack resolves the per-expert HF tensors of n: all present, of shape
// n.shape[1:] and one dtype. The result's parts are views of the mapped
// files (info's Name and Shape are the caller's to set).
func hfStack(set *safetensors.Set, n hfName) (*hfTensor, error) {
	t := &hfTensor{parts: make([][]byte, len(n.parts))}
	var size uint64
	for e, name := range n.parts {
		typ, data, path, err := hfLookup(set, name, n.shape[1:], false)
		if err != nil {
			if fused := hfFusedExperts(set, name); e == 0 && fused != "" {
				return nil, fmt.Errorf("%w; the folder holds the experts fused as %s (transformers' newer layout), which kiln does not read yet", err, fused)
			}
			return nil, err
		}
		if e == 0 {
			t.info.Type = typ
		} else if typ != t.info.Type {
			return nil, fmt.Errorf("model: %s: tensor %s is %s, expert 0's is %s: the experts of %s must share a dtype", path, name, typ, t.info.Type, n.gguf)
		}
		t.parts[e] = data
		size += uint64(len(data))
	}
	t.info.Size = size
	return t, nil
}

// hfFusedExperts names the fused 3-D expert tensor (mlp.experts.gate_up_proj
// or mlp.experts.down_proj, as newer transformers versions save them)
// beside the per-expert name, if the folder has one.
func hfFusedExperts(set *safetensors.Set, name string) string {
	i := strings.Index(name, ".experts.")
	if i < 0 {
		return ""
	}
	base := name[:i+len(".experts.")]
	for _, f := range []string{"gate_up_proj", "gate_up_proj.weight", "down_proj", "down_proj.weight"} {
		if _, _, ok := set.Tensor(base + f); ok {
			return base + f
		}
	}
	return ""
}

// hfWidened reports whether convert_hf_to_gguf.py writes the GGUF tensor
// in F32 whatever its dtype, among those LoadHF reads as matrices: the
// routers (its FFN_GATE_INP and FFN_GATE_INP_SHEXP).
func hfWidened(ggufName string) bool {
	return strings.HasSuffix(ggufName, "ffn_gate_inp.weight") || strings.HasSuffix(ggufName, "ffn_gate_inp_shexp.weight")
}

// widenF32 decodes F16 or BF16 data to F32 bytes (exact: both widen
// without rounding).
func widenF32(typ gguf.Type, data []byte) ([]byte, error) {
	n := len(data) / 2
	f := make([]float32, n)
	if err := quant.Dequantize(typ, data, f); err != nil {
		return nil, err
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(f))), 4*n), nil
}
