package kernels

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// TestRMSNormGgml: RMSNormRows against ggml's rms_norm followed by mul (as
// llama.cpp's build_norm; the CPU backend fuses the two), including a row
// length that is not a multiple of any vector width.
func TestRMSNormGgml(t *testing.T) {
	p := NewPool(2)
	defer p.Close()
	r := rand.New(rand.NewPCG(71, 72))
	for _, tc := range []struct {
		n, rows int
		eps     float32
		want    string
	}{
		{256, 10, 1e-5, "62f0118a9854b772"},
		{172, 5, 1e-6, "3970c1b30cb7ce9d"},
		{4096, 3, 1e-5, "43a39ecb4d715e31"},
	} {
		x := randFloats(r, tc.n*tc.rows, 3)
		w := randFloats(r, tc.n, 1)
		got := make([]float32, len(x))
		RMSNormRows(p, got, x, w, tc.rows, tc.n, tc.eps)
		checkGgml(t, fmt.Sprintf("rms %dx%d", tc.rows, tc.n), ggmlRecord(int32(3), []int32{int32(tc.n), int32(tc.rows)}, tc.eps, x, w), got, tc.want)
	}
}
