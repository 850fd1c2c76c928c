package engine

import (
	"errors"
	"time"

	"kiln/sample"
	"kiln/sched"
)

// Request is one generation request.
type Request struct {
	// Prompt is the prompt as token ids. When it is empty, Text is encoded
	// with the engine's tokenizer (EncodePrompt: BOS as the model asks).
	Prompt []int32
	Text   string
	// Params are the sampling parameters, resolved (sample.Defaults for an
	// absent field). MaxTokens 0 means until the context or the pool is
	// full; StopTokens add to the tokenizer's end-of-generation ids; Stop
	// strings need Config.Tokenizer (see the package comment).
	Params sample.Params
	// Priority: lower runs first and is preempted last (sched.Request).
	Priority int
	// N is the number of completions of the prompt (0 means 1), at most
	// Config.MaxSeqs. The prompt is computed once and its whole KV blocks
	// are shared through the prefix cache, its partial last block copied
	// (parallel.go); each completion
	// has its own sampler and its own Event.Index. With a Seed, completion i is seeded Seed+i (vLLM's
	// convention), so each is reproducible on its own.
	N int
	// IgnoreEOS keeps generating past the tokenizer's end-of-generation
	// ids (vLLM's ignore_eos, for benchmarks that want exact output
	// lengths); Params.StopTokens and stop strings still end a completion.
	// A request with a Constraint ignores it: the grammar's end (where it
	// allows only end-of-generation) is the completion's end.
	IgnoreEOS bool
	// Constraint, when set, makes one constraint per completion (each of
	// the N gets its own state): structured output, the sampler picking
	// only among the tokens it allows (sample.Sampler.SetConstraint).
	Constraint func() (sample.Constraint, error)
	// PromptLogits > 0 asks for the raw logit rows of the last PromptLogits
	// prompt positions (at most the prompt's length): the first token
	// event of completion 0 carries them (Event.PromptLogits). Those
	// positions are computed even when the prefix cache holds them, so
	// asking for every position disables the cache for this request.
	// `kiln probs` prints the next-token distribution from them. They take
	// PromptLogits x vocabulary x 4 bytes until delivered.
	PromptLogits int
	// PromptHidden makes the PromptLogits rows the final-norm hidden
	// states ([PromptLogits][model dim]: the output norm applied, the LM
	// head not) instead of logits, in the same Event.PromptLogits: what
	// embeddings pool. It needs PromptLogits > 0 and a model backend.
	PromptHidden bool
	// BeamWidth > 0 runs a beam search instead of sampling (beam.go):
	// BeamWidth beams (at most 10) are kept by their score, cumulative
	// raw log-probability / length^LengthPenalty (length in tokens,
	// prompt included, a final stop token not), as vLLM's beam_search
	// does. It needs Params.MaxTokens > 0 and greedy parameters (no
	// temperature, filters, penalties, bias, seed or stop strings; stop
	// token ids end beams). The N best sequences (N <= BeamWidth) are
	// delivered at the end, each as its token events and final event.
	BeamWidth     int
	LengthPenalty float64 // beam search's length exponent; 0 means 1 (vLLM's default)
	// NoSpec opts the request out of speculative decoding (Config.Spec):
	// it decodes one token per step whatever the policy says. Speculation
	// never changes a request's tokens; it only trades compute for steps.
	NoSpec bool
}

// FinishReason says why a request ended: the scheduler's reason
// (sched.FinishReason), the same type whichever layer ended it.
type FinishReason = sched.FinishReason

const (
	Stop   = sched.Stop   // a stop string, a stop or end-of-generation token (the last token event)
	Length = sched.Length // MaxTokens, the context, or the pool's capacity
	Abort  = sched.Abort  // cancelled, a slow reader, Close, or an error (Event.Err)
)

// Errors a final event can carry.
var (
	ErrClosed     = errors.New("engine: closed")
	ErrSlowReader = errors.New("engine: the reader fell a whole stream buffer behind; request aborted")
)

// Event is one step of a request's stream: a token, or the end, or both.
type Event struct {
	Token   int32                 // sampled token id; -1 in a final event that carries none
	Logprob float32               // raw log-probability of Token (Params.Logprobs; always for beam search)
	Top     []sample.TokenLogprob // Params.TopLogprobs alternatives; the event's own copy
	Text    string                // text delta (empty without a tokenizer, or while a character is incomplete)
	Index   int                   // which of the request's N completions, 0 to N-1

	// PromptLogits ([Request.PromptLogits][vocab], row-major, the event's
	// own) are the raw logits after each of the prompt's last positions,
	// in the first token event of completion 0.
	PromptLogits []float32
	// CumLogprob is a beam search completion's cumulative raw
	// log-probability (its final event), the numerator of its score.
	CumLogprob float64

	Done    bool         // the completion's final event: the channel closes after every completion's
	Reason  FinishReason // set when Done
	Err     error        // why an Abort happened, if not a plain cancellation
	Usage   Usage        // set when Done
	Timings Timings      // set when Done

	// StopString is the stop string (Params.Stop) that ended the
	// completion, in its final event; "" when none did (Anthropic's
	// stop_sequence: the text never shows it).
	StopString string
}

// Usage counts a request's tokens.
type Usage struct {
	PromptTokens       int // tokens of the prompt
	CachedPromptTokens int // of those, found in the prefix cache when first admitted
	CompletionTokens   int // tokens sampled
	// ComputedPromptTokens are the prompt positions run through the
	// forward for this request: PromptTokens-CachedPromptTokens once the
	// prompt is done, fewer when it was aborted mid-prompt, more when a
	// preemption had it recomputed.
	ComputedPromptTokens int
}

// Timings are measured from Submit.
type Timings struct {
	Queued     time.Duration // until first scheduled
	FirstToken time.Duration // until the first token was sampled (0: none was)
	Total      time.Duration // until the final event
}
