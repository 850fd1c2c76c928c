package simd

import (
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
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
	for _, mode := range modes {
		for _, nb := range []int{1, 3} {
			for _, shape := range [][2]int{{8, gemmQ6_KPanelMin}, {13, gemmQ6_KPanelMin + 1}, {3, gemmQ6_KPanelMin + 2}, {16, gemmQ6_KPanelMin + 3}} {
				checkGemmQ6_K(t, r, mode, nb, shape[0], shape[1])
			}
		}
	}
}

// TestGemmQ6_KVNNIMatchesSingleRow covers the avx512vnni path
// (gemmQ6_KVNNI) on every kernel set the CPU has: 16-row pairs of panels
// with and without an odd 8-row panel or a partial one after them (rows
// 16, 17, 24, 29, 32, 40, 48), every width of the 3-row kernels (m%3)
// from gemmQ6_KVNNIMin to 40 activation rows (and one just below it), the
// single-row decode kernel (m = 1: gemvQ6_KQ8_KV, rows 1, 7, 16, 37), nb =
// 1..3, adversarial blocks.
func TestGemmQ6_KVNNIMatchesSingleRow(t *testing.T) {
	r := rand.New(rand.NewPCG(73, 74))
	shapes := [][2]int{{16, gemmQ6_KPanelMin}, {24, gemmQ6_KPanelMin + 1}, {29, gemmQ6_KPanelMin + 2},
		{40, gemmQ6_KPanelMin + 3}, {48, 40}, {32, 37}, {16, gemmQ6_KVNNIMin}, {24, gemmQ6_KVNNIMin + 1},
		{29, gemmQ6_KVNNIMin + 5}, {17, gemmQ6_KVNNIMin - 1}, {1, 1}, {7, 1}, {16, 1}, {37, 1}}
	for _, mode := range modes {
		for _, nb := range []int{1, 2, 3} {
			for _, shape := range shapes {
				checkGemmQ6_K(t, r, mode, nb, shape[0], shape[1])
			}
		}
	}
}

// checkGemmQ6_K runs GemmQ6_KQ8_K on one shape under every kernel set and
// checks every output against the single-row dot's bits.
func checkGemmQ6_K(t *testing.T, r *rand.Rand, mode string, nb, rows, m int) {
	t.Helper()
	c := gemmCases[3]
	if c.w != "Q6_K" {
		t.Fatalf("gemmCases[3] is %s, want Q6_K", c.w)
	}
	n := nb * formats[c.w].block
	w, wStride, x, a, aStride := gemmInputs(r, c, nb, rows, m, mode)
	outStride := rows + 2
	scratch := make([]byte, GemmScratchBytes(n))
	want := make([]float32, m*rows) // the generic single-row dot's bits
	wasGeneric := ForceGeneric(true)
	for j := range m {
		for i := range rows {
			want[j*rows+i] = c.single(n, w[i*wStride:], x[j])
		}
	}
	ForceGeneric(wasGeneric)
	bothImpls(t, func(t *testing.T, impl string) {
		out := make([]float32, m*outStride)
		c.gemm(n, w, wStride, rows, a, aStride, m, out, outStride, scratch)
		bad := 0
		for j := range m {
			for i := range rows {
				want, got := want[j*rows+i], out[j*outStride+i]
				same := math.Float32bits(got) == math.Float32bits(want) || (got != got && want != want)
				if !same && bad < 5 {
					bad++
					t.Errorf("%s GemmQ6_K %s nb=%d rows=%d m=%d: out[%d][%d] = %g (%#08x), single-row %g (%#08x)",
						impl, mode, nb, rows, m, j, i, got, math.Float32bits(got), want, math.Float32bits(want))
				}
			}
			for i := rows; i < outStride && j < m-1; i++ {
				if out[j*outStride+i] != 0 {
					t.Errorf("%s GemmQ6_K %s nb=%d rows=%d m=%d: wrote out[%d][%d] past the rows", impl, mode, nb, rows, m, j, i)
				}
			}
		}
	})
}

// BenchmarkGemmQ6_KVNNI compares GemmQ6_KQ8_K on the avx2 and avx512vnni
// kernel sets (256 weight rows), and, below gemmQ6_KPanelMin, the AVX2
// dots (dots: what avx2 runs there, and avx512vnni below gemmQ6_KVNNIMin)
// on the avx512vnni set.
func BenchmarkGemmQ6_KVNNI(b *testing.B) {
	r := rand.New(rand.NewPCG(75, 76))
	c := gemmCases[3]
	const rows = 256
	for _, n := range []int{2048} {
		for _, m := range []int{8, 12, 16, 24, 32, 64, 128} {
			nb := n / formats[c.w].block
			w, wStride, _, a, aStride := gemmInputs(r, c, nb, rows, m, "random")
			out, scratch := make([]float32, m*rows), make([]byte, GemmScratchBytes(n))
			run := func(name string, f func()) {
				b.Run(fmt.Sprintf("n=%d/m=%d/%s", n, m, name), func(b *testing.B) {
					runtime.LockOSThread()
					defer runtime.UnlockOSThread()
					c0, ok := threadCPUTime()
					for b.Loop() {
						f()
					}
					b.ReportMetric(float64(rows*m*n/32)*float64(b.N)/float64(b.Elapsed().Nanoseconds()), "outblk/ns")
					if c1, ok1 := threadCPUTime(); ok && ok1 {
						b.ReportMetric(float64(c1-c0)/float64(b.N), "cpu-ns/op")
					}
				})
			}
			for _, impl := range []string{"avx2", "avx512vnni"} {
				if _, err := SetImpl(impl); err != nil {
					b.Skip(err)
				}
				run(impl, func() { GemmQ6_KQ8_K(n, w, wStride, rows, a, aStride, m, out, rows, scratch) })
				if impl == "avx512vnni" && m < gemmQ6_KPanelMin {
					run("dots", func() { gemmQ6_KDots(nb, w, wStride, rows, a, aStride, m, out, rows) })
				}
			}
			ForceGeneric(false)
		}
	}
}
