package simd

import (
	"bufio"
	"math"
	"math/big"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"testing"
)

// TestFmafExact checks the portable float32 FMA against a*b+c computed
// exactly (big.Float) and rounded once to float32, on random operands and
// on cases built to land exactly between two float32 values.
func TestFmafExact(t *testing.T) {
	r := rand.New(rand.NewPCG(61, 62))
	exact := func(a, b, c float32) float32 {
		x := new(big.Float).SetPrec(400).SetFloat64(float64(a))
		x.Mul(x, new(big.Float).SetFloat64(float64(b)))
		x.Add(x, new(big.Float).SetFloat64(float64(c)))
		f, _ := x.Float32()
		return f
	}
	rf := func() float32 {
		switch r.IntN(4) {
		case 0:
			return math.Float32frombits(r.Uint32()&^(0xff<<23) | uint32(100+r.IntN(54))<<23) // moderate exponents
		case 1:
			return float32(r.NormFloat64())
		case 2:
			return float32(r.IntN(1<<12)) / float32(int(1)<<r.IntN(20)) // few significant bits: exact ties
		}
		return math.Float32frombits(r.Uint32()&^(0xff<<23) | uint32(r.IntN(254)+1)<<23)
	}
	for i := range 200000 {
		a, b, c := rf(), rf(), rf()
		if i%3 == 0 {
			// c just below/above a half-ulp boundary of a*b: double rounding bait.
			p := float64(a) * float64(b)
			c = float32(-p + p*0x1p-25)
		}
		got, want := fma32(a, b, c), exact(a, b, c)
		if math.Float32bits(got) != math.Float32bits(want) && !(got != got && want != want) {
			t.Fatalf("fma32(%g, %g, %g) = %g (%#08x), exact %g (%#08x)", a, b, c, got, math.Float32bits(got), want, math.Float32bits(want))
		}
	}
}

// TestExp2Table checks exp2Tab32 against 2^(i/32) rounded to float64.
func TestExp2Table(t *testing.T) {
	for i, bits := range exp2Tab32 {
		// 2^(i/32) to 200 bits by Newton on y^32 = 2^i.
		want := new(big.Float).SetPrec(200).SetFloat64(math.Exp2(float64(i) / 32))
		target := new(big.Float).SetPrec(200).SetInt64(1 << i)
		for range 8 {
			y31 := new(big.Float).SetPrec(200).SetInt64(1)
			for range 31 {
				y31.Mul(y31, want)
			}
			// y -= (y^32 - 2^i) / (32 y^31)
			num := new(big.Float).SetPrec(200).Mul(y31, want)
			num.Sub(num, target)
			den := new(big.Float).SetPrec(200).Mul(y31, big.NewFloat(32))
			want.Sub(want, num.Quo(num, den))
		}
		w, _ := want.Float64()
		if got := math.Float64frombits(bits + uint64(i)<<47); got != w {
			t.Errorf("exp2Tab32[%d] gives %v, 2^(%d/32) = %v", i, got, i, w)
		}
	}
}

// TestExpGolden checks Expf against glibc's expf, and ggml_v_expf and
// ggml_v_silu (both implementations, through ExpSum and SwiGLU) against
// llama.cpp's compiled code, bit for bit, on testdata/expf_golden.txt
// (written by testdata/gen_expf_golden.go from glibc and ggml's library).
func TestExpGolden(t *testing.T) {
	f, err := os.Open("testdata/expf_golden.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var xs, glibc, vexp, vsilu []float32
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "#") {
			continue
		}
		var v [4]float32
		for i, field := range strings.Fields(line) {
			u, err := strconv.ParseUint(field, 16, 32)
			if err != nil || i >= 4 {
				t.Fatalf("bad golden line %q", line)
			}
			v[i] = math.Float32frombits(uint32(u))
		}
		xs, glibc, vexp, vsilu = append(xs, v[0]), append(glibc, v[1]), append(vexp, v[2]), append(vsilu, v[3])
	}
	if len(xs) < 1000 || len(xs)%8 != 0 {
		t.Fatalf("golden file has %d inputs", len(xs))
	}
	same := func(a, b float32) bool { return math.Float32bits(a) == math.Float32bits(b) || (a != a && b != b) }
	for i, x := range xs {
		if got := Expf(x); !same(got, glibc[i]) {
			t.Errorf("Expf(%g [%#08x]) = %g [%#08x], glibc %g [%#08x]", x, math.Float32bits(x), got, math.Float32bits(got), glibc[i], math.Float32bits(glibc[i]))
		}
		if got := vexpf(x); !same(got, vexp[i]) {
			t.Errorf("vexpf(%g [%#08x]) = %g [%#08x], ggml_v_expf %g [%#08x]", x, math.Float32bits(x), got, math.Float32bits(got), vexp[i], math.Float32bits(vexp[i]))
		}
	}
	bothImpls(t, func(t *testing.T, impl string) {
		y := make([]float32, len(xs))
		ExpSum(y, xs, 0)
		for i := range xs {
			if !same(y[i], vexp[i]) {
				t.Errorf("%s ExpSum(%g, max 0) = %g, ggml_v_expf %g", impl, xs[i], y[i], vexp[i])
			}
		}
		ones := make([]float32, len(xs))
		for i := range ones {
			ones[i] = 1
		}
		SwiGLU(y, xs, ones)
		for i := range xs {
			if !same(y[i], vsilu[i]) {
				t.Errorf("%s SwiGLU(%g)*1 = %g, ggml_v_silu %g", impl, xs[i], y[i], vsilu[i])
			}
		}
	})
}

// TestExpSum checks ExpSum on rows of every length up to 72 (8-groups,
// 16-groups of the AVX-512 kernel and expf tails) under every kernel set
// against the generic code, bit for bit, and a float64 reference.
func TestExpSum(t *testing.T) {
	r := rand.New(rand.NewPCG(63, 64))
	for n := 0; n <= 72; n++ {
		x := randF32(r, n, 8)
		mx := float32(math.Inf(-1))
		for _, v := range x {
			mx = max(mx, v)
		}
		ForceGeneric(true)
		want := make([]float32, n)
		wantSum := ExpSum(want, x, mx)
		ForceGeneric(false)
		var ref float64
		for _, v := range x {
			ref += math.Exp(float64(v - mx))
		}
		if math.Abs(wantSum-ref) > 1e-6*ref+1e-12 {
			t.Errorf("n=%d: sum %v, reference %v", n, wantSum, ref)
		}
		bothImpls(t, func(t *testing.T, impl string) {
			y := make([]float32, n)
			if s := ExpSum(y, x, mx); s != wantSum || !sameSliceBits(y, want) {
				t.Errorf("%s n=%d: sum %v, generic %v (or elements differ)", impl, n, s, wantSum)
			}
			cp := append([]float32(nil), x...) // in place
			if s := ExpSum(cp, cp, mx); s != wantSum || !sameSliceBits(cp, want) {
				t.Errorf("%s n=%d: in place sum %v, generic %v", impl, n, s, wantSum)
			}
		})
	}
}

// sameSliceBits reports whether a and b hold the same float32 bits.
func sameSliceBits(a, b []float32) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if math.Float32bits(a[i]) != math.Float32bits(b[i]) {
			return false
		}
	}
	return true
}

// TestSwiGLU checks SwiGLU under every kernel set against the generic
// code, bit for bit, and the generic code against a float64 reference,
// every length up to 72, aliased output too.
func TestSwiGLU(t *testing.T) {
	r := rand.New(rand.NewPCG(65, 66))
	for n := 0; n <= 72; n++ {
		x, g := randF32(r, n, 10), randF32(r, n, 3)
		ForceGeneric(true)
		want := make([]float32, n)
		SwiGLU(want, x, g)
		ForceGeneric(false)
		for i := range x {
			xi := float64(x[i])
			ref := xi / (1 + math.Exp(-xi)) * float64(g[i])
			if math.Abs(float64(want[i])-ref) > 1e-5*math.Abs(ref)+1e-30 {
				t.Errorf("n=%d [%d]: %g, reference %g", n, i, want[i], ref)
			}
		}
		bothImpls(t, func(t *testing.T, impl string) {
			y := make([]float32, n)
			SwiGLU(y, x, g)
			for i := range y {
				if math.Float32bits(y[i]) != math.Float32bits(want[i]) {
					t.Errorf("%s n=%d [%d]: %g, generic %g", impl, n, i, y[i], want[i])
				}
			}
			cp := append([]float32(nil), x...)
			SwiGLU(cp, cp, g)
			if !sameSliceBits(cp, want) {
				t.Errorf("%s n=%d: SwiGLU in place differs", impl, n)
			}
		})
	}
}

// TestDotRows checks DotF32F16Rows and DotF32Rows, on both
// implementations, against the element-order FMA chain (bit for bit) and a
// float64 dot (within tolerance), for row counts around the 8- and 16-row
// groups, head sizes with and without a fast path, and padded strides.
func TestDotRows(t *testing.T) {
	r := rand.New(rand.NewPCG(67, 68))
	for _, d := range []int{1, 8, 24, 64, 100, 128} {
		for _, n := range []int{0, 1, 7, 8, 9, 15, 16, 17, 24, 33, 40, 48, 57, 64, 96} {
			stride := d + r.IntN(3)*8
			q := randF32(r, d, 1)
			k16 := randF16(r, max(0, (n-1)*stride+d), 1)
			if n == 48 { // signed zeros: -q*0 = -0 must stay -0 where the chain says so
				for i := range q {
					q[i] = -float32(math.Abs(float64(q[i])))
				}
				for i := range k16 {
					if i%3 != 0 {
						k16[i] = 0
					}
				}
			}
			k32 := make([]float32, len(k16))
			for i, h := range k16 {
				k32[i] = F16ToF32(h)
			}
			bothImpls(t, func(t *testing.T, impl string) {
				o16, o32 := make([]float32, n), make([]float32, n)
				DotF32F16Rows(q, k16, stride, o16)
				DotF32Rows(q, k32, stride, o32)
				for j := range n {
					row := k32[j*stride : j*stride+d]
					want := dotChainF32(q, row)
					if math.Float32bits(o16[j]) != math.Float32bits(want) || math.Float32bits(o32[j]) != math.Float32bits(want) {
						t.Fatalf("%s d=%d n=%d row %d: F16 %g, F32 %g, chain %g", impl, d, n, j, o16[j], o32[j], want)
					}
					var ref, abs float64
					for i := range row {
						ref += float64(q[i]) * float64(row[i])
						abs += math.Abs(float64(q[i]) * float64(row[i]))
					}
					if math.Abs(float64(want)-ref) > 1e-5*abs+1e-30 {
						t.Fatalf("d=%d row %d: chain %g, float64 %g", d, j, want, ref)
					}
				}
			})
		}
	}
}

// TestAxpyRows checks AxpyF16Rows and AxpyF32Rows on both implementations
// against the row-order FMA loop, bit for bit, for widths around the
// 64-element register block, and against float64 within tolerance.
func TestAxpyRows(t *testing.T) {
	r := rand.New(rand.NewPCG(69, 70))
	// Every width below 128 that is a multiple of 8 (each of the AVX-512
	// kernel's 15 one-pass remainders) and some beyond.
	ds := []int{1, 3, 130, 136, 200, 248, 256}
	for d := 8; d <= 128; d += 8 {
		ds = append(ds, d)
	}
	for _, d := range ds {
		for _, n := range []int{0, 1, 5, 64} {
			stride := d + r.IntN(3)*8
			p := randF32(r, n, 1)
			v16 := randF16(r, max(0, (n-1)*stride+d), 1)
			v32 := make([]float32, len(v16))
			for i, h := range v16 {
				v32[i] = F16ToF32(h)
			}
			acc0 := randF32(r, d, 1)
			want := append([]float32(nil), acc0...)
			for j, pj := range p {
				for i := range want {
					want[i] = fma32(pj, v32[j*stride+i], want[i])
				}
			}
			bothImpls(t, func(t *testing.T, impl string) {
				a16 := append([]float32(nil), acc0...)
				a32 := append([]float32(nil), acc0...)
				AxpyF16Rows(p, v16, stride, a16)
				AxpyF32Rows(p, v32, stride, a32)
				for i := range want {
					if math.Float32bits(a16[i]) != math.Float32bits(want[i]) || math.Float32bits(a32[i]) != math.Float32bits(want[i]) {
						t.Fatalf("%s d=%d n=%d [%d]: F16 %g, F32 %g, want %g", impl, d, n, i, a16[i], a32[i], want[i])
					}
					ref, abs := float64(acc0[i]), math.Abs(float64(acc0[i]))
					for j, pj := range p {
						ref += float64(pj) * float64(v32[j*stride+i])
						abs += math.Abs(float64(pj) * float64(v32[j*stride+i]))
					}
					if math.Abs(float64(want[i])-ref) > 1e-5*abs+1e-30 {
						t.Fatalf("d=%d [%d]: %g, float64 %g", d, i, want[i], ref)
					}
				}
			})
		}
	}
}

func TestAttnPrimitivesBadShapesPanic(t *testing.T) {
	q := make([]float32, 8)
	for _, tc := range []struct {
		name, fn string
		f        func()
	}{
		{"short stride", "DotF32F16Rows", func() { DotF32F16Rows(q, make([]uint16, 64), 7, make([]float32, 2)) }},
		{"short keys", "DotF32F16Rows", func() { DotF32F16Rows(q, make([]uint16, 15), 8, make([]float32, 2)) }},
		{"short keys", "DotF32Rows", func() { DotF32Rows(q, make([]float32, 15), 8, make([]float32, 2)) }},
		{"short values", "AxpyF16Rows", func() { AxpyF16Rows(make([]float32, 2), make([]uint16, 15), 8, q) }},
		{"short stride", "AxpyF32Rows", func() { AxpyF32Rows(make([]float32, 2), make([]float32, 64), 4, q) }},
		{"lengths", "ExpSum", func() { ExpSum(make([]float32, 3), make([]float32, 4), 0) }},
		{"lengths", "SwiGLU", func() { SwiGLU(make([]float32, 3), make([]float32, 4), make([]float32, 4)) }},
	} {
		if msg := panicMessage(tc.f); !strings.HasPrefix(msg, "simd: "+tc.fn+": ") {
			t.Errorf("%s %s: panic %q", tc.fn, tc.name, msg)
		}
	}
}

func TestAttnPrimitivesNoAllocs(t *testing.T) {
	r := rand.New(rand.NewPCG(71, 72))
	q, k, out := randF32(r, 64, 1), randF16(r, 64*64, 1), make([]float32, 64)
	p, acc := randF32(r, 64, 1), make([]float32, 64)
	if a := testing.AllocsPerRun(10, func() {
		DotF32F16Rows(q, k, 64, out)
		AxpyF16Rows(p, k, 64, acc)
		ExpSum(out, out, 1)
		SwiGLU(out, out, acc)
	}); a != 0 {
		t.Errorf("%v allocations per call", a)
	}
}

// BenchmarkAttnPrimitives: one 64-key tile of a 64-wide head (TinyLlama's
// shape): scores, softmax, value accumulation; and SwiGLU over an FFN row.
func BenchmarkAttnPrimitives(b *testing.B) {
	r := rand.New(rand.NewPCG(73, 74))
	const d, n = 64, 64
	q, k16, k32 := randF32(r, d, 1), randF16(r, n*d*4, 1), randF32(r, n*d*4, 1)
	sc, acc, p := make([]float32, n), make([]float32, d), randF32(r, n, 1)
	x, g, y := randF32(r, 5632, 4), randF32(r, 5632, 1), make([]float32, 5632)
	cases := []struct {
		name string
		f    func()
	}{
		{"DotF32F16Rows/64x64", func() { DotF32F16Rows(q, k16, 4*d, sc) }},
		{"DotF32Rows/64x64", func() { DotF32Rows(q, k32, 4*d, sc) }},
		{"AxpyF16Rows/64x64", func() { AxpyF16Rows(p, k16, 4*d, acc) }},
		{"AxpyF32Rows/64x64", func() { AxpyF32Rows(p, k32, 4*d, acc) }},
		{"ExpSum/64", func() { benchSink += float32(ExpSum(sc, p, 1)) }},
		{"SwiGLU/5632", func() { SwiGLU(y, x, g) }},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			benchImpls(b, func(b *testing.B) {
				for b.Loop() {
					c.f()
				}
			})
		})
	}
}
