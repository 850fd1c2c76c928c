// Package tokenizer turns text into token ids and back exactly as llama.cpp
// does (src/llama-vocab.cpp, src/unicode.cpp), for vocabularies read from GGUF
// metadata (tokenizer.ggml.*) or from tokenizer files.
//
// It owns:
//   - Vocab: token texts, scores, types, merges, special ids and flags, as
//     GGUF stores them (VocabFromGGUF; Metadata writes them back), loaders
//     for SentencePiece .model, GPT-2 vocab.json + merges.txt and tiktoken
//     ranks, and AddSpecials for the special tokens those files leave out;
//     LoadHFTokenizer for Hugging Face tokenizer.json folders (byte-level
//     BPE maps onto "gpt2", with Qwen2's NFC normalizer; normalizer- or
//     Metaspace-based BPE, such as Llama 2, Mistral or TinyStories, onto
//     ModelHFBPE, which encodes as the tokenizers library does, not as
//     llama.cpp's converted GGUFs do; testdata/hf holds the library's ids
//     for Llama 2 (four normalizer / Metaspace spellings), Llama 3, Qwen2,
//     GPT-2 and TinyStories, made by scripts/hf-tokenizer-goldens.js);
//     HFFiles writes a vocabulary back as tokenizer.json (kiln synth
//     --format hf), AsSPM turns an hf-bpe vocab into llama.cpp's "llama"
//     (kiln convert) and GGUFCaveats says where that GGUF then differs;
//   - Tokenizer: SentencePiece ("llama": score-ordered merges, byte
//     fallback, dummy-prefix space) and byte-level BPE ("gpt2": pre-tokenizer
//     chosen by tokenizer.ggml.pre, rank-ordered merges), special-token
//     splitting, Decode, Piece, end-of-generation ids;
//   - Decoder: streaming detokenization that returns only final, complete
//     UTF-8 text and adds up to exactly what Decode returns.
//
// Fidelity: every llama.cpp tokenizer vector in shared/models passes, and
// testdata/oracle holds llama.cpp's answers (tokenize with and without
// special tokens, detokenize, end-of-generation ids) for 17 vocabularies.
//
// Encoding a text:
//
//	"<|im_start|>user\nHi"
//	   │ partition: special tokens cut out (longest first; control tokens only when parsing specials)
//	   ▼
//	[<|im_start|>] ["user\nHi"]
//	   │ SPM: " " → "▁", one symbol per character, merge best-scored pairs
//	   │ BPE: pre-tokenize into words, spell bytes as GPT-2 characters, merge lowest-ranked pairs
//	   ▼
//	[151644] [872 198 13048]
//
// Invariants: a Tokenizer is immutable after New and safe for concurrent
// use; encoding allocates only its result (scratch buffers are pooled);
// token ids are int32 in [0, Size()); -1 means "no such token"; bad input
// (unknown model or pre-tokenizer, duplicate tokens, ids out of range) is an
// error from New or the loaders, never a panic. Where llama.cpp's behaviour
// is unspecified (hash-map order, unstable sorts) or crashes, the comments
// say what kiln does instead.
package tokenizer
