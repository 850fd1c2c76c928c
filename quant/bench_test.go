package quant

import (
	"testing"

	"kiln/gguf"
)

// Benchmarks report throughput in float32 bytes: 4 bytes per element
// produced (dequantize) or consumed (quantize).

const benchN = 32 * QK_K // 8192 elements, a typical hidden size row

func BenchmarkDequantize(b *testing.B) {
	for _, ty := range supportedTypes() {
		b.Run(ty.String(), func(b *testing.B) {
			x := make([]float32, benchN)
			gen(1, 9, x)
			n, _ := ty.RowBytes(benchN)
			q := make([]byte, n)
			if err := Quantize(ty, x, q); err != nil {
				b.Fatal(err)
			}
			b.SetBytes(4 * benchN)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if err := Dequantize(ty, q, x); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkQuantize(b *testing.B) {
	for _, ty := range supportedTypes() {
		b.Run(ty.String(), func(b *testing.B) {
			x := make([]float32, benchN)
			gen(1, 9, x)
			n, _ := ty.RowBytes(benchN)
			q := make([]byte, n)
			b.SetBytes(4 * benchN)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if err := Quantize(ty, x, q); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkQuantizeAct(b *testing.B) {
	tests := []struct {
		t gguf.Type
		f func([]float32, []byte)
	}{
		{gguf.TypeQ8_0, QuantizeActQ8_0},
		{gguf.TypeQ8_1, QuantizeActQ8_1},
		{gguf.TypeQ8_K, QuantizeActQ8_K},
	}
	for _, tc := range tests {
		b.Run(tc.t.String(), func(b *testing.B) {
			x := make([]float32, benchN)
			gen(1, 9, x)
			n, _ := tc.t.RowBytes(benchN)
			q := make([]byte, n)
			b.SetBytes(4 * benchN)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				tc.f(x, q)
			}
		})
	}
}
