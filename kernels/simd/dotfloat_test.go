package simd

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

// Float dot test data. Every generator stays NaN- and Inf-free for sums of
// up to 5632 products, and reaches the rounding corners: subnormal
// products, huge products, cancellation.

// floatKind generates one float32 element of a named distribution.
var floatKinds = []struct {
	name string
	f32  func(r *rand.Rand) float32
	f16  func(r *rand.Rand) uint16 // half bits, finite
}{
	{"unit", func(r *rand.Rand) float32 { return 2*r.Float32() - 1 }, func(r *rand.Rand) uint16 { return F32ToF16(2*r.Float32() - 1) }},
	// |v| = m * 2^e with e in [-60, 60]: sums mixing wildly different
	// magnitudes, every float32 mantissa bit in play.
	{"mixed", func(r *rand.Rand) float32 { return expVal(r, -60, 60) }, finiteHalf},
	// products near and below float32's normal range (2^-126): subnormal
	// and zero products and partial sums.
	{"tiny", func(r *rand.Rand) float32 { return expVal(r, -80, -60) }, halfExp(0, 2)},
	// products up to 2^114: large but finite sums.
	{"huge", func(r *rand.Rand) float32 { return expVal(r, 50, 56) }, halfExp(27, 30)},
	// float32 subnormal elements (times the other operand's unit values).
	{"subnormal", func(r *rand.Rand) float32 {
		return math.Float32frombits(uint32(r.IntN(1<<23)) | uint32(r.IntN(2))<<31)
	}, halfExp(0, 0)},
}

// halfExp returns a generator of random half bits with biased exponent
// in [lo, hi] (0: zero or subnormal; 30: up to 65504).
func halfExp(lo, hi int) func(r *rand.Rand) uint16 {
	return func(r *rand.Rand) uint16 {
		return uint16(r.IntN(2))<<15 | uint16(lo+r.IntN(hi-lo+1))<<10 | uint16(r.IntN(1<<10))
	}
}

// expVal returns ±m·2^e, m in [1, 2), e uniform in [lo, hi].
func expVal(r *rand.Rand, lo, hi int) float32 {
	v := float32(math.Ldexp(1+r.Float64(), lo+r.IntN(hi-lo+1)))
	if r.IntN(2) == 0 {
		v = -v
	}
	return v
}

// floatPair holds one test case's operands in the three element types.
type floatPair struct {
	name     string
	a, b     []float32
	ha, hb   []uint16 // F16 bits
	bfa, bfb []uint16 // BF16 bits
}

// genFloatPair returns n elements of kind k (b of kind "unit" for the
// subnormal kind, so that the products stay subnormal). F16 operands come
// from the kind's own half generator (half range differs from float32's);
// BF16 operands are the bfloat16 rounding of the float32 values. A quarter
// of the cases pair each odd element with the negated previous product,
// forcing cancellation.
func genFloatPair(r *rand.Rand, n, k int) floatPair {
	p := floatPair{name: floatKinds[k].name,
		a: make([]float32, n), b: make([]float32, n),
		ha: make([]uint16, n), hb: make([]uint16, n),
		bfa: make([]uint16, n), bfb: make([]uint16, n)}
	cancel := r.IntN(4) == 0
	for i := range n {
		p.a[i] = floatKinds[k].f32(r)
		if floatKinds[k].name == "subnormal" {
			p.b[i] = floatKinds[0].f32(r)
		} else {
			p.b[i] = floatKinds[k].f32(r)
		}
		if cancel && i%2 == 1 {
			p.a[i], p.b[i] = -p.a[i-1], p.b[i-1]
		}
		p.ha[i], p.hb[i] = floatKinds[k].f16(r), floatKinds[k].f16(r)
		if cancel && i%2 == 1 {
			p.ha[i], p.hb[i] = p.ha[i-1]^0x8000, p.hb[i-1]
		}
		p.bfa[i], p.bfb[i] = bf16RNE(p.a[i]), bf16RNE(p.b[i])
	}
	if cancel {
		p.name += "/cancel"
	}
	return p
}

// finiteHalf returns random half bits with exponent < 31 (no Inf or NaN).
func finiteHalf(r *rand.Rand) uint16 {
	for {
		h := uint16(r.Uint32())
		if h&0x7c00 != 0x7c00 {
			return h
		}
	}
}

// bf16RNE rounds a finite float32 to bfloat16 bits, nearest even.
func bf16RNE(f float32) uint16 {
	u := math.Float32bits(f)
	return uint16((u + 0x7fff + (u >> 16 & 1)) >> 16)
}

// floatDotLens: every length through two 32-element steps plus tails,
// and model sizes.
func floatDotLens() []int {
	var ls []int
	for n := 0; n <= 72; n++ {
		ls = append(ls, n)
	}
	return append(ls, 95, 96, 97, 127, 128, 129, 2048, 2056, 5632)
}

// floatDotResults evaluates every float dot on p with the implementation
// currently selected; x4 results are checked against single-row calls
// by the caller.
func floatDotResults(p floatPair) map[string]float32 {
	n := len(p.a)
	out := map[string]float32{
		"DotF32":  DotF32(p.a, p.b),
		"DotF16":  DotF16(p.ha, p.hb),
		"DotBF16": DotBF16(p.bfa, p.bfb),
	}
	if n%8 == 0 {
		out["DotF32Lanes8"] = DotF32Lanes8(p.a, p.b)
		out["DotF16Lanes8"] = DotF16Lanes8(p.ha, p.hb)
		out["DotBF16Lanes8"] = DotBF16Lanes8(p.bfa, p.bfb)
	}
	return out
}

// TestFloatDotsBitExact: the AVX2 float dots return exactly the generic
// code's bits (which follow llama.cpp's orders, see dotfloat.go), for
// every length and value distribution.
func TestFloatDotsBitExact(t *testing.T) {
	if !hasFast {
		t.Skip("no fast implementation on this CPU")
	}
	defer ForceGeneric(false)
	r := rand.New(rand.NewPCG(21, 22))
	for _, n := range floatDotLens() {
		for k := range floatKinds {
			p := genFloatPair(r, n, k)
			ForceGeneric(true)
			want := floatDotResults(p)
			ForceGeneric(false)
			got := floatDotResults(p)
			for name, w := range want {
				if g := got[name]; !sameBits(g, w) || math.IsNaN(float64(w)) {
					t.Errorf("%s n=%d %s: avx2 %g (%#08x), generic %g (%#08x)",
						name, n, p.name, g, math.Float32bits(g), w, math.Float32bits(w))
				}
			}
		}
	}
}

// TestFloatDotsX4 checks each Lanes8 x4 output against the single-row
// call, bit for bit, on both implementations, with padded strides, and
// with the roles swapped (one activation row against four weight rows).
func TestFloatDotsX4(t *testing.T) {
	r := rand.New(rand.NewPCG(23, 24))
	bothImpls(t, func(t *testing.T, impl string) {
		for _, n := range []int{0, 8, 16, 24, 32, 40, 64, 72, 136, 2048} {
			for k := range floatKinds {
				for _, pad := range []int{0, 8, 3} {
					stride := n + pad
					rows := make([]floatPair, 4)
					for j := range rows {
						rows[j] = genFloatPair(r, n, k)
					}
					w := rows[0]
					x32 := make([]float32, 3*stride+n)
					xh := make([]uint16, 3*stride+n)
					xb := make([]uint16, 3*stride+n)
					for j := range 4 {
						copy(x32[j*stride:], rows[j].b)
						copy(xh[j*stride:], rows[j].hb)
						copy(xb[j*stride:], rows[j].bfb)
					}
					var o32, oh, ob [4]float32
					DotF32Lanes8x4(n, w.a, x32, stride, &o32)
					DotF16Lanes8x4(n, w.ha, xh, stride, &oh)
					DotBF16Lanes8x4(n, w.bfa, xb, stride, &ob)
					for j := range 4 {
						checks := []struct {
							name      string
							got, want float32
						}{
							{"DotF32Lanes8x4", o32[j], DotF32Lanes8(w.a, rows[j].b)},
							{"DotF16Lanes8x4", oh[j], DotF16Lanes8(w.ha, rows[j].hb)},
							{"DotBF16Lanes8x4", ob[j], DotBF16Lanes8(w.bfa, rows[j].bfb)},
							// swapped roles: x row j as the "weight" is the same dot.
							{"DotF32Lanes8 swapped", DotF32Lanes8(rows[j].b, w.a), o32[j]},
						}
						for _, c := range checks {
							if !sameBits(c.got, c.want) {
								t.Errorf("%s %s n=%d %s pad=%d row %d: %g, single-row %g",
									impl, c.name, n, w.name, pad, j, c.got, c.want)
							}
						}
					}
				}
			}
		}
	})
}

// TestFloatDotOrders pins the orders themselves on small cases whose
// results differ between plausible orders, independently of the generic
// code: each expected value is written out from llama.cpp's formulas.
func TestFloatDotOrders(t *testing.T) {
	r := rand.New(rand.NewPCG(25, 26))
	bothImpls(t, func(t *testing.T, impl string) {
		for trial := range 2000 {
			n := 8 * (1 + r.IntN(5))
			if trial%2 == 1 {
				n = 32 + 1 + r.IntN(31) // one main step and a tail
			}
			p := genFloatPair(r, n, trial%2) // unit or mixed
			h := make([]float32, n)
			g := make([]float32, n)
			for i := range n {
				h[i], g[i] = F16ToF32(p.ha[i]), F16ToF32(p.hb[i])
			}
			if n%8 == 0 {
				var l [8]float32
				for i := range n {
					l[i%8] = fmaExact(p.a[i], p.b[i], l[i%8])
				}
				want := ((l[0] + l[4]) + (l[2] + l[6])) + ((l[1] + l[5]) + (l[3] + l[7]))
				if got := DotF32Lanes8(p.a, p.b); !sameBits(got, want) {
					t.Fatalf("%s DotF32Lanes8 n=%d: %g, want %g", impl, n, got, want)
				}
				continue
			}
			// ggml_vec_dot_f32 / f16 with np = 32: one step, then the tail.
			var t4 [4]float32
			var th [4]float32
			for l := range 4 {
				t4[l] = ((fmaExact(p.a[l], p.b[l], 0) + fmaExact(p.a[16+l], p.b[16+l], 0)) +
					(fmaExact(p.a[8+l], p.b[8+l], 0) + fmaExact(p.a[24+l], p.b[24+l], 0))) +
					((fmaExact(p.a[4+l], p.b[4+l], 0) + fmaExact(p.a[20+l], p.b[20+l], 0)) +
						(fmaExact(p.a[12+l], p.b[12+l], 0) + fmaExact(p.a[28+l], p.b[28+l], 0)))
				th[l] = ((fmaExact(h[l], g[l], 0) + fmaExact(h[16+l], g[16+l], 0)) +
					(fmaExact(h[8+l], g[8+l], 0) + fmaExact(h[24+l], g[24+l], 0))) +
					((fmaExact(h[4+l], g[4+l], 0) + fmaExact(h[20+l], g[20+l], 0)) +
						(fmaExact(h[12+l], g[12+l], 0) + fmaExact(h[28+l], g[28+l], 0)))
			}
			s := (t4[0] + t4[1]) + (t4[2] + t4[3])
			for i := 32; i < n; i++ {
				s = fmaExact(p.a[i], p.b[i], s) // float sumf: fused tail
			}
			if got := DotF32(p.a, p.b); !sameBits(got, s) {
				t.Fatalf("%s DotF32 n=%d: %g, want %g", impl, n, got, s)
			}
			d := float64((th[0] + th[1]) + (th[2] + th[3]))
			for i := 32; i < n; i++ {
				d += float64(float32(h[i] * g[i])) // ggml_float sumf
			}
			if got := DotF16(p.ha, p.hb); !sameBits(got, float32(d)) {
				t.Fatalf("%s DotF16 n=%d: %g, want %g", impl, n, got, float32(d))
			}
		}
	})
}

// TestFloatDotBadShapesPanic: the Lanes8 dots reject lengths that are not
// a multiple of 8, and the x4 flavours short rows, before reading memory.
func TestFloatDotBadShapesPanic(t *testing.T) {
	f := make([]float32, 64)
	h := make([]uint16, 64)
	var out [4]float32
	for _, c := range []struct {
		f    func()
		want string
	}{
		{func() { DotF32Lanes8(f[:12], f[:12]) }, "simd: DotF32Lanes8: length 12 is not a multiple of 8"},
		{func() { DotF16Lanes8(h[:8], h[:16]) }, "simd: DotF16Lanes8: lengths differ (8 and 16)"},
		{func() { DotBF16Lanes8(h[:7], h[:7]) }, "simd: DotBF16Lanes8: length 7 is not a multiple of 8"},
		{func() { DotF32Lanes8x4(12, f, f, 12, &out) }, "simd: DotF32Lanes8x4: n=12 is not a non-negative multiple of 8"},
		{func() { DotF32Lanes8x4(16, f[:8], f, 16, &out) }, "simd: DotF32Lanes8x4: weights hold 8 elements, need 16"},
		{func() { DotF16Lanes8x4(16, h, h, 17, &out) }, "simd: DotF16Lanes8x4: activations hold 64 elements, 4 rows of 16 at stride 17 need 67"},
		{func() { DotBF16Lanes8x4(8, h, h, -1, &out) }, "simd: DotBF16Lanes8x4: activations hold 64 elements, 4 rows of 8 at stride -1 need 5"},
		{func() { DotBF16Lanes8x4(8, h, h, 8, nil) }, "simd: DotBF16Lanes8x4: nil out"},
	} {
		if msg := panicMessage(c.f); msg != c.want {
			t.Errorf("panic %q, want %q", msg, c.want)
		}
	}
}

// BenchmarkDotF32, BenchmarkDotF16 and BenchmarkDotBF16 time each float
// dot flavour: vec (ggml_vec_dot order), lanes8 (one row: a single FMA
// chain per lane, latency-bound) and lanes8x4 (four independent rows).
// Bytes are the weight row plus the activation rows read.
func BenchmarkDotF32(b *testing.B) {
	r := rand.New(rand.NewPCG(4, 4))
	benchFloatFlavours(b, 4, func(n int) []benchFlavour {
		w, x := randF32(r, n, 1), randF32(r, 4*n, 1)
		var out [4]float32
		return []benchFlavour{
			{"vec", func() { benchSink += DotF32(w, x[:n]) }},
			{"lanes8", func() { benchSink += DotF32Lanes8(w, x[:n]) }},
			{"lanes8x4", func() { DotF32Lanes8x4(n, w, x, n, &out) }},
		}
	})
}

func BenchmarkDotF16(b *testing.B) {
	r := rand.New(rand.NewPCG(5, 5))
	benchFloatFlavours(b, 2, func(n int) []benchFlavour {
		w, x := randF16(r, n, 1), randF16(r, 4*n, 1)
		var out [4]float32
		return []benchFlavour{
			{"vec", func() { benchSink += DotF16(w, x[:n]) }},
			{"lanes8", func() { benchSink += DotF16Lanes8(w, x[:n]) }},
			{"lanes8x4", func() { DotF16Lanes8x4(n, w, x, n, &out) }},
		}
	})
}

func BenchmarkDotBF16(b *testing.B) {
	r := rand.New(rand.NewPCG(6, 6))
	benchFloatFlavours(b, 2, func(n int) []benchFlavour {
		w, x := make([]uint16, n), make([]uint16, 4*n)
		for i := range w {
			w[i] = bf16RNE(2*r.Float32() - 1)
		}
		for i := range x {
			x[i] = bf16RNE(2*r.Float32() - 1)
		}
		var out [4]float32
		return []benchFlavour{
			{"vec", func() { benchSink += DotBF16(w, x[:n]) }},
			{"lanes8", func() { benchSink += DotBF16Lanes8(w, x[:n]) }},
			{"lanes8x4", func() { DotBF16Lanes8x4(n, w, x, n, &out) }},
		}
	})
}

type benchFlavour struct {
	name string
	f    func()
}

// benchFloatFlavours runs each flavour at TinyLlama's row lengths on both
// implementations; elem is the element size in bytes.
func benchFloatFlavours(b *testing.B, elem int, mk func(n int) []benchFlavour) {
	for _, n := range []int{2048, 5632} {
		for _, fl := range mk(n) {
			rows := 2
			if strings.HasSuffix(fl.name, "x4") {
				rows = 5
			}
			b.Run(fmt.Sprintf("%s/n=%d", fl.name, n), func(b *testing.B) {
				benchImpls(b, func(b *testing.B) {
					b.SetBytes(int64(rows * elem * n))
					for b.Loop() {
						fl.f()
					}
				})
			})
		}
	}
}

// FuzzFloatDots feeds arbitrary element bits (NaN, Inf, subnormals
// included) to the F32/F16/BF16 dots and requires the fast and generic
// paths, and the x4 kernels against single rows, to agree bit for bit (NaN
// only needs to be NaN: payloads may differ).
//
//	data[0] picks the length (0..255; Lanes8 use its multiple-of-8 floor);
//	the rest fills a, then four b rows, cyclically.
func FuzzFloatDots(f *testing.F) {
	f.Add([]byte{40, 1, 2, 3, 0x7f, 0x80})
	f.Add([]byte{33, 0x00, 0x7c, 0x01, 0xfe, 0xff, 0x7f})
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) < 2 {
			return
		}
		n := int(data[0])
		src := data[1:]
		b := make([]byte, 4*5*n)
		for i := range b {
			b[i] = src[i%len(src)] ^ byte(i>>8)
		}
		a32 := make([]float32, 5*n)
		a16 := make([]uint16, 5*n)
		for i := range a32 {
			a32[i] = math.Float32frombits(uint32(b[4*i]) | uint32(b[4*i+1])<<8 | uint32(b[4*i+2])<<16 | uint32(b[4*i+3])<<24)
			a16[i] = uint16(b[4*i+1]) | uint16(b[4*i+2])<<8
		}
		same := func(x, y float32) bool {
			return math.Float32bits(x) == math.Float32bits(y) || (x != x && y != y)
		}
		p := floatPair{a: a32[:n], b: a32[n : 2*n], ha: a16[:n], hb: a16[n : 2*n], bfa: a16[:n], bfb: a16[n : 2*n]}
		ForceGeneric(true)
		want := floatDotResults(p)
		ForceGeneric(false)
		defer ForceGeneric(false)
		for name, g := range floatDotResults(p) {
			if !same(g, want[name]) {
				t.Fatalf("%s n=%d: %s %g (%#08x), generic %g (%#08x)", name, n, Impl(), g, math.Float32bits(g), want[name], math.Float32bits(want[name]))
			}
		}
		m := n &^ 7
		for _, gen := range []bool{true, false} {
			ForceGeneric(gen)
			var o32, o16, ob [4]float32
			DotF32Lanes8x4(m, a32, a32[n:], n, &o32)
			DotF16Lanes8x4(m, a16, a16[n:], n, &o16)
			DotBF16Lanes8x4(m, a16, a16[n:], n, &ob)
			ForceGeneric(true)
			for k := range 4 {
				xs := n + k*n
				if w := DotF32Lanes8(a32[:m], a32[xs:xs+m]); !same(o32[k], w) {
					t.Fatalf("DotF32Lanes8x4 m=%d row %d (generic=%v): %g, single %g", m, k, gen, o32[k], w)
				}
				if w := DotF16Lanes8(a16[:m], a16[xs:xs+m]); !same(o16[k], w) {
					t.Fatalf("DotF16Lanes8x4 m=%d row %d (generic=%v): %g, single %g", m, k, gen, o16[k], w)
				}
				if w := DotBF16Lanes8(a16[:m], a16[xs:xs+m]); !same(ob[k], w) {
					t.Fatalf("DotBF16Lanes8x4 m=%d row %d (generic=%v): %g, single %g", m, k, gen, ob[k], w)
				}
			}
		}
	})
}
