package simd

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestGemmQ6_KPanelsMatchSingleRow covers GemmQ6_KQ8_K from
// gemmQ6_KPanelMin activation rows on (the panel kernels; the shared
// TestGemmMatchesSingleRow stays below it): every output must have the
// single-row dot's bits, for panel tails (rows not a multiple of 8), all
// four kernel widths (m%4), random and adversarial blocks, both
// implementations.
func TestGemmQ6_KPanelsMatchSingleRow(t *testing.T) {
	r := rand.New(rand.NewPCG(71, 72))
	c := gemmCases[3]
	if c.w != "Q6_K" {
		t.Fatalf("gemmCases[3] is %s, want Q6_K", c.w)
	}
	fw := formats[c.w]
	for _, mode := range modes {
		for _, nb := range []int{1, 3} {
			for _, shape := range [][2]int{{8, gemmQ6_KPanelMin}, {13, gemmQ6_KPanelMin + 1}, {3, gemmQ6_KPanelMin + 2}, {16, gemmQ6_KPanelMin + 3}} {
				rows, m := shape[0], shape[1]
				n := nb * fw.block
				w, wStride, x, a, aStride := gemmInputs(r, c, nb, rows, m, mode)
				outStride := rows + 2
				scratch := make([]byte, GemmScratchBytes(n))
				bothImpls(t, func(t *testing.T, impl string) {
					out := make([]float32, m*outStride)
					c.gemm(n, w, wStride, rows, a, aStride, m, out, outStride, scratch)
					bad := 0
					for j := range m {
						for i := range rows {
							want := c.single(n, w[i*wStride:], x[j])
							got := out[j*outStride+i]
							same := math.Float32bits(got) == math.Float32bits(want) || (got != got && want != want)
							if !same && bad < 5 {
								bad++
								t.Errorf("%s GemmQ6_K %s nb=%d rows=%d m=%d: out[%d][%d] = %g (%#08x), single-row %g (%#08x)",
									impl, mode, nb, rows, m, j, i, got, math.Float32bits(got), want, math.Float32bits(want))
							}
						}
					}
				})
			}
		}
	}
}
