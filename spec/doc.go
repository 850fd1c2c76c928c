// Package spec holds the proposers of speculative decoding: functions
// that guess the next tokens of a sequence cheaply, for the engine to
// verify in one forward (engine/spec.go).
//
// NGram is prompt lookup (vLLM's "ngram" method, prompt_lookup_min/max):
// the last n tokens of the sequence (prompt and output so far) are looked
// up earlier in the same sequence, and the tokens that followed their
// most recent earlier occurrence are the draft. It needs no model and
// pays off when the output copies spans of the prompt (code edits,
// summaries quoting their source, repetitive text).
//
// Policy decides how many tokens a request drafts in a step from a cost
// model fitted to the engine's own forwards (fixed + per-row time) and
// the request's measured acceptance: speculation where it pays
// (memory-bound decode, drafts that survive), none where it does not
// (many sequences, a compute-bound model, drafts rejected), with probes.
//
// A proposer's draft is a point mass: the engine verifies it by sampling
// each position with the request's own sampler and keeping the drafted
// tokens while they equal the sample, which is exactly rejection
// sampling with q = δ(draft) (accept x with probability p(x); on
// rejection draw from p without x, renormalized). The output
// distribution, and a seeded request's very tokens, are those of
// decoding without speculation.
package spec
