package synth

import (
	"kiln/convert"
	"kiln/gguf"
)

// ggmlQuantVersion is GGML_QNT_VERSION, written as general.quantization_version.
const ggmlQuantVersion = 2

// Metadata returns the general.* and {arch}.* keys of s (after defaults) as
// convert_hf_to_gguf.py writes them, with general.file_type ft; the
// tokenizer.* keys come from the Vocab. s.VocabSize must be set.
//
// All integers are uint32 and all floats float32, as gguf-py's add_uint32
// and add_float32 write them. llama writes vocab_size and
// rope.dimension_count (LlamaModel); key_length/value_length are written
// when head_dim is not dim/heads, and always for qwen3 (whose HF config
// always carries head_dim).
func (s Spec) Metadata(ft convert.FileType) []gguf.KV {
	s = s.withDefaults()
	var kv []gguf.KV
	add := func(k string, v gguf.Value) { kv = append(kv, gguf.KV{Key: k, Value: v}) }
	u32 := func(k string, x int) { add(s.Arch+"."+k, gguf.Uint32Value(uint32(x))) }
	f32 := func(k string, x float64) { add(s.Arch+"."+k, gguf.Float32Value(float32(x))) }

	add("general.architecture", gguf.StringValue(s.Arch))
	add("general.type", gguf.StringValue("model"))
	add("general.name", gguf.StringValue(s.Name))
	u32("block_count", s.Layers)
	u32("context_length", s.Ctx)
	u32("embedding_length", s.Dim)
	u32("feed_forward_length", s.FFN)
	u32("attention.head_count", s.Heads)
	u32("attention.head_count_kv", s.KVHeads)
	f32("rope.freq_base", s.RopeTheta)
	f32("attention.layer_norm_rms_epsilon", s.NormEps)
	if s.Experts > 0 {
		u32("expert_count", s.Experts)
		u32("expert_used_count", s.ExpertsUsed)
		if s.Arch == "qwen3moe" || s.Arch == "qwen2moe" {
			u32("expert_feed_forward_length", s.ExpertFFN)
		}
		if s.Arch == "qwen2moe" {
			u32("expert_shared_feed_forward_length", s.SharedFFN)
		}
	}
	if s.Arch == "qwen3" || s.Arch == "qwen3moe" || s.HeadDim*s.Heads != s.Dim {
		u32("attention.key_length", s.HeadDim)
		u32("attention.value_length", s.HeadDim)
	}
	if r := s.ScaledRope; r != nil { // TextModel.set_gguf_parameters
		add(s.Arch+".rope.scaling.type", gguf.StringValue(r.Type))
		f32("rope.scaling.factor", r.Factor)
		if r.Type == "yarn" {
			u32("rope.scaling.original_context_length", r.OriginalContext)
		}
	}
	if s.PoolingType > 0 {
		u32("pooling_type", s.PoolingType)
	}
	add("general.file_type", gguf.Uint32Value(uint32(ft)))
	if s.Arch == "llama" {
		u32("vocab_size", s.VocabSize)
		u32("rope.dimension_count", s.HeadDim)
	}
	add("general.quantization_version", gguf.Uint32Value(ggmlQuantVersion))
	return kv
}
