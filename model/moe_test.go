package model

import (
	"math/rand/v2"
	"slices"
	"sort"
	"testing"
)

// routeRef is route written plainly: a stable sort of the experts by
// descending probability (ties: lower index first), the first k, and the
// renormalisation in float64 then float32 as ggml_sum_rows, ggml_clamp and
// ggml_div compute it.
func routeRef(probs []float32, k int, norm bool) ([]int32, []float32) {
	idx := make([]int32, len(probs))
	for i := range idx {
		idx[i] = int32(i)
	}
	sort.SliceStable(idx, func(a, b int) bool { return probs[idx[a]] > probs[idx[b]] })
	ids := idx[:k]
	w := make([]float32, k)
	for j, e := range ids {
		w[j] = probs[e]
	}
	if norm {
		var sum float64
		for _, x := range w {
			sum += float64(x)
		}
		s := float32(sum)
		if s < 6.103515625e-5 {
			s = 6.103515625e-5
		}
		for j := range w {
			w[j] = w[j] / s
		}
	}
	return ids, w
}

func TestRoute(t *testing.T) {
	check := func(name string, probs []float32, k int, norm bool) {
		t.Helper()
		ids, w := make([]int32, k), make([]float32, k)
		route(probs, norm, ids, w)
		wantIDs, wantW := routeRef(probs, k, norm)
		if !slices.Equal(ids, wantIDs) || !slices.Equal(w, wantW) {
			t.Fatalf("%s (k=%d norm=%v) probs %v: got %v %v, want %v %v", name, k, norm, probs, ids, w, wantIDs, wantW)
		}
	}
	// Ties: the lower expert first, at the cut too.
	ties := []float32{0.1, 0.3, 0.1, 0.3, 0.2}
	for k := 1; k <= 5; k++ {
		check("ties", ties, k, true)
		check("ties", ties, k, false)
	}
	ids := make([]int32, 3)
	route(ties, false, ids, make([]float32, 3))
	if !slices.Equal(ids, []int32{1, 3, 4}) {
		t.Fatalf("ties: got %v, want [1 3 4]", ids)
	}
	// All equal: experts 0..k-1 in order.
	eq := []float32{0.25, 0.25, 0.25, 0.25}
	route(eq, true, ids, make([]float32, 3))
	if !slices.Equal(ids, []int32{0, 1, 2}) {
		t.Fatalf("all equal: got %v, want [0 1 2]", ids)
	}
	// k = 1 with norm: the weight is exactly 1.
	w1 := make([]float32, 1)
	route([]float32{0.2, 0.7, 0.1}, true, make([]int32, 1), w1)
	if w1[0] != 1 {
		t.Fatalf("k=1 renormalised weight %v, want 1", w1[0])
	}
	// Underflowing probabilities: the clamp keeps the division finite.
	check("tiny", []float32{1e-30, 2e-30, 0, 1}, 2, true)
	// Random rows, every k including all experts.
	r := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{1, 2, 8, 16, 60, 128} {
		for trial := 0; trial < 20; trial++ {
			probs := make([]float32, n)
			for i := range probs {
				probs[i] = float32(r.Float64())
				if r.IntN(4) == 0 && i > 0 {
					probs[i] = probs[r.IntN(i)] // ties
				}
			}
			for _, k := range []int{1, min(2, n), (n + 1) / 2, n} {
				check("random", probs, k, true)
				check("random", probs, k, false)
			}
		}
	}
}
