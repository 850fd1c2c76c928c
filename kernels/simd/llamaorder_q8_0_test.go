package simd_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"kiln/gguf"
	"kiln/internal/llamaorder"
	"kiln/kernels"
	"kiln/kernels/simd"
	"kiln/quant"
)

// TestQ8_0MatchesLlamaOrder checks every Q8_0 flavour (single-row dot, x4
// dot, GEMM with its 8-row decode kernel for one activation row and its
// panel kernels for more), on the generic code and the assembly, against
// llamaorder.MatMul, the scalar reference of llama.cpp's order: the same
// float32 bits for every output, whatever the batch size. Row counts that
// are and are not multiples of 8 exercise full panels, padded tails and
// the decode kernel's tail.
func TestQ8_0MatchesLlamaOrder(t *testing.T) {
	r := rand.New(rand.NewPCG(81, 82))
	for _, sh := range []struct{ rows, cols int }{{8, 32}, {16, 256}, {13, 96}, {5, 64}, {24, 2048}, {9, 160}, {11, 1184}} {
		w := randQ8_0Matrix(t, r, sh.rows, sh.cols)
		for _, T := range []int{1, 2, 3, 4, 5, 7, 9} {
			x := make([]float32, T*sh.cols)
			for i := range x {
				x[i] = float32(r.NormFloat64() * math.Pow(10, float64(r.IntN(5)-2)))
			}
			want := make([]float32, T*sh.rows)
			llamaorder.MatMul(want, w, x, T)
			nb := sh.cols / 32
			xq := make([]byte, T*nb*34)
			for tt := range T {
				quant.QuantizeActQ8_0(x[tt*sh.cols:(tt+1)*sh.cols], xq[tt*nb*34:(tt+1)*nb*34])
			}
			for _, gen := range []bool{true, false} {
				simd.ForceGeneric(gen)
				name := fmt.Sprintf("%s %dx%d T=%d", simd.Impl(), sh.rows, sh.cols, T)
				checkQ8_0Flavours(t, name, w, xq, T, want)
			}
			simd.ForceGeneric(false)
		}
	}
}

// checkQ8_0Flavours compares DotQ8_0Q8_0, DotQ8_0Q8_0x4 and GemmQ8_0Q8_0
// with want ([T][rows]) bit for bit.
func checkQ8_0Flavours(t *testing.T, name string, w *kernels.Matrix, xq []byte, T int, want []float32) {
	t.Helper()
	rows, n := w.Rows, w.Cols
	rb := n / 32 * 34
	bad := 0
	check := func(flavour string, tt, i int, got float32) {
		if g, e := math.Float32bits(got), math.Float32bits(want[tt*rows+i]); g != e && bad < 5 {
			bad++
			t.Errorf("%s %s: out[%d][%d] = %g (%#08x), llamaorder %g (%#08x)", name, flavour, tt, i, got, g, want[tt*rows+i], e)
		}
	}
	for tt := range T {
		for i := range rows {
			check("DotQ8_0Q8_0", tt, i, simd.DotQ8_0Q8_0(n, w.Data[i*rb:(i+1)*rb], xq[tt*rb:(tt+1)*rb]))
		}
	}
	for t0 := 0; t0+4 <= T; t0 += 4 {
		for i := range rows {
			var out [4]float32
			simd.DotQ8_0Q8_0x4(n, w.Data[i*rb:(i+1)*rb], xq[t0*rb:], rb, &out)
			for k := range 4 {
				check("DotQ8_0Q8_0x4", t0+k, i, out[k])
			}
		}
	}
	ab := simd.GemmActQ8_0Q8_0Bytes(n)
	a := make([]byte, T*ab)
	for tt := range T {
		simd.GemmActQ8_0Q8_0(n, xq[tt*rb:], a[tt*ab:])
	}
	// Every batch size up to T, on the first rows of the batch: the GEMM's
	// tiles (decode kernel for one row, panel kernels for 2..4 and more).
	for m := 1; m <= T; m++ {
		out := make([]float32, m*rows)
		simd.GemmQ8_0Q8_0(n, w.Data, rb, rows, a, ab, m, out, rows, make([]byte, simd.GemmScratchBytes(n)))
		for tt := range m {
			for i := range rows {
				check(fmt.Sprintf("GemmQ8_0Q8_0 m=%d", m), tt, i, out[tt*rows+i])
			}
		}
	}
}

// randQ8_0Matrix quantizes rows x cols random weights (a few rows with
// much larger or smaller scales) to Q8_0.
func randQ8_0Matrix(t *testing.T, r *rand.Rand, rows, cols int) *kernels.Matrix {
	t.Helper()
	src := make([]float32, rows*cols)
	for i := range src {
		scale := 0.05
		switch (i / cols) % 5 {
		case 3:
			scale = 30
		case 4:
			scale = 1e-4
		}
		src[i] = float32(r.NormFloat64() * scale)
	}
	data := make([]byte, rows*cols/32*34)
	if err := quant.Quantize(gguf.TypeQ8_0, src, data); err != nil {
		t.Fatal(err)
	}
	return &kernels.Matrix{Type: gguf.TypeQ8_0, Rows: rows, Cols: cols, Data: data}
}
