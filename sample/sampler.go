package sample

import (
	"errors"
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"slices"
)

// Token is one sampled token.
type Token struct {
	ID int32
	// Logprob is the raw model log-probability of ID (log-softmax of the
	// logits as given, before bias, penalties, filters and temperature);
	// 0 unless Params.Logprobs.
	Logprob float32
	// Top holds the Params.TopLogprobs most likely tokens of the same raw
	// distribution, most likely first (ties: lower id first). It is the
	// sampler's scratch: valid until the next Sample call; copy to keep.
	Top []TokenLogprob
}

// TokenLogprob is one alternative token and its raw log-probability.
type TokenLogprob struct {
	ID      int32
	Logprob float32
}

// Sampler turns one request's logit rows into tokens. It owns its random
// source and all scratch, so it allocates nothing per token in steady state,
// and requests never perturb each other's random streams. Not safe for
// concurrent use: one sampler per request (sequence).
type Sampler struct {
	p     Params
	vocab int
	seed  uint64
	rng   *rand.Rand

	biasIDs  []int32   // [len(LogitBias)] sorted ids
	biasVals []float32 // [len(LogitBias)] bias of biasIDs[i]

	work   []float32      // [vocab] logits after bias and penalties (nil when there are none)
	cands  []candidate    // [vocab] or [TopK]: tokens still in the running
	counts []int32        // [window] scratch for penalty counting
	topBuf []candidate    // [TopLogprobs] scratch for raw top alternatives
	top    []TokenLogprob // [TopLogprobs] returned in Token.Top

	constraint Constraint // SetConstraint; nil: none
	mask       []uint64   // [vocab/64] the constraint's allowed tokens
}

// New checks p against a vocabulary of vocabSize tokens and builds its
// sampler, with all per-token scratch allocated.
func New(p Params, vocabSize int) (*Sampler, error) {
	if vocabSize <= 0 {
		return nil, fmt.Errorf("sample: vocabulary size %d must be > 0", vocabSize)
	}
	if err := errors.Join(p.Validate(), p.validateVocab(vocabSize)); err != nil {
		return nil, err
	}
	s := &Sampler{p: p, vocab: vocabSize}
	if p.Seed != nil {
		s.seed = *p.Seed
	} else {
		s.seed = rand.Uint64()
	}
	// PCG's second word is a fixed odd stream constant: same seed, same stream.
	s.rng = rand.New(rand.NewPCG(s.seed, 0x9e3779b97f4a7c15))

	s.biasIDs = slices.Sorted(maps.Keys(p.LogitBias))
	s.biasVals = make([]float32, len(s.biasIDs))
	for i, id := range s.biasIDs {
		s.biasVals[i] = p.LogitBias[id]
	}
	s.p.LogitBias, s.p.StopTokens = nil, nil // held above; the caller's map may change
	s.p.Stop = slices.Clone(p.Stop)

	if len(p.LogitBias) > 0 || s.penalised() {
		s.work = make([]float32, vocabSize)
	}
	if !p.Greedy() {
		n := vocabSize
		if p.TopK > 0 && p.TopK < n {
			n = p.TopK
		}
		s.cands = make([]candidate, 0, n)
	}
	if s.penalised() {
		n := p.PenaltyLastN
		if n == 0 {
			n = 1024
		}
		s.counts = make([]int32, 0, n)
	}
	if p.TopLogprobs > 0 {
		s.topBuf = make([]candidate, 0, p.TopLogprobs)
		s.top = make([]TokenLogprob, 0, p.TopLogprobs)
	}
	return s, nil
}

// Seed returns the seed this sampler's random stream started from (drawn
// at New when Params.Seed was nil), so a run can be replayed.
func (s *Sampler) Seed() uint64 { return s.seed }

// Params returns the parameters the sampler was built with (LogitBias and
// StopTokens are not kept and come back nil).
func (s *Sampler) Params() Params { return s.p }

func (s *Sampler) penalised() bool {
	return s.p.RepetitionPenalty != 1 || s.p.PresencePenalty != 0 || s.p.FrequencyPenalty != 0
}

// Sample picks the next token from logits ([vocab], as the model produced
// them; not modified) given history, the tokens the penalties look at
// (oldest first; the caller decides whether the prompt is part of it —
// llama.cpp's server includes it). The chain is llama.cpp's default order:
//
//	logit bias -> penalties -> top-k -> top-p -> min-p -> temperature -> draw
//
// top-p and min-p see temperature-1 probabilities (as in llama.cpp; vLLM
// and HF apply temperature first). Temperature 0 is argmax after bias and
// penalties, ties to the lowest id, and draws no random number.
func (s *Sampler) Sample(logits []float32, history []int32) (Token, error) {
	if len(logits) != s.vocab {
		return Token{}, fmt.Errorf("sample: %d logits for a vocabulary of %d", len(logits), s.vocab)
	}
	var tok Token
	var lse float32
	if s.p.Logprobs {
		var err error
		if lse, err = s.rawLogprobs(logits, &tok); err != nil {
			return Token{}, err
		}
	}

	// Bias, then penalties, on a copy: the caller's row stays raw.
	w := logits
	if len(s.biasIDs) > 0 || s.penalised() {
		w = s.work
		copy(w, logits)
		applyBias(w, s.biasIDs, s.biasVals)
	}
	if s.penalised() {
		window := history
		if n := s.p.PenaltyLastN; n > 0 && len(window) > n {
			window = window[len(window)-n:]
		}
		var err error
		if s.counts, err = applyPenalties(w, window, s.counts, s.p.RepetitionPenalty, s.p.PresencePenalty, s.p.FrequencyPenalty); err != nil {
			return Token{}, err
		}
	}

	var id int32
	var err error
	if s.constraint != nil {
		id, err = s.constrained(w)
	} else {
		id, err = s.pick(w)
	}
	if err != nil {
		return Token{}, err
	}
	tok.ID = id
	if s.p.Logprobs {
		tok.Logprob = logits[id] - lse
	}
	return tok, nil
}

// pick runs the filters and the draw over the adjusted logits w.
func (s *Sampler) pick(w []float32) (int32, error) {
	if s.p.Greedy() {
		return argmax(w)
	}
	var c []candidate
	var err error
	if k := s.p.TopK; k > 0 && k < len(w) {
		c, err = topK(s.cands, w, k)
	} else {
		c, err = allFinite(s.cands, w)
	}
	if err != nil {
		return 0, err
	}
	if len(c) == 0 {
		return 0, errors.New("sample: every token's logit is -Inf")
	}
	if s.p.TopP < 1 {
		total := weigh(c, 1)
		c = c[:topP(c, s.p.TopP, total)]
	}
	if s.p.MinP > 0 {
		c = minP(c, s.p.MinP)
	}
	total := weigh(c, s.p.Temperature)
	return draw(c, total, s.rng.Float64()), nil
}

// argmax returns the index of the largest logit, ties to the lowest index.
func argmax(w []float32) (int32, error) {
	best, bl := -1, float32(math.Inf(-1))
	for i, l := range w {
		if l > bl {
			best, bl = i, l
		} else if l != l {
			return 0, fmt.Errorf("sample: logit of token %d is NaN", i)
		}
	}
	switch {
	case best < 0:
		return 0, errors.New("sample: every token's logit is -Inf")
	case bl > math.MaxFloat32:
		return 0, fmt.Errorf("sample: logit of token %d is +Inf", best)
	}
	return int32(best), nil
}

// weigh sets c[i].p = exp((logit - max) / temp), the unnormalised
// probability at temperature temp > 0, and returns their sum. Subtracting
// the maximum first keeps tiny temperatures finite: the best token weighs 1,
// the rest underflow towards 0.
func weigh(c []candidate, temp float32) float64 {
	m := c[0].logit
	for _, x := range c[1:] {
		m = max(m, x.logit)
	}
	inv := 1 / temp
	sum := 0.0
	for i := range c {
		var p float32
		if d := (c[i].logit - m) * inv; d >= expMin { // d <= 0
			p = expNeg(d)
		}
		c[i].p = p
		sum += float64(p)
	}
	return sum
}

// draw returns the token at u*total of the cumulative weights (u in [0,1)).
func draw(c []candidate, total, u float64) int32 {
	target := u * total
	acc := 0.0
	for _, x := range c {
		acc += float64(x.p)
		if target < acc {
			return x.id
		}
	}
	// Rounding left target >= acc: the last token with weight.
	for i := len(c) - 1; i >= 0; i-- {
		if c[i].p > 0 {
			return c[i].id
		}
	}
	return c[0].id
}

// rawLogprobs fills tok.Top with the TopLogprobs best raw tokens and returns
// log-sum-exp of the raw logits, so logprob(t) = logits[t] - lse.
func (s *Sampler) rawLogprobs(logits []float32, tok *Token) (float32, error) {
	lse, err := LogSumExp(logits)
	if err != nil {
		return 0, err
	}
	if s.p.TopLogprobs > 0 {
		h, err := topK(s.topBuf, logits, s.p.TopLogprobs)
		if err != nil {
			return 0, err
		}
		slices.SortFunc(h, cmpCandidates)
		s.top = s.top[:0]
		for _, x := range h {
			s.top = append(s.top, TokenLogprob{ID: x.id, Logprob: x.logit - lse})
		}
		tok.Top = s.top
	}
	return lse, nil
}
