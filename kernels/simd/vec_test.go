package simd

import (
	"math"
	"math/rand/v2"
	"testing"
)

// floatLens covers empty, every length through two 32-wide unrolled
// bodies plus tails, and TinyLlama sizes.
func floatLens() []int {
	var ls []int
	for n := 0; n <= 70; n++ {
		ls = append(ls, n)
	}
	return append(ls, 127, 128, 129, 2048, 5632)
}

// bothImpls runs f once under every kernel set this CPU runs (generic,
// then avx2, then avx512vnni where present), so that each set's kernels
// are checked against the same expectations.
func bothImpls(t *testing.T, f func(t *testing.T, impl string)) {
	defer ForceGeneric(false)
	for _, name := range Impls() {
		if _, err := SetImpl(name); err != nil {
			t.Fatal(err)
		}
		f(t, name)
	}
}

// TestFloatDots checks the float dots against float64 sums of exact
// products, within relTol of the sum of |products|.
func TestFloatDots(t *testing.T) {
	r := rand.New(rand.NewPCG(13, 14))
	bothImpls(t, func(t *testing.T, impl string) {
		for _, n := range floatLens() {
			for _, scale := range []float32{1, 1e-20, 1e15} {
				a, b := randF32(r, n, scale), randF32(r, n, 1)
				ha, hb := randF16(r, n, 2), randF16(r, n, 2)
				ba, bb := make([]uint16, n), make([]uint16, n)
				for i := range n {
					ba[i] = uint16(math.Float32bits(a[i]) >> 16)
					bb[i] = uint16(math.Float32bits(b[i]) >> 16)
				}
				var want, abs [4]float64
				for i := range n {
					p := [4]float64{
						float64(a[i]) * float64(b[i]),
						float64(F16ToF32(ha[i])) * float64(F16ToF32(hb[i])),
						float64(BF16ToF32(ba[i])) * float64(BF16ToF32(bb[i])),
						float64(a[i]) * float64(F16ToF32(hb[i])),
					}
					for k := range p {
						want[k] += p[k]
						abs[k] += math.Abs(p[k])
					}
				}
				got := [4]float32{DotF32(a, b), DotF16(ha, hb), DotBF16(ba, bb), DotF32F16(a, hb)}
				for k, name := range []string{"DotF32", "DotF16", "DotBF16", "DotF32F16"} {
					if !within(got[k], want[k], abs[k]) {
						t.Errorf("%s %s n=%d scale=%g: got %g, want %g (abs %g)", impl, name, n, scale, got[k], want[k], abs[k])
					}
				}
			}
		}
	})
}

// TestElementwise checks Axpy, AxpyF16, Scale, Add and Mul element by
// element: each output is one or two roundings (FMA may fuse) from the
// float64 value.
func TestElementwise(t *testing.T) {
	r := rand.New(rand.NewPCG(15, 16))
	near := func(got float32, want, scale float64) bool {
		return math.Abs(float64(got)-want) <= 2*math.Abs(scale)*0x1p-24+1e-45
	}
	bothImpls(t, func(t *testing.T, impl string) {
		for _, n := range floatLens() {
			x, y, h := randF32(r, n, 3), randF32(r, n, 3), randF16(r, n, 3)
			alpha := 2*r.Float32() - 1

			y1 := append([]float32(nil), y...)
			Axpy(alpha, x, y1)
			y2 := append([]float32(nil), y...)
			AxpyF16(alpha, h, y2)
			s := append([]float32(nil), x...)
			Scale(alpha, s)
			add, mul := make([]float32, n), make([]float32, n)
			Add(add, x, y)
			Mul(mul, x, y)
			for i := range n {
				ax := float64(alpha) * float64(x[i])
				ah := float64(alpha) * float64(F16ToF32(h[i]))
				checks := []struct {
					name       string
					got        float32
					want, size float64
				}{
					{"Axpy", y1[i], float64(y[i]) + ax, math.Abs(float64(y[i])) + math.Abs(ax)},
					{"AxpyF16", y2[i], float64(y[i]) + ah, math.Abs(float64(y[i])) + math.Abs(ah)},
					{"Scale", s[i], ax, ax},
					{"Add", add[i], float64(x[i]) + float64(y[i]), math.Abs(float64(x[i])) + math.Abs(float64(y[i]))},
					{"Mul", mul[i], float64(x[i]) * float64(y[i]), float64(x[i]) * float64(y[i])},
				}
				for _, c := range checks {
					if !near(c.got, c.want, c.size) {
						t.Fatalf("%s %s n=%d [%d]: got %g, want %g", impl, c.name, n, i, c.got, c.want)
					}
				}
			}
			// dst may alias an input.
			Add(x, x, y)
			for i := range n {
				if x[i] != add[i] {
					t.Fatalf("%s Add in place n=%d [%d]: %g, want %g", impl, n, i, x[i], add[i])
				}
			}
		}
	})
}

func TestSumSquaresAndMax(t *testing.T) {
	r := rand.New(rand.NewPCG(17, 18))
	bothImpls(t, func(t *testing.T, impl string) {
		for _, n := range floatLens() {
			x := randF32(r, n, 5)
			var ss float64
			m := math.Inf(-1)
			for _, v := range x {
				ss += float64(v) * float64(v)
				m = math.Max(m, float64(v))
			}
			if got := SumSquares(x); !within(got, ss, ss) {
				t.Errorf("%s SumSquares n=%d: %g, want %g", impl, n, got, ss)
			}
			if got := Max(x); float64(got) != m {
				t.Errorf("%s Max n=%d: %g, want %g", impl, n, got, m)
			}
			if n == 0 {
				continue
			}
			// The maximum in every position, all-negative input, and NaN anywhere.
			for _, pos := range []int{0, n / 2, n - 1} {
				y := randF32(r, n, 1)
				for i := range y {
					y[i] -= 3
				}
				y[pos] = -0.5
				if got := Max(y); got != -0.5 {
					t.Errorf("%s Max n=%d max at %d: %g, want -0.5", impl, n, pos, got)
				}
				y[pos] = float32(math.NaN())
				if got := Max(y); !math.IsNaN(float64(got)) {
					t.Errorf("%s Max n=%d NaN at %d: %g, want NaN", impl, n, pos, got)
				}
			}
		}
	})
}

func TestFloatBadShapesPanic(t *testing.T) {
	a, b := make([]float32, 4), make([]float32, 5)
	h := make([]uint16, 5)
	for _, c := range []struct {
		name string
		f    func()
	}{
		{"DotF32", func() { DotF32(a, b) }},
		{"DotF16", func() { DotF16(h[:4], h) }},
		{"DotBF16", func() { DotBF16(h[:4], h) }},
		{"DotF32F16", func() { DotF32F16(a, h) }},
		{"Axpy", func() { Axpy(1, a, b) }},
		{"AxpyF16", func() { AxpyF16(1, h, a) }},
		{"Add", func() { Add(a, a, b) }},
		{"Mul", func() { Mul(b, a, a) }},
		{"F16ToF32Row", func() { F16ToF32Row(h, a) }},
		{"F32ToF16Row", func() { F32ToF16Row(a, h) }},
	} {
		if msg := panicMessage(c.f); msg != "simd: "+c.name+": lengths differ (4 and 5)" && msg != "simd: "+c.name+": lengths differ (5 and 4)" &&
			msg != "simd: "+c.name+": lengths differ (4, 4 and 5)" && msg != "simd: "+c.name+": lengths differ (5, 4 and 4)" {
			t.Errorf("%s: panic %q", c.name, msg)
		}
	}
}

func TestImplAndForceGeneric(t *testing.T) {
	defer ForceGeneric(false)
	if was := ForceGeneric(true); was {
		t.Errorf("ForceGeneric(true) reported generic already forced")
	}
	if Impl() != "generic" {
		t.Errorf("forced generic, Impl() = %q", Impl())
	}
	if was := ForceGeneric(false); !was {
		t.Errorf("ForceGeneric(false) did not report the forced state")
	}
	if want := implNames[configured.Load()]; Impl() != want {
		t.Errorf("Impl() = %q, want %q", Impl(), want)
	}
}
