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

// TestQ6_KMatchesLlamaOrder checks every Q6_K flavour (single-row dot, x4
// dot, GEMM through dots and panels; generic and fast) against llamaorder's recipe of llama.cpp's
// ggml_vec_dot_q6_K_q8_K, bit for bit: random quantized weight rows (some
// with huge or tiny magnitudes), activations quantized by
// quant.QuantizeActQ8_K, matrices with Rows%8 == 0 and != 0, several T.
func TestQ6_KMatchesLlamaOrder(t *testing.T) {
	r := rand.New(rand.NewPCG(61, 62))
	for _, c := range []struct{ rows, cols, T int }{
		{8, 256, 1}, {8, 768, 5}, {13, 512, 4}, {16, 2048, 7}, {5, 1280, 9}, {24, 256, 3},
		{16, 512, 32}, {13, 768, 33}, {8, 256, 34}, {21, 512, 35}, // panel kernels (m >= 32)
	} {
		W := q6kMatrix(t, r, c.rows, c.cols)
		x := make([]float32, c.T*c.cols)
		for i := range x {
			x[i] = float32(r.NormFloat64())
			if i%97 == 0 {
				x[i] *= 40 // outliers: other quants of the block shrink
			}
		}
		want := make([]float32, c.T*c.rows)
		llamaorder.MatMul(want, W, x, c.T)

		rb := c.cols / 256 * 292 // Q8_K
		xq := make([]byte, c.T*rb)
		for j := range c.T {
			quant.QuantizeActQ8_K(x[j*c.cols:(j+1)*c.cols], xq[j*rb:(j+1)*rb])
		}
		wb := c.cols / 256 * 210 // Q6_K
		name := fmt.Sprintf("%dx%d/T=%d", c.rows, c.cols, c.T)
		for _, gen := range []bool{true, false} {
			simd.ForceGeneric(gen)
			impl := simd.Impl()
			check := func(flavour string, j, i int, got float32) {
				t.Helper()
				if w := want[j*c.rows+i]; math.Float32bits(got) != math.Float32bits(w) {
					t.Errorf("%s %s %s: out[%d][%d] = %g (%#08x), llamaorder %g (%#08x)", name, impl, flavour, j, i, got, math.Float32bits(got), w, math.Float32bits(w))
				}
			}
			for j := range c.T {
				for i := range c.rows {
					check("DotQ6_KQ8_K", j, i, simd.DotQ6_KQ8_K(c.cols, W.Data[i*wb:], xq[j*rb:]))
				}
			}
			for j := 0; j+4 <= c.T; j++ { // every window of 4 rows
				for i := range c.rows {
					var o [4]float32
					simd.DotQ6_KQ8_Kx4(c.cols, W.Data[i*wb:], xq[j*rb:], rb, &o)
					for k := range 4 {
						check("DotQ6_KQ8_Kx4", j+k, i, o[k])
					}
				}
			}
			out := make([]float32, c.T*c.rows)
			simd.GemmQ6_KQ8_K(c.cols, W.Data, wb, c.rows, xq, rb, c.T, out, c.rows, make([]byte, simd.GemmScratchBytes(c.cols)))
			for j := range c.T {
				for i := range c.rows {
					check("GemmQ6_KQ8_K", j, i, out[j*c.rows+i])
				}
			}
		}
		simd.ForceGeneric(false)
	}
}

// q6kMatrix quantizes a rows x cols matrix of normal values to Q6_K; every
// third row is scaled by 1e4 or 1e-4 so that super-block scales span a
// wide range.
func q6kMatrix(t *testing.T, r *rand.Rand, rows, cols int) *kernels.Matrix {
	t.Helper()
	wb := cols / 256 * 210 // Q6_K
	W := &kernels.Matrix{Type: gguf.TypeQ6_K, Rows: rows, Cols: cols, Data: make([]byte, rows*wb)}
	src := make([]float32, cols)
	for i := range rows {
		scale := 1.0
		switch i % 3 {
		case 1:
			scale = 1e4
		case 2:
			scale = 1e-4
		}
		for k := range src {
			src[k] = float32(r.NormFloat64() * scale)
		}
		if err := quant.Quantize(gguf.TypeQ6_K, src, W.Data[i*wb:(i+1)*wb]); err != nil {
			t.Fatal(err)
		}
	}
	if err := W.Validate(); err != nil {
		t.Fatal(err)
	}
	return W
}
