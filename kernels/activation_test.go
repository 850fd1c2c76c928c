package kernels

import "testing"

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
