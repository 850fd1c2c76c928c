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
	SiLUMulRows(g1, up, rows, dim)
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
