package kernels

import (
	"math"
	"math/rand/v2"
	"testing"

	"kiln/gguf"
	"kiln/kernels/simd"
)

// TestDecodeKernelSets: decode (m = 1) MatMuls of the int8-GEMM weight
// types, raw and repacked at load time, give the generic kernels' bits
// under every kernel set this CPU runs, on 1 and several threads (each
// worker's row range starting mid-panel, with partial last panels).
func TestDecodeKernelSets(t *testing.T) {
	defer simd.ForceGeneric(false)
	r := rand.New(rand.NewPCG(81, 82))
	pools := []*Pool{NewPool(1), NewPool(3)}
	defer func() {
		for _, p := range pools {
			p.Close()
		}
	}()
	for _, tc := range []struct {
		typ        gguf.Type
		rows, cols int
	}{
		{gguf.TypeQ8_0, 133, 1024}, {gguf.TypeQ8_0, 256, 2048},
		{gguf.TypeQ4_K, 136, 1024}, {gguf.TypeQ4_K, 93, 768}, {gguf.TypeQ4_K, 256, 2048},
		{gguf.TypeQ6_K, 133, 1024}, {gguf.TypeQ6_K, 256, 2048},
		{gguf.TypeQ2_K, 133, 1024}, {gguf.TypeQ3_K, 133, 1024},
	} {
		raw := randMatrix(r, tc.typ, tc.rows, tc.cols)
		ms := []*Matrix{raw}
		if Repackable(raw) {
			rp := *raw
			if err := pools[1].Repack(&rp); err != nil {
				t.Fatal(err)
			}
			ms = append(ms, &rp)
		}
		x := randFloats(r, tc.cols, 1)
		simd.ForceGeneric(true)
		want := make([]float32, tc.rows)
		pools[0].MatMul(want, raw, x, 1)
		simd.ForceGeneric(false)
		for _, set := range simd.Impls() {
			if _, err := simd.SetImpl(set); err != nil {
				t.Fatal(err)
			}
			for _, m := range ms {
				for _, p := range pools {
					got := make([]float32, tc.rows)
					p.MatMul(got, m, x, 1)
					for i, v := range want {
						if math.Float32bits(got[i]) != math.Float32bits(v) {
							t.Fatalf("%s %dx%d repacked=%v %s threads=%d: out[%d] = %g (%#08x), generic %g (%#08x)",
								tc.typ, tc.rows, tc.cols, m.Repacked(), set, p.Threads(), i, got[i], math.Float32bits(got[i]), v, math.Float32bits(v))
						}
					}
				}
			}
		}
		simd.ForceGeneric(false)
	}
}
