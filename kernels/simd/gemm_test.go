package simd

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

// gemmCase is one weight type's GEMM with its single-row reference.
type gemmCase struct {
	w, x     string
	actBytes func(n int) int
	act      func(n int, x, dst []byte)
	gemm     func(n int, w []byte, wStride, rows int, a []byte, aStride, m int, out []float32, outStride int, scratch []byte)
	single   func(n int, w, x []byte) float32
}

var gemmCases = []gemmCase{
	{"Q8_0", "Q8_0", GemmActQ8_0Q8_0Bytes, GemmActQ8_0Q8_0, GemmQ8_0Q8_0, DotQ8_0Q8_0},
	{"Q4_0", "Q8_0", GemmActQ4_0Q8_0Bytes, GemmActQ4_0Q8_0, GemmQ4_0Q8_0, DotQ4_0Q8_0},
	{"Q4_K", "Q8_K", nil, nil, GemmQ4_KQ8_K, DotQ4_KQ8_K},
	{"Q6_K", "Q8_K", nil, nil, GemmQ6_KQ8_K, DotQ6_KQ8_K},
	{"Q5_K", "Q8_K", nil, nil, GemmQ5_KQ8_K, DotQ5_KQ8_K},
}

// gemmInputs builds rows weight rows and m activation rows of nb blocks
// (with a few bytes of padding between rows, so strides differ from row
// sizes) and the prepared activations.
func gemmInputs(r *rand.Rand, c gemmCase, nb, rows, m int, mode string) (w []byte, wStride int, x [][]byte, a []byte, aStride int) {
	fw, fx := formats[c.w], formats[c.x]
	wStride = nb*fw.bytes + 3
	w = make([]byte, rows*wStride)
	for i := range rows {
		copy(w[i*wStride:], genRow(r, fw, nb, mode))
	}
	n := nb * fw.block
	if c.act == nil { // activations used as they are
		aStride = nb*fx.bytes + 5
	} else {
		aStride = c.actBytes(n) + 5
	}
	a = make([]byte, m*aStride)
	x = make([][]byte, m)
	for j := range m {
		x[j] = genRow(r, fx, nb, mode)
		if c.w == "Q8_0" {
			clampActQ8_0(x[j]) // GemmQ8_0Q8_0's precondition
		}
		if c.act == nil {
			copy(a[j*aStride:], x[j])
		} else {
			c.act(n, x[j], a[j*aStride:])
		}
	}
	return w, wStride, x, a, aStride
}

// TestGemmMatchesSingleRow checks that every output of each GEMM, on both
// implementations, has the bits of the single-row dot of the original
// (unprepared) rows: panel tails (rows not a multiple of 8 or 16), 1..9
// activation rows (kernel tails), several block counts, adversarial blocks.
func TestGemmMatchesSingleRow(t *testing.T) {
	r := rand.New(rand.NewPCG(41, 42))
	for _, c := range gemmCases {
		fw := formats[c.w]
		for _, mode := range modes {
			for _, nb := range []int{1, 2, 3, 7, 64} {
				for _, shape := range [][2]int{{16, 4}, {8, 1}, {24, 9}, {5, 3}, {33, 6}, {1, 2}, {17, 8}, {40, 1}, {13, 1}, {3, 1}} {
					rows, m := shape[0], shape[1]
					if nb == 64 && mode != "random" && mode != "mixed" {
						continue // keep the test fast: long rows only for the busy modes
					}
					n := nb * fw.block
					w, wStride, x, a, aStride := gemmInputs(r, c, nb, rows, m, mode)
					outStride := rows + 2
					scratch := make([]byte, GemmScratchBytes(n))
					bothImpls(t, func(t *testing.T, impl string) {
						out := make([]float32, m*outStride)
						for i := range out {
							out[i] = float32(math.NaN())
						}
						c.gemm(n, w, wStride, rows, a, aStride, m, out, outStride, scratch)
						bad := 0
						for j := range m {
							for i := range rows {
								want := c.single(n, w[i*wStride:], x[j])
								got := out[j*outStride+i]
								if math.Float32bits(got) != math.Float32bits(want) && bad < 5 {
									bad++
									t.Errorf("%s Gemm%s %s nb=%d rows=%d m=%d: out[%d][%d] = %g (%#08x), single-row %g (%#08x)",
										impl, c.w, mode, nb, rows, m, j, i, got, math.Float32bits(got), want, math.Float32bits(want))
								}
							}
							for i := rows; i < outStride && j < m-1; i++ {
								if !math.IsNaN(float64(out[j*outStride+i])) {
									t.Fatalf("%s Gemm%s: wrote out[%d][%d] past rows=%d", impl, c.w, j, i, rows)
								}
							}
						}
					})
				}
			}
		}
	}
}

// TestGemmActMatchesGeneric checks the assembly activation conversions
// against the generic ones, byte for byte.
func TestGemmActMatchesGeneric(t *testing.T) {
	if !hasFast {
		t.Skip("simd: no fast implementation on this CPU/build; generic only")
	}
	r := rand.New(rand.NewPCG(43, 44))
	for _, c := range gemmCases {
		if c.act == nil {
			continue
		}
		for _, mode := range modes {
			nb := 5
			n := nb * qk
			x := genRow(r, formats[c.x], nb, mode)
			got, want := make([]byte, c.actBytes(n)), make([]byte, c.actBytes(n))
			ForceGeneric(true)
			c.act(n, x, want)
			ForceGeneric(false)
			c.act(n, x, got)
			if string(got) != string(want) {
				t.Errorf("GemmAct%s%s %s: assembly and generic differ", c.w, c.x, mode)
			}
		}
	}
}

func TestGemmBadShapesPanic(t *testing.T) {
	for _, c := range gemmCases {
		fw := formats[c.w]
		n := 2 * fw.block
		rb := 2 * fw.bytes
		ab := 2 * formats[c.x].bytes
		if c.act != nil {
			ab = c.actBytes(n)
		}
		w, a := make([]byte, 4*rb), make([]byte, 3*ab)
		out, scratch := make([]float32, 12), make([]byte, GemmScratchBytes(n))
		name := "Gemm" + c.w + c.x
		for _, tc := range []struct {
			name string
			f    func()
		}{
			{"bad n", func() { c.gemm(n+1, w, rb, 4, a, ab, 3, out, 4, scratch) }},
			{"short weights", func() { c.gemm(n, w[:4*rb-1], rb, 4, a, ab, 3, out, 4, scratch) }},
			{"weight stride below row", func() { c.gemm(n, w, rb-1, 4, a, ab, 3, out, 4, scratch) }},
			{"short activations", func() { c.gemm(n, w, rb, 4, a[:3*ab-1], ab, 3, out, 4, scratch) }},
			{"activation stride below row", func() { c.gemm(n, w, rb, 4, a, ab-1, 3, out, 4, scratch) }},
			{"short out", func() { c.gemm(n, w, rb, 4, a, ab, 3, out[:11], 4, scratch) }},
			{"out stride below rows", func() { c.gemm(n, w, rb, 4, a, ab, 3, out, 3, scratch) }},
			{"short scratch", func() { c.gemm(n, w, rb, 4, a, ab, 3, out, 4, scratch[:len(scratch)-1]) }},
			{"negative rows", func() { c.gemm(n, w, rb, -1, a, ab, 3, out, 4, scratch) }},
		} {
			msg := panicMessage(tc.f)
			if !strings.HasPrefix(msg, "simd: "+name+": ") {
				t.Errorf("%s %s: panic %q", name, tc.name, msg)
			}
		}
		if c.act != nil {
			msg := panicMessage(func() { c.act(n, make([]byte, 2*formats[c.x].bytes), make([]byte, ab-1)) })
			if !strings.HasPrefix(msg, "simd: GemmAct"+c.w+c.x+": ") {
				t.Errorf("GemmAct%s%s short dst: panic %q", c.w, c.x, msg)
			}
		}
	}
}

func TestGemmNoAllocs(t *testing.T) {
	r := rand.New(rand.NewPCG(45, 46))
	for _, c := range gemmCases {
		nb, rows, m := 4, 16, 4
		n := nb * formats[c.w].block
		w, wStride, _, a, aStride := gemmInputs(r, c, nb, rows, m, "random")
		out, scratch := make([]float32, m*rows), make([]byte, GemmScratchBytes(n))
		if allocs := testing.AllocsPerRun(10, func() { c.gemm(n, w, wStride, rows, a, aStride, m, out, rows, scratch) }); allocs != 0 {
			t.Errorf("Gemm%s: %v allocations per call", c.w, allocs)
		}
	}
}

// BenchmarkGemm times the GEMMs on TinyLlama shapes (a 64-row slice of a
// matrix of 2048 or 5632 columns) for m activation rows. SetBytes counts
// the weight bytes once per activation row, as m single-row dots would
// read them, so MB/s compares with BenchmarkDotQuant; outblk/ns is
// outputs times 32-element blocks (32 multiply-adds) per nanosecond.
func BenchmarkGemm(b *testing.B) {
	r := rand.New(rand.NewPCG(47, 48))
	for _, c := range gemmCases {
		for _, n := range []int{2048, 5632} {
			for _, m := range []int{4, 16, 32, 128} {
				nb := n / formats[c.w].block
				rows := 64
				w, wStride, _, a, aStride := gemmInputs(r, c, nb, rows, m, "random")
				out, scratch := make([]float32, m*rows), make([]byte, GemmScratchBytes(n))
				b.Run(fmt.Sprintf("%s/n=%d/m=%d", c.w, n, m), func(b *testing.B) {
					benchImpls(b, func(b *testing.B) {
						b.SetBytes(int64(m * rows * nb * formats[c.w].bytes))
						for b.Loop() {
							c.gemm(n, w, wStride, rows, a, aStride, m, out, rows, scratch)
						}
						b.ReportMetric(float64(rows*m*n/32)*float64(b.N)/float64(b.Elapsed().Nanoseconds()), "outblk/ns")
					})
				})
			}
		}
	}
}

// BenchmarkGemmDecode times each GEMM with one activation row (decode:
// the 8-row gemv kernels, Q6_K's single-row dots) on a 64-row slice of a
// TinyLlama matrix, which stays in L2: the kernel's compute, not DRAM.
// MB/s of weights.
func BenchmarkGemmDecode(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 4))
	for _, c := range gemmCases {
		for _, n := range []int{2048, 5632} {
			nb, rows := n/formats[c.w].block, 64
			w, wStride, _, a, aStride := gemmInputs(r, c, nb, rows, 1, "random")
			out, scratch := make([]float32, rows), make([]byte, GemmScratchBytes(n))
			b.Run(fmt.Sprintf("%s/n=%d", c.w, n), func(b *testing.B) {
				benchImpls(b, func(b *testing.B) {
					b.SetBytes(int64(rows * nb * formats[c.w].bytes))
					for b.Loop() {
						c.gemm(n, w, wStride, rows, a, aStride, 1, out, rows, scratch)
					}
				})
			})
		}
	}
}
