package sample

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

var negInf = float32(math.Inf(-1))

func ids(c []candidate) []int32 {
	out := make([]int32, len(c))
	for i, x := range c {
		out[i] = x.id
	}
	slices.Sort(out)
	return out
}

func sortedIDs(v []int32) []int32 { v = slices.Clone(v); slices.Sort(v); return v }

// randomLogits returns n logits in [-scale, scale], with some exact ties
// (rounded to a coarse grid) and some -Inf when masked is set.
func randomLogits(r *rand.Rand, n int, scale float32, masked bool) []float32 {
	l := make([]float32, n)
	for i := range l {
		l[i] = (r.Float32()*2 - 1) * scale
		if r.IntN(4) == 0 {
			l[i] = float32(math.Round(float64(l[i])))
		}
		if masked && r.IntN(10) == 0 {
			l[i] = negInf
		}
	}
	return l
}

func TestTopKTable(t *testing.T) {
	tests := []struct {
		name   string
		logits []float32
		k      int
		want   []int32
	}{
		{"distinct", []float32{1, 5, 3, 4, 2}, 2, []int32{1, 3}},
		{"ties to lower id", []float32{2, 7, 7, 7, 1}, 2, []int32{1, 2}},
		{"k = n", []float32{3, 1, 2}, 3, []int32{0, 1, 2}},
		{"masked never kept", []float32{negInf, 1, negInf, 0}, 3, []int32{1, 3}},
		{"k = 1", []float32{0, -1, 0.5, 0.5}, 1, []int32{2}},
	}
	for _, tt := range tests {
		got, err := topK(make([]candidate, 0, tt.k), tt.logits, tt.k)
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		if !slices.Equal(ids(got), tt.want) {
			t.Errorf("%s: topK = %v, want %v", tt.name, ids(got), tt.want)
		}
	}
}

func TestTopKMatchesSort(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for trial := range 200 {
		n := 1 + r.IntN(300)
		logits := randomLogits(r, n, 8, trial%2 == 0)
		k := 1 + r.IntN(n)
		got, err := topK(make([]candidate, 0, k), logits, k)
		if err != nil {
			t.Fatal(err)
		}
		var want []int32
		for _, id := range refOrder(logits) {
			if len(want) < k && logits[id] != negInf {
				want = append(want, id)
			}
		}
		if !slices.Equal(ids(got), sortedIDs(want)) {
			t.Fatalf("trial %d (n=%d k=%d): topK %v, want %v", trial, n, k, ids(got), sortedIDs(want))
		}
	}
}

func candidatesOf(logits []float32) []candidate {
	c, err := allFinite(make([]candidate, 0, len(logits)), logits)
	if err != nil {
		panic(err)
	}
	return c
}

func TestTopPTable(t *testing.T) {
	ln := func(p float64) float32 { return float32(math.Log(p)) }
	tests := []struct {
		name   string
		logits []float32
		p      float32
		want   []int32
	}{
		// probabilities 0.5, 0.3, 0.15, 0.05
		{"first alone short", []float32{ln(.5), ln(.3), ln(.15), ln(.05)}, 0.45, []int32{0}},
		{"two reach 0.75", []float32{ln(.5), ln(.3), ln(.15), ln(.05)}, 0.75, []int32{0, 1}},
		{"three reach 0.9", []float32{ln(.05), ln(.15), ln(.3), ln(.5)}, 0.9, []int32{1, 2, 3}},
		{"tiny p keeps one", []float32{1, 2, 3}, 1e-6, []int32{2}},
		{"ties broken by id", []float32{0, 0, 0, 0}, 0.4, []int32{0, 1}},
		{"single", []float32{4}, 0.5, []int32{0}},
	}
	for _, tt := range tests {
		c := candidatesOf(tt.logits)
		n := topP(c, tt.p, weigh(c, 1))
		if got := ids(c[:n]); !slices.Equal(got, tt.want) {
			t.Errorf("%s: topP = %v, want %v", tt.name, got, tt.want)
		}
	}
}

func TestTopPMatchesSort(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for trial := range 300 {
		n := 1 + r.IntN(2000)
		logits := randomLogits(r, n, 6, false)
		p := r.Float32()*0.98 + 0.01
		c := candidatesOf(logits)
		got := ids(c[:topP(c, p, weigh(c, 1))])

		dist := refDist(logits, nil, Params{Temperature: 1, TopP: p, RepetitionPenalty: 1})
		var want []int32
		for id, q := range dist {
			if q > 0 {
				want = append(want, int32(id))
			}
		}
		if !slices.Equal(got, want) {
			t.Fatalf("trial %d (n=%d p=%v): nucleus of %d tokens, want %d", trial, n, p, len(got), len(want))
		}
	}
}

// TestTopPSortFallback gives the quickselect 0..3 rounds before its sort
// fallback and checks the kept set is the same as with a full sort.
func TestTopPSortFallback(t *testing.T) {
	logits := make([]float32, 5000)
	for i := range logits {
		logits[i] = float32(i%97) / 20 // heavy ties: the id order decides
	}
	for budget := range 4 {
		for _, p := range []float32{0.05, 0.5, 0.8, 0.99} {
			c := candidatesOf(logits)
			total := weigh(c, 1)
			want := topPBySort(slices.Clone(c), p, total)
			got := topPRounds(c, p, total, budget)
			if got != want {
				t.Fatalf("budget %d p %v: kept %d, sort reference %d", budget, p, got, want)
			}
			kept := ids(c[:got])
			ref := c[:0:0]
			ref = append(ref, candidatesOf(logits)...)
			slices.SortFunc(ref, cmpCandidates)
			if !slices.Equal(kept, ids(ref[:want])) {
				t.Fatalf("budget %d p %v: kept a different set than the sort", budget, p)
			}
		}
	}
}

func topPBySort(c []candidate, p float32, total float64) int {
	slices.SortFunc(c, cmpCandidates)
	acc := 0.0
	for i, x := range c {
		acc += float64(x.p)
		if acc >= float64(p)*total {
			return i + 1
		}
	}
	return len(c)
}

func TestMinP(t *testing.T) {
	ln := func(p float64) float32 { return float32(math.Log(p)) }
	tests := []struct {
		name   string
		logits []float32
		p      float32
		want   []int32
	}{
		{"keeps within ratio", []float32{ln(.4), ln(.3), ln(.1), ln(.05)}, 0.2, []int32{0, 1, 2}},
		{"p 1 keeps max and its ties", []float32{1, 3, 3, 2}, 1, []int32{1, 2}},
		{"small p keeps all", []float32{0, -5, -10}, 1e-6, []int32{0, 1, 2}},
		{"keeps the max always", []float32{-1}, 0.9, []int32{0}},
	}
	for _, tt := range tests {
		got := ids(minP(candidatesOf(tt.logits), tt.p))
		if !slices.Equal(got, tt.want) {
			t.Errorf("%s: minP = %v, want %v", tt.name, got, tt.want)
		}
	}
}

func TestPenalties(t *testing.T) {
	tests := []struct {
		name                string
		logits              []float32
		window              []int32
		rep, presence, freq float32
		want                []float32
	}{
		{"repetition divides positive, multiplies negative", []float32{2, -2, 0, 3}, []int32{0, 1, 2},
			2, 0, 0, []float32{1, -4, 0, 3}},
		{"count does not compound repetition", []float32{2, 1}, []int32{0, 0, 0},
			2, 0, 0, []float32{1, 1}},
		{"frequency scales with count, presence once", []float32{1, 1, 1}, []int32{1, 0, 1, 1},
			1, 0.5, 0.25, []float32{1 - 0.25 - 0.5, 1 - 0.75 - 0.5, 1}},
		{"negative penalties encourage", []float32{0, 0}, []int32{1},
			1, -1, -0.5, []float32{0, 1.5}},
		{"all together", []float32{4, -1}, []int32{0, 1, 0},
			1.25, 0.1, 0.2, []float32{4/1.25 - (2*0.2 + 0.1), -1*1.25 - (0.2 + 0.1)}},
	}
	for _, tt := range tests {
		w := slices.Clone(tt.logits)
		if _, err := applyPenalties(w, tt.window, nil, tt.rep, tt.presence, tt.freq); err != nil {
			t.Fatal(err)
		}
		for i := range w {
			if math.Abs(float64(w[i]-tt.want[i])) > 1e-6 {
				t.Errorf("%s: logits %v, want %v", tt.name, w, tt.want)
				break
			}
		}
	}
	if _, err := applyPenalties(make([]float32, 4), []int32{1, 4}, nil, 1.1, 0, 0); err == nil {
		t.Error("history token outside vocabulary: no error")
	}
}

func TestApplyBias(t *testing.T) {
	w := []float32{1, 2, 3}
	applyBias(w, []int32{0, 2}, []float32{-100, 0.5})
	if want := []float32{-99, 2, 3.5}; !slices.Equal(w, want) {
		t.Errorf("bias: %v, want %v", w, want)
	}
}

func TestArgmax(t *testing.T) {
	tests := []struct {
		logits []float32
		want   int32
		err    bool
	}{
		{[]float32{1, 3, 2}, 1, false},
		{[]float32{5, 5, 5}, 0, false},
		{[]float32{negInf, -1e30, negInf}, 1, false},
		{[]float32{negInf, negInf}, 0, true},
		{[]float32{1, float32(math.NaN())}, 0, true},
		{[]float32{1, float32(math.Inf(1))}, 0, true},
	}
	for _, tt := range tests {
		got, err := argmax(tt.logits)
		if (err != nil) != tt.err || (!tt.err && got != tt.want) {
			t.Errorf("argmax(%v) = %d, %v; want %d, error %v", tt.logits, got, err, tt.want, tt.err)
		}
	}
}

func TestExp32(t *testing.T) {
	worst := 0.0
	for x := float32(-90); x <= 0; x += 0.0137 {
		got, want := float64(exp32(x)), math.Exp(float64(x))
		if want < 1.2e-38 { // below float32 normals exp32 flushes to 0: absolute error only
			if math.Abs(got-want) > 1.2e-38 {
				t.Fatalf("exp32(%v) = %v, want %v", x, got, want)
			}
			continue
		}
		worst = max(worst, math.Abs(got-want)/want)
	}
	if worst > 3e-7 { // about 2.5 float32 ulp
		t.Errorf("exp32 worst relative error %.3g, want <= 3e-7", worst)
	}
	for _, x := range []float32{0, negInf, -1000, 1, 88} {
		got, want := float64(exp32(x)), math.Exp(float64(x))
		if math.Abs(got-want) > 3e-7*want {
			t.Errorf("exp32(%v) = %v, want %v", x, got, want)
		}
	}
	if !math.IsNaN(float64(exp32(float32(math.NaN())))) {
		t.Error("exp32(NaN) is not NaN")
	}
}
