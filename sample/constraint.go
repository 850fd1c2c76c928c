package sample

import (
	"errors"
	"fmt"
	"math"
)

// Constraint restricts which tokens may come next: structured output (a
// grammar's token masks, package grammar). It is one sequence's state;
// the Sampler advances it with every token it picks.
type Constraint interface {
	// Allows reports whether token id may come next.
	Allows(id int32) bool
	// FillMask sets bit id of mask ([vocab/64 rounded up] words, zeroed
	// by the caller) for every token that may come next.
	FillMask(mask []uint64)
	// AcceptToken advances past id; an error leaves the state unchanged.
	AcceptToken(id int32) error
}

// SetConstraint makes every later Sample pick among the tokens c allows
// and advance c past the pick. The mask applies after logit bias and
// penalties and before the filters and temperature, as vLLM applies
// structured-output masks; log-probabilities stay the raw model's.
//
// The full mask costs a walk of the vocabulary (package grammar keeps it
// to microseconds), so when the choice can be checked after the fact it
// is: greedy, or a plain draw with no top-k/top-p/min-p filter, first
// picks from the unmasked logits and computes the mask only when c
// refuses that token. For a draw this is rejection sampling and exact
// (a token x allowed by the mask is drawn with probability
// p(x) + (1-Z)·p(x)/Z = p(x)/Z, Z the allowed mass); with filters the
// filtered set depends on the mask, so the mask always comes first.
func (s *Sampler) SetConstraint(c Constraint) {
	s.constraint = c
	if c == nil {
		return
	}
	if s.work == nil {
		s.work = make([]float32, s.vocab)
	}
	s.mask = make([]uint64, (s.vocab+63)/64)
}

// Constraint returns the sampler's constraint (nil: none).
func (s *Sampler) Constraint() Constraint { return s.constraint }

// errNoToken: the constraint allows nothing (a grammar never dead-ends
// before its end, and allows end-of-generation there, so this means a
// vocabulary that cannot spell the grammar).
var errNoToken = errors.New("sample: the output constraint allows no token of the vocabulary")

// constrained picks under the constraint from w (adjusted logits, which
// may be the caller's row: it is copied before masking).
func (s *Sampler) constrained(w []float32) (int32, error) {
	c := s.constraint
	if s.p.Greedy() || (s.p.TopK == 0 && s.p.TopP >= 1 && s.p.MinP == 0) {
		// Try the unmasked pick first. A draw consumes one random number
		// either way; a rejected one draws again from the masked logits.
		id, err := s.pick(w)
		if err == nil && c.Allows(id) {
			return id, c.AcceptToken(id)
		}
	}
	clear(s.mask)
	c.FillMask(s.mask)
	if &w[0] != &s.work[0] {
		copy(s.work, w)
		w = s.work
	}
	any := false
	neg := float32(math.Inf(-1))
	for i := range w {
		if s.mask[i>>6]&(1<<(uint(i)&63)) == 0 {
			w[i] = neg
		} else if !math.IsInf(float64(w[i]), -1) {
			any = true
		}
	}
	if !any {
		return 0, errNoToken
	}
	id, err := s.pick(w)
	if err != nil {
		return 0, err
	}
	if err := c.AcceptToken(id); err != nil {
		return 0, fmt.Errorf("sample: the constraint refused the token it allowed: %w", err)
	}
	return id, nil
}
