package model

import (
	"fmt"
	"math"

	"kiln/gguf"
)

// Config is a model's shape and numerics, read from GGUF metadata.
type Config struct {
	Arch     string // general.architecture: "llama", "qwen2" or "qwen3"
	Dim      int    // embedding_length: width of the residual stream
	Layers   int    // block_count
	Heads    int    // attention.head_count: query heads
	KVHeads  int    // attention.head_count_kv: key/value heads (divides Heads)
	HeadDim  int    // attention.key_length, or Dim/Heads
	FFN      int    // feed_forward_length: hidden width of the SwiGLU MLP
	Vocab    int    // rows of token_embd.weight
	Context  int    // context_length the model was trained for
	NormEps  float32
	RopeBase float32 // rope.freq_base (theta)
	// RopeFreqScale multiplies positions (1/factor for linear scaling).
	RopeFreqScale float32
	// RopeNeox selects the rotation layout: pairs (i, i+HeadDim/2) as GPT-NeoX
	// and Qwen do, rather than llama's adjacent pairs (2i, 2i+1).
	RopeNeox bool
	QKVBias  bool // qwen2: attn_q/k/v carry biases
	QKNorm   bool // qwen3: per-head RMSNorm of queries and keys before RoPE
	Tied     bool // no output.weight: logits use token_embd.weight
}

// archTraits are the per-architecture facts that metadata does not state.
type archTraits struct {
	neox    bool
	qkvBias bool
	qkNorm  bool
}

var architectures = map[string]archTraits{
	"llama": {},
	"qwen2": {neox: true, qkvBias: true},
	"qwen3": {neox: true, qkNorm: true},
}

// SupportedArchitectures lists the general.architecture values kiln runs.
func SupportedArchitectures() []string { return []string{"llama", "qwen2", "qwen3"} }

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
	c.RopeNeox, c.QKVBias, c.QKNorm = tr.neox, tr.qkvBias, tr.qkNorm

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
	if c.FFN, err = need("feed_forward_length"); err != nil {
		return c, err
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
	c.RopeFreqScale = 1
	if v, ok := f.Float(arch + ".rope.scale_linear"); ok && v > 0 {
		c.RopeFreqScale = float32(1 / v)
	}
	if typ, ok := f.String(arch + ".rope.scaling.type"); ok {
		switch typ {
		case "none":
		case "linear":
			if v, ok := f.Float(arch + ".rope.scaling.factor"); ok && v > 0 {
				c.RopeFreqScale = float32(1 / v)
			}
		case "llama3":
			// Applied through the rope_freqs.weight tensor, as llama.cpp does.
		default:
			return c, fmt.Errorf("model: rope scaling type %q is not supported (kiln supports none, linear, llama3)", typ)
		}
	}
	return c, c.Validate()
}

// Validate checks that the shape is self-consistent.
func (c *Config) Validate() error {
	switch {
	case c.Dim <= 0 || c.Layers <= 0 || c.Heads <= 0 || c.KVHeads <= 0 || c.HeadDim <= 0 || c.FFN <= 0:
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
