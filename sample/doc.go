// Package sample owns token selection for one request: its parameters
// (Params, with Validate and OpenAI-like Defaults), the Sampler that turns a
// row of logits into a token, and the StopMatcher that finds stop strings
// in streamed text. Whether a token ends a request (a stop token, the
// length limit) is the scheduler's decision (sched.FinishReason).
//
// The chain, llama.cpp's default order (common/sampling), over a working
// copy of the logits; the caller's row is never modified:
//
//	logits [vocab] --copy--> w [vocab]
//	  w[id] += LogitBias[id]                         sparse
//	  penalties over the last PenaltyLastN tokens    sparse (sorted counts)
//	  Temperature == 0 ? argmax(w), ties to lowest id (no random number drawn)
//	  top-k:  heap scan of w -> cands [k]            O(vocab + m log k)
//	  top-p:  quickselect the nucleus of cands       O(len(cands)) expected
//	  min-p:  keep logit >= max + ln(MinP)           O(len(cands))
//	  temperature: weight exp((logit-max)/T); draw u*sum from the cumulative
//
// Filters see temperature-1 probabilities, as in llama.cpp. vLLM and HF
// scale by temperature first: top-k keeps the same set either way, but
// their top-p and min-p keep fewer tokens at T < 1 and more at T > 1 than
// this order does (min-p there keeps logit >= max + T*ln(MinP)). Log-probabilities are
// vLLM's default "raw" ones: log-softmax of the logits as the model gave
// them, before any of the chain.
//
// Invariants:
//   - Every selection uses one total order (higher logit, then lower id), so
//     results depend on the logits alone, never on scratch order; with a
//     fixed Seed a request replays token for token.
//   - Each Sampler owns its RNG (PCG seeded from Params.Seed) and scratch:
//     no allocation per token in steady state, no shared state between
//     requests. A Sampler is used by one goroutine at a time.
//   - -Inf logits mean "masked" and are never drawn; NaN or +Inf logits are
//     an error, never a silent pick.
package sample
