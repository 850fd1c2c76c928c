package quant

import (
	"strings"
	"testing"

	"kiln/gguf"
)

func TestCan(t *testing.T) {
	supported := []gguf.Type{gguf.TypeF32, gguf.TypeF16, gguf.TypeBF16,
		gguf.TypeQ4_0, gguf.TypeQ4_1, gguf.TypeQ5_0, gguf.TypeQ5_1, gguf.TypeQ8_0, gguf.TypeQ8_1,
		gguf.TypeQ2_K, gguf.TypeQ3_K, gguf.TypeQ4_K, gguf.TypeQ5_K, gguf.TypeQ6_K, gguf.TypeQ8_K}
	for _, ty := range supported {
		if !CanQuantize(ty) || !CanDequantize(ty) {
			t.Errorf("%s: CanQuantize %v, CanDequantize %v, want both", ty, CanQuantize(ty), CanDequantize(ty))
		}
	}
	for _, ty := range []gguf.Type{gguf.TypeIQ2_XXS, gguf.TypeIQ4_NL, gguf.TypeI8, gguf.TypeF64, gguf.TypeMXFP4, gguf.Type(4), gguf.Type(1000)} {
		if CanQuantize(ty) || CanDequantize(ty) {
			t.Errorf("%s: reported as supported", ty)
		}
	}
	// block constants agree with gguf's table
	consts := map[gguf.Type][2]int{
		gguf.TypeQ4_0: {QK4_0, BlockBytesQ4_0}, gguf.TypeQ4_1: {QK4_1, BlockBytesQ4_1},
		gguf.TypeQ5_0: {QK5_0, BlockBytesQ5_0}, gguf.TypeQ5_1: {QK5_1, BlockBytesQ5_1},
		gguf.TypeQ8_0: {QK8_0, BlockBytesQ8_0}, gguf.TypeQ8_1: {QK8_1, BlockBytesQ8_1},
		gguf.TypeQ2_K: {QK_K, BlockBytesQ2_K}, gguf.TypeQ3_K: {QK_K, BlockBytesQ3_K},
		gguf.TypeQ4_K: {QK_K, BlockBytesQ4_K}, gguf.TypeQ5_K: {QK_K, BlockBytesQ5_K},
		gguf.TypeQ6_K: {QK_K, BlockBytesQ6_K}, gguf.TypeQ8_K: {QK_K, BlockBytesQ8_K},
	}
	for ty, c := range consts {
		if ty.BlockSize() != c[0] || ty.BlockBytes() != c[1] {
			t.Errorf("%s: constants (%d, %d), gguf says (%d, %d)", ty, c[0], c[1], ty.BlockSize(), ty.BlockBytes())
		}
	}
}

func TestDispatchErrors(t *testing.T) {
	tests := []struct {
		name   string
		t      gguf.Type
		nbytes int
		nelems int
		want   string
	}{
		{"unsupported", gguf.TypeIQ2_XXS, 66, 256, "unsupported type IQ2_XXS"},
		{"unknown", gguf.Type(99), 0, 0, "unsupported type type(99)"},
		{"partial block", gguf.TypeQ4_0, 18, 31, "not a multiple of the block size 32"},
		{"short src", gguf.TypeQ4_K, 143, 256, "take 144 bytes, got 143"},
		{"long src", gguf.TypeQ8_0, 35, 32, "take 34 bytes, got 35"},
		{"f16 odd bytes", gguf.TypeF16, 3, 2, "take 4 bytes, got 3"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := Dequantize(tc.t, make([]byte, tc.nbytes), make([]float32, tc.nelems))
			if err == nil || !strings.HasPrefix(err.Error(), "quant: dequantize") || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Dequantize: %v, want error containing %q", err, tc.want)
			}
			err = Quantize(tc.t, make([]float32, tc.nelems), make([]byte, tc.nbytes))
			if err == nil || !strings.HasPrefix(err.Error(), "quant: quantize") || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Quantize: %v, want error containing %q", err, tc.want)
			}
		})
	}
	// empty rows are fine
	if err := Dequantize(gguf.TypeQ4_K, nil, nil); err != nil {
		t.Errorf("empty Dequantize: %v", err)
	}
	if err := Quantize(gguf.TypeQ4_K, nil, nil); err != nil {
		t.Errorf("empty Quantize: %v", err)
	}
}

func TestPerFormatLengthPanics(t *testing.T) {
	tests := []struct {
		name string
		call func()
	}{
		{"DequantizeQ4_0 short src", func() { DequantizeQ4_0(make([]byte, 17), make([]float32, 32)) }},
		{"DequantizeQ6_K partial", func() { DequantizeQ6_K(make([]byte, 210), make([]float32, 255)) }},
		{"QuantizeQ8_0 long dst", func() { QuantizeQ8_0(make([]float32, 32), make([]byte, 35)) }},
		{"QuantizeActQ8_K short dst", func() { QuantizeActQ8_K(make([]float32, 256), make([]byte, 291)) }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			defer func() {
				r := recover()
				msg, _ := r.(string)
				if !strings.HasPrefix(msg, "quant: ") {
					t.Errorf("panic %v, want a \"quant: ...\" message", r)
				}
			}()
			tc.call()
		})
	}
}
