package simd

import (
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"testing"
)

// TestGemmQ5_KMatchesSingleRow covers every GemmQ5_KQ8_K path on every
// kernel set the CPU has (the shared TestGemmMatchesSingleRow stays at
// m <= 9): the AVX2/AVX-VNNI panel kernels from gemmQ5_KPanelMin rows
// (all four widths, m%4), the avx512vnni 16-row kernels from
// gemmQ5_KVNNIMin (all three widths, m%3) with and without an odd 8-row
// or partial panel after the pairs (rows 8, 13, 16, 17, 24, 29, 40, 48),
// and the dots just below both thresholds; nb = 1..3, random and
// adversarial blocks (the extreme modes reach the int16 sums' bounds).
// Every output must have the generic single-row dot's bits.
func TestGemmQ5_KMatchesSingleRow(t *testing.T) {
	r := rand.New(rand.NewPCG(91, 92))
	shapes := [][2]int{{8, gemmQ5_KPanelMin}, {13, gemmQ5_KPanelMin + 1}, {16, gemmQ5_KPanelMin + 2},
		{24, gemmQ5_KPanelMin + 3}, {29, gemmQ5_KPanelMin + 5}, {40, 37}, {48, 40}, {17, gemmQ5_KPanelMin - 1},
		{16, gemmQ5_KVNNIMin}, {24, gemmQ5_KVNNIMin + 1}, {29, gemmQ5_KVNNIMin + 2}, {17, gemmQ5_KVNNIMin - 1}}
	for _, mode := range modes {
		for _, nb := range []int{1, 2, 3} {
			for _, shape := range shapes {
				checkGemmQ5_K(t, r, mode, nb, shape[0], shape[1])
			}
		}
	}
}

// checkGemmQ5_K runs GemmQ5_KQ8_K on one shape under every kernel set and
// checks every output against the generic single-row dot's bits, and
// that nothing is written past the rows.
func checkGemmQ5_K(t *testing.T, r *rand.Rand, mode string, nb, rows, m int) {
	t.Helper()
	c := gemmCases[4]
	if c.w != "Q5_K" {
		t.Fatalf("gemmCases[4] is %s, want Q5_K", c.w)
	}
	n := nb * formats[c.w].block
	w, wStride, x, a, aStride := gemmInputs(r, c, nb, rows, m, mode)
	outStride := rows + 2
	scratch := make([]byte, GemmScratchBytes(n))
	want := make([]float32, m*rows)
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
					t.Errorf("%s GemmQ5_K %s nb=%d rows=%d m=%d: out[%d][%d] = %g (%#08x), single-row %g (%#08x)",
						impl, mode, nb, rows, m, j, i, got, math.Float32bits(got), want, math.Float32bits(want))
				}
			}
			for i := rows; i < outStride && j < m-1; i++ {
				if out[j*outStride+i] != 0 {
					t.Errorf("%s GemmQ5_K %s nb=%d rows=%d m=%d: wrote out[%d][%d] past the rows", impl, mode, nb, rows, m, j, i)
				}
			}
		}
	})
}

// BenchmarkGemmQ5_K compares, per kernel set, GemmQ5_KQ8_K (gemm) with
// the x4 dots it replaces (dots: what every set ran before the panels,
// and still runs below the thresholds) and the set's panel path whatever
// m (panels: what sets the thresholds) on a 256-row TinyLlama slice
// (n = 2048).
// cpu-ns/op is the benchmark thread's CPU time (load-independent).
func BenchmarkGemmQ5_K(b *testing.B) {
	r := rand.New(rand.NewPCG(93, 94))
	c := gemmCases[4]
	const rows, n = 256, 2048
	defer ForceGeneric(false)
	for _, m := range []int{4, 8, 12, 16, 24, 32, 128} {
		nb := n / formats[c.w].block
		w, wStride, _, a, aStride := gemmInputs(r, c, nb, rows, m, "random")
		out, scratch := make([]float32, m*rows), make([]byte, GemmScratchBytes(n))
		for _, impl := range Impls() {
			if impl == "generic" {
				continue
			}
			if _, err := SetImpl(impl); err != nil {
				b.Fatal(err)
			}
			for _, path := range []string{"gemm", "dots", "panels"} {
				b.Run(fmt.Sprintf("m=%d/%s/%s", m, impl, path), func(b *testing.B) {
					runtime.LockOSThread() // threadCPUTime is the thread's clock
					defer runtime.UnlockOSThread()
					c0, ok := threadCPUTime()
					for b.Loop() {
						switch {
						case path == "gemm":
							GemmQ5_KQ8_K(n, w, wStride, rows, a, aStride, m, out, rows, scratch)
						case path == "dots":
							gemmQ5_KDots(nb, w, wStride, rows, a, aStride, m, out, rows)
						case impl == "avx512vnni":
							gemmQ5_KVNNI(nb, w, wStride, rows, a, aStride, m, out, rows, scratch)
						default:
							gemmQ5_K.run(nb, w, wStride, rows, a, aStride, m, out, rows, scratch)
						}
					}
					if c1, ok1 := threadCPUTime(); ok && ok1 && b.N > 0 {
						b.ReportMetric(float64(c1-c0)/float64(b.N), "cpu-ns/op")
					}
				})
			}
		}
	}
}

// TestDotQ5_KVMatchesGeneric calls the avx512vnni single-row dot
// (dotQ5_KQ8_KV, decode's kernel on that set) directly, whatever the
// dispatch, and DotQ5_KQ8_K under every kernel set: the generic dot's bits
// for every mode (the extreme ones reach the int16 and int32 bounds) and
// block count.
func TestDotQ5_KVMatchesGeneric(t *testing.T) {
	r := rand.New(rand.NewPCG(95, 96))
	for _, mode := range decModes {
		for _, nb := range blockCounts(qkK) {
			w, x := decRow(r, formats["Q5_K"], nb, mode), decRow(r, formats["Q8_K"], nb, mode)
			want := dotQ5_KQ8_KGeneric(nb, w, x)
			check := func(what string, got float32) {
				t.Helper()
				if math.Float32bits(got) != math.Float32bits(want) && !(got != got && want != want) {
					t.Fatalf("%s %s nb=%d: %g (%#08x), generic %g (%#08x)", what, mode, nb, got, math.Float32bits(got), want, math.Float32bits(want))
				}
			}
			if cpuSets[implAVX512] {
				check("dotQ5_KQ8_KV", dotQ5_KQ8_KV(nb, w, x))
			}
			bothImpls(t, func(t *testing.T, impl string) { check("DotQ5_KQ8_K "+impl, DotQ5_KQ8_K(nb*qkK, w, x)) })
		}
	}
}

// BenchmarkDotQ5_KStream times decode's access pattern: one thread dots
// every 2048-element row of a ~500 MB Q5_K matrix (more than this
// machine's L3) in order, the rows streamed from DRAM, with the AVX2 dot
// and, where the CPU has it, the avx512vnni one; cpu-ms/op is the thread's
// CPU time per pass. It measured the dots' prefetch distance (kquant5.go).
func BenchmarkDotQ5_KStream(b *testing.B) {
	const nb, rows = 8, 2048 * 176
	r := rand.New(rand.NewPCG(97, 98))
	w := make([]byte, rows*nb*bytesQ5_K)
	for i := range w {
		w[i] = byte(r.Uint32())
	}
	x := genRow(r, formats["Q8_K"], nb, "random")
	dots := []struct {
		name string
		f    func(int, []byte, []byte) float32
	}{{"avx2", dotQ5_KQ8_KAVX2}}
	if cpuSets[implAVX512] {
		dots = append(dots, struct {
			name string
			f    func(int, []byte, []byte) float32
		}{"avx512vnni", dotQ5_KQ8_KV})
	}
	for _, d := range dots {
		b.Run(d.name, func(b *testing.B) {
			if !cpuSets[implAVX2] {
				b.Skip("no AVX2")
			}
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			b.SetBytes(int64(len(w)))
			c0, ok := threadCPUTime()
			rb := nb * bytesQ5_K
			for b.Loop() {
				for i := 0; i < rows; i++ {
					benchSink += d.f(nb, w[i*rb:], x)
				}
			}
			if c1, ok1 := threadCPUTime(); ok && ok1 && b.N > 0 {
				b.ReportMetric(float64(c1-c0)/float64(b.N)/1e6, "cpu-ms/op")
			}
		})
	}
}
