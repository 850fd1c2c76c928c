package simd

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestGemmQ4_KShapes checks GemmQ4_KPacked and GemmQ4_KQ8_K, under every
// kernel set, against the generic single-row dot bit for bit over the
// shapes that reach every Q4_K VNNI kernel: 1, 2, 3 and 5 panels (odd
// counts end on the 8-row kernel), raw row counts past the last panel,
// nb = 1, 2, 3, 5 and m = 2..19 (every activation-row count 1..7 of a
// call and several calls).
func TestGemmQ4_KShapes(t *testing.T) {
	r := rand.New(rand.NewPCG(71, 72))
	c := gemmCases[2]
	for _, mode := range []string{"random", "extreme", "max", "min"} {
		for _, nb := range []int{1, 2, 3, 5} {
			if nb > 2 && mode != "random" {
				continue // keep the test fast
			}
			for _, rows := range []int{8, 16, 24, 40, 13, 29} {
				n := nb * qkK
				w, wStride, x, a, aStride := gemmInputs(r, c, nb, rows, 19, mode)
				want := make([][]float32, 19)
				for j := range want {
					want[j] = make([]float32, rows)
					for i := range rows {
						want[j][i] = dotQ4_KQ8_KGeneric(nb, w[i*wStride:], x[j])
					}
				}
				var panels []byte
				if rows%8 == 0 {
					panels = make([]byte, PackedQ4_KBytes(n, rows))
					PackQ4_K(n, w, wStride, rows, panels)
				}
				scratch := make([]byte, GemmScratchBytes(n))
				bothImpls(t, func(t *testing.T, impl string) {
					for m := 2; m <= 19; m++ {
						outStride := rows + 1
						for _, packed := range []bool{false, true} {
							if packed && panels == nil {
								continue
							}
							out := make([]float32, m*outStride)
							if packed {
								GemmQ4_KPacked(n, panels, rows, a, aStride, m, out, outStride, scratch)
							} else {
								GemmQ4_KQ8_K(n, w, wStride, rows, a, aStride, m, out, outStride, scratch)
							}
							for j := range m {
								for i := range rows {
									got := out[j*outStride+i]
									if math.Float32bits(got) != math.Float32bits(want[j][i]) && !(got != got && want[j][i] != want[j][i]) {
										t.Fatalf("%s %s packed=%v nb=%d rows=%d m=%d: out[%d][%d] = %g (%#08x), single-row %g (%#08x)",
											impl, mode, packed, nb, rows, m, j, i, got, math.Float32bits(got), want[j][i], math.Float32bits(want[j][i]))
									}
								}
								if out[j*outStride+rows] != 0 {
									t.Fatalf("%s packed=%v rows=%d m=%d: wrote out[%d][%d] past the rows", impl, packed, rows, m, j, rows)
								}
							}
						}
					}
				})
			}
		}
	}
}
