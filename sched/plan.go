package sched

import "kiln/kvcache"

// Plan is one step's work for the runner: which requests run and how many
// new tokens each, in batch order (decodes first, then prefill chunks).
type Plan struct {
	Step      int
	Seqs      []Seq
	Copies    []kvcache.Copy // block copies to apply to the KV store before the forward
	Preempted []string       // requests that gave up their blocks this step (back to waiting)
	Forks     []Fork         // completions to sample from a sequence's last row, besides the sequence itself
	NumTokens int            // sum of len(Seqs[i].Tokens)
}

// Seq is one request's part of a step.
type Seq struct {
	ID     string
	Start  int     // position of Tokens[0]; the KV of positions [0, Start) is cached
	Tokens []int32 // new tokens, positions [Start, Start+len(Tokens))
	Table  []int32 // block table covering Start+len(Tokens) tokens
	Sample bool    // the chunk ends at the last known token: sample the next from its last row
	// Draft > 0: the last Draft tokens of Tokens are proposed, not known
	// (speculative decoding, see Scheduler.SetDrafts): Tokens is the
	// last known token and the draft. The runner samples the Draft+1 last
	// rows in turn, keeping drafted tokens while they equal the samples,
	// and UpdateDrafts takes how many were accepted.
	Draft int
}

// Fork is a further completion (Request.Forks) that this step samples
// from the logit row of Seqs[Seq], the end of its parent's prompt. Its
// sample follows the sequences' in Update's sampled: sampled[len(Seqs)+j]
// is Forks[j]'s.
type Fork struct {
	ID  string
	Seq int
}

// Event is one request's outcome of a step: a sampled token, and whether
// that ended it.
type Event struct {
	ID     string
	Token  int32
	Done   bool
	Reason FinishReason // set when Done
	Sample int          // index of Token in Update's sampled (and in the runner's output)
	// Draft > 0: Token is the Draft-th accepted drafted token of
	// plan.Seqs[Sample] (1-based); 0: Token is the sample itself.
	Draft int
}
