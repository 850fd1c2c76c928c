package spec

import (
	"math"
	"testing"
	"time"
)

// feedLine gives p steps of 1 to 5 rows costing fixed + perRow*rows (ms).
func feedLine(p *Policy, fixed, perRow float64) {
	for i := range 20 {
		rows := 1 + i%5
		p.ObserveStep(rows, time.Duration((fixed+perRow*float64(rows))*float64(time.Millisecond)))
	}
}

func TestPolicyLineFit(t *testing.T) {
	p := NewPolicy(4)
	feedLine(p, 40, 1.5)
	fixed, perRow, ok := p.line.fit()
	if !ok || math.Abs(fixed-0.040) > 1e-9 || math.Abs(perRow-0.0015) > 1e-9 {
		t.Fatalf("fit %v %v %v, want 0.040 s + 0.0015 s/row", fixed, perRow, ok)
	}
	// One row count only: no line, so the policy drafts its maximum.
	q := NewPolicy(4)
	for range 10 {
		q.ObserveStep(1, 40*time.Millisecond)
	}
	if _, _, ok := q.line.fit(); ok {
		t.Fatal("a line through steps of one row count")
	}
	if k := q.Tokens("a", 1); k != 4 {
		t.Fatalf("no line: %d tokens, want the maximum 4", k)
	}
}

// TestPolicyScenarios: each case is a cost line, a proposer cost, a
// verification history and the draft length asked for.
func TestPolicyScenarios(t *testing.T) {
	type verify struct{ drafted, accepted int }
	for _, tc := range []struct {
		name          string
		fixed, perRow float64 // ms
		draftMs       float64 // proposer ms per drafted token
		history       []verify
		running       int
		want          int
	}{
		// Memory-bound decode: one token's step is worth 41 ms, a row 1 ms;
		// at alpha 1/2 the fifth token still pays, capped at 4.
		{name: "memory-bound single stream", fixed: 40, perRow: 1, running: 1, want: 4},
		// 16 sequences: a token is worth (40+16)/16 = 3.5 ms; 0.5*3.5 > 1 > 0.25*3.5.
		{name: "memory-bound 16 streams", fixed: 40, perRow: 1, running: 16, want: 1},
		// 64 sequences: 1.625 ms a token; even the first at 1/2 does not pay.
		{name: "memory-bound 64 streams", fixed: 40, perRow: 1, running: 64, want: 0},
		// A model in cache: a row costs as much as the weights' read.
		{name: "compute-bound", fixed: 0.01, perRow: 0.085, running: 1, want: 0},
		// High acceptance pays at 16 streams: 0.95^k * 3.5 > 1 for every k <= 4.
		{name: "accepted drafts", fixed: 40, perRow: 1, running: 16,
			history: []verify{{4, 4}, {4, 4}, {4, 4}, {4, 4}, {4, 4}, {4, 4}, {4, 4}, {4, 4}}, want: 4},
		// Rejected at once, again and again: alpha falls and so does k,
		// to two tokens after two rejections, to none after eight even on
		// a memory-bound single stream.
		{name: "rejected twice", fixed: 40, perRow: 1, running: 1,
			history: []verify{{4, 0}, {4, 0}}, want: 2},
		{name: "rejected drafts", fixed: 40, perRow: 1, running: 1,
			history: []verify{{4, 0}, {4, 0}, {4, 0}, {4, 0}, {4, 0}, {4, 0}, {4, 0}, {4, 0}}, want: 0},
		// A draft model costing 10 ms a token: 0.5*41 > 11 > 0.25*41.
		{name: "costly proposer", fixed: 40, perRow: 1, draftMs: 10, running: 1, want: 1},
	} {
		p := NewPolicy(4)
		feedLine(p, tc.fixed, tc.perRow)
		if tc.draftMs > 0 {
			p.ObserveDraft(4, time.Duration(4*tc.draftMs*float64(time.Millisecond)))
		}
		for _, v := range tc.history {
			p.ObserveVerify("r", v.drafted, v.accepted)
		}
		if k := p.Tokens("r", tc.running); k != tc.want {
			t.Errorf("%s: %d tokens (alpha %.3f), want %d", tc.name, k, p.alpha("r"), tc.want)
		}
	}
}

// TestPolicyProbes: a request that does not pay drafts one token after 8
// idle steps; a failed probe doubles the wait (to 128 at most), an
// accepted one restarts it.
func TestPolicyProbes(t *testing.T) {
	p := NewPolicy(4)
	feedLine(p, 0.01, 0.085) // compute-bound: nothing pays
	probeAfter := func() int {
		for i := 1; i <= 1000; i++ {
			if k := p.Tokens("r", 1); k > 0 {
				if k != 1 {
					t.Fatalf("a probe of %d tokens", k)
				}
				return i
			}
		}
		t.Fatal("no probe in 1000 steps")
		return 0
	}
	for _, want := range []int{8, 16, 32, 64, 128, 128} {
		if got := probeAfter(); got != want {
			t.Fatalf("probe after %d idle steps, want %d", got, want)
		}
		p.ObserveVerify("r", 1, 0)
	}
	probeAfter()
	p.ObserveVerify("r", 1, 1) // accepted: the wait starts over
	if got := probeAfter(); got != 8 {
		t.Fatalf("after an accepted probe, the next after %d steps, want 8", got)
	}
	p.Forget("r")
	if a := p.alpha("r"); a != 0.5 {
		t.Fatalf("a forgotten request's alpha %v, want the prior 0.5", a)
	}
}

// TestBestTokens: the choice of k follows the acceptance and the cost,
// and is not worth it when drafting cannot pay.
func TestBestTokens(t *testing.T) {
	for _, tc := range []struct {
		alpha, c   float64
		maxK       int
		wantK      int
		worthwhile bool
	}{
		{0, 0.1, 8, 1, false},      // nothing is ever accepted
		{1, 0, 8, 8, true},         // everything is, for free: draft the most
		{0.9, 0.05, 8, 8, true},    // cheap and good: long drafts
		{0.5, 0.3, 8, 1, true},     // dear and middling: short ones
		{0.3, 0.5, 8, 1, false},    // not worth a single token
		{0.8, 0.1, 3, 3, true},     // capped
		{0.99, 0.02, 16, 16, true}, // the engine's bound
	} {
		k, gain := BestTokens(tc.alpha, tc.c, tc.maxK)
		if k != tc.wantK || (gain >= minGain) != tc.worthwhile {
			t.Errorf("alpha %v, c %v, max %d: k %d gain %.3f; want k %d, worthwhile %v", tc.alpha, tc.c, tc.maxK, k, gain, tc.wantK, tc.worthwhile)
		}
	}
}

// TestPolicyFixedCost: Cost replaces the measured line.
func TestPolicyFixedCost(t *testing.T) {
	p := NewPolicy(6)
	p.Cost = 0.1
	if k := p.Tokens("r", 1); k != 2 {
		t.Fatalf("alpha 1/2 at c 0.1: %d tokens, want 2 (1.75/1.2 beats 1.5/1.1 and 1.875/1.3)", k)
	}
	for range 10 {
		p.ObserveVerify("r", 6, 0)
	}
	if k := p.Tokens("r", 1); k != 0 {
		t.Fatalf("every draft rejected at c 0.1: %d tokens, want 0", k)
	}
}
