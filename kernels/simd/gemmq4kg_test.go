package simd

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

// q4kgCase is GemmQ4_KGemvQ8_K as a gemmCase (activations as they are).
var q4kgCase = gemmCase{"Q4_K", "Q8_K", nil, nil, GemmQ4_KGemvQ8_K, DotQ4_KQ8_KGemv}

// TestGemmQ4_KGemvMatchesGemv checks GemmQ4_KGemvQ8_K (per-call panels)
// and GemmQ4_KGemvPacked (load-time layout, PackQ4_KG), under every kernel
// set this CPU has, against the generic DotQ4_KQ8_KGemv of the raw rows,
// bit for bit: every block mode plus raw random bytes (any scales, mins,
// bsums); 1 to 6 per-call panels, 1 to 3 load-time ones, and raw row
// counts past the last panel (the zero-padded tail); nb = 1, 2, 3, 7; m = 1 (the 8-row decode kernels)
// and 2..19 (every activation-row count of the AVX2 and AVX-512 kernels,
// and several calls); output strides wider than the rows.
func TestGemmQ4_KGemvMatchesGemv(t *testing.T) {
	r := rand.New(rand.NewPCG(81, 82))
	fw, fx := formats["Q4_K"], formats["Q8_K"]
	for _, mode := range append(append([]string{}, modes...), "raw") {
		for _, nb := range []int{1, 2, 3, 7} {
			if nb > 2 && mode != "random" && mode != "raw" && mode != "mixed" {
				continue // keep the test fast
			}
			for _, rows := range []int{8, 16, 24, 32, 48, 13, 29, 5} {
				const mMax = 19
				n := nb * qkK
				var w, a []byte
				var wStride, aStride int
				var x [][]byte
				if mode == "raw" {
					wStride, aStride = nb*fw.bytes+3, nb*fx.bytes+5
					w, a = make([]byte, rows*wStride), make([]byte, mMax*aStride)
					for i := range w {
						w[i] = byte(r.Uint32())
					}
					for i := range a {
						a[i] = byte(r.Uint32())
					}
					x = make([][]byte, mMax)
					for j := range x {
						x[j] = a[j*aStride : j*aStride+nb*fx.bytes]
					}
				} else {
					w, wStride, x, a, aStride = gemmInputs(r, q4kgCase, nb, rows, mMax, mode)
				}
				want := make([][]float32, mMax)
				for j := range want {
					want[j] = make([]float32, rows)
					for i := range rows {
						want[j][i] = dotQ4_KQ8_KGemvGeneric(nb, w[i*wStride:], x[j])
					}
				}
				var panels []byte
				if rows%16 == 0 {
					panels = make([]byte, PackedQ4_KGBytes(n, rows))
					PackQ4_KG(n, w, wStride, rows, panels)
				}
				scratch := make([]byte, GemmScratchBytes(n))
				bothImpls(t, func(t *testing.T, impl string) {
					for m := 1; m <= mMax; m++ {
						outStride := rows + 1
						for _, packed := range []bool{false, true} {
							if packed && panels == nil {
								continue
							}
							out := make([]float32, m*outStride)
							if packed {
								GemmQ4_KGemvPacked(n, panels, rows, a, aStride, m, out, outStride, scratch)
							} else {
								GemmQ4_KGemvQ8_K(n, w, wStride, rows, a, aStride, m, out, outStride, scratch)
							}
							for j := range m {
								for i := range rows {
									got, w := out[j*outStride+i], want[j][i]
									if math.Float32bits(got) != math.Float32bits(w) && !(got != got && w != w) {
										t.Fatalf("%s %s packed=%v nb=%d rows=%d m=%d: out[%d][%d] = %g (%#08x), DotQ4_KQ8_KGemv %g (%#08x)",
											impl, mode, packed, nb, rows, m, j, i, got, math.Float32bits(got), w, math.Float32bits(w))
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

// TestGemmQ4_KGemvDiffersFromGemm guards the test above against comparing
// an order with itself: on random blocks the gemv fold and the GEMM's
// (DotQ4_KQ8_K) must disagree somewhere.
func TestGemmQ4_KGemvDiffersFromGemm(t *testing.T) {
	r := rand.New(rand.NewPCG(83, 84))
	fw, fx := formats["Q4_K"], formats["Q8_K"]
	diff := 0
	for range 200 {
		w, x := genRow(r, fw, 4, "random"), genRow(r, fx, 4, "random")
		if math.Float32bits(dotQ4_KQ8_KGemvGeneric(4, w, x)) != math.Float32bits(dotQ4_KQ8_KGeneric(4, w, x)) {
			diff++
		}
	}
	if diff == 0 {
		t.Fatal("DotQ4_KQ8_KGemv and DotQ4_KQ8_K agree on 200 random rows: the orders are not told apart")
	}
}

func TestGemmQ4_KGemvBadShapesPanic(t *testing.T) {
	n, rb, ab := 2*qkK, 2*bytesQ4_K, 2*bytesQ8_K
	w, a := make([]byte, 8*rb), make([]byte, 3*ab)
	big := make([]byte, PackedQ4_KGBytes(n, 16))
	out, scratch := make([]float32, 24), make([]byte, GemmScratchBytes(n))
	for _, tc := range []struct {
		name, fn string
		f        func()
	}{
		{"bad n", "GemmQ4_KGemvQ8_K", func() { GemmQ4_KGemvQ8_K(n+1, w, rb, 8, a, ab, 3, out, 8, scratch) }},
		{"short weights", "GemmQ4_KGemvQ8_K", func() { GemmQ4_KGemvQ8_K(n, w[:8*rb-1], rb, 8, a, ab, 3, out, 8, scratch) }},
		{"short out", "GemmQ4_KGemvQ8_K", func() { GemmQ4_KGemvQ8_K(n, w, rb, 8, a, ab, 3, out[:23], 8, scratch) }},
		{"short scratch", "GemmQ4_KGemvQ8_K", func() { GemmQ4_KGemvQ8_K(n, w, rb, 8, a, ab, 3, out, 8, scratch[:len(scratch)-1]) }},
		{"rows not panels", "GemmQ4_KGemvPacked", func() { GemmQ4_KGemvPacked(n, w, 8, a, ab, 1, out, 8, scratch) }},
		{"short panels", "GemmQ4_KGemvPacked", func() { GemmQ4_KGemvPacked(n, big[:len(big)-1], 16, a, ab, 1, out, 16, scratch) }},
		{"short activations", "GemmQ4_KGemvPacked", func() { GemmQ4_KGemvPacked(n, big, 16, a[:ab-1], ab, 1, out, 16, scratch) }},
	} {
		if msg := panicMessage(tc.f); !strings.HasPrefix(msg, "simd: "+tc.fn+": ") {
			t.Errorf("%s %s: panic %q", tc.fn, tc.name, msg)
		}
	}
}

func TestGemmQ4_KGemvNoAllocs(t *testing.T) {
	r := rand.New(rand.NewPCG(85, 86))
	nb, rows, m := 4, 16, 5
	n := nb * qkK
	w, wStride, _, a, aStride := gemmInputs(r, q4kgCase, nb, rows, m, "random")
	panels := make([]byte, PackedQ4_KGBytes(n, rows))
	PackQ4_KG(n, w, wStride, rows, panels)
	out, scratch := make([]float32, m*rows), make([]byte, GemmScratchBytes(n))
	for _, mm := range []int{1, m} {
		if allocs := testing.AllocsPerRun(10, func() {
			GemmQ4_KGemvQ8_K(n, w, wStride, rows, a, aStride, mm, out, rows, scratch)
			GemmQ4_KGemvPacked(n, panels, rows, a, aStride, mm, out, rows, scratch)
		}); allocs != 0 {
			t.Errorf("m=%d: %v allocations per call", mm, allocs)
		}
	}
}
