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

// TestMinTypesMatchLlamaOrder checks DotQ4_1Q8_1, DotQ5_1Q8_1,
// DotQ5_KQ8_K, DotQ2_KQ8_K and DotQ3_KQ8_K (generic and fast) against
// llamaorder's recipes of llama.cpp's AVX2 ggml_vec_dot_q4_1_q8_1 /
// _q5_1_q8_1 / _q5_K_q8_K / _q2_K_q8_K / _q3_K_q8_K, bit for bit: an 8-lane
// FMA chain plus (the first three) a scalar FMA chain of the minimums;
// Q2_K's minimums go into the 8-lane chain itself. These
// kernels used to fold in ggml's generic C order (one float sum per block,
// no FMA), last-bit differences that random 2-layer models amplify to
// 0.04-0.14 in log-probability against llama.cpp; this test failed then.
func TestMinTypesMatchLlamaOrder(t *testing.T) {
	r := rand.New(rand.NewPCG(81, 82))
	type dotFn func(n int, w, x []byte) float32
	for _, c := range []struct {
		typ    gguf.Type
		act    func(x []float32, dst []byte)
		actB   int // activation bytes per block of blk elements
		blk    int
		dot    dotFn
		shapes [][3]int // rows, cols, T
	}{
		{gguf.TypeQ4_1, quant.QuantizeActQ8_1, 36, 32, simd.DotQ4_1Q8_1, [][3]int{{8, 32, 1}, {13, 256, 3}, {16, 512, 5}, {7, 2048, 2}}},
		{gguf.TypeQ5_1, quant.QuantizeActQ8_1, 36, 32, simd.DotQ5_1Q8_1, [][3]int{{8, 32, 1}, {13, 256, 3}, {16, 512, 5}, {7, 2048, 2}}},
		{gguf.TypeQ5_K, quant.QuantizeActQ8_K, 292, 256, simd.DotQ5_KQ8_K, [][3]int{{8, 256, 1}, {13, 512, 3}, {16, 768, 5}, {5, 2048, 2}}},
		{gguf.TypeQ2_K, quant.QuantizeActQ8_K, 292, 256, simd.DotQ2_KQ8_K, [][3]int{{8, 256, 1}, {13, 512, 3}, {16, 768, 5}, {5, 2048, 2}}},
		{gguf.TypeQ3_K, quant.QuantizeActQ8_K, 292, 256, simd.DotQ3_KQ8_K, [][3]int{{8, 256, 1}, {13, 512, 3}, {16, 768, 5}, {5, 2048, 2}}},
	} {
		for _, s := range c.shapes {
			rows, cols, T := s[0], s[1], s[2]
			wb, err := c.typ.RowBytes(cols)
			if err != nil {
				t.Fatal(err)
			}
			wf := make([]float32, rows*cols)
			for i := range wf {
				wf[i] = float32(r.NormFloat64())
				if i%89 == 0 {
					wf[i] *= 30
				}
			}
			data := make([]byte, rows*wb)
			for i := range rows {
				if err := quant.Quantize(c.typ, wf[i*cols:(i+1)*cols], data[i*wb:(i+1)*wb]); err != nil {
					t.Fatal(err)
				}
			}
			W := &kernels.Matrix{Type: c.typ, Rows: rows, Cols: cols, Data: data}
			x := make([]float32, T*cols)
			for i := range x {
				x[i] = float32(r.NormFloat64())
				if i%97 == 0 {
					x[i] *= 40
				}
			}
			want := make([]float32, T*rows)
			llamaorder.MatMul(want, W, x, T)
			xb := cols / c.blk * c.actB
			xq := make([]byte, T*xb)
			for j := range T {
				c.act(x[j*cols:(j+1)*cols], xq[j*xb:(j+1)*xb])
			}
			for _, gen := range []bool{true, false} {
				simd.ForceGeneric(gen)
				name := fmt.Sprintf("%s %dx%d/T=%d %s", c.typ, rows, cols, T, simd.Impl())
				for j := range T {
					for i := range rows {
						got := c.dot(cols, data[i*wb:], xq[j*xb:])
						if w := want[j*rows+i]; math.Float32bits(got) != math.Float32bits(w) {
							t.Errorf("%s: out[%d][%d] = %g (%#08x), llamaorder %g (%#08x)", name, j, i, got, math.Float32bits(got), w, math.Float32bits(w))
						}
					}
				}
			}
			simd.ForceGeneric(false)
		}
	}
}
