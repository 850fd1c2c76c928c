package model

import (
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"unsafe"

	"kiln/gguf"
	"kiln/safetensors"
)

// Hugging Face folders: config.json plus model.safetensors (or shards named
// by model.safetensors.index.json). LoadHF maps them onto the same Config
// and Weights that Load builds from a GGUF file, so everything downstream
// runs unchanged.
//
// The tensor names map as llama.cpp's convert_hf_to_gguf.py maps them
// (hfTensors). Matrices keep their bytes: HF stores a Linear weight as
// [out][in] row-major, which is GGUF's shape [in, out].
//
// RoPE: HF's Llama and Mistral rotate (i, i+HeadDim/2) pairs (rotate_half)
// while GGUF's llama layout, and so kiln's llama path, rotates adjacent
// (2i, 2i+1) pairs; llama.cpp's converter permutes the rows of q_proj and
// k_proj within each head to bridge the two. LoadHF does the same
// permutation at load (permuteHeads: copies of Q and K on the heap), so an
// HF folder and its GGUF conversion compute bit-identical logits. Qwen2
// and Qwen3 use the NeoX rotation in both worlds: no permutation.
//
// Mixtures of experts (Mixtral, Qwen2-MoE, Qwen3-MoE, OLMoE): hfmoe.go.

// HFArchitectures maps the config.json architectures kiln loads to kiln's
// architecture names.
var HFArchitectures = map[string]string{
	"LlamaForCausalLM":    "llama",
	"MistralForCausalLM":  "llama",
	"MixtralForCausalLM":  "llama", // with experts (hfmoe.go)
	"Qwen2ForCausalLM":    "qwen2",
	"Qwen3ForCausalLM":    "qwen3",
	"Qwen2MoeForCausalLM": "qwen2moe",
	"Qwen3MoeForCausalLM": "qwen3moe",
	"OlmoeForCausalLM":    "olmoe",
}

// hfPermute turns the llama q/k row permutation off, only for the test
// that shows it matters.
var hfPermute = true

// HFConfig is config.json as far as kiln reads it.
type HFConfig struct {
	Architectures         []string        `json:"architectures"`
	HiddenSize            *int            `json:"hidden_size"`
	NumHiddenLayers       *int            `json:"num_hidden_layers"`
	NumAttentionHeads     *int            `json:"num_attention_heads"`
	NumKeyValueHeads      *int            `json:"num_key_value_heads"`
	HeadDim               *int            `json:"head_dim"`
	IntermediateSize      *int            `json:"intermediate_size"`
	VocabSize             *int            `json:"vocab_size"`
	MaxPositionEmbeddings *int            `json:"max_position_embeddings"`
	RMSNormEps            *float64        `json:"rms_norm_eps"`
	RopeTheta             *float64        `json:"rope_theta"`
	RopeScaling           json.RawMessage `json:"rope_scaling"`
	TieWordEmbeddings     *bool           `json:"tie_word_embeddings"`
	AttentionBias         *bool           `json:"attention_bias"`
	MLPBias               *bool           `json:"mlp_bias"`
	HiddenAct             *string         `json:"hidden_act"`
	SlidingWindow         *int            `json:"sliding_window"`
	UseSlidingWindow      *bool           `json:"use_sliding_window"`

	// Mixture of experts (hfmoe.go).
	NumLocalExperts              *int            `json:"num_local_experts"` // Mixtral
	NumExperts                   *int            `json:"num_experts"`       // Qwen2-MoE, Qwen3-MoE, OLMoE
	NumExpertsPerTok             *int            `json:"num_experts_per_tok"`
	MoEIntermediateSize          *int            `json:"moe_intermediate_size"`
	SharedExpertIntermediateSize *int            `json:"shared_expert_intermediate_size"`
	NormTopKProb                 *bool           `json:"norm_topk_prob"`
	DecoderSparseStep            *int            `json:"decoder_sparse_step"`
	MLPOnlyLayers                []int           `json:"mlp_only_layers"`
	ClipQKV                      json.RawMessage `json:"clip_qkv"` // OLMoE
}

// hfRopeScaling is config.json's rope_scaling object.
type hfRopeScaling struct {
	Type                          string   `json:"type"`
	RopeType                      string   `json:"rope_type"`
	Factor                        *float64 `json:"factor"`
	LowFreqFactor                 *float64 `json:"low_freq_factor"`
	HighFreqFactor                *float64 `json:"high_freq_factor"`
	OriginalMaxPositionEmbeddings *float64 `json:"original_max_position_embeddings"`
}

// ConfigFromHF reads dir/config.json. The Config's Vocab is vocab_size
// (checked against the embedding at load) and Tied is tie_word_embeddings.
// ropeFreqs is the llama3 rope_scaling as per-frequency divisors, nil
// without it.
func ConfigFromHF(dir string) (c Config, hc HFConfig, ropeFreqs []float32, err error) {
	path := filepath.Join(dir, "config.json")
	b, err := os.ReadFile(path)
	if err != nil {
		return c, hc, nil, fmt.Errorf("model: %w", err)
	}
	fail := func(format string, args ...any) (Config, HFConfig, []float32, error) {
		return c, hc, nil, fmt.Errorf("model: %s: %s", path, fmt.Sprintf(format, args...))
	}
	if err := json.Unmarshal(b, &hc); err != nil {
		return fail("%v", err)
	}
	if len(hc.Architectures) != 1 {
		return fail("architectures = %q, want one entry", hc.Architectures)
	}
	arch, ok := HFArchitectures[hc.Architectures[0]]
	if !ok {
		return fail("architectures[0] %q is not supported (kiln loads %s)", hc.Architectures[0], strings.Join(slices.Sorted(maps.Keys(HFArchitectures)), ", "))
	}
	c.Arch = arch
	tr := architectures[arch]
	c.RopeNeox, c.QKVBias, c.QKNorm, c.QKNormWhole = tr.neox, tr.qkvBias, tr.qkNorm, tr.qkWhole
	need := func(field string, v *int) (int, error) {
		if v == nil {
			return 0, fmt.Errorf("model: %s: %s is missing", path, field)
		}
		if *v <= 0 || *v > 1<<24 {
			return 0, fmt.Errorf("model: %s: %s = %d is out of range", path, field, *v)
		}
		return *v, nil
	}
	for _, f := range []struct {
		name string
		v    *int
		dst  *int
	}{
		{"hidden_size", hc.HiddenSize, &c.Dim},
		{"num_hidden_layers", hc.NumHiddenLayers, &c.Layers},
		{"num_attention_heads", hc.NumAttentionHeads, &c.Heads},
		{"intermediate_size", hc.IntermediateSize, &c.FFN},
		{"vocab_size", hc.VocabSize, &c.Vocab},
	} {
		if *f.dst, err = need(f.name, f.v); err != nil {
			return c, hc, nil, err
		}
	}
	c.KVHeads = c.Heads
	if hc.NumKeyValueHeads != nil {
		if c.KVHeads, err = need("num_key_value_heads", hc.NumKeyValueHeads); err != nil {
			return c, hc, nil, err
		}
	}
	c.HeadDim = c.Dim / c.Heads
	if hc.HeadDim != nil {
		if c.HeadDim, err = need("head_dim", hc.HeadDim); err != nil {
			return c, hc, nil, err
		}
	}
	c.Context = 4096
	if hc.MaxPositionEmbeddings != nil && *hc.MaxPositionEmbeddings > 0 {
		c.Context = *hc.MaxPositionEmbeddings
	}
	if hc.UseSlidingWindow != nil && *hc.UseSlidingWindow {
		return fail("use_sliding_window = true is not supported")
	}
	if arch == "llama" && hc.SlidingWindow != nil && *hc.SlidingWindow > 0 && *hc.SlidingWindow < c.Context {
		// Mistral: attention is exact while the context fits the window.
		c.Context = *hc.SlidingWindow
	}
	c.NormEps = 1e-6 // transformers' default for these architectures
	if hc.RMSNormEps != nil {
		c.NormEps = float32(*hc.RMSNormEps)
	}
	theta := 10000.0
	if hc.RopeTheta != nil {
		theta = *hc.RopeTheta
	}
	c.RopeBase = float32(theta)
	c.RopeFreqScale = 1
	c.Tied = hc.TieWordEmbeddings != nil && *hc.TieWordEmbeddings
	if hc.HiddenAct != nil && *hc.HiddenAct != "silu" {
		return fail("hidden_act %q is not supported (kiln runs silu)", *hc.HiddenAct)
	}
	if hc.MLPBias != nil && *hc.MLPBias {
		return fail("mlp_bias = true is not supported")
	}
	if hc.AttentionBias != nil && *hc.AttentionBias && !c.QKVBias {
		return fail("attention_bias = true is not supported for %s", hc.Architectures[0])
	}
	if len(hc.RopeScaling) > 0 && string(hc.RopeScaling) != "null" {
		var rs hfRopeScaling
		if err := json.Unmarshal(hc.RopeScaling, &rs); err != nil {
			return fail("rope_scaling: %v", err)
		}
		typ := rs.RopeType
		if typ == "" {
			typ = rs.Type
		}
		switch typ {
		case "default", "":
		case "linear":
			if rs.Factor == nil || !(*rs.Factor > 0) {
				return fail("rope_scaling.factor must be positive for linear scaling")
			}
			c.RopeFreqScale = float32(1 / *rs.Factor)
		case "llama3":
			if ropeFreqs, err = llama3Factors(&c, theta, &rs); err != nil {
				return fail("rope_scaling: %v", err)
			}
		default:
			return fail("rope_scaling.rope_type %q is not supported (kiln supports default, linear, llama3)", typ)
		}
	}
	if hc.Architectures[0] == "MixtralForCausalLM" || tr.moe == 2 {
		if err := hfExperts(&c, &hc, tr); err != nil {
			return fail("%v", err)
		}
	}
	if err := c.Validate(); err != nil {
		return fail("%s", strings.TrimPrefix(err.Error(), "model: "))
	}
	return c, hc, ropeFreqs, nil
}

// llama3Factors computes rope_freqs as convert_hf_to_gguf.py does for
// rope_type llama3: per frequency, the divisor of its angle.
func llama3Factors(c *Config, theta float64, rs *hfRopeScaling) ([]float32, error) {
	get := func(p *float64, def float64) float64 {
		if p == nil {
			return def
		}
		return *p
	}
	factor := get(rs.Factor, 8)
	low, high := get(rs.LowFreqFactor, 1), get(rs.HighFreqFactor, 4)
	old := get(rs.OriginalMaxPositionEmbeddings, 8192)
	if !(factor > 0) || !(low > 0) || !(high > low) || !(old > 0) {
		return nil, fmt.Errorf("llama3 scaling needs factor > 0 and high_freq_factor > low_freq_factor > 0 and original_max_position_embeddings > 0")
	}
	lowWave, highWave := old/low, old/high // Python floats (float64)
	out := make([]float32, c.HeadDim/2)
	for i := range out {
		// The script's float32 torch arithmetic, as synth's llama3RopeFactors
		// writes it out: arange(0, dim, 2, float32) / dim, base ** that,
		// 1 / that; a scalar / tensor is reciprocal(tensor) * scalar.
		exp := float32(2*i) / float32(c.HeadDim)
		freq := (1 / float32(math.Pow(theta, float64(exp)))) * 1
		wave := (1 / freq) * float32(2*math.Pi)
		switch {
		case float64(wave) < highWave:
			out[i] = 1
		case float64(wave) > lowWave:
			out[i] = float32(factor)
		default:
			smooth := ((1/wave)*float32(old) - float32(low)) / float32(high-low)
			out[i] = (1 / ((1-smooth)/float32(factor) + smooth)) * 1
		}
	}
	return out, nil
}

// hfTensor is one HF tensor seen as a GGUF tensor: its bytes in data, or,
// for experts stacked at load, one slice per expert in parts (data nil).
type hfTensor struct {
	info  gguf.TensorInfo
	data  []byte
	parts [][]byte
}

// hfSource serves loadWeights from a safetensors set.
type hfSource map[string]*hfTensor

func (s hfSource) Tensor(name string) (*gguf.TensorInfo, bool) {
	t, ok := s[name]
	if !ok {
		return nil, false
	}
	return &t.info, true
}

func (s hfSource) Data(t *gguf.TensorInfo) []byte {
	if h, ok := s[t.Name]; ok && &h.info == t {
		return h.data
	}
	return nil
}

// Parts serves loader.experts: a stacked expert tensor's per-expert
// slices, nil for a tensor stored whole.
func (s hfSource) Parts(t *gguf.TensorInfo) [][]byte {
	if h, ok := s[t.Name]; ok && &h.info == t {
		return h.parts
	}
	return nil
}

// hfName pairs an HF tensor name with its GGUF name and row-major shape;
// permute > 0 means permute its rows in heads of that many (llama q/k).
// A 3-D expert tensor has no HF name of its own: parts names the per-expert
// HF tensors, each of shape shape[1:], stacked along the first axis as
// convert_hf_to_gguf.py's torch.stack(datas, dim=0) does.
type hfName struct {
	hf, gguf string
	shape    []int
	permute  int
	parts    []string
}

// HFTensorName is one tensor LoadHF reads, as a Hugging Face checkpoint
// and as GGUF name it: HF name, GGUF name, HF (row-major) shape, and for
// llama's q/k projections the heads in which GGUF interleaves the rows HF
// keeps in rotate_half order (0: rows as they are). A stacked expert
// tensor has HF "" and Parts: the HF names of expert 0, 1, ..., each of
// shape Shape[1:] and holding the next Shape[1] rows of the GGUF tensor.
type HFTensorName struct {
	HF, GGUF string
	Shape    []int
	Permute  int
	Parts    []string
}

// HFTensorNames lists the tensors a folder of config c holds (as
// ConfigFromHF reads it; a tied model's embedding is model.embed_tokens),
// in convert_hf_to_gguf.py's order: what a writer of HF folders names.
func HFTensorNames(c Config) []HFTensorName {
	var out []HFTensorName
	for _, n := range hfTensors(&c) {
		out = append(out, HFTensorName{HF: n.hf, GGUF: n.gguf, Shape: n.shape, Permute: n.permute, Parts: n.parts})
	}
	return out
}

// hfTensors lists the tensors c needs, as convert_hf_to_gguf.py names them.
func hfTensors(c *Config) []hfName {
	qh, kh := 0, 0
	if c.Arch == "llama" && hfPermute {
		qh, kh = c.Heads, c.KVHeads
	}
	ns := []hfName{
		{hf: "model.embed_tokens.weight", gguf: "token_embd.weight", shape: []int{c.Vocab, c.Dim}},
		{hf: "model.norm.weight", gguf: "output_norm.weight", shape: []int{c.Dim}},
	}
	if !c.Tied {
		ns = append(ns, hfName{hf: "lm_head.weight", gguf: "output.weight", shape: []int{c.Vocab, c.Dim}})
	}
	one := func(hf, gguf string, shape ...int) hfName { return hfName{hf: hf, gguf: gguf, shape: shape} }
	for i := 0; i < c.Layers; i++ {
		p, g := fmt.Sprintf("model.layers.%d.", i), fmt.Sprintf("blk.%d.", i)
		ns = append(ns,
			one(p+"input_layernorm.weight", g+"attn_norm.weight", c.Dim),
			hfName{hf: p + "self_attn.q_proj.weight", gguf: g + "attn_q.weight", shape: []int{c.QDim(), c.Dim}, permute: qh},
			hfName{hf: p + "self_attn.k_proj.weight", gguf: g + "attn_k.weight", shape: []int{c.KVDim(), c.Dim}, permute: kh},
			one(p+"self_attn.v_proj.weight", g+"attn_v.weight", c.KVDim(), c.Dim),
			one(p+"self_attn.o_proj.weight", g+"attn_output.weight", c.Dim, c.QDim()),
			one(p+"post_attention_layernorm.weight", g+"ffn_norm.weight", c.Dim),
		)
		if c.MoE() {
			ns = append(ns, hfExpertTensors(c, p, g)...)
		} else {
			ns = append(ns,
				one(p+"mlp.gate_proj.weight", g+"ffn_gate.weight", c.FFN, c.Dim),
				one(p+"mlp.up_proj.weight", g+"ffn_up.weight", c.FFN, c.Dim),
				one(p+"mlp.down_proj.weight", g+"ffn_down.weight", c.Dim, c.FFN),
			)
		}
		if c.QKVBias {
			ns = append(ns,
				one(p+"self_attn.q_proj.bias", g+"attn_q.bias", c.QDim()),
				one(p+"self_attn.k_proj.bias", g+"attn_k.bias", c.KVDim()),
				one(p+"self_attn.v_proj.bias", g+"attn_v.bias", c.KVDim()),
			)
		}
		if c.QKNormWhole {
			ns = append(ns,
				one(p+"self_attn.q_norm.weight", g+"attn_q_norm.weight", c.QDim()),
				one(p+"self_attn.k_norm.weight", g+"attn_k_norm.weight", c.KVDim()),
			)
		} else if c.QKNorm {
			ns = append(ns,
				one(p+"self_attn.q_norm.weight", g+"attn_q_norm.weight", c.HeadDim),
				one(p+"self_attn.k_norm.weight", g+"attn_k_norm.weight", c.HeadDim),
			)
		}
	}
	return ns
}

var hfTypes = map[safetensors.DType]gguf.Type{"F32": gguf.TypeF32, "F16": gguf.TypeF16, "BF16": gguf.TypeBF16}

// permuteHeads reorders the rows of a [heads*hd][cols] matrix from HF's
// rotate_half layout to GGUF's interleaved one, as convert_hf_to_gguf.py's
// permute: reshape(heads, 2, hd/2, cols).swapaxes(1, 2). GGUF row
// h*hd + 2j + s is HF row h*hd + s*hd/2 + j.
func permuteHeads(data []byte, heads, rowBytes int) []byte {
	out := make([]byte, len(data))
	hd := len(data) / rowBytes / heads
	for h := 0; h < heads; h++ {
		for j := 0; j < hd/2; j++ {
			for s := 0; s < 2; s++ {
				dst, src := h*hd+2*j+s, h*hd+s*hd/2+j
				copy(out[dst*rowBytes:(dst+1)*rowBytes], data[src*rowBytes:(src+1)*rowBytes])
			}
		}
	}
	return out
}

// hfLookup resolves one HF tensor of the given row-major shape: its GGUF
// type and its bytes (a copy when the mapping leaves elements misaligned),
// naming the file and tensor in any error.
func hfLookup(set *safetensors.Set, name string, shape []int, tied bool) (gguf.Type, []byte, string, error) {
	t, f, ok := set.Tensor(name)
	if !ok && tied {
		// A tied checkpoint may store only the output side.
		t, f, ok = set.Tensor("lm_head.weight")
	}
	if !ok {
		return 0, nil, "", fmt.Errorf("model: %s: tensor %s is missing from the safetensors files", set.Dir, name)
	}
	typ, ok := hfTypes[t.DType]
	if !ok {
		return 0, nil, "", fmt.Errorf("model: %s: tensor %s has dtype %s; kiln loads F32, F16 and BF16", f.Path, t.Name, t.DType)
	}
	good := len(t.Shape) == len(shape)
	for i := 0; good && i < len(shape); i++ {
		good = t.Shape[i] == uint64(shape[i])
	}
	if !good {
		return 0, nil, "", fmt.Errorf("model: %s: tensor %s has shape %v, want %v from config.json", f.Path, t.Name, t.Shape, shape)
	}
	data := f.Data(t)
	if uintptr(unsafe.Pointer(unsafe.SliceData(data)))%uintptr(t.DType.Size()) != 0 {
		data = append([]byte(nil), data...) // misaligned elements: read a copy
	}
	return typ, data, f.Path, nil
}

// hfSourceFor resolves every tensor c needs in set, checking dtype and
// shape, and names the file and tensor in any error.
func hfSourceFor(set *safetensors.Set, c *Config, ropeFreqs []float32) (hfSource, error) {
	src := hfSource{}
	for _, n := range hfTensors(c) {
		shape := make([]uint64, len(n.shape))
		for i, d := range n.shape {
			shape[len(shape)-1-i] = uint64(d) // GGUF order: contiguous dimension first
		}
		if n.parts != nil {
			t, err := hfStack(set, n)
			if err != nil {
				return nil, err
			}
			t.info.Name, t.info.Shape = n.gguf, shape
			src[n.gguf] = t
			continue
		}
		typ, data, path, err := hfLookup(set, n.hf, n.shape, n.gguf == "token_embd.weight" && c.Tied)
		if err != nil {
			return nil, err
		}
		if n.permute > 0 {
			if n.shape[0]%n.permute != 0 || (n.shape[0]/n.permute)%2 != 0 {
				return nil, fmt.Errorf("model: %s: tensor %s: %d rows do not split into %d heads of even size", path, n.hf, n.shape[0], n.permute)
			}
			rb, err := typ.RowBytes(n.shape[len(n.shape)-1])
			if err != nil {
				return nil, fmt.Errorf("model: %s: tensor %s: %w", path, n.hf, err)
			}
			data = permuteHeads(data, n.permute, rb)
		}
		if typ != gguf.TypeF32 && hfWidened(n.gguf) {
			if data, err = widenF32(typ, data); err != nil {
				return nil, fmt.Errorf("model: %s: tensor %s: %w", path, n.hf, err)
			}
			typ = gguf.TypeF32
		}
		src[n.gguf] = &hfTensor{info: gguf.TensorInfo{Name: n.gguf, Shape: shape, Type: typ, Size: uint64(len(data))}, data: data}
	}
	if ropeFreqs != nil {
		b := unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(ropeFreqs))), 4*len(ropeFreqs))
		src["rope_freqs.weight"] = &hfTensor{info: gguf.TensorInfo{Name: "rope_freqs.weight", Shape: []uint64{uint64(len(ropeFreqs))}, Type: gguf.TypeF32, Size: uint64(len(b))}, data: b}
	}
	return src, nil
}

// LoadHF loads a Hugging Face folder: config.json and its safetensors
// weights (mapped read-only; Model.Close unmaps them). Weights stay in their
// stored type (F32, F16 or BF16); convert.LoadHF quantizes on load.
func LoadHF(dir string, opts Options) (*Model, error) {
	h, err := OpenHF(dir)
	if err != nil {
		return nil, err
	}
	return h.Load(opts)
}

// HFTensor is one tensor of a Hugging Face folder as a GGUF conversion
// holds it: GGUF name and shape, stored type, llama q/k rows permuted.
// A 3-D expert tensor stacked from per-expert HF tensors leaves Data nil
// and has Parts instead: expert e's bytes (Info.Shape[0] x Info.Shape[1]
// elements) are Parts[e], and the tensor is their concatenation, which
// nothing needs to copy (the experts stay in the mapped files).
type HFTensor struct {
	Info  gguf.TensorInfo
	Data  []byte
	Parts [][]byte
}

// HFFolder is a Hugging Face folder read for conversion to GGUF: what
// LoadHF loads, before it becomes Weights.
type HFFolder struct {
	Config  Config
	HF      HFConfig
	Tensors []HFTensor // in the order convert_hf_to_gguf.py meets them; rope_freqs.weight (llama3 scaling) last
	set     *safetensors.Set
}

// OpenHF reads dir's config.json and maps its safetensors files, resolving
// every tensor the model needs exactly as LoadHF does (same names, shapes,
// permutation), so a GGUF written from it loads into the same weights.
// Close unmaps the files; Tensors' Data is invalid after it.
func OpenHF(dir string) (*HFFolder, error) {
	cfg, hc, ropeFreqs, err := ConfigFromHF(dir)
	if err != nil {
		return nil, err
	}
	set, err := safetensors.OpenDir(dir)
	if err != nil {
		return nil, fmt.Errorf("model: %w", err)
	}
	src, err := hfSourceFor(set, &cfg, ropeFreqs)
	if err != nil {
		set.Close()
		return nil, err
	}
	h := &HFFolder{Config: cfg, HF: hc, set: set}
	names := hfTensors(&cfg)
	if ropeFreqs != nil {
		names = append(names, hfName{gguf: "rope_freqs.weight"})
	}
	for _, n := range names {
		t := src[n.gguf]
		h.Tensors = append(h.Tensors, HFTensor{Info: t.info, Data: t.data, Parts: t.parts})
	}
	return h, nil
}

// Close unmaps the folder's safetensors files.
func (h *HFFolder) Close() error { return h.set.Close() }

// Load builds a model from h.Tensors as they are now: a caller may have
// replaced a tensor's Info (type, size) and Data, as convert.LoadHF does
// when it quantizes on load. The model takes over h: Model.Close unmaps
// the files, and h must not be closed. On error h is closed.
func (h *HFFolder) Load(opts Options) (*Model, error) {
	cfg := h.Config
	src := hfSource{}
	for i := range h.Tensors {
		t := &h.Tensors[i]
		src[t.Info.Name] = &hfTensor{info: t.Info, data: t.Data, parts: t.Parts}
	}
	w, err := loadWeights(src, &cfg)
	if err != nil {
		h.Close()
		return nil, fmt.Errorf("%w (loading %s)", err, h.set.Dir)
	}
	if cfg.Vocab != h.Config.Vocab || cfg.Tied != h.Config.Tied {
		h.Close()
		return nil, fmt.Errorf("model: %s: loaded vocab %d tied %v, config.json says vocab_size %d tie_word_embeddings %v", h.set.Dir, cfg.Vocab, cfg.Tied, h.Config.Vocab, h.Config.Tied)
	}
	m, err := newModel(cfg, w, opts, func([]byte) {})
	if err != nil {
		h.Close()
		return nil, err
	}
	m.files = h.set
	return m, nil
}
