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

// TestQ4_KMatchesLlamaOrder checks every Q4_K kernel flavour against
// llamaorder, the verified reference of llama.cpp's orders, with == on the
// float32 bits: for Rows%8 == 0 (llama.cpp's repacked q4_K_8x8 GEMM) the
// single-row DotQ4_KQ8_K, DotQ4_KQ8_Kx4, GemmQ4_KQ8_K (panel kernels for
// T >= 2, the 8-row decode kernel for T = 1) on both implementations; for
// Rows%8 != 0 (ggml_vec_dot_q4_K_q8_K) DotQ4_KQ8_KVec.
func TestQ4_KMatchesLlamaOrder(t *testing.T) {
	rng := rand.New(rand.NewPCG(71, 72))
	for _, cols := range []int{256, 768, 2048} {
		for _, rows := range []int{8, 16, 13, 5} {
			for _, T := range []int{1, 2, 3, 4, 5, 9} {
				w, x := q4kCase(t, rng, rows, cols, T)
				want := make([]float32, T*rows)
				llamaorder.MatMul(want, w, x, T)
				nb := cols / 256
				rb := nb * 144
				xq := make([]byte, T*nb*292)
				for j := range T {
					quant.QuantizeActQ8_K(x[j*cols:(j+1)*cols], xq[j*nb*292:(j+1)*nb*292])
				}
				for _, generic := range []bool{true, false} {
					was := simd.ForceGeneric(generic)
					name := fmt.Sprintf("%s cols=%d rows=%d T=%d", simd.Impl(), cols, rows, T)
					check := func(flavour string, j, r int, got float32) {
						t.Helper()
						if w := want[j*rows+r]; math.Float32bits(got) != math.Float32bits(w) {
							t.Errorf("%s %s: out[%d][%d] = %g (%#08x), llamaorder %g (%#08x)", name, flavour, j, r, got, math.Float32bits(got), w, math.Float32bits(w))
						}
					}
					for j := range T {
						xj := xq[j*nb*292:]
						for r := range rows {
							wr := w.Data[r*rb : (r+1)*rb]
							if rows%8 != 0 {
								check("DotQ4_KQ8_KVec", j, r, simd.DotQ4_KQ8_KVec(cols, wr, xj))
								continue
							}
							check("DotQ4_KQ8_K", j, r, simd.DotQ4_KQ8_K(cols, wr, xj))
						}
					}
					if rows%8 == 0 {
						for r := range rows {
							for j := 0; j+4 <= T; j += 4 {
								var out [4]float32
								simd.DotQ4_KQ8_Kx4(cols, w.Data[r*rb:(r+1)*rb], xq[j*nb*292:], nb*292, &out)
								for k := range 4 {
									check("DotQ4_KQ8_Kx4", j+k, r, out[k])
								}
							}
						}
						out := make([]float32, T*rows)
						simd.GemmQ4_KQ8_K(cols, w.Data, rb, rows, xq, nb*292, T, out, rows, make([]byte, simd.GemmScratchBytes(cols)))
						for j := range T {
							for r := range rows {
								check("GemmQ4_KQ8_K", j, r, out[j*rows+r])
							}
						}
					}
					simd.ForceGeneric(was)
				}
			}
		}
	}
}

// q4kCase builds a Q4_K matrix of random rows (normal weights, a few rows
// scaled up or down by 1e3 so that d and dmin span a wide range) and T
// activation rows (normal, with outliers).
func q4kCase(t *testing.T, rng *rand.Rand, rows, cols, T int) (*kernels.Matrix, []float32) {
	t.Helper()
	rb, err := gguf.TypeQ4_K.RowBytes(cols)
	if err != nil {
		t.Fatal(err)
	}
	data := make([]byte, rows*rb)
	wf := make([]float32, cols)
	for r := range rows {
		scale := []float64{1, 1e-3, 1e3, 0.02}[r%4]
		for i := range wf {
			wf[i] = float32(rng.NormFloat64() * scale)
		}
		if err := quant.Quantize(gguf.TypeQ4_K, wf, data[r*rb:(r+1)*rb]); err != nil {
			t.Fatal(err)
		}
	}
	x := make([]float32, T*cols)
	for i := range x {
		x[i] = float32(rng.NormFloat64())
		if rng.IntN(64) == 0 {
			x[i] *= 30
		}
	}
	return &kernels.Matrix{Type: gguf.TypeQ4_K, Rows: rows, Cols: cols, Data: data}, x
}
