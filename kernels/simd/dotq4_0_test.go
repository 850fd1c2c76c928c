package simd

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

// Q4_0 in llama.cpp's two orders, spelled out from the recipe
// (internal/llamaorder) independently of the kernels' helpers: the
// generic dots must equal these bit for bit on every input, the assembly
// must equal the generic dots (TestQuantFastMatchesGeneric, and the tests
// below for the lane order).

// q4_0Elem is element e of a Q4_0 block's quants minus 8.
func q4_0Elem(qs []byte, e int) int32 {
	if e < 16 {
		return int32(qs[e]&15) - 8
	}
	return int32(qs[e-16]>>4) - 8
}

func q4_0Scale(bw, bx []byte) float32 {
	return F16ToF32(binary.LittleEndian.Uint16(bw)) * F16ToF32(binary.LittleEndian.Uint16(bx))
}

// recipeQ4_0Repack: acc = fma(float(I_b), dw*dx, acc) block by block.
func recipeQ4_0Repack(nb int, w, x []byte) float32 {
	var acc float32
	for b := range nb {
		bw, bx := w[b*18:], x[b*34:]
		var is int32
		for e := range 32 {
			is += q4_0Elem(bw[2:], e) * int32(int8(bx[2+e]))
		}
		acc = fma32(float32(is), q4_0Scale(bw, bx), acc)
	}
	return acc
}

// recipeQ4_0Lanes: lane j = fma(dw*dx, float(I_bj), lane j); hsum8.
func recipeQ4_0Lanes(nb int, w, x []byte) float32 {
	var l [8]float32
	for b := range nb {
		bw, bx := w[b*18:], x[b*34:]
		s := q4_0Scale(bw, bx)
		for j := range 8 {
			var is int32
			for k := range 4 {
				is += q4_0Elem(bw[2:], 4*j+k) * int32(int8(bx[2+4*j+k]))
			}
			l[j] = fma32(s, float32(is), l[j])
		}
	}
	return ((l[0] + l[4]) + (l[2] + l[6])) + ((l[1] + l[5]) + (l[3] + l[7]))
}

func sameBits(a, b float32) bool {
	return math.Float32bits(a) == math.Float32bits(b) || (a != a && b != b)
}

// TestQ4_0GenericFollowsRecipe checks both generic Q4_0 dots (and the
// GEMM's generic fold over prepared activations) against the recipes,
// bit for bit, on random and adversarial blocks.
func TestQ4_0GenericFollowsRecipe(t *testing.T) {
	r := rand.New(rand.NewPCG(61, 62))
	for _, mode := range modes {
		for _, nb := range blockCounts(qk) {
			for rep := range 3 {
				w, x := genRow(r, formats["Q4_0"], nb, mode), genRow(r, formats["Q8_0"], nb, mode)
				a := make([]byte, GemmActQ4_0Q8_0Bytes(nb*qk))
				ForceGeneric(true)
				GemmActQ4_0Q8_0(nb*qk, x, a)
				ForceGeneric(false)
				for _, c := range []struct {
					name      string
					got, want float32
				}{
					{"repack", dotQ4_0Q8_0Generic(nb, w, x), recipeQ4_0Repack(nb, w, x)},
					{"gemm", gemmQ4_0Q8_0Generic(nb, w, a), recipeQ4_0Repack(nb, w, x)},
					{"lanes", dotQ4_0Q8_0LanesGeneric(nb, w, x), recipeQ4_0Lanes(nb, w, x)},
				} {
					if !sameBits(c.got, c.want) {
						t.Errorf("Q4_0 %s %s nb=%d rep=%d: generic %g (%#08x), recipe %g (%#08x)",
							c.name, mode, nb, rep, c.got, math.Float32bits(c.got), c.want, math.Float32bits(c.want))
					}
				}
			}
		}
	}
}

// TestQ4_0OrdersDiffer guards the test above against passing vacuously:
// on ordinary data the two orders (and a plain unfused sum) must not
// always agree, so a kernel in the wrong order is caught.
func TestQ4_0OrdersDiffer(t *testing.T) {
	r := rand.New(rand.NewPCG(63, 64))
	differ := 0
	for range 50 {
		nb := 64
		w, x := genRow(r, formats["Q4_0"], nb, "random"), genRow(r, formats["Q8_0"], nb, "random")
		if math.Float32bits(recipeQ4_0Repack(nb, w, x)) != math.Float32bits(recipeQ4_0Lanes(nb, w, x)) {
			differ++
		}
	}
	if differ == 0 {
		t.Fatal("Q4_0 repacked and lane orders agreed on 50 random rows; the order tests cannot tell them apart")
	}
}

// TestQ4_0LanesFastMatchesGeneric: the lane-order assembly (single row
// and x4) has the generic code's bits, on random and adversarial blocks,
// loop tails, strides packed, padded and zero.
func TestQ4_0LanesFastMatchesGeneric(t *testing.T) {
	r := rand.New(rand.NewPCG(65, 66))
	fw, fx := formats["Q4_0"], formats["Q8_0"]
	for _, mode := range modes {
		for _, nb := range blockCounts(qk) {
			rowBytes := nb * fx.bytes
			for _, stride := range []int{rowBytes, rowBytes + 7, 0} {
				w := genRow(r, fw, nb, mode)
				x := make([]byte, 3*stride+rowBytes)
				for k := range 4 {
					copy(x[k*stride:], genRow(r, fx, nb, mode))
				}
				n := nb * qk
				var want [4]float32
				for k := range 4 {
					want[k] = recipeQ4_0Lanes(nb, w, x[k*stride:])
				}
				bothImpls(t, func(t *testing.T, impl string) {
					var out [4]float32
					DotQ4_0Q8_0Lanesx4(n, w, x, stride, &out)
					for k := range 4 {
						single := DotQ4_0Q8_0Lanes(n, w, x[k*stride:])
						if !sameBits(single, want[k]) || !sameBits(out[k], want[k]) {
							t.Errorf("%s Q4_0 lanes %s nb=%d stride=%d row %d: single %g, x4 %g, recipe %g",
								impl, mode, nb, stride, k, single, out[k], want[k])
						}
					}
				})
			}
		}
	}
}

// TestQ4_0LanesNegative128: activation quants of -128 (outside what
// kiln's quantizers write) still give the exact integer sums.
func TestQ4_0LanesNegative128(t *testing.T) {
	nb := 3
	w := make([]byte, nb*18)
	x := make([]byte, nb*34)
	for b := range nb {
		binary.LittleEndian.PutUint16(w[b*18:], 0x3c00) // 1.0
		binary.LittleEndian.PutUint16(x[b*34:], 0x3c00)
		for j := range 16 {
			w[b*18+2+j] = 0x0f // elements 0..15: 15-8 = 7; 16..31: 0-8 = -8
		}
		for j := range 32 {
			x[b*34+2+j] = 0x80 // -128
		}
	}
	// per block: 16*7*(-128) + 16*(-8)*(-128) = -14336 + 16384 = 2048
	bothImpls(t, func(t *testing.T, impl string) {
		for _, got := range []float32{DotQ4_0Q8_0Lanes(nb*qk, w, x), DotQ4_0Q8_0(nb*qk, w, x)} {
			if got != 3*2048 {
				t.Errorf("%s: got %g, want %d", impl, got, 3*2048)
			}
		}
	})
}

func TestQ4_0LanesBadShapesPanic(t *testing.T) {
	w, x := make([]byte, 2*18), make([]byte, 4*2*34)
	var out [4]float32
	for _, c := range []struct {
		name, fn string
		f        func()
	}{
		{"n not a multiple", "DotQ4_0Q8_0Lanes", func() { DotQ4_0Q8_0Lanes(33, w, x) }},
		{"negative n", "DotQ4_0Q8_0Lanes", func() { DotQ4_0Q8_0Lanes(-32, w, x) }},
		{"short weights", "DotQ4_0Q8_0Lanes", func() { DotQ4_0Q8_0Lanes(64, w[:35], x) }},
		{"short activations", "DotQ4_0Q8_0Lanes", func() { DotQ4_0Q8_0Lanes(64, w, x[:67]) }},
		{"nil slices", "DotQ4_0Q8_0Lanes", func() { DotQ4_0Q8_0Lanes(32, nil, nil) }},
		{"x4 short activations", "DotQ4_0Q8_0Lanesx4", func() { DotQ4_0Q8_0Lanesx4(64, w, x[:4*68-1], 68, &out) }},
		{"x4 negative stride", "DotQ4_0Q8_0Lanesx4", func() { DotQ4_0Q8_0Lanesx4(64, w, x, -1, &out) }},
		{"x4 nil out", "DotQ4_0Q8_0Lanesx4", func() { DotQ4_0Q8_0Lanesx4(64, w, x, 68, nil) }},
		{"x4 bad n", "DotQ4_0Q8_0Lanesx4", func() { DotQ4_0Q8_0Lanesx4(31, w, x, 68, &out) }},
	} {
		msg := panicMessage(c.f)
		if !strings.HasPrefix(msg, "simd: "+c.fn+": ") {
			t.Errorf("%s: panic %q, want a \"simd: %s: ...\" panic", c.name, msg, c.fn)
		}
	}
}

func TestQ4_0LanesNoAllocs(t *testing.T) {
	r := rand.New(rand.NewPCG(67, 68))
	w, x := genRow(r, formats["Q4_0"], 8, "random"), genRow(r, formats["Q8_0"], 32, "random")
	var out [4]float32
	if a := testing.AllocsPerRun(10, func() { DotQ4_0Q8_0Lanes(256, w, x) }); a != 0 {
		t.Errorf("DotQ4_0Q8_0Lanes: %v allocations per call", a)
	}
	if a := testing.AllocsPerRun(10, func() { DotQ4_0Q8_0Lanesx4(256, w, x, 8*34, &out) }); a != 0 {
		t.Errorf("DotQ4_0Q8_0Lanesx4: %v allocations per call", a)
	}
}

// FuzzQ4_0Lanes feeds arbitrary bytes to the lane-order dots: fast,
// generic, x4 and the recipe must agree bit for bit (NaN only as NaN).
//
//	data[0] the block count (1..8); the rest fills the weight row, then
//	the four activation rows, cyclically.
func FuzzQ4_0Lanes(f *testing.F) {
	f.Add([]byte{3, 1, 2, 3})
	f.Add([]byte{1, 0xff, 0x7b, 0x80})
	f.Add([]byte{2, 0x00, 0x7c, 0x01, 0xfe})
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) < 2 {
			return
		}
		nb := 1 + int(data[0])%8
		src := data[1:]
		fill := func(n, off int) []byte {
			b := make([]byte, n)
			for i := range b {
				b[i] = src[(off+i)%len(src)] ^ byte(i>>8)
			}
			return b
		}
		w, x := fill(nb*18, 0), fill(4*nb*34, 7)
		n := nb * qk
		for k := range 4 {
			want := recipeQ4_0Lanes(nb, w, x[k*nb*34:])
			bothImpls(t, func(t *testing.T, impl string) {
				var out [4]float32
				DotQ4_0Q8_0Lanesx4(n, w, x, nb*34, &out)
				if got := DotQ4_0Q8_0Lanes(n, w, x[k*nb*34:]); !sameBits(got, want) || !sameBits(out[k], want) {
					t.Fatalf("%s nb=%d row %d: single %g x4 %g, recipe %g", impl, nb, k, got, out[k], want)
				}
			})
		}
	})
}

// BenchmarkDotQ4_0Lanes times the lane-order dots on TinyLlama row
// lengths; MB/s of weights as BenchmarkDotQuant(X4).
func BenchmarkDotQ4_0Lanes(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 3))
	for _, n := range []int{2048, 5632} {
		nb := n / qk
		w, x := genRow(r, formats["Q4_0"], nb, "random"), genRow(r, formats["Q8_0"], 4*nb, "random")
		var out [4]float32
		b.Run(fmt.Sprintf("Q4_0/n=%d", n), func(b *testing.B) {
			benchImpls(b, func(b *testing.B) {
				b.SetBytes(int64(len(w)))
				for b.Loop() {
					benchSink += DotQ4_0Q8_0Lanes(n, w, x)
				}
			})
		})
		b.Run(fmt.Sprintf("Q4_0x4/n=%d", n), func(b *testing.B) {
			benchImpls(b, func(b *testing.B) {
				b.SetBytes(int64(4 * len(w)))
				for b.Loop() {
					DotQ4_0Q8_0Lanesx4(n, w, x, nb*34, &out)
				}
				benchSink += out[0]
			})
		})
	}
}
