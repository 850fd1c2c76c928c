// Package runner turns one scheduler step into one forward pass: it lays
// the plan's sequences out as a ragged model.Batch, applies the plan's
// copy-on-write block copies to the KV store, runs model.Forward once and
// samples every row that needs a token with its own request's sampler.
//
//	plan.Seqs:   a: Start 0, 5 tokens, Sample   b: Start 40, 1 token, Sample   c: Start 16, 16 tokens (mid-prompt)
//	Tokens:      [a0 a1 a2 a3 a4 | b40 | c16 ... c31]
//	Positions:   [ 0  1  2  3  4 |  40 |  16 ...  31]
//	SeqStarts:   [0, 5, 6, 22]
//	ContextLens: [5, 41, 32]
//	LogitRows:   [4, 5]            (last row of each sequence that samples)
//	BlockTables: the plan's tables, as the kvcache pool handed them out
//
// A request that asked for its prompt's logit rows (KeepPromptLogits)
// gets a row for each of those positions in its chunks too; they are
// copied out after the forward and handed over once (TakePromptLogits).
// KeepPromptHidden keeps the same positions' final-norm hidden rows
// instead (a HiddenBackend's, for embeddings).
// The model is behind the Backend interface: New wraps a model.Model and
// its KV store, NewBackend takes a scripted double.
//
// A Drafter (draft.go) drives a draft model for speculative decoding the
// same way: after a step it drafts for the requests that decode next
// (Propose, one batched forward per drafted position), and in the next
// step keeps the draft's KV in step with the target's under the same
// block ids (Run, Update).
//
// Invariants:
//   - Each request has one sample.Sampler for its whole life, created by
//     Add and dropped by Remove: a preempted request keeps its sampler
//     (and its random stream), and a sampler is called exactly once per
//     output token, so a seeded request draws the same tokens alone,
//     batched or preempted and recomputed.
//   - The penalty history of a request is its prompt and then the tokens
//     sampled for it, in order.
//   - Block copies are applied before the forward that reads them.
//   - The batch's buffers are reused across steps: a step allocates
//     nothing in the runner once they have grown.
//
// A Runner is driven by one goroutine (the engine loop).
package runner
