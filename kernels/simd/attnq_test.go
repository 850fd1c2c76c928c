package simd

import (
	"math"
	"math/rand/v2"
	"testing"
)

// recipeAxpyQ is AxpyQ8_0Rows / AxpyQ4_0Rows spelled out from the block
// layouts (dequantize_row_q8_0 / _q4_0, then ggml_vec_mad_f32's FMA).
func recipeAxpyQ(q4 bool, p []float32, v []byte, stride int, acc []float32) {
	bb := bytesQ8_0
	if q4 {
		bb = bytesQ4_0
	}
	for j, pj := range p {
		for e := range acc {
			blk := v[j*stride+e/qk*bb:]
			i := e % qk
			var q int32
			switch {
			case !q4:
				q = int32(int8(blk[2+i]))
			case i < 16:
				q = int32(blk[2+i]&15) - 8
			default:
				q = int32(blk[2+i-16]>>4) - 8
			}
			acc[e] = fma32(float32(q)*f16At(blk, 0), pj, acc[e])
		}
	}
}

// TestAxpyQRows: the quantized value-row accumulations give the recipe's
// bits under every kernel set, for every generator mode (extreme quants,
// subnormal and huge scales), 1 to 5 blocks per row (the assembly's two-
// and one-block paths), strided rows, and zero or large weights.
func TestAxpyQRows(t *testing.T) {
	r := rand.New(rand.NewPCG(95, 96))
	for _, name := range []string{"Q8_0", "Q4_0"} {
		q4 := name == "Q4_0"
		f := formats[name]
		for _, mode := range modes {
			for _, nb := range []int{1, 2, 3, 4, 5} {
				rowBytes := nb * f.bytes
				for _, rows := range []int{1, 3, 17} {
					stride := rowBytes + r.IntN(3)*f.bytes
					v := make([]byte, (rows-1)*stride+rowBytes)
					for j := range rows {
						copy(v[j*stride:], genRow(r, f, nb, mode))
					}
					p := randF32(r, rows, 1)
					p[0] = float32(math.Abs(float64(p[0]))) * 1e3
					if rows > 1 {
						p[1] = 0
					}
					acc0 := randF32(r, nb*qk, 1)
					want := append([]float32(nil), acc0...)
					recipeAxpyQ(q4, p, v, stride, want)
					bothImpls(t, func(t *testing.T, impl string) {
						got := append([]float32(nil), acc0...)
						if q4 {
							AxpyQ4_0Rows(p, v, stride, got)
						} else {
							AxpyQ8_0Rows(p, v, stride, got)
						}
						for i := range got {
							if !sameBits(got[i], want[i]) {
								t.Fatalf("%s %s %s nb=%d rows=%d: acc[%d] = %g, recipe %g", impl, name, mode, nb, rows, i, got[i], want[i])
							}
						}
					})
				}
			}
		}
	}
}

// TestQRowsBadShapesPanic: the strided quantized calls refuse short
// inputs before touching memory.
func TestQRowsBadShapesPanic(t *testing.T) {
	v := make([]byte, 2*bytesQ8_0)
	for name, f := range map[string]func(){
		"acc not whole blocks": func() { AxpyQ8_0Rows([]float32{1}, v, bytesQ8_0, make([]float32, 33)) },
		"short v":              func() { AxpyQ8_0Rows([]float32{1, 1, 1}, v, bytesQ8_0, make([]float32, 32)) },
		"short stride":         func() { AxpyQ4_0Rows([]float32{1, 1}, v, 10, make([]float32, 32)) },
		"query not blocks":     func() { DotQ8_0Rows(make([]byte, 33), v, bytesQ8_0, make([]float32, 1)) },
		"short k":              func() { DotQ4_0Rows(make([]byte, 2*bytesQ8_0), v, 2*bytesQ4_0, make([]float32, 2)) },
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: no panic", name)
				}
			}()
			f()
		}()
	}
}

// TestExpfRow: ExpfRow gives Expf's bits (glibc's expf) under every kernel
// set, in place and not, on a sweep of float32 bit patterns of both signs
// (specials included: +-Inf, NaN, |x| >= 88, subnormals), at lengths that
// are not multiples of 4 or 64.
func TestExpfRow(t *testing.T) {
	var x []float32
	for u := uint32(0); u < 0x7f800000; u += 7919 {
		x = append(x, math.Float32frombits(u), math.Float32frombits(u|0x80000000))
	}
	x = append(x, float32(math.Inf(1)), float32(math.Inf(-1)), float32(math.NaN()), -88, 88, -87.99, 0x1.62e42ep6, -0x1.9fe368p6)
	want := make([]float32, len(x))
	for i, v := range x {
		want[i] = Expf(v)
	}
	bothImpls(t, func(t *testing.T, impl string) {
		for _, n := range []int{len(x), len(x) - 3, 67, 5, 1} {
			y := make([]float32, n)
			ExpfRow(y, x[len(x)-n:])
			in := append([]float32(nil), x[len(x)-n:]...)
			ExpfRow(in, in)
			for i := range y {
				w := want[len(x)-n+i]
				if !sameBits(y[i], w) || !sameBits(in[i], w) {
					t.Fatalf("%s n=%d: expf(%g) = %g (in place %g), Expf %g", impl, n, x[len(x)-n+i], y[i], in[i], w)
				}
			}
		}
	})
}
