package kernels

import (
	"math"
	"math/rand/v2"
	"testing"

	"kiln/gguf"
	"kiln/kernels/simd"
)

// TestMulMatIDMatchesMatMul: a MulMatID call over several experts'
// groups (gathered and contiguous, empty, single-row and larger; gate and
// up sharing a group) gives, bit for bit, what one MatMul per op over its
// gathered rows gives, for every weight type family (float vec_dot
// orders, the int8 GEMMs raw and repacked, Q4_K's gemv order, Q6_K),
// under every kernel set this CPU runs, on 1 and 3 threads.
func TestMulMatIDMatchesMatMul(t *testing.T) {
	defer simd.ForceGeneric(false)
	r := rand.New(rand.NewPCG(91, 92))
	pools := []*Pool{NewPool(1), NewPool(3)}
	defer func() {
		for _, p := range pools {
			p.Close()
		}
	}()
	const xRows = 13
	// Groups: rows of x, some repeated across groups, as routing gives.
	groups := [][]int32{{3}, {0, 1, 2, 5, 7, 8, 11}, {}, {4, 12}, {0, 3, 6, 9, 10, 11, 12, 1, 2, 5, 4}, {6, 7, 8}}
	for _, tc := range []struct {
		typ        gguf.Type
		rows, cols int
		repack     bool
	}{
		{gguf.TypeF32, 24, 96, false}, {gguf.TypeF16, 16, 128, false}, {gguf.TypeBF16, 8, 64, false},
		{gguf.TypeQ8_0, 40, 256, false}, {gguf.TypeQ8_0, 40, 256, true},
		{gguf.TypeQ4_0, 48, 512, false}, {gguf.TypeQ4_0, 48, 512, true}, {gguf.TypeQ4_0, 36, 256, true},
		{gguf.TypeQ4_K, 32, 512, false}, {gguf.TypeQ4_K, 36, 256, false},
		{gguf.TypeQ6_K, 32, 512, false}, {gguf.TypeQ5_0, 16, 256, false},
	} {
		// Per group, a gate and an up expert matrix (one more for the
		// contiguous ops).
		ws := make([]*Matrix, 2*len(groups))
		for i := range ws {
			ws[i] = randMatrix(r, tc.typ, tc.rows, tc.cols)
			ws[i].MulMatID = true
			if tc.repack && Repackable(ws[i]) {
				if err := pools[0].Repack(ws[i]); err != nil {
					t.Fatal(err)
				}
			}
		}
		x := randFloats(r, xRows*tc.cols, 1)
		gather := func(g []int32) []float32 {
			out := make([]float32, 0, len(g)*tc.cols)
			for _, row := range g {
				out = append(out, x[int(row)*tc.cols:(int(row)+1)*tc.cols]...)
			}
			return out
		}
		// Reference: one MatMul per op, generic kernels.
		simd.ForceGeneric(true)
		want := make([][]float32, len(ws))
		for i, w := range ws {
			g := groups[i/2]
			want[i] = make([]float32, len(g)*tc.rows)
			if len(g) > 0 {
				pools[0].MatMul(want[i], w, gather(g), len(g))
			}
		}
		// Contiguous groups: rows [first, first+n) of x.
		contig := [][2]int{{0, 1}, {2, 9}, {5, 0}, {12, 1}, {0, 13}, {4, 4}}
		wantC := make([][]float32, len(contig))
		for i, c := range contig {
			wantC[i] = make([]float32, c[1]*tc.rows)
			if c[1] > 0 {
				pools[0].MatMul(wantC[i], ws[i], x[c[0]*tc.cols:(c[0]+c[1])*tc.cols], c[1])
			}
		}
		simd.ForceGeneric(false)
		for _, set := range simd.Impls() {
			if _, err := simd.SetImpl(set); err != nil {
				t.Fatal(err)
			}
			for _, p := range pools {
				ops := make([]ExpertOp, len(ws))
				for i, w := range ws {
					g := groups[i/2]
					ops[i] = ExpertOp{Dst: make([]float32, len(g)*tc.rows), W: w, Rows: g}
				}
				p.MulMatID(x, xRows, ops)
				opsC := make([]ExpertOp, len(contig))
				for i, c := range contig {
					opsC[i] = ExpertOp{Dst: make([]float32, c[1]*tc.rows), W: ws[i], First: c[0], N: c[1]}
				}
				p.MulMatID(x, xRows, opsC)
				check := func(what string, i int, got, want []float32) {
					for j, v := range want {
						if math.Float32bits(got[j]) != math.Float32bits(v) {
							t.Fatalf("%s %dx%d repacked=%v %s threads=%d, %s op %d: out[%d] = %g, MatMul %g",
								tc.typ, tc.rows, tc.cols, ws[i].Repacked(), set, p.Threads(), what, i, j, got[j], v)
						}
					}
				}
				for i := range ops {
					check("gathered", i, ops[i].Dst, want[i])
				}
				for i := range opsC {
					check("contiguous", i, opsC[i].Dst, wantC[i])
				}
			}
		}
		simd.ForceGeneric(false)
		Unpack(ws...)
	}
}

// TestMulMatIDBadInput: out-of-range group rows, short outputs and mixed
// widths panic with a message rather than reading or writing out of
// bounds.
func TestMulMatIDBadInput(t *testing.T) {
	r := rand.New(rand.NewPCG(93, 94))
	p := NewPool(2)
	defer p.Close()
	w := randMatrix(r, gguf.TypeQ8_0, 8, 64)
	w2 := randMatrix(r, gguf.TypeQ8_0, 8, 96)
	x := randFloats(r, 4*64, 1)
	mustPanic(t, "row out of range", func() {
		p.MulMatID(x, 4, []ExpertOp{{Dst: make([]float32, 8), W: w, Rows: []int32{4}}})
	})
	mustPanic(t, "negative row", func() {
		p.MulMatID(x, 4, []ExpertOp{{Dst: make([]float32, 8), W: w, Rows: []int32{-1}}})
	})
	mustPanic(t, "contiguous past the end", func() {
		p.MulMatID(x, 4, []ExpertOp{{Dst: make([]float32, 16), W: w, First: 3, N: 2}})
	})
	mustPanic(t, "short dst", func() {
		p.MulMatID(x, 4, []ExpertOp{{Dst: make([]float32, 15), W: w, Rows: []int32{0, 1}}})
	})
	mustPanic(t, "short x", func() {
		p.MulMatID(x, 5, []ExpertOp{{Dst: make([]float32, 8), W: w, Rows: []int32{0}}})
	})
	mustPanic(t, "mixed widths", func() {
		p.MulMatID(x, 4, []ExpertOp{{Dst: make([]float32, 8), W: w, Rows: []int32{0}}, {Dst: make([]float32, 8), W: w2, Rows: []int32{0}}})
	})
}
