// Package convert rewrites GGUF files with their tensors in another ggml
// type: the engine behind `kiln quantize IN OUT TYPE`, and the tensor-type
// policy that `kiln synth` shares with it.
//
// What it owns:
//
//   - FileType: llama.cpp's llama_ftype (general.file_type), its names as
//     llama-quantize spells them, and each one's default tensor type.
//   - ChooseTypes: the per-tensor type of a file type, as llama-quantize's
//     llama_tensor_get_type picks it (src/llama-quant.cpp): which tensors are
//     quantized at all, the Q4_K_M / Q5_K_M / Q4_K_S mixes (more bits for
//     output, some attn_v and ffn_down layers), and the fallbacks for rows
//     that are not a whole number of blocks.
//   - Encode: one run of float32 values to the bytes of a tensor type.
//   - Convert: read a GGUF, write a new one, metadata copied with
//     general.file_type and general.quantization_version set, tensors
//     streamed one at a time (dequantize -> float32 -> quantize).
//   - FromHF: a Hugging Face folder written as the GGUF convert_hf_to_gguf.py
//     and llama-quantize would write (kiln convert); LoadHF: the same
//     conversion in memory, loaded as a model (--type on a folder MODEL).
//
// Invariants:
//
//   - A tensor is quantized only if it has two or more dimensions, its
//     name ends in "weight" and is not a norm ("_norm.weight"); 1-D tensors
//     (norms, biases, rope_freqs) keep their type, as in llama-quantize.
//   - A tensor whose type does not change is copied byte for byte.
//   - The mix rules count attn_v and ffn_down tensors in llama.cpp's order
//     (layer number, then name), so "layer i" means what it means there.
//
// Row arithmetic: a tensor of ggml shape [ne0, ne1, ...] is ne1*... rows of
// ne0 elements; every type packs a row independently:
//
//	row bytes = ne0 / BlockSize * BlockBytes     (ne0 % BlockSize == 0)
//	float32 row r <-> bytes [r*rowBytes, (r+1)*rowBytes)
package convert
