package engine

import "testing"

// TestBestTokens: the adaptive policy's choice of k follows the
// acceptance and the cost, and gives up when drafting cannot pay.
func TestBestTokens(t *testing.T) {
	for _, tc := range []struct {
		p, c       float64
		maxK       int
		wantK      int
		worthwhile bool
	}{
		{0, 0.1, 8, 1, false},      // nothing is ever accepted
		{1, 0, 8, 8, true},         // everything is, for free: draft the most
		{0.9, 0.05, 8, 8, true},    // cheap and good: long drafts
		{0.5, 0.3, 8, 1, true},     // dear and middling: short ones
		{0.3, 0.5, 8, 1, false},    // not worth a single token
		{0.8, 0.1, 3, 3, true},     // capped at Tokens
		{0.99, 0.02, 16, 16, true}, // the bound of Speculation.Tokens
	} {
		k, gain := bestTokens(tc.p, tc.maxK, tc.c)
		if k != tc.wantK || (gain >= minGain) != tc.worthwhile {
			t.Errorf("p %v, c %v, max %d: k %d gain %.3f; want k %d, worthwhile %v", tc.p, tc.c, tc.maxK, k, gain, tc.wantK, tc.worthwhile)
		}
	}
}

// TestSpecRecordBackoff: a request whose drafts are all rejected stops
// drafting, probes with one token after a backoff that doubles up to
// maxBackoff, and drafts again once probes are accepted.
func TestSpecRecordBackoff(t *testing.T) {
	r := newSpecRecord()
	const k, c = 4, 0.1
	if n := r.tokens(k, c); n < 1 {
		t.Fatalf("a fresh request drafts %d tokens", n)
	}
	for range 10 {
		r.observe(k, 0)
	}
	var waits []int
	for probe := 0; probe < 9; probe++ {
		steps := 0
		for r.tokens(k, c) == 0 {
			steps++
		}
		waits = append(waits, steps)
		r.observe(1, 0) // the probe fails
	}
	for i, w := range waits {
		want := min(1<<i, maxBackoff) + 1 // the backoff, and the step that gave up
		if w != want {
			t.Fatalf("steps between probes %v: step %d waited %d, want %d", waits, i, w, want)
		}
	}
	// Probes start to pass: drafting resumes, longer and longer.
	drafts := 0
	for i := 0; i < 1000 && drafts < 20; i++ {
		if n := r.tokens(k, c); n > 0 {
			r.observe(n, n)
			drafts++
		}
	}
	if n := r.tokens(k, c); drafts < 20 || n != k {
		t.Errorf("after %d accepted drafts: %d tokens (rate %.2f), want %d", drafts, n, r.rate(), k)
	}
}
