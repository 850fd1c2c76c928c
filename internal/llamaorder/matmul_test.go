package llamaorder

import (
	"math"
	"math/rand/v2"
	"testing"

	"kiln/gguf"
	"kiln/kernels"
	"kiln/quant"
)

// exact lists the weight types whose kernels follow llama.cpp's orders bit
// for bit.
var exact = map[gguf.Type]bool{gguf.TypeF32: true, gguf.TypeF16: true, gguf.TypeBF16: true, gguf.TypeQ8_0: true, gguf.TypeQ4_0: true, gguf.TypeQ4_K: true, gguf.TypeQ6_K: true, gguf.TypeQ5_0: true,
	gguf.TypeQ4_1: true, gguf.TypeQ5_1: true, gguf.TypeQ5_K: true, gguf.TypeQ2_K: true, gguf.TypeQ3_K: true}

// TestMatchesKernels: kiln's kernels compute exactly the reference orders
// (bit for bit) for the types in exact, and the same products up to float
// summation order (relative 1e-5 of the sum of |terms|) for the others,
// for every recipe branch (Rows%8 == 0, Rows%4 == 0, other), several batch
// sizes (single-row, x4 and GEMM flavours).
func TestMatchesKernels(t *testing.T) {
	pool := kernels.NewPool(2)
	defer pool.Close()
	rng := rand.New(rand.NewPCG(1, 2))
	const cols = 512
	for _, typ := range []gguf.Type{gguf.TypeF32, gguf.TypeF16, gguf.TypeBF16, gguf.TypeQ8_0, gguf.TypeQ4_0, gguf.TypeQ5_0, gguf.TypeQ4_1, gguf.TypeQ5_1, gguf.TypeQ2_K, gguf.TypeQ3_K, gguf.TypeQ4_K, gguf.TypeQ5_K, gguf.TypeQ6_K} {
		for _, shape := range [][2]int{{16, 1}, {16, 5}, {16, 37}, {13, 1}, {13, 5}, {12, 6}, {44, 9}} {
			rows, T := shape[0], shape[1]
			wf := make([]float32, rows*cols)
			for i := range wf {
				wf[i] = float32(rng.NormFloat64())
			}
			rb, err := typ.RowBytes(cols)
			if err != nil {
				t.Fatal(err)
			}
			data := make([]byte, rows*rb)
			for r := 0; r < rows; r++ {
				if err := quant.Quantize(typ, wf[r*cols:(r+1)*cols], data[r*rb:(r+1)*rb]); err != nil {
					t.Fatal(err)
				}
			}
			w := &kernels.Matrix{Type: typ, Rows: rows, Cols: cols, Data: data}
			x := make([]float32, T*cols)
			for i := range x {
				x[i] = float32(rng.NormFloat64())
			}
			got := make([]float32, T*rows)
			want := make([]float32, T*rows)
			MatMul(got, w, x, T)
			pool.MatMul(want, w, x, T)
			for i := range got {
				if exact[typ] {
					if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
						t.Fatalf("%s rows %d T %d: output %d: llama order %v, kernels %v (bits differ)", typ, rows, T, i, got[i], want[i])
					}
					continue
				}
				scale := 0.0
				row := make([]float32, cols)
				w.Row(i%rows, row)
				for k, v := range row {
					scale += math.Abs(float64(v) * float64(x[(i/rows)*cols+k]))
				}
				if d := math.Abs(float64(got[i] - want[i])); d > 1e-5*scale {
					t.Fatalf("%s rows %d: output %d: llama order %v, kernels %v (|diff| %.3g > 1e-5 x %.3g)", typ, rows, i, got[i], want[i], d, scale)
				}
			}
		}
	}
}

func TestFMA32(t *testing.T) {
	for _, c := range [][4]float32{{1, 1, 1, 2}, {3, 1.0 / 3, -1, float32(3*float64(float32(1.0/3)) - 1)}} {
		if got := fma32(c[0], c[1], c[2]); got != c[3] {
			t.Errorf("fma32(%v, %v, %v) = %v, want %v", c[0], c[1], c[2], got, c[3])
		}
	}
}
