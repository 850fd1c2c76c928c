package model_test

import (
	"math"
	"slices"
	"testing"

	"kiln/kernels/simd"
	"kiln/synth"
)

// TestKernelSetsAgree: a model's logits are bit-identical under every
// kernel set this CPU runs (generic Go, AVX2, AVX-VNNI, AVX-512 VNNI), for a prompt
// chunk long enough for every GEMM path (40 rows: the Q6_K panels start
// at 32), a short chunk and decode steps, for each weight type with
// int8 GEMMs and their mixes. The shape has an odd number of 8-row panels
// (K and V: 40 rows) and widths that are and are not multiples of 256.
// On a CPU without AVX-512 VNNI the avx512vnni set is not run; the test
// says so.
func TestKernelSetsAgree(t *testing.T) {
	sets := simd.Impls()
	if !slices.Contains(sets, "avx512vnni") || !slices.Contains(sets, "avxvnni") {
		t.Logf("this CPU runs only %v (%s): the VNNI sets it lacks are not checked here", sets, simd.CPUFeatures())
	}
	spec := synth.Spec{Arch: "qwen3", Dim: 256, Layers: 2, Heads: 4, KVHeads: 1, HeadDim: 40, FFN: 768,
		VocabSize: 400, RopeTheta: 1e6, NormEps: 1e-6}
	prompt := make([]int32, 40)
	for i := range prompt {
		prompt[i] = int32(1 + (i*37)%399)
	}
	steps := [][]int32{prompt, {5, 6, 7, 8, 9, 10, 11}, {300}, {2}}
	for _, typ := range []string{"Q8_0", "Q4_0", "Q4_K", "Q6_K", "Q4_K_M"} {
		_, m := synthModel(t, spec, typ)
		var want [][][]float32 // [step][row][vocab] under the first set
		for _, set := range sets {
			prev, err := simd.SetImpl(set)
			if err != nil {
				t.Fatal(err)
			}
			r := newRunner(t, m, 64, false)
			for s, toks := range steps {
				got := r.feed(toks...)
				if set == sets[0] {
					want = append(want, got)
					continue
				}
				for i := range got {
					for v := range got[i] {
						if math.Float32bits(got[i][v]) != math.Float32bits(want[s][i][v]) {
							simd.SetImpl(prev)
							t.Fatalf("%s step %d row %d logit %d: %s %g (%#08x), %s %g (%#08x)", typ, s, i, v,
								set, got[i][v], math.Float32bits(got[i][v]), sets[0], want[s][i][v], math.Float32bits(want[s][i][v]))
						}
					}
				}
			}
			simd.SetImpl(prev)
		}
	}
}
