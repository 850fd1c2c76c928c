package kernels

import (
	"math/rand/v2"
	"testing"

	"kiln/gguf"
	"kiln/kernels/simd"
)

// TestMulMatIDFloatOrder: an F32 expert matrix (MulMatID) gives each
// output as ggml_vec_dot_f32 (simd.DotF32) sums it, whatever the batch,
// while the same matrix as a plain weight takes tinyBLAS's lanes.
func TestMulMatIDFloatOrder(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	const rows, cols, m = 16, 96, 5
	wf := randFloats(r, rows*cols, 1)
	x := randFloats(r, m*cols, 1)
	w := Matrix{Type: gguf.TypeF32, Rows: rows, Cols: cols, Data: bytesOfF32(wf), MulMatID: true}
	p := NewPool(2)
	defer p.Close()
	dst := make([]float32, m*rows)
	p.MatMul(dst, &w, x, m)
	plain := w
	plain.MulMatID = false
	dense := make([]float32, m*rows)
	p.MatMul(dense, &plain, x, m)
	differ := false
	for i := 0; i < m; i++ {
		one := make([]float32, rows)
		p.MatMul(one, &w, x[i*cols:(i+1)*cols], 1)
		for j := 0; j < rows; j++ {
			want := simd.DotF32(wf[j*cols:(j+1)*cols], x[i*cols:(i+1)*cols])
			if dst[i*rows+j] != want || one[j] != want {
				t.Fatalf("row %d output %d: batched %v, alone %v, ggml_vec_dot_f32 %v", i, j, dst[i*rows+j], one[j], want)
			}
			differ = differ || dense[i*rows+j] != want
		}
	}
	if !differ {
		t.Log("tinyBLAS and vec_dot orders happened to agree on every output")
	}
}

// TestMulMatIDQ4_KGemv: a Q4_K expert matrix (Rows%8 == 0) takes the
// gemv's order for every row of every batch, as llama.cpp's mul_mat_id
// runs ggml_gemv_q4_K_8x8_q8_K row by row: through its GEMM
// (simd.GemmQ4_KGemvQ8_K, per-call panels) on the raw rows and over the
// load-time layout once repacked, for a single row (decode kernels) and
// groups of several, under every kernel set.
func TestMulMatIDQ4_KGemv(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	const rows, cols, mMax = 24, 512, 9
	w := randMatrix(r, gguf.TypeQ4_K, rows, cols)
	w.MulMatID = true
	if !Repackable(w) {
		t.Fatal("a Q4_K expert matrix is not repackable")
	}
	x := randFloats(r, mMax*cols, 1)
	p := NewPool(2)
	defer p.Close()
	rp := *w
	if err := p.Repack(&rp); err != nil {
		t.Fatal(err)
	}
	defer Unpack(&rp)
	rb, _ := w.Type.RowBytes(cols)
	xq := make([]byte, 292*cols/256)
	want := make([]float32, mMax*rows)
	for i := 0; i < mMax; i++ {
		quantizeActQ8_K(x[i*cols:(i+1)*cols], xq)
		for j := 0; j < rows; j++ {
			want[i*rows+j] = simd.DotQ4_KQ8_KGemv(cols, w.Data[j*rb:(j+1)*rb], xq)
		}
	}
	defer simd.ForceGeneric(false)
	for _, set := range simd.Impls() {
		if _, err := simd.SetImpl(set); err != nil {
			t.Fatal(err)
		}
		for _, m := range []int{1, 2, 6, mMax} {
			for _, mat := range []*Matrix{w, &rp} {
				dst := make([]float32, m*rows)
				p.MatMul(dst, mat, x, m)
				for i := 0; i < m*rows; i++ {
					if dst[i] != want[i] {
						t.Fatalf("%s m=%d repacked=%v: row %d output %d: %v, gemv order %v", set, m, mat.Repacked(), i/rows, i%rows, dst[i], want[i])
					}
				}
			}
		}
	}
}
