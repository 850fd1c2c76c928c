// Package synth writes random-weight GGUF models of real architectures
// (llama, qwen2, qwen3, qwen3moe, qwen2moe, olmoe; llama with experts as Mixtral): kiln's equivalent of "--load-format dummy". A
// synthetic model has the tensor names, shapes and metadata keys that
// llama.cpp's convert_hf_to_gguf.py writes for the real model, so both kiln
// and llama.cpp load it, and their next-token distributions can be compared
// without shipping any trained weights.
//
// What it owns:
//
//   - Spec: an architecture and its hyperparameters; Shape(name): named
//     specs taken from the HF configs of real models (stories15m, smollm2-135m,
//     qwen2.5-0.5b, llama-3.2-1b, tinyllama-1.1b, qwen3-0.6b, qwen3-30b-a3b,
//     qwen1.5-moe-a2.7b, olmoe-1b-7b, mixtral-8x7b).
//   - Spec.Tensors: the tensor directory (names and ggml shapes) and
//     Spec.Metadata: the {arch}.* and general.* keys.
//   - the weights: deterministic normal deviates, one stream per
//     (seed, tensor name, row), so a tensor does not depend on write order
//     and rows can be generated in parallel.
//   - Vocab: the tokenizer.* metadata copied from a GGUF, built from a
//     tokenizer file, or synthesised (a small SentencePiece-style vocab).
//   - Plan: the whole file but its data (metadata, directory, types);
//     Model.WriteFile / Write stream it to disk, one batch of rows at a time
//     (a 1.1B F32 model is 4.4 GB and never sits in memory).
//   - Model.WriteHF: the same weights as a Hugging Face folder (config.json,
//     safetensors shards with one tensor per expert as checkpoints store
//     them, tokenizer.json from the vocabulary), streamed the
//     same way, under model.HFTensorNames' names; model.LoadHF of it equals
//     model.Load of the GGUF.
//
// Invariants:
//
//   - Same Spec, Vocab, type and seed give the same bytes.
//   - Matrices are stored as llama.cpp expects: ggml shape [ne0, ne1] with
//     ne0 the input (contiguous) dimension, so attn_q is [dim, heads*headDim]
//     and token_embd is [dim, vocab].
//   - 1-D tensors (norms, biases, rope_freqs) stay F32, as llama-quantize
//     leaves them; matrices take the requested type, falling back per
//     llama-quantize when a row length is not a multiple of the block size
//     (convert.ChooseTypes decides, so synth and kiln quantize agree).
//
// Weight scales (why the activations stay sane through every layer):
//
//	token_embd   N(0, 1)              untied; N(0, (2/sqrt(dim))^2) when tied
//	output       N(0, (2/sqrt(dim))^2) logits ~ N(0, 4): peaked, not one-hot
//	attn_q/k/v,
//	ffn_gate/up  N(0, 1/dim)          unit-variance outputs from an RMS-normed input
//	attn_output  N(0, 1/(heads*headDim))
//	ffn_down     N(0, 1/ffn)
//	ffn_gate_inp N(0, 1/dim)          router logits ~ N(0, 1): clear-cut choices
//	ffn_gate/up_exps N(0, 1/dim)      as ffn_gate/up, per expert
//	ffn_down_exps N(0, k/effn)        k = experts used: the weighted sum of k
//	                                  experts has about 1/sqrt(k) one's spread
//	*_norm       1 + N(0, 0.1^2)       near 1, never the identity
//	attn_q/k.bias N(0, 0.5^2)         large enough that a dropped bias shows
//	attn_v.bias  N(0, 0.1^2)          passes through attention unchanged into the
//	                                  residual: larger ones make deep models ignore their input
//	rope_freqs   Llama 3 factors, computed as convert_hf_to_gguf.py does
//
// Row-major index arithmetic of a matrix tensor of ggml shape [ne0, ne1]:
//
//	element (row r, column c) = data[r*ne0 + c],  r < ne1, c < ne0
//	row r is drawn from stream(seed, name, r): ne0 normal deviates in order
package synth
