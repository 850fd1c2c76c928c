package synth

import "sort"

// shapes are the hyperparameters of real models, from their HF config.json
// (hidden_size, num_hidden_layers, num_attention_heads, num_key_value_heads,
// head_dim, intermediate_size, vocab_size, max_position_embeddings,
// rope_theta, rms_norm_eps, tie_word_embeddings, rope_scaling).
var shapes = map[string]Spec{
	// Karpathy's llama2.c TinyStories 15M.
	"stories15m": {Arch: "llama", Dim: 288, Layers: 6, Heads: 6, KVHeads: 6, FFN: 768,
		VocabSize: 32000, Ctx: 256, RopeTheta: 10000, NormEps: 1e-5},
	// HuggingFaceTB/SmolLM2-135M.
	"smollm2-135m": {Arch: "llama", Dim: 576, Layers: 30, Heads: 9, KVHeads: 3, FFN: 1536,
		VocabSize: 49152, Ctx: 8192, RopeTheta: 100000, NormEps: 1e-5, Tied: true},
	// Qwen/Qwen2.5-0.5B.
	"qwen2.5-0.5b": {Arch: "qwen2", Dim: 896, Layers: 24, Heads: 14, KVHeads: 2, FFN: 4864,
		VocabSize: 151936, Ctx: 32768, RopeTheta: 1e6, NormEps: 1e-6, Tied: true},
	// meta-llama/Llama-3.2-1B.
	"llama-3.2-1b": {Arch: "llama", Dim: 2048, Layers: 16, Heads: 32, KVHeads: 8, HeadDim: 64, FFN: 8192,
		VocabSize: 128256, Ctx: 131072, RopeTheta: 500000, NormEps: 1e-5, Tied: true,
		RopeScaling: &Llama3Rope{Factor: 32, LowFreqFactor: 1, HighFreqFactor: 4, OriginalContext: 8192}},
	// TinyLlama/TinyLlama-1.1B-Chat-v1.0.
	"tinyllama-1.1b": {Arch: "llama", Dim: 2048, Layers: 22, Heads: 32, KVHeads: 4, FFN: 5632,
		VocabSize: 32000, Ctx: 2048, RopeTheta: 10000, NormEps: 1e-5},
	// Qwen/Qwen3-30B-A3B: 128 experts of width 768 (moe_intermediate_size),
	// 8 per token; intermediate_size 6144 is written but unused, as in its GGUF.
	"qwen3-30b-a3b": {Arch: "qwen3moe", Dim: 2048, Layers: 48, Heads: 32, KVHeads: 4, HeadDim: 128, FFN: 6144,
		Experts: 128, ExpertsUsed: 8, ExpertFFN: 768,
		VocabSize: 151936, Ctx: 40960, RopeTheta: 1e6, NormEps: 1e-6},
	// Qwen/Qwen1.5-MoE-A2.7B: 60 experts of width 1408, 4 per token, and a
	// shared expert of width 5632 (shared_expert_intermediate_size).
	"qwen1.5-moe-a2.7b": {Arch: "qwen2moe", Dim: 2048, Layers: 24, Heads: 16, KVHeads: 16, FFN: 5632,
		Experts: 60, ExpertsUsed: 4, ExpertFFN: 1408, SharedFFN: 5632,
		VocabSize: 151936, Ctx: 8192, RopeTheta: 1e6, NormEps: 1e-6},
	// allenai/OLMoE-1B-7B-0924: 64 experts of width 1024 (intermediate_size,
	// which its GGUF writes as feed_forward_length), 8 per token, no GQA.
	"olmoe-1b-7b": {Arch: "olmoe", Dim: 2048, Layers: 16, Heads: 16, KVHeads: 16, FFN: 1024,
		Experts: 64, ExpertsUsed: 8,
		VocabSize: 50304, Ctx: 4096, RopeTheta: 10000, NormEps: 1e-5},
	// mistralai/Mixtral-8x7B-v0.1: llama with 8 experts of width 14336
	// (intermediate_size, as its GGUF's feed_forward_length), 2 per token.
	"mixtral-8x7b": {Arch: "llama", Dim: 4096, Layers: 32, Heads: 32, KVHeads: 8, FFN: 14336,
		Experts: 8, ExpertsUsed: 2,
		VocabSize: 32000, Ctx: 32768, RopeTheta: 1e6, NormEps: 1e-5},
	// Qwen/Qwen3-0.6B: heads*head_dim (2048) differs from dim (1024).
	"qwen3-0.6b": {Arch: "qwen3", Dim: 1024, Layers: 28, Heads: 16, KVHeads: 8, HeadDim: 128, FFN: 3072,
		VocabSize: 151936, Ctx: 40960, RopeTheta: 1e6, NormEps: 1e-6, Tied: true},
}

// Shape returns the named real-model shape (general.name set to name).
func Shape(name string) (Spec, bool) {
	s, ok := shapes[name]
	if !ok {
		return Spec{}, false
	}
	s.Name = name
	if s.RopeScaling != nil {
		r := *s.RopeScaling
		s.RopeScaling = &r
	}
	return s, true
}

// ShapeNames lists the names Shape knows, sorted.
func ShapeNames() []string {
	names := make([]string, 0, len(shapes))
	for n := range shapes {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}
