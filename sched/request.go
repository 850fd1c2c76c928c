package sched

// Request is one generation request as the scheduler sees it: token ids
// in, token ids out.
type Request struct {
	ID        string
	Prompt    []int32 // token ids; not empty
	MaxTokens int     // output tokens at most; 0: until the context (or the pool) is full
	Stop      []int32 // token ids that finish the request (EOS); the stop token is output
	Priority  int     // lower runs first and is preempted last; ties are first come, first served
	// Forks are the ids of further completions of the same prompt (n > 1):
	// when the prompt has been computed, each is sampled from the prompt's
	// last row (Plan.Forks) and forked from this request's blocks
	// (kvcache.Pool.Fork), then runs as a request of its own with this
	// one's MaxTokens, Stop and Priority. The prompt is computed once.
	Forks []string
	// ComputeTail is how many of the prompt's last tokens are computed
	// even when the prefix cache holds them, because their logit rows are
	// wanted (the engine's Request.PromptLogits): a new request takes at
	// most len(Prompt)-ComputeTail tokens from the cache. 0 and 1 mean the
	// last token only, as for every request. It no longer applies once
	// the request has sampled (a preempted request resumes from the cache).
	ComputeTail int
	// Beam makes the request a beam-search member (see beam.go): Update
	// commits its KV and reports its sample but appends no token and
	// never finishes it; it then waits, unscheduled, for Continue to give
	// it its next token, for Branch to fork it, or for Abort to prune it.
	// Stop and MaxTokens are the caller's business (MaxTokens still bounds
	// its length). Width (>= 1) is how many members the search may hold at
	// once: they share the root's seats against MaxSeqs from its admission.
	Beam  bool
	Width int
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
	held     bool    // a beam member whose last row was sampled: waits for Continue, Branch or Abort
	search   *search // a beam member's search (nil otherwise)
	spec     []int32 // the draft for the next step (SetDrafts; vLLM's spec_token_ids), spent by Schedule
	chunk    []int32 // a speculative step's tokens: the last known one, then the draft
}

// decoding reports whether the request has one token left to compute:
// its last sampled one (a decode step).
func (r *request) decoding() bool { return len(r.tokens)-r.computed == 1 }

// idle reports whether a running request has nothing to compute (a held
// beam member).
func (r *request) idle() bool { return len(r.tokens) == r.computed }

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
