package kernels

import (
	"math"
	"testing"
)

// TestSiLUMulRowsTail: whole groups of 8 match SiLUMul (exp32); the tail of
// each row uses expf, as ggml_vec_swiglu_f32 does.
func TestSiLUMulRowsTail(t *testing.T) {
	const rows, dim = 3, 13
	gate := make([]float32, rows*dim)
	up := make([]float32, rows*dim)
	for i := range gate {
		gate[i] = float32(i%7)*0.37 - 1.1
		up[i] = float32(i%5)*0.21 + 0.3
	}
	g1 := append([]float32(nil), gate...)
	SiLUMulRows(nil, g1, up, rows, dim)
	for r := 0; r < rows; r++ {
		for i := 0; i < dim; i++ {
			x := gate[r*dim+i]
			e := exp32(-x)
			if i >= 8 {
				e = expf(-x)
			}
			if want := x / (1 + e) * up[r*dim+i]; g1[r*dim+i] != want {
				t.Fatalf("row %d element %d: got %v, want %v", r, i, g1[r*dim+i], want)
			}
		}
	}
}

// TestSiLUMulRowsPool: the pooled, chunked call gives the bits of the
// one-thread reference (vector exp32 for groups of 8, expf for each row's
// tail) for row widths around the chunk size.
func TestSiLUMulRowsPool(t *testing.T) {
	p := NewPool(2)
	defer p.Close()
	for _, dim := range []int{5632, 1024, 1031, 2047, 8} {
		rows := 1 + (1<<15)/dim
		gate := make([]float32, rows*dim)
		up := make([]float32, rows*dim)
		for i := range gate {
			gate[i] = float32((i*7919)%2001)*0.01 - 10
			up[i] = float32((i*104729)%997)*0.003 - 1.5
		}
		got := append([]float32(nil), gate...)
		SiLUMulRows(p, got, up, rows, dim)
		for r := 0; r < rows; r++ {
			for i := 0; i < dim; i++ {
				x := gate[r*dim+i]
				e := exp32(-x)
				if i >= dim-dim%8 {
					e = expf(-x)
				}
				if want := x / (1 + e) * up[r*dim+i]; got[r*dim+i] != want {
					t.Fatalf("dim %d row %d element %d: got %v, want %v", dim, r, i, got[r*dim+i], want)
				}
			}
		}
	}
}

// TestSiLUDivScalar: silu(x)/x is the sigmoid to within a few float32
// roundings, and NaN at 0, as ggml_div gives there. (Its bits against
// llama.cpp's are checked end to end by the qwen2moe oracle goldens.)
func TestSiLUDivScalar(t *testing.T) {
	for _, x := range []float32{-20, -3.7, -1, -0.01, 0.01, 0.5, 1, 2.25, 9, 30} {
		got := SiLUDivScalar(x)
		want := 1 / (1 + math.Exp(-float64(x)))
		if d := math.Abs(float64(got)-want) / want; d > 3e-7 {
			t.Errorf("x %g: %g, sigmoid %g (relative %.2g)", x, got, want, d)
		}
	}
	if g := SiLUDivScalar(0); !math.IsNaN(float64(g)) {
		t.Errorf("x 0: %g, want NaN", g)
	}
}
