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
}

// FinishReason says why a request ended.
type FinishReason string

const (
	Stop   FinishReason = "stop"   // sampled a stop token
	Length FinishReason = "length" // MaxTokens, the context length, or the pool's capacity
)

// request is a Request's live state.
type request struct {
	Request
	arrival  int64   // admission order key: FCFS among equal priorities
	tokens   []int32 // prompt, then output: every known token id
	computed int     // leading tokens whose KV is in the pool
	maxLen   int     // the request finishes when len(tokens) reaches this
	running  bool
}

// decoding reports whether the request has one token left to compute:
// its last sampled one (a decode step).
func (r *request) decoding() bool { return len(r.tokens)-r.computed == 1 }

func (r *request) output() int { return len(r.tokens) - len(r.Prompt) }
