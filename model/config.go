package model

import (
	"fmt"
	"math"

	"kiln/gguf"
)

// Config is a model's shape and numerics, read from GGUF metadata.
type Config struct {
	Arch     string // general.architecture: "llama", "qwen2", "qwen3", "qwen3moe", "qwen2moe" or "olmoe"
	Dim      int    // embedding_length: width of the residual stream
	Layers   int    // block_count
	Heads    int    // attention.head_count: query heads
	KVHeads  int    // attention.head_count_kv: key/value heads (divides Heads)
	HeadDim  int    // attention.key_length, or Dim/Heads
	FFN      int    // feed_forward_length: hidden width of the SwiGLU MLP (0: none, an MoE model without the key)
	Vocab    int    // rows of token_embd.weight
	Context  int    // context_length the model was trained for
	NormEps  float32
	RopeBase float32 // rope.freq_base (theta)
	// RopeFreqScale multiplies positions (1/factor for linear and YaRN scaling).
	RopeFreqScale float32
	// RopeScaling is the rope scaling type: "" or "none", "linear", "yarn",
	// "llama3" (the last through rope_freqs.weight). See ropescaling.go.
	RopeScaling string
	// RopeOrigContext is YaRN's original (pre-extension) context, llama.cpp's
	// n_ctx_orig_yarn: rope.scaling.original_context_length, else Context.
	RopeOrigContext int
	// RopeAttnFactor is rope.scaling.attn_factor (llama.cpp's
	// rope_attn_factor): it multiplies cos and sin for every scaling type.
	// 0 means 1.
	RopeAttnFactor float32
	// RopeNeox selects the rotation layout: pairs (i, i+HeadDim/2) as GPT-NeoX
	// and Qwen do, rather than llama's adjacent pairs (2i, 2i+1).
	RopeNeox bool
	QKVBias  bool // qwen2: attn_q/k/v carry biases
	QKNorm   bool // qwen3: per-head RMSNorm of queries and keys before RoPE
	// QKNormWhole (olmoe, with QKNorm): the RMSNorm runs over each token's
	// whole query [QDim] and key [KVDim] projections, with weights that
	// long, as llama.cpp's olmoe graph norms Qcur and Kcur before the
	// per-head reshape.
	QKNormWhole bool
	Tied        bool // no output.weight: logits use token_embd.weight

	// Mixture of experts (qwen3moe, and llama files with expert_count > 0
	// as Mixtral): each layer's FFN is Experts SwiGLU MLPs of width
	// ExpertFFN, of which a router picks ExpertsUsed per token (moe.go).
	// Experts = 0: the dense FFN of width FFN.
	Experts     int  // expert_count
	ExpertsUsed int  // expert_used_count: 1..Experts
	ExpertFFN   int  // qwen3moe: expert_feed_forward_length, else FFN/ExpertsUsed; llama: FFN (as llama.cpp)
	ExpertNorm  bool // renormalise the chosen experts' weights to sum 1 (llama.cpp's norm_w)
	// qwen2moe: a shared expert beside the routed ones, a SwiGLU MLP of
	// width SharedFFN (expert_shared_feed_forward_length, else FFN, as
	// llama.cpp) that every token takes, scaled by a learned sigmoid gate.
	// 0: none.
	SharedFFN int
}

// MoE reports whether the FFN is a mixture of experts.
func (c *Config) MoE() bool { return c.Experts > 0 }

// archTraits are the per-architecture facts that metadata does not state.
type archTraits struct {
	neox    bool
	qkvBias bool
	qkNorm  bool
	qkWhole bool // q/k RMSNorm over the whole projection (olmoe)
	// ffnExperts: the experts are feed_forward_length wide (llama.cpp's
	// llama and olmoe tensors: n_ff), not expert_feed_forward_length.
	ffnExperts bool
	moe        int // 0: dense only; 1: expert_count may be set (llama: Mixtral); 2: expert_count required
	// noNorm: build_moe_ffn's norm_w is false (the chosen experts keep
	// their softmax probabilities): qwen2moe, olmoe.
	noNorm bool
	shared bool // a gated shared expert (qwen2moe)
}

var architectures = map[string]archTraits{
	"llama":    {moe: 1, ffnExperts: true},
	"qwen2":    {neox: true, qkvBias: true},
	"qwen3":    {neox: true, qkNorm: true},
	"qwen3moe": {neox: true, qkNorm: true, moe: 2},
	"qwen2moe": {neox: true, qkvBias: true, moe: 2, noNorm: true, shared: true},
	"olmoe":    {neox: true, qkNorm: true, qkWhole: true, moe: 2, noNorm: true, ffnExperts: true},
}

// SupportedArchitectures lists the general.architecture values kiln runs.
func SupportedArchitectures() []string {
	return []string{"llama", "qwen2", "qwen3", "qwen3moe", "qwen2moe", "olmoe"}
}

// ConfigFromGGUF reads the model configuration from f's metadata.
func ConfigFromGGUF(f *gguf.File) (Config, error) {
	var c Config
	arch, ok := f.String("general.architecture")
	if !ok {
		return c, fmt.Errorf("model: general.architecture is missing: not a model file (a vocab-only GGUF?)")
	}
	tr, ok := architectures[arch]
	if !ok {
		return c, fmt.Errorf("model: architecture %q is not supported (kiln runs %v)", arch, SupportedArchitectures())
	}
	c.Arch = arch
	c.RopeNeox, c.QKVBias, c.QKNorm, c.QKNormWhole = tr.neox, tr.qkvBias, tr.qkNorm, tr.qkWhole

	need := func(key string) (int, error) {
		v, ok := f.Uint(arch + "." + key)
		if !ok {
			return 0, fmt.Errorf("model: metadata %s.%s is missing or not a non-negative integer", arch, key)
		}
		if v == 0 || v > 1<<24 {
			return 0, fmt.Errorf("model: metadata %s.%s = %d is out of range", arch, key, v)
		}
		return int(v), nil
	}
	var err error
	if c.Dim, err = need("embedding_length"); err != nil {
		return c, err
	}
	if c.Layers, err = need("block_count"); err != nil {
		return c, err
	}
	if c.Heads, err = need("attention.head_count"); err != nil {
		return c, err
	}
	// A mixture-of-experts architecture may leave the dense width out, as
	// llama.cpp allows: its FFN is ExpertFFN wide.
	if _, ok := f.Value(arch + ".feed_forward_length"); ok || tr.moe != 2 {
		if c.FFN, err = need("feed_forward_length"); err != nil {
			return c, err
		}
	}
	c.KVHeads = c.Heads
	if _, ok := f.Value(arch + ".attention.head_count_kv"); ok {
		if c.KVHeads, err = need("attention.head_count_kv"); err != nil {
			return c, err
		}
	}
	c.HeadDim = c.Dim / c.Heads
	if _, ok := f.Value(arch + ".attention.key_length"); ok {
		if c.HeadDim, err = need("attention.key_length"); err != nil {
			return c, err
		}
	}
	if v, ok := f.Uint(arch + ".attention.value_length"); ok && int(v) != c.HeadDim {
		return c, fmt.Errorf("model: value_length %d differs from key_length %d: not supported", v, c.HeadDim)
	}
	if err := c.readExperts(f, tr); err != nil {
		return c, err
	}
	c.Context = 4096
	if v, ok := f.Uint(arch + ".context_length"); ok && v > 0 && v < 1<<24 {
		c.Context = int(v)
	}
	c.NormEps = 1e-5
	if v, ok := f.Float(arch + ".attention.layer_norm_rms_epsilon"); ok {
		c.NormEps = float32(v)
	}
	c.RopeBase = 10000
	if v, ok := f.Float(arch + ".rope.freq_base"); ok {
		c.RopeBase = float32(v)
	}
	if err := c.readRopeScaling(f, arch); err != nil {
		return c, err
	}
	return c, c.Validate()
}

// Validate checks that the shape is self-consistent.
func (c *Config) Validate() error {
	switch {
	case c.Dim <= 0 || c.Layers <= 0 || c.Heads <= 0 || c.KVHeads <= 0 || c.HeadDim <= 0 || c.FFN < 0 || c.FFN == 0 && !c.MoE():
		return fmt.Errorf("model: config has a non-positive dimension: %+v", *c)
	case c.Heads%c.KVHeads != 0:
		return fmt.Errorf("model: %d query heads are not a multiple of %d KV heads", c.Heads, c.KVHeads)
	case c.HeadDim%2 != 0:
		return fmt.Errorf("model: head dimension %d is odd; RoPE needs pairs", c.HeadDim)
	case !(c.NormEps > 0) || math.IsInf(float64(c.NormEps), 0):
		return fmt.Errorf("model: rms epsilon %g must be positive", c.NormEps)
	case !(c.RopeBase > 0):
		return fmt.Errorf("model: rope.freq_base %g must be positive", c.RopeBase)
	}
	return nil
}

// QDim is the width of all query heads together.
func (c *Config) QDim() int { return c.Heads * c.HeadDim }

// KVDim is the width of all key (or value) heads together.
func (c *Config) KVDim() int { return c.KVHeads * c.HeadDim }

// maxExperts is llama.cpp's LLAMA_MAX_EXPERTS: its graph sums at most that
// many expert outputs, so a larger expert_used_count is not a model it runs.
const maxExperts = 512

// readExperts reads the mixture-of-experts keys: required when moe is 2,
// allowed when 1, refused (a dense architecture kiln has no MoE graph for)
// when 0. Every bad value names its key.
func (c *Config) readExperts(f *gguf.File, tr archTraits) error {
	moe := tr.moe
	key := func(k string) string { return c.Arch + "." + k }
	n, ok := f.Uint(key("expert_count"))
	if _, present := f.Value(key("expert_count")); present && !ok {
		return fmt.Errorf("model: metadata %s is not a non-negative integer", key("expert_count"))
	}
	switch {
	case n == 0 && moe == 2:
		return fmt.Errorf("model: metadata %s is missing or 0: %s is a mixture-of-experts architecture", key("expert_count"), c.Arch)
	case n == 0:
		return nil
	case moe == 0:
		return fmt.Errorf("model: metadata %s = %d: kiln runs %s only as a dense model (mixture of experts: qwen3moe, qwen2moe, olmoe, llama)", key("expert_count"), n, c.Arch)
	case n > maxExperts:
		return fmt.Errorf("model: metadata %s = %d is more than %d", key("expert_count"), n, maxExperts)
	}
	used, ok := f.Uint(key("expert_used_count"))
	if !ok {
		return fmt.Errorf("model: metadata %s is missing or not a non-negative integer", key("expert_used_count"))
	}
	if used == 0 || used > n {
		return fmt.Errorf("model: metadata %s = %d is out of range 1..%s (%d)", key("expert_used_count"), used, key("expert_count"), n)
	}
	c.Experts, c.ExpertsUsed = int(n), int(used)
	// qwen3moe and llama renormalise (build_moe_ffn's norm_w = true);
	// qwen2moe's and olmoe's graphs pass false.
	c.ExpertNorm = !tr.noNorm
	if tr.ffnExperts {
		// llama.cpp's llama and olmoe tensors: experts as wide as
		// feed_forward_length.
		c.ExpertFFN = c.FFN
		return nil
	}
	c.ExpertFFN = c.FFN / c.ExpertsUsed
	if _, present := f.Value(key("expert_feed_forward_length")); present {
		v, ok := f.Uint(key("expert_feed_forward_length"))
		if !ok || v == 0 || v > 1<<24 {
			return fmt.Errorf("model: metadata %s is not an integer in 1..%d", key("expert_feed_forward_length"), 1<<24)
		}
		c.ExpertFFN = int(v)
	}
	if c.ExpertFFN == 0 {
		return fmt.Errorf("model: metadata %s is missing and feed_forward_length/expert_used_count is 0", key("expert_feed_forward_length"))
	}
	if !tr.shared {
		return nil
	}
	// llama.cpp: n_ff_shexp = expert_shared_feed_forward_length, or n_ff.
	c.SharedFFN = c.FFN
	if _, present := f.Value(key("expert_shared_feed_forward_length")); present {
		v, ok := f.Uint(key("expert_shared_feed_forward_length"))
		if !ok || v == 0 || v > 1<<24 {
			return fmt.Errorf("model: metadata %s is not an integer in 1..%d", key("expert_shared_feed_forward_length"), 1<<24)
		}
		c.SharedFFN = int(v)
	}
	if c.SharedFFN == 0 {
		return fmt.Errorf("model: metadata %s and feed_forward_length are missing: %s has a shared expert", key("expert_shared_feed_forward_length"), c.Arch)
	}
	return nil
}
