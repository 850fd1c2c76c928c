// Package sched is the request scheduler: a pure, deterministic state
// machine (no goroutines, no clock, no model) that decides each step which
// requests run and how many new tokens each, over a kvcache.Pool.
//
//	Add ──> waiting (priority, then arrival) ──admit──> running (admission order)
//	          ^                                            │
//	          └──────── preempt: blocks freed, recompute ──┤
//	                                                       └─ Update: stop/length ─> done (blocks freed)
//	Abort: from either queue, blocks freed at once.
//	Retired: the ids that left (done or aborted) since the last call.
//
// The scheduler is the registry of live requests: the caller keeps other
// per-request state (samplers, a draft model's KV record) only for ids
// the scheduler holds, and drops what Retired reports.
//
// One step, with the engine loop around it:
//
//	plan := s.Schedule()            // decodes (with their stored drafts), then prompt chunks, then admissions
//	apply plan.Copies to the KV store; run the forward over plan.Seqs; sample
//	events, err := s.UpdateDrafts(plan, sampled, accepted)
//	asks := s.DraftAsks(nil); propose a draft for each; s.SetDrafts(asks)
//
// A plan and the events are the scheduler's reused scratch (valid until
// the next Schedule and Update): a steady decode step allocates nothing.
//
// There are no prefill and decode phases: a prompt chunk, a decode token
// and a cached prefix are just token counts, so a long prompt is split
// across steps (chunked prefill) and never stalls decoding requests.
// Preemption is by recompute: the victim (lowest priority, newest) keeps
// its tokens and, when readmitted, finds most of them in the prefix cache.
// A running request that lacks blocks preempts so; so does a waiting
// request that lacks blocks or seats, but only requests of a strictly
// lower priority than its own (vLLM's priority scheduling). A prompt that
// can never fit the context or the pool is refused by Add.
//
// n > 1 (Request.Forks): the prompt is computed once, by the request
// itself; the step that samples its last prompt row lists the further
// completions in Plan.Forks, the runner samples each from that same row
// with its own sampler, and Update forks them (kvcache.Pool.Fork: the
// prompt's blocks are shared, the partial one copied on write). From then
// on each is an ordinary request. Completions not yet forked count
// against MaxSeqs from their parent's admission.
//
// Speculative decoding (SetDrafts): drafting is the caller's stage after
// a step's Update, never part of scheduling. DraftAsks lists the running
// requests that decode in the next step (their tokens, the most they may
// draft, their block tables); the caller proposes (n-gram lookup, a draft
// model) and stores the drafts on the requests with SetDrafts, as vLLM's
// update_draft_token_ids does. The next Schedule only reads them: once
// every running request has its token and the admissions are placed, a
// decode whose draft fits the budget left and the free blocks carries its
// last known token and the draft (Seq.Draft); the runner reports how many
// drafted tokens it accepted and UpdateDrafts commits those, rolls the
// rest back (kvcache.Pool.Truncate) and emits one event per accepted
// token, then the sample's. A draft never preempts, and lasts one step.
//
// Beam search (Request.Beam, beam.go): the caller decides which
// continuations survive; the scheduler holds each sampled member until
// the caller continues it (Continue), forks it onto shared blocks
// (Branch) or prunes it (Abort), and keeps the search's width in seats.
//
// Prompt logit rows (Request.ComputeTail): positions whose rows are
// wanted are computed, never taken from the prefix cache.
package sched
