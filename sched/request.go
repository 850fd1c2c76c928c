package sched

// Request is one generation request as the scheduler sees it: token ids
// in, token ids out.
type Request struct {
	ID        string
	Prompt    []int32 // token ids; not empty
	MaxTokens int     // output tokens at most; 0: until the context (or the pool) is full
	Stop      []int32 // token ids that finish the request (EOS); the stop token is output
	Priority  int     // lower runs first and is preempted last; ties are first come, first served
	// ComputeTail is how many of the prompt's last tokens are computed
	// even when the prefix cache holds them, because their logit rows are
	// wanted (the engine's Request.PromptLogits): a new request takes at
	// most len(Prompt)-ComputeTail tokens from the cache. 0 and 1 mean the
	// last token only, as for every request. It no longer applies once
	// the request has sampled (a preempted request resumes from the cache).
	ComputeTail int
}

// FinishReason says why a request ended: the scheduler's events carry
// Stop or Length; Abort is the caller's (Scheduler.Abort, and the
// engine's cancellations and errors). The engine's Event.Reason is this
// type.
type FinishReason string

const (
	Stop   FinishReason = "stop"   // sampled a stop token
	Length FinishReason = "length" // MaxTokens, the context length, or the pool's capacity
	Abort  FinishReason = "abort"  // ended from outside; never in an Event
)

// request is a Request's live state.
type request struct {
	Request
	arrival  int64   // admission order key: FCFS among equal priorities
	tokens   []int32 // prompt, then output: every known token id
	computed int     // leading tokens whose KV is in the pool
	maxLen   int     // the request finishes when len(tokens) reaches this
	running  bool
	spec     []int32 // the draft for the next step (SetDrafts; vLLM's spec_token_ids), spent by Schedule
	chunk    []int32 // a speculative step's tokens: the last known one, then the draft
}

// decoding reports whether the request has one token left to compute:
// its last sampled one (a decode step).
func (r *request) decoding() bool { return len(r.tokens)-r.computed == 1 }

// lookup is the part of r's tokens that may be served from the prefix
// cache at admission, leaving at least its last token (or its
// ComputeTail prompt tokens, before its first sample) to compute.
func (r *request) lookup() []int32 {
	if t := r.ComputeTail; t > 1 && r.output() == 0 {
		return r.tokens[:len(r.tokens)-t+1]
	}
	return r.tokens
}

func (r *request) output() int { return len(r.tokens) - len(r.Prompt) }
