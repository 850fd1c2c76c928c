package sample

import (
	"errors"
	"fmt"
	"math"
	"slices"
)

// LogSumExp returns log(sum(exp(logits))) of one raw logit row, so that a
// token's raw log-probability is logits[t] - lse: the number the Sampler
// reports as a generated token's Logprob (Params.Logprobs). The sum is
// float64 over exp(logit - max) in float32, as the Sampler computes it.
// A NaN or +Inf logit, or a row of only -Inf, is an error.
func LogSumExp(logits []float32) (float32, error) {
	m := float32(math.Inf(-1))
	for i, l := range logits {
		if l != l || l > math.MaxFloat32 {
			return 0, fmt.Errorf("sample: logit of token %d is %v", i, l)
		}
		m = max(m, l)
	}
	if m < -math.MaxFloat32 {
		return 0, errors.New("sample: every token's logit is -Inf")
	}
	sum := 0.0
	for _, l := range logits {
		if d := l - m; d >= expMin { // d <= 0; -Inf weighs 0
			sum += float64(expNeg(d))
		}
	}
	return m + float32(math.Log(sum)), nil
}

// TopLogprobs returns the k best tokens of a raw logit row, best first
// (ties to the lower id), each with logit - lse (lse from LogSumExp): the
// Sampler's Token.Top for the same row and Params.TopLogprobs = k.
func TopLogprobs(logits []float32, k int, lse float32) ([]TokenLogprob, error) {
	if k <= 0 {
		return nil, nil
	}
	h, err := topK(make([]candidate, 0, k), logits, k)
	if err != nil {
		return nil, err
	}
	slices.SortFunc(h, cmpCandidates)
	out := make([]TokenLogprob, len(h))
	for i, x := range h {
		out[i] = TokenLogprob{ID: x.id, Logprob: x.logit - lse}
	}
	return out, nil
}

// Rank is a token's 1-based rank in a logit row: 1 plus the tokens that
// are better (a higher logit, or an equal one and a lower id), the order
// TopLogprobs lists them in.
func Rank(logits []float32, id int32) int {
	me := candidate{logit: logits[id], id: id}
	r := 1
	for i, l := range logits {
		if better(candidate{logit: l, id: int32(i)}, me) {
			r++
		}
	}
	return r
}
