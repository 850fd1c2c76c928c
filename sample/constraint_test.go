package sample

import (
	"math"
	"testing"
)

// setConstraint allows a fixed set of tokens and records what it accepted.
type setConstraint struct {
	allowed  map[int32]bool
	accepted []int32
	masks    int // FillMask calls
}

func (c *setConstraint) Allows(id int32) bool { return c.allowed[id] }
func (c *setConstraint) FillMask(m []uint64) {
	c.masks++
	for id := range c.allowed {
		m[id>>6] |= 1 << (uint(id) & 63)
	}
}
func (c *setConstraint) AcceptToken(id int32) error { c.accepted = append(c.accepted, id); return nil }

func TestConstraintGreedyAndFilters(t *testing.T) {
	logits := []float32{5, 4, 3, 2, 1, 0, -1, -2}
	for _, p := range []Params{
		{Temperature: 0, TopP: 1, RepetitionPenalty: 1},
		{Temperature: 1, TopK: 1, TopP: 1, RepetitionPenalty: 1}, // top-k after the mask: the best allowed
		{Temperature: 0.01, TopP: 0.01, RepetitionPenalty: 1},
	} {
		seed := uint64(3)
		p.Seed = &seed
		s, err := New(p, len(logits))
		if err != nil {
			t.Fatal(err)
		}
		c := &setConstraint{allowed: map[int32]bool{2: true, 6: true}}
		s.SetConstraint(c)
		tok, err := s.Sample(logits, nil)
		if err != nil || tok.ID != 2 {
			t.Errorf("%+v: picked %d (%v), want 2, the best allowed", p, tok.ID, err)
		}
		if len(c.accepted) != 1 || c.accepted[0] != 2 {
			t.Errorf("accepted %v", c.accepted)
		}
	}
	// Greedy whose unmasked pick is allowed needs no mask.
	s, _ := New(Params{TopP: 1, RepetitionPenalty: 1}, len(logits))
	c := &setConstraint{allowed: map[int32]bool{0: true, 3: true}}
	s.SetConstraint(c)
	if tok, _ := s.Sample(logits, nil); tok.ID != 0 || c.masks != 0 {
		t.Errorf("picked %d with %d masks; want 0 with none (the fast path)", tok.ID, c.masks)
	}
	// Nothing allowed is an error, not a pick.
	s, _ = New(Params{TopP: 1, RepetitionPenalty: 1}, len(logits))
	s.SetConstraint(&setConstraint{allowed: map[int32]bool{}})
	if _, err := s.Sample(logits, nil); err == nil {
		t.Error("a constraint that allows nothing gave a token")
	}
}

// TestConstraintRejectionExact: a plain draw through the fast path
// (unmasked draw, then the mask on rejection) has the masked
// distribution p(x)/Z.
func TestConstraintRejectionExact(t *testing.T) {
	logits := []float32{2, 1.5, 1, 0.5, 0}
	allowed := map[int32]bool{1: true, 3: true, 4: true}
	seed := uint64(11)
	s, err := New(Params{Temperature: 1, TopP: 1, RepetitionPenalty: 1, Seed: &seed}, len(logits))
	if err != nil {
		t.Fatal(err)
	}
	c := &setConstraint{allowed: allowed}
	s.SetConstraint(c)
	const n = 40000
	counts := map[int32]int{}
	for range n {
		tok, err := s.Sample(logits, nil)
		if err != nil {
			t.Fatal(err)
		}
		counts[tok.ID]++
	}
	var z float64
	for id := range allowed {
		z += math.Exp(float64(logits[id]))
	}
	for id := range int32(len(logits)) {
		want := 0.0
		if allowed[id] {
			want = math.Exp(float64(logits[id])) / z
		}
		got := float64(counts[id]) / n
		if math.Abs(got-want) > 4*math.Sqrt(want*(1-want)/n)+1e-9 {
			t.Errorf("token %d: frequency %.4f, want %.4f", id, got, want)
		}
	}
	if c.masks == 0 || c.masks == n {
		t.Errorf("%d masks in %d draws: the fast path should take some and refuse others", c.masks, n)
	}
}
