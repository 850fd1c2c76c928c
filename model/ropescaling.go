package model

import (
	"fmt"
	"math"
	"strings"

	"kiln/gguf"
	"kiln/kernels"
)

// RoPE scaling, read and defaulted as llama.cpp does (llama-model.cpp's
// load_hparams, llama-context.cpp's context parameters) for the dense
// architectures kiln runs:
//
//   - rope.scaling.type: none, linear (the default when absent), yarn; kiln
//     also names llama3, whose scaling is the rope_freqs.weight tensor.
//   - rope.scaling.factor (else the older rope.scale_linear): positions are
//     multiplied by 1/factor. llama.cpp reads it whatever the type but none.
//   - rope.scaling.original_context_length: YaRN's n_ctx_orig, else
//     context_length.
//   - rope.scaling.attn_factor: multiplies cos and sin (default 1).
//
// For YaRN llama.cpp sets ext_factor 1, beta_fast 32, beta_slow 1 and the
// attention factor mscale(factor) / (1 + 0.1 ln factor) * attn_factor, where
// mscale(s) = 0.1 ln s + 1 for s > 1, else 1: the kernel's own magnitude
// scale 1 + 0.1 ln factor then nearly cancels (llama.cpp PR 17945), so the
// net scale is close to attn_factor. The keys rope.scaling.yarn_ext_factor,
// yarn_attn_factor, yarn_beta_fast and yarn_beta_slow that
// convert_hf_to_gguf.py may write are read by llama.cpp only for other
// architectures (grok, mistral3), so kiln ignores them too.

// Defaults of llama.cpp's llama_hparams for YaRN.
const (
	yarnBetaFast = 32
	yarnBetaSlow = 1
)

// readRopeScaling fills RopeFreqScale, RopeScaling, RopeOrigContext and
// RopeAttnFactor from the GGUF metadata (Context must be set).
func (c *Config) readRopeScaling(f *gguf.File, arch string) error {
	key := func(k string) string { return arch + ".rope." + k }
	c.RopeFreqScale = 1
	c.RopeScaling = ""
	if typ, ok := f.String(key("scaling.type")); ok {
		switch typ {
		case "none", "linear", "yarn", "llama3":
			c.RopeScaling = typ
		default:
			return fmt.Errorf("model: %s %q is not supported (kiln supports none, linear, yarn, llama3)", key("scaling.type"), typ)
		}
	}
	factorKey := key("scaling.factor")
	factor, ok := f.Float(factorKey)
	if !ok {
		factorKey = key("scale_linear")
		factor, ok = f.Float(factorKey)
	}
	if ok && c.RopeScaling != "none" && c.RopeScaling != "llama3" {
		// llama.cpp takes 0 as "no scaling"; a negative or non-finite
		// factor is not a model it can mean.
		if factor < 0 || math.IsNaN(factor) || math.IsInf(factor, 0) || factor == 0 && c.RopeScaling == "yarn" {
			return fmt.Errorf("model: %s = %v must be positive", factorKey, factor)
		}
		if factor != 0 {
			// llama.cpp: 1.0f/ropescale in float32 (float64 division rounded
			// once more is the same for float32 operands).
			c.RopeFreqScale = float32(1 / float64(float32(factor)))
		}
	}
	if c.RopeScaling == "yarn" && !ok {
		return fmt.Errorf("model: rope scaling type yarn needs %s", key("scaling.factor"))
	}
	c.RopeOrigContext = c.Context
	if v, ok := f.Value(key("scaling.original_context_length")); ok {
		n, ok := v.Uint()
		if !ok || n == 0 || n >= 1<<31 {
			return fmt.Errorf("model: %s = %v must be a positive integer", key("scaling.original_context_length"), v)
		}
		c.RopeOrigContext = int(n)
	}
	c.RopeAttnFactor = 1
	if v, ok := f.Float(key("scaling.attn_factor")); ok {
		if !(v > 0) || math.IsInf(v, 0) {
			return fmt.Errorf("model: %s = %v must be positive", key("scaling.attn_factor"), v)
		}
		c.RopeAttnFactor = float32(v)
	}
	return nil
}

// YaRN reports whether RoPE uses YaRN (llama.cpp's ext_factor != 0).
func (c *Config) YaRN() bool { return c.RopeScaling == "yarn" }

// ropeKernel is the RoPE kernel configuration for this model, with
// freqFactors the llama3 rope_freqs (nil without).
func (c *Config) ropeKernel(freqFactors []float32) kernels.RoPE {
	r := kernels.RoPE{
		HeadDim:     c.HeadDim,
		Base:        c.RopeBase,
		FreqScale:   c.RopeFreqScale,
		FreqFactors: freqFactors,
		Neox:        c.RopeNeox,
		AttnFactor:  c.ropeAttnFactor(),
	}
	if c.YaRN() {
		r.ExtFactor, r.OrigContext = 1, c.RopeOrigContext
		r.BetaFast, r.BetaSlow = yarnBetaFast, yarnBetaSlow
		if r.OrigContext == 0 {
			r.OrigContext = c.Context
		}
	}
	return r
}

// ropeAttnFactor is llama.cpp's cparams.yarn_attn_factor, with the float32
// arithmetic of llama-context.cpp (compiled without FMA): for YaRN,
// mscale(factor) * (1 / (1 + 0.1f*logf(factor))), then times RopeAttnFactor.
func (c *Config) ropeAttnFactor() float32 {
	attn := float32(1)
	if c.YaRN() {
		fs := c.RopeFreqScale
		if fs == 0 {
			fs = 1
		}
		factor := float32(1 / float64(fs))
		if factor > 1 {
			attn = float32(float32(0.1)*kernels.Logf(factor)) + 1 // no FMA: explicit rounding
		}
		attn *= 1 / (1 + float32(float32(0.1)*kernels.Logf(factor)))
	}
	if c.RopeAttnFactor != 0 {
		attn *= c.RopeAttnFactor
	}
	return attn
}

// RopeScalingSummary describes the rope scaling for kiln inspect, "" when
// there is none: e.g. "yarn, factor 4, original context 32768".
func (c *Config) RopeScalingSummary() string {
	factor := float32(1)
	if c.RopeFreqScale != 0 {
		factor = float32(1 / float64(c.RopeFreqScale))
	}
	var s string
	switch {
	case c.YaRN():
		s = fmt.Sprintf("yarn, factor %g, original context %d (YaRN attention factor %g)", factor, c.RopeOrigContext, c.ropeAttnFactor())
	case c.RopeScaling == "llama3":
		s = "llama3 (rope_freqs.weight)"
	case factor != 1:
		s = fmt.Sprintf("linear, factor %g", factor)
	}
	if !c.YaRN() && c.RopeAttnFactor != 0 && c.RopeAttnFactor != 1 {
		s = strings.TrimPrefix(s+fmt.Sprintf(", attn factor %g", c.RopeAttnFactor), ", ")
	}
	return s
}
