package sample

import (
	"math/rand/v2"
	"testing"
)

// TestLogSoftmaxMatchesSampler: LogSumExp and TopLogprobs give a row's
// numbers exactly as the Sampler reports them for the token it samples
// (what echo's prompt scores must agree with), and Rank orders as
// TopLogprobs lists.
func TestLogSoftmaxMatchesSampler(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	const vocab, k = 300, 5
	for trial := range 20 {
		logits := make([]float32, vocab)
		for i := range logits {
			logits[i] = float32(rng.NormFloat64() * 4)
		}
		logits[7] = logits[3] // a tie: the lower id ranks first
		p := Defaults()
		p.Temperature, p.Logprobs, p.TopLogprobs = 0, true, k
		s, err := New(p, vocab)
		if err != nil {
			t.Fatal(err)
		}
		tok, err := s.Sample(logits, nil)
		if err != nil {
			t.Fatal(err)
		}
		lse, err := LogSumExp(logits)
		if err != nil {
			t.Fatal(err)
		}
		if got := logits[tok.ID] - lse; got != tok.Logprob {
			t.Errorf("trial %d: logprob %v, the sampler's %v", trial, got, tok.Logprob)
		}
		top, err := TopLogprobs(logits, k, lse)
		if err != nil {
			t.Fatal(err)
		}
		if len(top) != len(tok.Top) {
			t.Fatalf("trial %d: %d top, the sampler's %d", trial, len(top), len(tok.Top))
		}
		for i := range top {
			if top[i] != tok.Top[i] || Rank(logits, top[i].ID) != i+1 {
				t.Errorf("trial %d: top[%d] = %v rank %d, the sampler's %v", trial, i, top[i], Rank(logits, top[i].ID), tok.Top[i])
			}
		}
	}
	if _, err := LogSumExp([]float32{negInf}); err == nil {
		t.Error("a row of -Inf has a log-sum-exp")
	}
}
