package quant

import (
	"bytes"
	"testing"

	"kiln/gguf"
	"kiln/internal/testutil"
)

// TestSharedF16RoundTrip: every F16 tensor of a real file dequantizes and
// re-quantizes to its exact bytes.
func TestSharedF16RoundTrip(t *testing.T) {
	f, err := gguf.Open(testutil.SharedModel(t, "llama-2-tiny-random.gguf"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	n := 0
	for i := range f.Tensors {
		ti := &f.Tensors[i]
		if ti.Type != gguf.TypeF16 {
			continue
		}
		n++
		src := f.Data(ti)
		y := make([]float32, ti.Elements())
		if err := Dequantize(ti.Type, src, y); err != nil {
			t.Fatalf("%s: %v", ti.Name, err)
		}
		back := make([]byte, len(src))
		if err := Quantize(ti.Type, y, back); err != nil {
			t.Fatalf("%s: %v", ti.Name, err)
		}
		if !bytes.Equal(back, src) {
			t.Errorf("%s: F16 -> F32 -> F16 changed the bytes", ti.Name)
		}
	}
	if n == 0 {
		t.Fatal("no F16 tensors found")
	}
}

// TestSharedWeightsRoundTrip quantizes the trained F32 weights of
// stories260K to every format and bounds the error, as TestRoundTripError
// does for synthetic rows (real weights have heavier tails: bounds x1.3).
func TestSharedWeightsRoundTrip(t *testing.T) {
	f, err := gguf.Open(testutil.SharedModel(t, "stories260K.gguf"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var w []float32
	for i := range f.Tensors {
		ti := &f.Tensors[i]
		if ti.Type != gguf.TypeF32 || len(ti.Shape) != 2 {
			continue
		}
		y := make([]float32, ti.Elements())
		if err := Dequantize(ti.Type, f.Data(ti), y); err != nil {
			t.Fatalf("%s: %v", ti.Name, err)
		}
		w = append(w, y...)
	}
	w = w[:len(w)/QK_K*QK_K]
	if len(w) == 0 {
		t.Fatal("no F32 matrices found")
	}
	for ty, bound := range map[gguf.Type]float64{
		gguf.TypeF16: 4e-4, gguf.TypeBF16: 2.5e-3,
		gguf.TypeQ8_0: 0.007, gguf.TypeQ8_1: 0.007, gguf.TypeQ8_K: 0.0075,
		gguf.TypeQ6_K: 0.021, gguf.TypeQ5_K: 0.042, gguf.TypeQ5_1: 0.045, gguf.TypeQ5_0: 0.05,
		gguf.TypeQ4_K: 0.08, gguf.TypeQ4_1: 0.09, gguf.TypeQ4_0: 0.10, gguf.TypeQ3_K: 0.17, gguf.TypeQ2_K: 0.33,
	} {
		n, _ := ty.RowBytes(len(w))
		q := make([]byte, n)
		if err := Quantize(ty, w, q); err != nil {
			t.Fatal(err)
		}
		y := make([]float32, len(w))
		if err := Dequantize(ty, q, y); err != nil {
			t.Fatal(err)
		}
		e := relRMSE(w, y)
		t.Logf("%s: relative RMSE %.5f over %d weights", ty, e, len(w))
		if !(e <= 1.3*bound) {
			t.Errorf("%s: relative RMSE %.5f, want <= %.5f", ty, e, 1.3*bound)
		}
	}
}
