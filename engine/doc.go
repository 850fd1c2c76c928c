// Package engine runs generation requests on one model: it owns the model's
// KV store, the kvcache pool, the scheduler and the runner, and drives them
// from one loop goroutine. The loop drives a runner, not a model: the
// forwards (the target's, and a draft model's) are built and run in
// package runner.
//
//	Submit(ctx, req) ──inbox──┐            one goroutine, one loop:
//	ctx cancelled ───cancels──┤   intake:  admit submissions and e.pending, abort cancellations
//	Close ────────────closed──┘   plan := sched.Schedule()      // reads the drafts stored last step
//	                              out  := runner.Run(&plan)    // copies, forward, sample / verify
//	                              drafter.Run(&plan)           // a draft model's KV kept in step
//	                              evs  := sched.UpdateDrafts(plan, out.Tokens, out.Accepted)
//	  <-chan Event  <──────────── emit:    token, text delta; final event frees the request
//	                              retire:  the runner, drafter, policy drop sched.Retired()
//	                              propose: drafts for the next step -> sched.SetDrafts
//
// Above the loop, two layers turn one request into several sequences of
// the scheduler, over the prefix cache, and queue them (e.pending) for the
// next intake: n > 1 (parallel.go, vLLM's ParentRequest) and beam search
// (beam.go, vLLM's beam_search). The loop knows one kind of request: a
// prompt, a sampler, a length limit and its events.
//
// Requests. The scheduler is the registry of live requests: a request is
// ended by one call, sched.Scheduler.Abort (or by Update, on a stop token
// or its length limit), and what else keeps state per request (the
// runner's samplers, the draft model's KV record, the speculation
// policy) drops the ids the scheduler reports retired (retire, after
// intake and after each step). Admission adds the request to the
// scheduler first, so a failure later in admission is undone by aborting
// it there. The engine's own table (live) maps ids to their streams.

// Streams. Each request's events go to a buffered channel (Config.StreamBuffer
// token events, plus one slot held back for the final event). The loop never
// blocks on a reader: if a reader falls so far behind that the buffer is
// full when a token is ready, the request is aborted (its blocks freed at
// once) and its final event, which always fits, says so (Reason Abort, Err
// ErrSlowReader). The channel is closed after the final event. Text deltas
// are decoded on the loop with the tokenizer's streaming decoder: a few
// microseconds of CPU per token, never a wait.
//
// Invariants:
//   - Only the loop goroutine touches the scheduler, the pool, the runner
//     and the model; Submit, cancellation and Close talk to it through a
//     mutex-guarded inbox and a wake-up channel.
//   - A cancelled context aborts its request at the start of the next step
//     (its blocks are freed before that step is scheduled), and no token
//     event follows the cancellation: a token sampled in the step during
//     which ctx was cancelled is dropped, the final event (Abort) comes
//     instead. A client may print every token event it reads.
//   - Every completion gets exactly one final event (Done), and the
//     channel closes after the request's last, whatever ends them: stop,
//     length, abort, error or Close.
//   - Sampling is per request (runner): a seeded request gives the same
//     tokens alone, batched or preempted.
//
// Stop strings (Params.Stop, which need a tokenizer) are matched on the
// loop against the decoded text, as OpenAI and vLLM do: the text deltas
// stop right before the stop string, which is never emitted, and text
// that might be the start of a stop is held back only until the next
// piece rules it out (sample.StopMatcher). The token that completed the
// stop is the last token event; the request ends with Reason Stop.
//
// n > 1 (Request.N, parallel.go): the completions share one channel, each
// event saying which (Event.Index), and the prompt: the first completion
// is admitted alone and the others once it has sampled, so they find the
// prompt's whole blocks in the prefix cache, copy the first one's partial
// last block, and compute the prompt's last token only. Each completion is a scheduler request with its own sampler
// (seeded Seed+i, as vLLM does), its own stop matching and its own final
// event; the channel closes after the last. Cancellation, a slow reader
// and a failed step end them all.
//
// Beam search (Request.BeamWidth, beam.go): each round submits every
// beam's sequence as a request of one token with its 2W most likely
// alternatives, the prefix cache serving what the last round computed;
// the W best candidates are the next round's beams. The best N sequences
// are delivered at the end, as token events and a final event each (with
// Event.CumLogprob).
//
// Speculative decoding (Config.Spec, spec.go): after a step that ends
// with few running requests, n-gram prompt lookup or a draft model
// (runner.Drafter) drafts k tokens for every request that decodes next,
// and the drafts are stored on the requests (sched.Scheduler.SetDrafts);
// the next plan verifies them in the same ragged batch as everything
// else, and accepted tokens arrive as token events like any other.
// Output is unchanged, token for token, greedy or seeded (Stats counts
// drafts and acceptance). The draft model's KV lives in a store of its
// own under the target's block ids (plus a few scratch blocks), so the
// block manager, prefix cache and copy-on-write serve both models.
//
// Prompt logits (Request.PromptLogits): the raw logit rows of the
// prompt's last positions ride on the first token event; those positions
// are computed even when cached (sched.Request.ComputeTail). With
// Request.PromptHidden the rows are the final-norm hidden states instead
// (the server's /v1/embeddings pools them).
//
// Time: Config.Now (default time.Now) is the clock of Timings and of the
// step counters, so tests can make them exact. NewBackend runs the engine
// over any runner.Backend (runner/scripted for tests without weights).
package engine
