package sample

import (
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
)

// Limits on request parameters. They bound the work and memory one request
// can ask of a sampler; the values follow the OpenAI API where it states one.
const (
	MaxTopLogprobs    = 20   // OpenAI: top_logprobs in [0, 20]
	MaxLogitBias      = 1024 // entries in LogitBias
	MaxLogitBiasValue = 100  // OpenAI: bias values in [-100, 100]
	MaxPenalty        = 2    // OpenAI: presence/frequency penalties in [-2, 2]
	MaxStops          = 64   // stop strings per request
	MaxStopBytes      = 1024 // bytes per stop string (bounds held-back text)
	MaxStopTokens     = 1024 // stop token ids per request
)

// Params are the sampling parameters of one request, already resolved: an
// OpenAI front end fills absent JSON fields from Defaults() and copies the
// ones the client sent.
//
// Zero values, field by field (the zero Params as a whole is NOT valid:
// TopP and RepetitionPenalty have neutral value 1, and a zero there would be
// a request for something else, so Validate rejects it instead of guessing):
//
//	Temperature        0 = greedy (argmax, ties to the lowest id). Defaults: 1.
//	TopP               must be in (0, 1]; 1 disables.                  Defaults: 1.
//	MinP               in [0, 1]; 0 disables.                          Defaults: 0.
//	TopK               >= 0; 0 disables.                               Defaults: 0.
//	RepetitionPenalty  > 0; 1 disables.                                Defaults: 1.
//	PresencePenalty    in [-2, 2]; 0 disables.                         Defaults: 0.
//	FrequencyPenalty   in [-2, 2]; 0 disables.                         Defaults: 0.
//	PenaltyLastN       >= 0; tokens of history the penalties look at;
//	                   0 = all of the history the caller passes.       Defaults: 0.
//	LogitBias          nil = none.
//	Seed               nil = a fresh random seed per sampler (reported by Sampler.Seed).
//	MaxTokens          >= 0; 0 = no limit here (the context bounds it).
//	Stop, StopTokens   nil = none.
//	Logprobs           false = no log-probabilities.
//	TopLogprobs        in [0, 20]; needs Logprobs.
type Params struct {
	Temperature float32
	TopP        float32
	MinP        float32
	TopK        int

	// Penalties follow llama.cpp (and the OpenAI definitions of presence and
	// frequency): for each token t seen c > 0 times in the last PenaltyLastN
	// history tokens,
	//   logit[t] = logit[t] <= 0 ? logit[t]*RepetitionPenalty : logit[t]/RepetitionPenalty
	//   logit[t] -= c*FrequencyPenalty + PresencePenalty
	RepetitionPenalty float32
	PresencePenalty   float32
	FrequencyPenalty  float32
	PenaltyLastN      int

	// LogitBias adds a value in [-100, 100] to a token's logit before
	// anything else (OpenAI logit_bias). -100 in practice bans a token.
	LogitBias map[int32]float32

	// Seed makes sampling replay: the same Seed, Params and logits give the
	// same tokens, whatever other requests do. nil draws a random seed.
	Seed *uint64

	MaxTokens  int
	Stop       []string // stop strings; the stop itself is not part of the output
	StopTokens []int32  // token ids that end generation (besides the model's end-of-generation ids)

	// Logprobs asks for the log-probability of each sampled token and,
	// with TopLogprobs > 0, the TopLogprobs most likely alternatives. Like
	// vLLM's default ("raw_logprobs"), they are log-softmax of the model's raw
	// logits: before logit bias, penalties, filters and temperature.
	Logprobs    bool
	TopLogprobs int
}

// Defaults returns what an OpenAI client gets when it sends no sampling
// fields: temperature 1, no top-p/top-k/min-p, no penalties, random seed.
func Defaults() Params {
	return Params{Temperature: 1, TopP: 1, RepetitionPenalty: 1}
}

// Greedy reports whether p selects the argmax (Temperature 0).
func (p *Params) Greedy() bool { return p.Temperature == 0 }

// Validate checks the parameters that do not depend on the model. New also
// checks token ids against the vocabulary size.
func (p *Params) Validate() error {
	var errs []error
	bad := func(format string, args ...any) {
		errs = append(errs, fmt.Errorf("sample: "+format, args...))
	}
	finite := func(x float32) bool { return !math.IsNaN(float64(x)) && !math.IsInf(float64(x), 0) }

	if !finite(p.Temperature) || p.Temperature < 0 {
		bad("temperature %v must be finite and >= 0 (0 = greedy)", p.Temperature)
	}
	if !finite(p.TopP) || p.TopP <= 0 || p.TopP > 1 {
		bad("top_p %v must be in (0, 1] (1 disables)", p.TopP)
	}
	if !finite(p.MinP) || p.MinP < 0 || p.MinP > 1 {
		bad("min_p %v must be in [0, 1] (0 disables)", p.MinP)
	}
	if p.TopK < 0 {
		bad("top_k %d must be >= 0 (0 disables)", p.TopK)
	}
	if !finite(p.RepetitionPenalty) || p.RepetitionPenalty <= 0 {
		bad("repetition_penalty %v must be finite and > 0 (1 disables)", p.RepetitionPenalty)
	}
	if !finite(p.PresencePenalty) || p.PresencePenalty < -MaxPenalty || p.PresencePenalty > MaxPenalty {
		bad("presence_penalty %v must be in [-2, 2]", p.PresencePenalty)
	}
	if !finite(p.FrequencyPenalty) || p.FrequencyPenalty < -MaxPenalty || p.FrequencyPenalty > MaxPenalty {
		bad("frequency_penalty %v must be in [-2, 2]", p.FrequencyPenalty)
	}
	if p.PenaltyLastN < 0 {
		bad("penalty_last_n %d must be >= 0 (0 = whole history)", p.PenaltyLastN)
	}
	if len(p.LogitBias) > MaxLogitBias {
		bad("logit_bias has %d entries, at most %d allowed", len(p.LogitBias), MaxLogitBias)
	}
	for _, id := range slices.Sorted(maps.Keys(p.LogitBias)) { // sorted: stable messages
		v := p.LogitBias[id]
		if id < 0 {
			bad("logit_bias token id %d is negative", id)
		}
		if !finite(v) || v < -MaxLogitBiasValue || v > MaxLogitBiasValue {
			bad("logit_bias[%d] = %v must be in [-100, 100]", id, v)
		}
	}
	if p.MaxTokens < 0 {
		bad("max_tokens %d must be >= 0 (0 = no limit)", p.MaxTokens)
	}
	if len(p.Stop) > MaxStops {
		bad("%d stop strings, at most %d allowed", len(p.Stop), MaxStops)
	}
	for i, s := range p.Stop {
		if s == "" {
			bad("stop[%d] is empty", i)
		} else if len(s) > MaxStopBytes {
			bad("stop[%d] is %d bytes, at most %d allowed", i, len(s), MaxStopBytes)
		}
	}
	if len(p.StopTokens) > MaxStopTokens {
		bad("%d stop tokens, at most %d allowed", len(p.StopTokens), MaxStopTokens)
	}
	for i, id := range p.StopTokens {
		if id < 0 {
			bad("stop_tokens[%d] = %d is negative", i, id)
		}
	}
	if p.TopLogprobs < 0 || p.TopLogprobs > MaxTopLogprobs {
		bad("top_logprobs %d must be in [0, %d]", p.TopLogprobs, MaxTopLogprobs)
	} else if p.TopLogprobs > 0 && !p.Logprobs {
		bad("top_logprobs %d needs logprobs to be set", p.TopLogprobs)
	}
	return errors.Join(errs...)
}

// validateVocab checks the token ids in p against a vocabulary of n tokens.
func (p *Params) validateVocab(n int) error {
	var errs []error
	for _, id := range slices.Sorted(maps.Keys(p.LogitBias)) {
		if int(id) >= n {
			errs = append(errs, fmt.Errorf("sample: logit_bias token id %d outside vocabulary [0, %d)", id, n))
		}
	}
	for i, id := range p.StopTokens {
		if int(id) >= n {
			errs = append(errs, fmt.Errorf("sample: stop_tokens[%d] = %d outside vocabulary [0, %d)", i, id, n))
		}
	}
	return errors.Join(errs...)
}
