package synth

import (
	"errors"
	"fmt"
	"math"
)

// Spec is an architecture and its hyperparameters. Zero values of the
// optional fields take the defaults documented on each; Validate reports
// every problem at once. The JSON form is what testdata/oracle goldens
// record (and `kiln synth --spec` reads).
type Spec struct {
	Arch      string  `json:"arch"`           // "llama", "qwen2" (QKV biases), "qwen3" (per-head q/k RMSNorm), "qwen3moe" (qwen3 with a mixture-of-experts FFN) "qwen2moe" (qwen2 with experts and a shared expert) or "olmoe" (experts FFN wide, q/k RMSNorm over the whole projection)
	Name      string  `json:"name,omitempty"` // general.name; "" gives "kiln-synth-<arch>"
	Dim       int     `json:"dim"`            // embedding_length (hidden size)
	Layers    int     `json:"layers"`         // block_count
	Heads     int     `json:"heads"`          // attention.head_count
	KVHeads   int     `json:"kv_heads"`       // attention.head_count_kv; 0 means Heads (no GQA)
	HeadDim   int     `json:"head_dim"`       // width of one head, even; 0 means Dim/Heads
	FFN       int     `json:"ffn"`            // feed_forward_length (intermediate size)
	VocabSize int     `json:"vocab_size"`     // rows of token_embd; 0 means the vocabulary's size
	Ctx       int     `json:"ctx"`            // context_length; 0 means 2048
	RopeTheta float64 `json:"rope_theta"`     // rope.freq_base; 0 means 10000
	NormEps   float64 `json:"norm_eps"`       // attention.layer_norm_rms_epsilon; 0 means 1e-5
	Tied      bool    `json:"tied"`           // no output.weight: the output projection is token_embd

	// ResidualScale, when set, multiplies the spread of every block's
	// output projections (attn_output, ffn_down): below 1 the residual
	// branches add less to the stream, so the embedding-to-head path
	// dominates the logits and a model made from the same seed with fewer
	// layers predicts much like the full one. A benchmark device for
	// draft-model speculative decoding on random weights (real drafts
	// agree with their targets because both learned the same text); 0
	// means 1, the default distributions.
	ResidualScale float64 `json:"residual_scale,omitempty"`
	// PoolingType, when set, is written as {arch}.pooling_type (llama.cpp's
	// enum: 1 mean, 2 cls, 3 last): how embeddings pool (llama.cpp reads it
	// for qwen2 and qwen3). 0 writes no key.
	PoolingType int `json:"pooling_type,omitempty"`

	// Mixture of experts (qwen3moe, where Experts is required, and llama,
	// as Mixtral): each block's FFN is a router (ffn_gate_inp) over
	// Experts SwiGLU MLPs (ffn_{gate,up,down}_exps, 3-D), ExpertsUsed of
	// them per token. ExpertFFN is one expert's width (qwen3moe's
	// expert_feed_forward_length; 0 means FFN); llama's experts are FFN
	// wide, as llama.cpp reads them.
	Experts     int `json:"experts,omitempty"`
	ExpertsUsed int `json:"experts_used,omitempty"`
	ExpertFFN   int `json:"expert_ffn,omitempty"`
	// SharedFFN is qwen2moe's shared expert's width
	// (expert_shared_feed_forward_length; 0 means FFN).
	SharedFFN int `json:"shared_ffn,omitempty"`

	// RopeScaling, when set (llama only), is Llama 3's frequency scaling,
	// written as the rope_freqs.weight tensor as convert_hf_to_gguf.py does.
	RopeScaling *Llama3Rope `json:"llama3_rope,omitempty"`
	// ScaledRope, when set, is a linear or YaRN rope scaling written as
	// metadata (rope.scaling.type, .factor, and for YaRN
	// .original_context_length), as convert_hf_to_gguf.py writes Qwen2.5's
	// rope_scaling {"type": "yarn", "factor": 4.0,
	// "original_max_position_embeddings": 32768}.
	ScaledRope *ScaledRope `json:"rope_scaling,omitempty"`
}

// ScaledRope is HF's rope_scaling {"type": "linear" | "yarn", ...}.
type ScaledRope struct {
	Type            string  `json:"type"`                       // "linear" or "yarn"
	Factor          float64 `json:"factor"`                     // context extension factor (> 0)
	OriginalContext int     `json:"original_context,omitempty"` // yarn: original_max_position_embeddings
}

// Llama3Rope is HF's rope_scaling {"rope_type": "llama3", ...}.
type Llama3Rope struct {
	Factor          float64 `json:"factor"`           // factor (32 for Llama 3.2 1B)
	LowFreqFactor   float64 `json:"low_freq_factor"`  // low_freq_factor (1)
	HighFreqFactor  float64 `json:"high_freq_factor"` // high_freq_factor (4)
	OriginalContext int     `json:"original_context"` // original_max_position_embeddings (8192)
}

// Architectures lists the values Spec.Arch accepts.
var Architectures = []string{"llama", "qwen2", "qwen3", "qwen3moe", "qwen2moe", "olmoe"}

// limits keep every derived size far from int overflow and from files no
// test wants: a dimension above 1<<20 is a typo, not a model.
const maxDim = 1 << 20

// withDefaults returns s with its zero-valued optional fields filled in.
func (s Spec) withDefaults() Spec {
	if s.Name == "" {
		s.Name = "kiln-synth-" + s.Arch
	}
	if s.KVHeads == 0 {
		s.KVHeads = s.Heads
	}
	if s.HeadDim == 0 && s.Heads > 0 {
		s.HeadDim = s.Dim / s.Heads
	}
	if s.Ctx == 0 {
		s.Ctx = 2048
	}
	if s.RopeTheta == 0 {
		s.RopeTheta = 10000
	}
	if s.NormEps == 0 {
		s.NormEps = 1e-5
	}
	if s.Experts > 0 && (s.ExpertFFN == 0 || s.Arch == "llama" || s.Arch == "olmoe") {
		s.ExpertFFN = s.FFN
	}
	if s.Arch == "qwen2moe" && s.SharedFFN == 0 {
		s.SharedFFN = s.FFN
	}
	return s
}

// Validate reports what is wrong with s (after defaults), naming each field.
// A VocabSize of 0 is accepted here (Write fills it from the vocabulary).
func (s Spec) Validate() error {
	d := s.withDefaults()
	var errs []error
	bad := func(format string, a ...any) { errs = append(errs, fmt.Errorf("synth: "+format, a...)) }
	switch d.Arch {
	case "llama", "qwen2", "qwen3", "qwen3moe", "qwen2moe", "olmoe":
	case "":
		bad("no architecture (want one of %v)", Architectures)
	default:
		bad("architecture %q is not one of %v", d.Arch, Architectures)
	}
	for _, f := range []struct {
		name string
		v    int
	}{{"dim", d.Dim}, {"layers", d.Layers}, {"heads", d.Heads}, {"ffn", d.FFN}, {"ctx", d.Ctx}} {
		if f.v <= 0 || f.v > maxDim {
			bad("%s is %d, want 1..%d", f.name, f.v, maxDim)
		}
	}
	if s.PoolingType < 0 || s.PoolingType > 4 {
		bad("pooling-type is %d, want 0 (none written) up to 4", s.PoolingType)
	}
	if s.ResidualScale < 0 || s.ResidualScale > 1e3 || math.IsNaN(s.ResidualScale) {
		bad("residual-scale is %v, want 0 (default) up to 1000", s.ResidualScale)
	}
	if d.KVHeads <= 0 || d.KVHeads > maxDim {
		bad("kv-heads is %d, want 1..%d", s.KVHeads, maxDim)
	} else if d.Heads > 0 && d.Heads%d.KVHeads != 0 {
		bad("heads %d is not a multiple of kv-heads %d (each KV head serves a whole group of query heads)", d.Heads, d.KVHeads)
	}
	switch {
	case s.HeadDim == 0 && d.Heads > 0 && d.Dim%d.Heads != 0:
		bad("dim %d is not a multiple of heads %d: set head-dim explicitly", d.Dim, d.Heads)
	case d.HeadDim <= 0 || d.HeadDim > maxDim:
		bad("head-dim is %d, want 1..%d", d.HeadDim, maxDim)
	case d.HeadDim%2 != 0:
		bad("head-dim %d is odd; RoPE rotates pairs of dimensions", d.HeadDim)
	case d.Heads > 0 && d.Heads*d.HeadDim > maxDim:
		bad("heads*head-dim = %d, more than %d", d.Heads*d.HeadDim, maxDim)
	}
	switch {
	case (d.Arch == "qwen3moe" || d.Arch == "qwen2moe" || d.Arch == "olmoe") && d.Experts <= 0:
		bad("%s needs experts (and experts-used)", d.Arch)
	case d.Experts < 0 || d.Experts > 512:
		bad("experts is %d, want 0..512 (llama.cpp's LLAMA_MAX_EXPERTS)", d.Experts)
	case d.Experts > 0 && d.Arch != "qwen3moe" && d.Arch != "qwen2moe" && d.Arch != "olmoe" && d.Arch != "llama":
		bad("experts need arch qwen3moe, qwen2moe, olmoe or llama (Mixtral); %s is dense", d.Arch)
	case d.Arch == "olmoe" && (d.KVHeads != d.Heads || d.Heads*d.HeadDim != d.Dim):
		// llama.cpp's olmoe tensors: attn_k_norm is [dim] long.
		bad("olmoe needs kv-heads = heads and heads*head-dim = dim (its q/k norms are dim long)")
	case d.Experts > 0 && (d.ExpertsUsed <= 0 || d.ExpertsUsed > d.Experts):
		bad("experts-used is %d, want 1..experts (%d)", d.ExpertsUsed, d.Experts)
	case d.Experts > 0 && (d.ExpertFFN <= 0 || d.ExpertFFN > maxDim):
		bad("expert-ffn is %d, want 1..%d", d.ExpertFFN, maxDim)
	case d.Experts == 0 && (d.ExpertsUsed != 0 || s.ExpertFFN != 0):
		bad("experts-used and expert-ffn need experts")
	case d.SharedFFN != 0 && d.Arch != "qwen2moe":
		bad("shared-ffn needs arch qwen2moe")
	case d.SharedFFN < 0 || d.SharedFFN > maxDim:
		bad("shared-ffn is %d, want 1..%d", d.SharedFFN, maxDim)
	}
	if d.VocabSize < 0 || d.VocabSize > 1<<24 {
		bad("vocab size is %d, want 1..%d (or 0: the vocabulary's size)", d.VocabSize, 1<<24)
	}
	if !(d.RopeTheta > 0) || math.IsInf(d.RopeTheta, 0) {
		bad("rope theta %v is not a positive number", d.RopeTheta)
	}
	if !(d.NormEps > 0 && d.NormEps < 1) {
		bad("norm epsilon %v is not in (0, 1)", d.NormEps)
	}
	if r := d.RopeScaling; r != nil {
		if d.Arch != "llama" {
			bad("llama3 rope scaling needs arch llama: llama.cpp reads rope_freqs.weight only there, not for %s", d.Arch)
		}
		if !(r.Factor > 0) || math.IsInf(r.Factor, 0) {
			bad("rope scaling factor %v is not a positive number", r.Factor)
		}
		if !(r.LowFreqFactor > 0) || !(r.HighFreqFactor > r.LowFreqFactor) || math.IsInf(r.HighFreqFactor, 0) {
			bad("rope scaling wants 0 < low-freq-factor < high-freq-factor, got %v and %v", r.LowFreqFactor, r.HighFreqFactor)
		}
		if r.OriginalContext <= 0 {
			bad("rope scaling original context %d is not positive", r.OriginalContext)
		}
	}
	if r := d.ScaledRope; r != nil {
		if d.RopeScaling != nil {
			bad("llama3 rope scaling and %s rope scaling exclude each other", r.Type)
		}
		if r.Type != "linear" && r.Type != "yarn" {
			bad("rope scaling type %q is not linear or yarn", r.Type)
		}
		if !(r.Factor > 0) || math.IsInf(r.Factor, 0) {
			bad("rope scaling factor %v is not a positive number", r.Factor)
		}
		if r.Type == "yarn" && (r.OriginalContext <= 0 || r.OriginalContext >= 1<<24) {
			bad("yarn rope scaling original context %d is not in 1..%d", r.OriginalContext, 1<<24-1)
		}
		if r.Type == "linear" && r.OriginalContext != 0 {
			bad("linear rope scaling takes no original context")
		}
	}
	return errors.Join(errs...)
}
