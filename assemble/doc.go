// Package assemble builds a running engine from model files, in one
// place for every command (kiln serve, run, generate, probs, bench):
//
//	Options{Model, Draft, Scheme, Threads}      what to open
//	   Load  -> Assembly{Model, Tokenizer, Draft}  weights mapped or loaded,
//	                                               the draft on the target's
//	                                               worker pool, vocabularies checked
//	   Start(KV{Budget, BlockSize, PerSeq, Seqs}, engine.Config)
//	         -> Assembly.Engine                   the KV pool sized from the
//	                                               budget, the engine running
//	   Close                                       engine, draft, model, mapping
//
// Open is Load then Start. Load and Start are apart because some callers
// need the model before they know how long a sequence is (its context,
// a prompt's tokens).
//
// A MODEL is a GGUF file or a Hugging Face folder (config.json,
// *.safetensors, tokenizer.json), quantized on load with Options.Scheme
// as `kiln convert --type` would write it. hf: references are resolved
// (downloaded) by the caller first: this package does no network I/O.
//
// The KV budget: KV.Budget bytes, or DefaultShare of the system's
// available memory (internal/memstat) when it is 0. One block id holds
// the KV of the model and of its draft, so a block's bytes are the sum of
// both; the pool is capped at what Seqs sequences of PerSeq tokens can use.
//
// It sits above engine, model, convert and tokenizer and below cmd/kiln;
// like engine it must not import net/http.
package assemble
