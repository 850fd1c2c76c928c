package simd_test

import (
	"math"
	"math/rand/v2"
	"testing"

	"kiln/kernels/simd"
	"kiln/quant"
)

// TestQuantizeActQ8_0MatchesQuant checks the assembly quantizer against
// quant's emulation of llama.cpp's AVX2 code, byte for byte, on ordinary
// rows and on blocks with zeros, ties at rounding boundaries, NaN, ±Inf,
// subnormals and huge values.
func TestQuantizeActQ8_0MatchesQuant(t *testing.T) {
	r := rand.New(rand.NewPCG(51, 52))
	specials := []float32{0, float32(math.Copysign(0, -1)), float32(math.NaN()), float32(math.Inf(1)), float32(math.Inf(-1)),
		1e-40, -1e-40, 3e38, -3e38, 0.5, 1.5, 2.5, 127, -127, 254}
	for rep := range 300 {
		n := 32 * (1 + r.IntN(8))
		x := make([]float32, n)
		for i := range x {
			switch {
			case rep%3 == 1 && r.IntN(6) == 0:
				x[i] = specials[r.IntN(len(specials))]
			case rep%3 == 2:
				x[i] = float32(r.IntN(9) - 4) // many ties, exact halves after scaling
			default:
				x[i] = float32(r.NormFloat64()) * float32(math.Pow(10, float64(r.IntN(9)-4)))
			}
		}
		if rep%10 == 0 {
			clear(x[:32]) // an all-zero block
		}
		want := make([]byte, n/32*34)
		got := make([]byte, n/32*34)
		quant.QuantizeActQ8_0(x, want)
		if !simd.QuantizeActQ8_0(x, got) {
			t.Skip("simd: no assembly quantizer on this CPU/build")
		}
		if string(got) != string(want) {
			for b := 0; b < n/32; b++ {
				if string(got[34*b:34*b+34]) != string(want[34*b:34*b+34]) {
					t.Fatalf("rep %d block %d: x=%v\nsimd  %x\nquant %x", rep, b, x[32*b:32*b+32], got[34*b:34*b+34], want[34*b:34*b+34])
				}
			}
		}
	}
}

// TestQuantizeActQ8_KMatchesQuant: the same for Q8_K against
// quant.QuantizeActQ8_K, including ties for the largest magnitude (the
// first one wins), all-zero and all-NaN blocks.
func TestQuantizeActQ8_KMatchesQuant(t *testing.T) {
	r := rand.New(rand.NewPCG(53, 54))
	specials := []float32{0, float32(math.Copysign(0, -1)), float32(math.NaN()), float32(math.Inf(1)), float32(math.Inf(-1)),
		1e-40, -1e-40, 3e38, -3e38, 0.5, 1.5, 2.5, 127, -127, 254}
	for rep := range 300 {
		n := 256 * (1 + r.IntN(3))
		x := make([]float32, n)
		for i := range x {
			switch {
			case rep%4 == 1 && r.IntN(20) == 0:
				x[i] = specials[r.IntN(len(specials))]
			case rep%4 == 2:
				x[i] = float32(r.IntN(9) - 4) // ties for the largest magnitude, exact halves
			default:
				x[i] = float32(r.NormFloat64()) * float32(math.Pow(10, float64(r.IntN(9)-4)))
			}
		}
		switch rep % 10 {
		case 0:
			clear(x[:256])
		case 3:
			for i := range x[:256] {
				x[i] = float32(math.NaN())
			}
		case 5:
			x[0], x[200] = -7, 7 // the first of two equal magnitudes is the max
		}
		want := make([]byte, n/256*292)
		got := make([]byte, n/256*292)
		for i := range got {
			got[i] = 0xee // every byte must be written
		}
		quant.QuantizeActQ8_K(x, want)
		if !simd.QuantizeActQ8_K(x, got) {
			t.Skip("simd: no assembly quantizer on this CPU/build")
		}
		for b := 0; b < n/256; b++ {
			g, w := got[292*b:292*b+292], want[292*b:292*b+292]
			if string(g) != string(w) {
				for i := range g {
					if g[i] != w[i] {
						t.Fatalf("rep %d block %d: byte %d: simd %#x, quant %#x", rep, b, i, g[i], w[i])
					}
				}
			}
		}
	}
}

func TestQuantizeActQ8_0Generic(t *testing.T) {
	was := simd.ForceGeneric(true)
	defer simd.ForceGeneric(was)
	dst := []byte{7}
	if simd.QuantizeActQ8_0(make([]float32, 32), make([]byte, 34)) {
		t.Error("generic build claims an assembly quantizer")
	}
	if simd.QuantizeActQ8_0(nil, dst) || dst[0] != 7 {
		t.Error("generic QuantizeActQ8_0 wrote to dst")
	}
	if simd.QuantizeActQ8_K(make([]float32, 256), make([]byte, 292)) {
		t.Error("generic build claims an assembly Q8_K quantizer")
	}
}

func BenchmarkQuantizeActQ8_0(b *testing.B) {
	x := make([]float32, 2048)
	for i := range x {
		x[i] = float32(i%37) - 18.5
	}
	dst := make([]byte, 64*34)
	b.Run("simd", func(b *testing.B) {
		for b.Loop() {
			simd.QuantizeActQ8_0(x, dst)
		}
	})
	b.Run("quant", func(b *testing.B) {
		for b.Loop() {
			quant.QuantizeActQ8_0(x, dst)
		}
	})
}

func BenchmarkQuantizeActQ8_K(b *testing.B) {
	x := make([]float32, 2048)
	for i := range x {
		x[i] = float32(i%37) - 18.5
	}
	dst := make([]byte, 8*292)
	b.Run("simd", func(b *testing.B) {
		for b.Loop() {
			simd.QuantizeActQ8_K(x, dst)
		}
	})
	b.Run("quant", func(b *testing.B) {
		for b.Loop() {
			quant.QuantizeActQ8_K(x, dst)
		}
	})
}
