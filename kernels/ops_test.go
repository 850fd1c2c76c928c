package kernels

import (
	"math"
	"math/rand/v2"
	"testing"
)

func TestRMSNorm(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	for _, n := range []int{1, 7, 64, 2048} {
		for _, withWeight := range []bool{false, true} {
			x := randFloats(r, n, 3)
			var w []float32
			if withWeight {
				w = randFloats(r, n, 1)
			}
			var ss float64
			for _, v := range x {
				ss += float64(v) * float64(v)
			}
			scale := 1 / math.Sqrt(ss/float64(n)+1e-5)
			dst := make([]float32, n)
			RMSNorm(dst, x, w, 1e-5)
			for i, v := range x {
				want := float64(v) * scale
				if w != nil {
					want *= float64(w[i])
				}
				if d := math.Abs(float64(dst[i]) - want); d > 1e-6*math.Abs(want)+1e-12 {
					t.Fatalf("n=%d weight=%v: [%d] = %g, want %g", n, withWeight, i, dst[i], want)
				}
			}
			// In place gives the same bits.
			y := append([]float32(nil), x...)
			RMSNorm(y, y, w, 1e-5)
			for i := range y {
				if y[i] != dst[i] {
					t.Fatalf("n=%d: in-place result differs at %d", n, i)
				}
			}
		}
	}
	mustPanic(t, "length mismatch", func() { RMSNorm(make([]float32, 3), make([]float32, 4), nil, 1e-5) })
}

func TestRMSNormRows(t *testing.T) {
	p := NewPool(3)
	defer p.Close()
	r := rand.New(rand.NewPCG(13, 14))
	for _, shape := range []struct{ rows, dim int }{{3, 64}, {64, 512}} {
		x := randFloats(r, shape.rows*shape.dim, 2)
		w := randFloats(r, shape.dim, 1)
		got := make([]float32, len(x))
		RMSNormRows(p, got, x, w, shape.rows, shape.dim, 1e-6)
		want := make([]float32, shape.dim)
		for row := 0; row < shape.rows; row++ {
			RMSNorm(want, x[row*shape.dim:(row+1)*shape.dim], w, 1e-6)
			for i, v := range want {
				if got[row*shape.dim+i] != v {
					t.Fatalf("%v: row %d [%d] = %g, want %g", shape, row, i, got[row*shape.dim+i], v)
				}
			}
		}
	}
}

// TestExp32: within 2 ulps of the correctly rounded e^x over float32's
// range, exact at the special values.
func TestExp32(t *testing.T) {
	r := rand.New(rand.NewPCG(15, 16))
	check := func(x float32) {
		got := exp32(x)
		want := float32(math.Exp(float64(x)))
		if want == 0 || math.IsInf(float64(want), 0) {
			if got != want && !(want == 0 && got < 1e-37) {
				t.Fatalf("exp32(%g) = %g, want %g", x, got, want)
			}
			return
		}
		if want < 0x1p-126 { // subnormal results: absolute tolerance
			if math.Abs(float64(got-want)) > 0x1p-148 {
				t.Fatalf("exp32(%g) = %g, want %g", x, got, want)
			}
			return
		}
		if u := ulpDiff(got, want); u > 2 {
			t.Fatalf("exp32(%g) = %g, want %g (%d ulps)", x, got, want, u)
		}
	}
	for i := 0; i < 200000; i++ {
		check(float32(r.Float64()*190 - 102))
	}
	for _, x := range []float32{0, -0, 1, -1, 88.3, 88.72, -87.3, -100, -103, 0.5, -0.5, 1e-8, -1e-8} {
		check(x)
	}
	if v := exp32(float32(math.Inf(-1))); v != 0 {
		t.Errorf("exp32(-Inf) = %g", v)
	}
	if v := exp32(float32(math.Inf(1))); !math.IsInf(float64(v), 1) {
		t.Errorf("exp32(+Inf) = %g", v)
	}
	if v := exp32(89); !math.IsInf(float64(v), 1) {
		t.Errorf("exp32(89) = %g, want +Inf", v)
	}
	if v := exp32(-110); v != 0 {
		t.Errorf("exp32(-110) = %g, want 0", v)
	}
	if v := exp32(float32(math.NaN())); v == v {
		t.Errorf("exp32(NaN) = %g", v)
	}
}

func TestSiLUMul(t *testing.T) {
	r := rand.New(rand.NewPCG(17, 18))
	gate := randFloats(r, 1000, 4)
	gate = append(gate, 0, -30, 30, -90, 90)
	up := randFloats(r, len(gate), 1)
	got := append([]float32(nil), gate...)
	SiLUMul(got, up)
	for i, g := range gate {
		want := float64(g) / (1 + math.Exp(-float64(g))) * float64(up[i])
		if d := math.Abs(float64(got[i]) - want); d > 1e-6*math.Abs(want)+1e-30 {
			t.Fatalf("silu(%g)*%g = %g, want %g", g, up[i], got[i], want)
		}
	}
	x := append([]float32(nil), gate...)
	SiLU(x)
	for i, g := range gate {
		want := float64(g) / (1 + math.Exp(-float64(g)))
		if d := math.Abs(float64(x[i]) - want); d > 1e-6*math.Abs(want)+1e-30 {
			t.Fatalf("silu(%g) = %g, want %g", g, x[i], want)
		}
	}
	mustPanic(t, "length mismatch", func() { SiLUMul(make([]float32, 2), make([]float32, 3)) })
}

func TestSoftmax(t *testing.T) {
	r := rand.New(rand.NewPCG(19, 20))
	for _, n := range []int{1, 2, 33, 1000} {
		x := randFloats(r, n, 5)
		x[0] = 60 // large values must not overflow
		got := append([]float32(nil), x...)
		Softmax(got)
		var sum float64
		for _, v := range x {
			sum += math.Exp(float64(v) - 60)
		}
		for i, v := range x {
			want := math.Exp(float64(v)-60) / sum
			if d := math.Abs(float64(got[i]) - want); d > 2e-6*want+1e-30 {
				t.Fatalf("n=%d: [%d] = %g, want %g", n, i, got[i], want)
			}
		}
	}
	Softmax(nil) // no panic
}

func TestAddAndBias(t *testing.T) {
	a := []float32{1, 2, 3, 4}
	b := []float32{10, 20, 30, 40}
	dst := make([]float32, 4)
	Add(dst, a, b)
	for i, want := range []float32{11, 22, 33, 44} {
		if dst[i] != want {
			t.Fatalf("Add[%d] = %g, want %g", i, dst[i], want)
		}
	}
	x := []float32{1, 2, 3, 4, 5, 6}
	AddBias(x, []float32{10, 20, 30}, 2)
	for i, want := range []float32{11, 22, 33, 14, 25, 36} {
		if x[i] != want {
			t.Fatalf("AddBias[%d] = %g, want %g", i, x[i], want)
		}
	}
	mustPanic(t, "Add mismatch", func() { Add(dst, a, b[:3]) })
	mustPanic(t, "AddBias short", func() { AddBias(x, []float32{1, 2, 3, 4}, 2) })
}
