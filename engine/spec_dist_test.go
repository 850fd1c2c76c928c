package engine_test

import (
	"context"
	"math"
	"sort"
	"sync"
	"testing"

	"kiln/engine"
	"kiln/runner/scripted"
	"kiln/sample"
)

// markov is the scripted model of TestSpecDistribution: a first-order
// chain over 6 tokens whose logits depend on the last token only, with
// a strong "next in the cycle 0 1 2 3" preference, so n-gram lookup over
// a cyclic prompt drafts tokens that are accepted about half the time.
var markov = [6][6]float32{
	{0.0, 2.0, 0.6, -0.4, 0.9, -1.5},
	{0.3, -0.2, 2.1, 0.4, -0.9, 0.8},
	{-0.5, 0.7, 0.1, 1.9, 0.5, -0.1},
	{2.2, -0.3, 0.6, 0.2, -1.0, 0.4},
	{0.8, 0.9, -0.7, 0.3, 0.0, 1.1},
	{1.0, -0.4, 0.9, 0.6, 0.2, -0.8},
}

// transformed is the sampler's distribution over the next token after
// last, computed here from its documented order: top-k on the logits,
// min-p on the temperature-1 probabilities, then the softmax at temp.
func transformed(last int32, p sample.Params, temp float64) []float64 {
	row := markov[last]
	idx := []int{0, 1, 2, 3, 4, 5}
	sort.SliceStable(idx, func(a, b int) bool { return row[idx[a]] > row[idx[b]] })
	keep := idx
	if p.TopK > 0 && p.TopK < len(idx) {
		keep = idx[:p.TopK]
	}
	top := float64(row[keep[0]])
	if p.MinP > 0 {
		var k2 []int
		for _, i := range keep {
			if math.Exp(float64(row[i])-top) >= float64(p.MinP) {
				k2 = append(k2, i)
			}
		}
		keep = k2
	}
	out := make([]float64, 6)
	sum := 0.0
	for _, i := range keep {
		out[i] = math.Exp((float64(row[i]) - top) / temp)
		sum += out[i]
	}
	for i := range out {
		out[i] /= sum
	}
	return out
}

// marginal is the distribution of the n-th token after last (n >= 1):
// the chain's n-step transition from last.
func marginal(last int32, n int, p sample.Params, temp float64) []float64 {
	d := make([]float64, 6)
	d[last] = 1
	for range n {
		next := make([]float64, 6)
		for from, w := range d {
			if w == 0 {
				continue
			}
			for to, q := range transformed(int32(from), p, temp) {
				next[to] += w * q
			}
		}
		d = next
	}
	return d
}

// chiSquare is Pearson's statistic of counts against probabilities and
// its degrees of freedom; a count where the probability is 0 is an
// impossible draw (ok false).
func chiSquare(counts []int, probs []float64) (stat float64, df int, ok bool) {
	n := 0
	for _, c := range counts {
		n += c
	}
	for i, p := range probs {
		if p == 0 {
			if counts[i] != 0 {
				return 0, 0, false
			}
			continue
		}
		e := float64(n) * p
		stat += (float64(counts[i]) - e) * (float64(counts[i]) - e) / e
		df++
	}
	return stat, df - 1, true
}

// chiCritical is the chi-square quantile at 1 - 0.001 (Wilson-Hilferty).
func chiCritical(df int) float64 {
	const z = 3.090 // standard normal 0.999 quantile
	k := float64(df)
	a := 2 / (9 * k)
	return k * math.Pow(1-a+z*math.Sqrt(a), 3)
}

// TestSpecDistribution: with n-gram speculation and temperature, top-k
// and min-p sampling, the second token (the first drawn in a verifying
// step: the first comes with the prompt) and the fourth have the target's
// own distributions (chi-square over 6,000 seeded requests, so
// the test is deterministic), while drafts were verified and about half
// of the drafted tokens rejected: verification resamples rather than
// keeping the draft. A distribution at another temperature is rejected
// by the same counts (the test has the power to fail).
func TestSpecDistribution(t *testing.T) {
	const (
		draws = 6000
		wave  = 64
		n     = 4 // tokens per request; the 2nd and the n-th are tallied
	)
	params := sample.Params{Temperature: 0.9, TopP: 1, TopK: 5, MinP: 0.05, RepetitionPenalty: 1, MaxTokens: n}
	sm := &scripted.Model{VocabSize: 6, Ctx: 256, BlockSize: 4,
		Next: func(h []int32, row []float32) { copy(row, markov[h[len(h)-1]][:]) }}
	cfg := engine.Config{NumBlocks: 1024, BlockSize: 4, MaxSeqs: wave}
	e, err := engine.NewBackend(sm, specConfig(cfg, 4))
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	prompt := []int32{0, 1, 2, 3, 0, 1, 2, 3, 0, 1, 2, 3, 0, 1, 2} // last: 2
	second, nth := make([]int, 6), make([]int, 6)
	for w := 0; w < draws; w += wave {
		results := make([]*result, wave)
		var wg sync.WaitGroup
		for i := range wave {
			p := params
			seed := uint64(w + i + 1)
			p.Seed = &seed
			ch, err := e.Submit(context.Background(), engine.Request{Prompt: prompt, Params: p})
			if err != nil {
				t.Fatal(err)
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				results[i] = collect(ch, nil)
			}()
		}
		wg.Wait()
		for _, r := range results {
			if len(r.tokens) != n {
				t.Fatalf("a request gave %d tokens (final %+v), want %d", len(r.tokens), r.final, n)
			}
			second[r.tokens[1]]++
			nth[r.tokens[n-1]]++
		}
	}
	st := e.Stats()
	rate := float64(st.SpecAcceptedTokens) / float64(st.SpecDraftTokens)
	t.Logf("%d drafts, %d drafted tokens, acceptance %.3f; 2nd token %v, 4th %v", st.SpecDrafts, st.SpecDraftTokens, rate, second, nth)
	if st.SpecDrafts < draws || rate < 0.2 || rate > 0.8 {
		t.Fatalf("speculation did not run as the test needs: %d drafts for %d requests, acceptance %.3f", st.SpecDrafts, draws, rate)
	}
	last := prompt[len(prompt)-1]
	for _, c := range []struct {
		what   string
		counts []int
		k      int
	}{{"2nd token", second, 2}, {"4th token", nth, n}} {
		stat, df, ok := chiSquare(c.counts, marginal(last, c.k, params, 0.9))
		if !ok || stat > chiCritical(df) {
			t.Errorf("%s: counts %v do not follow the target's distribution %.4f (chi-square %.1f, df %d, critical %.1f, possible %v)",
				c.what, c.counts, marginal(last, c.k, params, 0.9), stat, df, chiCritical(df), ok)
		}
		if stat, df, ok := chiSquare(c.counts, marginal(last, c.k, params, 1.2)); ok && stat <= chiCritical(df) {
			t.Errorf("%s: the counts also fit temperature 1.2 (chi-square %.1f): the test cannot tell distributions apart", c.what, stat)
		}
	}
}
