package quant

import (
	"math"
	"testing"

	"kiln/gguf"
)

// relRMSE is sqrt(sum (x-y)^2 / sum x^2).
func relRMSE(x, y []float32) float64 {
	var se, sx float64
	for i := range x {
		d := float64(x[i]) - float64(y[i])
		se += d * d
		sx += float64(x[i]) * float64(x[i])
	}
	return math.Sqrt(se / sx)
}

// TestRoundTripError bounds quantize -> dequantize error per format on
// uniform and bell-shaped inputs. The bounds sit ~20% above what ggml's
// reference quantizers achieve (the outputs are identical to ggml's, see
// TestGoldenAgainstLlamaCpp), so they catch a broken search or layout, and
// they keep the formats in their expected order of precision.
func TestRoundTripError(t *testing.T) {
	tests := []struct {
		t     gguf.Type
		bound float64
	}{
		{gguf.TypeF32, 0},
		{gguf.TypeF16, 4e-4},
		{gguf.TypeBF16, 2.5e-3},
		{gguf.TypeQ8_0, 0.007},
		{gguf.TypeQ8_1, 0.007},
		{gguf.TypeQ8_K, 0.0075},
		{gguf.TypeQ6_K, 0.021},
		{gguf.TypeQ5_K, 0.042},
		{gguf.TypeQ5_1, 0.045},
		{gguf.TypeQ5_0, 0.05},
		{gguf.TypeQ4_K, 0.08},
		{gguf.TypeQ4_1, 0.09},
		{gguf.TypeQ4_0, 0.10},
		{gguf.TypeQ3_K, 0.17},
		{gguf.TypeQ2_K, 0.33},
	}
	for _, tc := range tests {
		t.Run(tc.t.String(), func(t *testing.T) {
			for _, set := range []int{0, 1} {
				x := make([]float32, 16*QK_K)
				gen(set, 3, x)
				n, err := tc.t.RowBytes(len(x))
				if err != nil {
					t.Fatal(err)
				}
				q := make([]byte, n)
				if err := Quantize(tc.t, x, q); err != nil {
					t.Fatal(err)
				}
				y := make([]float32, len(x))
				if err := Dequantize(tc.t, q, y); err != nil {
					t.Fatal(err)
				}
				if e := relRMSE(x, y); !(e <= tc.bound) {
					t.Errorf("set %d: relative RMSE %.5f, want <= %.5f", set, e, tc.bound)
				}
			}
		})
	}
}

func TestActivationRoundTripError(t *testing.T) {
	tests := []struct {
		name  string
		q     func([]float32, []byte)
		dq    func([]byte, []float32)
		bb    int
		qk    int
		bound float64
	}{
		{"Q8_0", QuantizeActQ8_0, DequantizeQ8_0, BlockBytesQ8_0, QK8_0, 0.007},
		{"Q8_1", QuantizeActQ8_1, DequantizeQ8_1, BlockBytesQ8_1, QK8_1, 0.007},
		{"Q8_K", QuantizeActQ8_K, DequantizeQ8_K, BlockBytesQ8_K, QK_K, 0.0075},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			x := make([]float32, 8*QK_K)
			gen(1, 5, x)
			q := make([]byte, len(x)/tc.qk*tc.bb)
			tc.q(x, q)
			y := make([]float32, len(x))
			tc.dq(q, y)
			if e := relRMSE(x, y); !(e <= tc.bound) {
				t.Errorf("relative RMSE %.5f, want <= %.5f", e, tc.bound)
			}
		})
	}
}

// TestZeroInput: all-zero rows quantize to blocks that dequantize to zeros.
func TestZeroInput(t *testing.T) {
	for ty := range quantizers {
		x := make([]float32, 2*QK_K)
		n, _ := ty.RowBytes(len(x))
		q := make([]byte, n)
		for i := range q {
			q[i] = 0xAA // must be overwritten
		}
		if err := Quantize(ty, x, q); err != nil {
			t.Fatal(err)
		}
		y := make([]float32, len(x))
		if err := Dequantize(ty, q, y); err != nil {
			t.Fatal(err)
		}
		for i, v := range y {
			if v != 0 {
				t.Errorf("%s: element %d = %v after zero round trip", ty, i, v)
				break
			}
		}
	}
}
