package engine

import (
	"time"

	"kiln/kvcache"
)

// Stats is a snapshot of the engine, taken after each step.
type Stats struct {
	Running, Waiting int           // requests with blocks; queued (including preempted)
	KV               kvcache.Stats // pool: blocks, free, prefix queries and hits, evictions
	KVUsage          float64       // fraction of blocks held by running requests
	Counters
}

// Counters only grow.
type Counters struct {
	Steps           int64 // forwards run
	Preemptions     int64 // requests that gave up their blocks to be recomputed
	ComputedTokens  int64 // tokens run through the forward: prompt chunks, recomputation, decodes
	GeneratedTokens int64 // tokens sampled
	Finished        int64 // completions ended by stop or length
	Aborted         int64 // completions ended by cancellation, a slow reader, an error or Close
	// PeakRunning is the most requests that ever held blocks at once (a
	// high-water mark of Stats.Running, taken after each schedule): what a
	// KV budget really admitted together.
	PeakRunning int64

	// Wall time of the steps that ran, and of their model forwards and
	// sampling (runner.Output): StepTime-ForwardTime is the engine's
	// overhead (scheduling, batch building, block copies, sampling,
	// bookkeeping, streaming).
	StepTime, ForwardTime, SampleTime time.Duration
	// DraftTime is the wall time of the draft model's forwards
	// (Speculation.Draft: drafting and prompt catch-up), part of StepTime.
	DraftTime time.Duration

	// Speculative decoding (vLLM's spec_decode_num_drafts,
	// num_draft_tokens, num_accepted_tokens and
	// num_accepted_tokens_per_pos): sequences' drafts verified, tokens
	// drafted, drafted tokens accepted, and SpecAcceptedAt[j] how many
	// drafts had their (j+1)-th token accepted. Acceptance rate:
	// SpecAcceptedTokens/SpecDraftTokens; tokens per verifying step of a
	// sequence: 1 + SpecAcceptedTokens/SpecDrafts.
	SpecDrafts, SpecDraftTokens, SpecAcceptedTokens int64
	SpecAcceptedAt                                  [MaxSpecTokens]int64
}

// Stats returns the latest snapshot.
func (e *Engine) Stats() Stats {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.stats
}

// publish copies the loop's view into the snapshot.
func (e *Engine) publish() {
	kv := e.pool.Stats()
	s := Stats{Running: e.sched.NumRunning(), Waiting: e.sched.NumWaiting(), KV: kv, KVUsage: kv.Usage(), Counters: e.ctr}
	e.mu.Lock()
	s.Waiting += len(e.inbox)
	e.stats = s
	e.mu.Unlock()
}
