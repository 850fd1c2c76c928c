package sample

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

func seeded(p Params, seed uint64) Params { p.Seed = &seed; return p }

// chiSquareCritical is the upper 0.1% point of chi-square with df degrees
// of freedom, by the Wilson-Hilferty approximation (within 1% of tables for
// df >= 1): a correct sampler exceeds it with probability 0.001. The tests
// are seeded, so each passes or fails the same way on every run.
func chiSquareCritical(df int) float64 {
	const z = 3.0902 // standard normal 99.9% quantile
	d := float64(df)
	x := 1 - 2/(9*d) + z*math.Sqrt(2/(9*d))
	return d * x * x * x
}

// TestDistributions draws many tokens per configuration and checks the
// frequencies against refDist with a chi-square test; tokens the reference
// gives probability 0 must never come out.
func TestDistributions(t *testing.T) {
	// probabilities at T=1: .30 .20 .15 .12 .10 .06 .04 .03
	base := []float32{}
	for _, q := range []float64{.30, .20, .15, .12, .10, .06, .04, .03} {
		base = append(base, float32(math.Log(q)))
	}
	history := []int32{0, 0, 3, 5, 0}
	tests := []struct {
		name string
		edit func(p *Params)
	}{
		{"temperature 1", func(p *Params) {}},
		{"temperature 0.5", func(p *Params) { p.Temperature = 0.5 }},
		{"temperature 1.7", func(p *Params) { p.Temperature = 1.7 }},
		{"top-k 3", func(p *Params) { p.TopK = 3 }},
		{"top-p 0.7", func(p *Params) { p.TopP = 0.7 }},
		{"min-p 0.3", func(p *Params) { p.MinP = 0.3 }},
		{"logit bias", func(p *Params) { p.LogitBias = map[int32]float32{0: -100, 7: 2} }},
		{"repetition penalty", func(p *Params) { p.RepetitionPenalty = 1.5 }},
		{"presence and frequency", func(p *Params) { p.PresencePenalty, p.FrequencyPenalty = 0.4, 0.3 }},
		{"penalty window", func(p *Params) { p.FrequencyPenalty, p.PenaltyLastN = 1, 2 }},
		{"top-k then top-p (temperature after)", func(p *Params) { p.TopK, p.TopP, p.Temperature = 5, 0.8, 0.6 }},
		{"whole chain", func(p *Params) {
			p.LogitBias = map[int32]float32{6: 1.5}
			p.RepetitionPenalty, p.FrequencyPenalty = 1.2, 0.1
			p.TopK, p.TopP, p.MinP, p.Temperature = 6, 0.9, 0.1, 0.8
		}},
	}
	const draws = 20000
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := seeded(Defaults(), uint64(100+i))
			tt.edit(&p)
			s, err := New(p, len(base))
			if err != nil {
				t.Fatal(err)
			}
			counts := make([]int, len(base))
			for range draws {
				tok, err := s.Sample(base, history)
				if err != nil {
					t.Fatal(err)
				}
				counts[tok.ID]++
			}
			want := refDist(base, history, p)
			chi, df := 0.0, -1
			for id, q := range want {
				if q == 0 {
					if counts[id] != 0 {
						t.Fatalf("token %d has probability 0 but was drawn %d times", id, counts[id])
					}
					continue
				}
				e := q * draws
				chi += (float64(counts[id]) - e) * (float64(counts[id]) - e) / e
				df++
			}
			if df == 0 {
				return // a single token: checked above
			}
			if crit := chiSquareCritical(df); chi > crit {
				t.Errorf("chi-square %.1f > %.1f (df %d): counts %v, want proportions %.3f", chi, crit, df, counts, want)
			}
		})
	}
}

// TestChiSquareDetects makes sure the statistical test has teeth: draws
// from the temperature-1 sampler fail against the temperature-0.8 reference.
func TestChiSquareDetects(t *testing.T) {
	logits := []float32{0, -0.5, -1, -1.5, -2}
	s, _ := New(seeded(Defaults(), 7), len(logits))
	q := Defaults()
	q.Temperature = 0.8
	want := refDist(logits, nil, q)
	counts := make([]int, len(logits))
	for range 20000 {
		tok, _ := s.Sample(logits, nil)
		counts[tok.ID]++
	}
	chi := 0.0
	for id, p := range want {
		e := p * 20000
		chi += (float64(counts[id]) - e) * (float64(counts[id]) - e) / e
	}
	if chi <= chiSquareCritical(len(logits)-1) {
		t.Errorf("chi-square %.1f did not reject the wrong temperature", chi)
	}
}

func TestGreedy(t *testing.T) {
	p := Defaults()
	p.Temperature = 0
	p.TopK, p.TopP = 1, 0.1 // irrelevant to the argmax
	s, err := New(p, 5)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		logits  []float32
		history []int32
		want    int32
	}{
		{[]float32{0, 3, 1, 3, 2}, nil, 1}, // tie: lowest id
		{[]float32{9, 8, negInf, 1, 0}, nil, 0},
		{[]float32{negInf, negInf, negInf, -5, negInf}, nil, 3},
	}
	for _, tt := range tests {
		tok, err := s.Sample(tt.logits, tt.history)
		if err != nil || tok.ID != tt.want {
			t.Errorf("greedy(%v) = %d, %v; want %d", tt.logits, tok.ID, err, tt.want)
		}
	}
	// Bias and penalties apply before the argmax.
	p.LogitBias = map[int32]float32{4: 10}
	s, _ = New(p, 5)
	if tok, _ := s.Sample([]float32{0, 3, 1, 3, 2}, nil); tok.ID != 4 {
		t.Errorf("greedy with bias picked %d, want 4", tok.ID)
	}
	p.LogitBias = nil
	p.RepetitionPenalty = 2
	s, _ = New(p, 5)
	if tok, _ := s.Sample([]float32{0, 3, 1, 2.5, 2}, []int32{1}); tok.ID != 3 {
		t.Errorf("greedy with repetition penalty picked %d, want 3", tok.ID)
	}
}

func TestSameSeedSameSequence(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	rows := make([][]float32, 50)
	for i := range rows {
		rows[i] = randomLogits(r, 1000, 5, true)
	}
	p := Defaults()
	p.TopK, p.TopP, p.Temperature, p.FrequencyPenalty = 50, 0.95, 0.9, 0.2
	run := func(seed uint64, other *Sampler) []int32 {
		s, err := New(seeded(p, seed), 1000)
		if err != nil {
			t.Fatal(err)
		}
		var out []int32
		for _, row := range rows {
			if other != nil { // another request sampling in between must not matter
				if _, err := other.Sample(row, nil); err != nil {
					t.Fatal(err)
				}
			}
			tok, err := s.Sample(row, out)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, tok.ID)
		}
		return out
	}
	a := run(42, nil)
	other, _ := New(seeded(p, 9), 1000)
	b := run(42, other)
	if !slices.Equal(a, b) {
		t.Fatalf("same seed, different tokens:\n%v\n%v", a, b)
	}
	if c := run(43, nil); slices.Equal(a, c) {
		t.Fatalf("seeds 42 and 43 gave the same 50 tokens")
	}
	s, _ := New(p, 1000) // no seed: one is drawn and reported
	q := p
	seed := s.Seed()
	q.Seed = &seed
	s2, _ := New(q, 1000)
	for _, row := range rows {
		x, _ := s.Sample(row, nil)
		y, _ := s2.Sample(row, nil)
		if x.ID != y.ID {
			t.Fatal("replaying the reported seed gave a different token")
		}
	}
}

func TestLogprobs(t *testing.T) {
	logits := []float32{1, 4, 2, 4, negInf, -3}
	p := seeded(Defaults(), 1)
	p.Logprobs, p.TopLogprobs = true, 3
	p.LogitBias = map[int32]float32{5: 100} // logprobs stay raw: bias not visible
	p.Temperature = 0
	s, err := New(p, len(logits))
	if err != nil {
		t.Fatal(err)
	}
	tok, err := s.Sample(logits, nil)
	if err != nil {
		t.Fatal(err)
	}
	lse := 0.0
	for _, l := range logits {
		lse += math.Exp(float64(l))
	}
	lse = math.Log(lse)
	lp := func(id int32) float64 { return float64(logits[id]) - lse }
	if tok.ID != 5 {
		t.Fatalf("picked %d, want the biased token 5", tok.ID)
	}
	if math.Abs(float64(tok.Logprob)-lp(5)) > 1e-5 {
		t.Errorf("logprob %v, want raw %v", tok.Logprob, lp(5))
	}
	wantTop := []int32{1, 3, 2}
	if len(tok.Top) != 3 {
		t.Fatalf("got %d alternatives, want 3", len(tok.Top))
	}
	for i, alt := range tok.Top {
		if alt.ID != wantTop[i] || math.Abs(float64(alt.Logprob)-lp(alt.ID)) > 1e-5 {
			t.Errorf("top[%d] = %+v, want id %d logprob %v", i, alt, wantTop[i], lp(wantTop[i]))
		}
	}
	p.Logprobs, p.TopLogprobs = false, 0
	s, _ = New(p, len(logits))
	if tok, _ := s.Sample(logits, nil); tok.Logprob != 0 || tok.Top != nil {
		t.Errorf("logprobs off, got %+v", tok)
	}
}

func TestSampleErrors(t *testing.T) {
	nan, inf := float32(math.NaN()), float32(math.Inf(1))
	tests := []struct {
		name    string
		edit    func(p *Params)
		logits  []float32
		history []int32
		want    string
	}{
		{"short row", func(p *Params) {}, []float32{1, 2}, nil, "2 logits for a vocabulary of 4"},
		{"NaN", func(p *Params) {}, []float32{1, nan, 0, 0}, nil, "token 1 is NaN"},
		{"NaN greedy", func(p *Params) { p.Temperature = 0 }, []float32{1, 0, 0, nan}, nil, "token 3 is NaN"},
		{"NaN top-k", func(p *Params) { p.TopK = 2 }, []float32{1, 0, nan, 0}, nil, "token 2 is NaN"},
		{"+Inf", func(p *Params) {}, []float32{1, 0, inf, 0}, nil, "token 2 is +Inf"},
		{"+Inf logprobs", func(p *Params) { p.Logprobs = true }, []float32{inf, 0, 0, 0}, nil, "token 0 is +Inf"},
		{"all masked", func(p *Params) {}, []float32{negInf, negInf, negInf, negInf}, nil, "every token's logit is -Inf"},
		{"all masked top-k", func(p *Params) { p.TopK = 2 }, []float32{negInf, negInf, negInf, negInf}, nil, "-Inf"},
		{"history outside vocab", func(p *Params) { p.PresencePenalty = 1 }, []float32{0, 0, 0, 0}, []int32{1, 9}, "history token 9"},
	}
	for _, tt := range tests {
		p := seeded(Defaults(), 1)
		tt.edit(&p)
		s, err := New(p, 4)
		if err != nil {
			t.Fatal(err)
		}
		_, err = s.Sample(tt.logits, tt.history)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: error %v, want %q", tt.name, err, tt.want)
		}
	}
}

func TestSampleDoesNotModifyLogits(t *testing.T) {
	logits := []float32{1, 2, 3, 4}
	p := seeded(Defaults(), 1)
	p.LogitBias = map[int32]float32{0: 5}
	p.RepetitionPenalty = 2
	s, _ := New(p, 4)
	if _, err := s.Sample(logits, []int32{3}); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(logits, []float32{1, 2, 3, 4}) {
		t.Errorf("logits changed to %v", logits)
	}
}

func TestSampleAllocs(t *testing.T) {
	r := rand.New(rand.NewPCG(8, 9))
	logits := randomLogits(r, 32000, 10, false)
	history := make([]int32, 300)
	for i := range history {
		history[i] = int32(r.IntN(32000))
	}
	configs := map[string]func(p *Params){
		"greedy":            func(p *Params) { p.Temperature = 0 },
		"temperature":       func(p *Params) {},
		"top-k top-p min-p": func(p *Params) { p.TopK, p.TopP, p.MinP = 40, 0.9, 0.05 },
		"top-p only":        func(p *Params) { p.TopP = 0.9 },
		"penalties and bias": func(p *Params) {
			p.RepetitionPenalty, p.PresencePenalty, p.LogitBias = 1.1, 0.5, map[int32]float32{3: 2}
		},
		"logprobs":            func(p *Params) { p.Logprobs, p.TopLogprobs = true, 5 },
		"whole-history stats": func(p *Params) { p.FrequencyPenalty, p.PenaltyLastN = 0.3, 0 },
	}
	for name, edit := range configs {
		p := seeded(Defaults(), 1)
		edit(&p)
		s, err := New(p, len(logits))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.Sample(logits, history); err != nil { // warm up
			t.Fatal(err)
		}
		allocs := testing.AllocsPerRun(20, func() {
			if _, err := s.Sample(logits, history); err != nil {
				panic(err)
			}
		})
		if allocs != 0 {
			t.Errorf("%s: %v allocations per Sample, want 0", name, allocs)
		}
	}
}

// benchLogits is a 128k-vocabulary row shaped like a model's: a few strong
// candidates over a broad, low tail.
func benchLogits(n int) []float32 {
	r := rand.New(rand.NewPCG(11, 12))
	l := make([]float32, n)
	for i := range l {
		l[i] = float32(r.NormFloat64()) * 2
	}
	for range 20 {
		l[r.IntN(n)] += 12
	}
	return l
}

func BenchmarkSample128k(b *testing.B) {
	const vocab = 128256 // Llama 3
	logits := benchLogits(vocab)
	history := make([]int32, 256)
	for i := range history {
		history[i] = int32(i * 97 % vocab)
	}
	configs := []struct {
		name string
		edit func(p *Params)
	}{
		{"greedy", func(p *Params) { p.Temperature = 0 }},
		{"topk40_topp0.95_T0.8", func(p *Params) { p.TopK, p.TopP, p.Temperature = 40, 0.95, 0.8 }},
		{"llamacpp_defaults", func(p *Params) {
			p.TopK, p.TopP, p.MinP, p.Temperature, p.RepetitionPenalty, p.PenaltyLastN = 40, 0.95, 0.05, 0.8, 1.1, 64
		}},
		{"topp0.9_only", func(p *Params) { p.TopP = 0.9 }},
		{"T1_full_vocab", func(p *Params) {}},
		{"topk40_logprobs5", func(p *Params) { p.TopK, p.Logprobs, p.TopLogprobs = 40, true, 5 }},
	}
	for _, c := range configs {
		b.Run(c.name, func(b *testing.B) {
			p := seeded(Defaults(), 1)
			c.edit(&p)
			s, err := New(p, vocab)
			if err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			for b.Loop() {
				if _, err := s.Sample(logits, history); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N), "µs/token")
		})
	}
}

func ExampleSampler() {
	p := Defaults()
	p.Temperature = 0 // greedy
	s, err := New(p, 4)
	if err != nil {
		panic(err)
	}
	tok, _ := s.Sample([]float32{0.1, 2.5, -1, 2.5}, nil)
	fmt.Println(tok.ID)
	// Output: 1
}

// BenchmarkNucleus128k compares the quickselect nucleus with sorting all
// candidates first (what a straightforward top-p does), on the same row.
func BenchmarkNucleus128k(b *testing.B) {
	logits := benchLogits(128256)
	base := candidatesOf(logits)
	total := weigh(base, 1)
	c := make([]candidate, len(base))
	for _, bc := range []struct {
		name string
		f    func([]candidate, float32, float64) int
	}{{"quickselect", topP}, {"full_sort", topPBySort}} {
		b.Run(bc.name, func(b *testing.B) {
			for b.Loop() {
				copy(c, base)
				bc.f(c, 0.95, total)
			}
			b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N), "µs/op")
		})
	}
}
