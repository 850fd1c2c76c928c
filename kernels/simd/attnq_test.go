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
					p1 := randF32(r, rows, 2)
					acc1 := randF32(r, nb*qk, 3)
					want1 := append([]float32(nil), acc1...)
					recipeAxpyQ(q4, p1, v, stride, want1)
					bothImpls(t, func(t *testing.T, impl string) {
						got := append([]float32(nil), acc0...)
						g0, g1 := append([]float32(nil), acc0...), append([]float32(nil), acc1...)
						if q4 {
							AxpyQ4_0Rows(p, v, stride, got)
							AxpyQ4_0Rows2(p, p1, v, stride, g0, g1)
						} else {
							AxpyQ8_0Rows(p, v, stride, got)
							AxpyQ8_0Rows2(p, p1, v, stride, g0, g1)
						}
						for i := range got {
							if !sameBits(got[i], want[i]) || !sameBits(g0[i], want[i]) || !sameBits(g1[i], want1[i]) {
								t.Fatalf("%s %s %s nb=%d rows=%d: acc[%d] = %g (two heads %g, %g), recipe %g, %g",
									impl, name, mode, nb, rows, i, got[i], g0[i], g1[i], want[i], want1[i])
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

// TestDotQRows: the strided key-row dots (one query, and four at once)
// give the single-row calls' bits under every kernel set.
func TestDotQRows(t *testing.T) {
	r := rand.New(rand.NewPCG(97, 98))
	fx := formats["Q8_0"]
	for _, name := range []string{"Q8_0", "Q4_0"} {
		fk := formats[name]
		for _, mode := range modes {
			for _, nb := range []int{1, 2, 4, 8} {
				qStride := nb*fx.bytes + 5
				qq := make([]byte, 3*qStride+nb*fx.bytes)
				for h := range 4 {
					copy(qq[h*qStride:], genRow(r, fx, nb, mode))
				}
				rows := 7
				stride := nb*fk.bytes + 3*fk.bytes
				k := make([]byte, (rows-1)*stride+nb*fk.bytes)
				for j := range rows {
					copy(k[j*stride:], genRow(r, fk, nb, mode))
				}
				n := nb * qk
				bothImpls(t, func(t *testing.T, impl string) {
					one := make([]float32, rows)
					four := make([]float32, 4*rows)
					if name == "Q8_0" {
						DotQ8_0Rows(qq[:nb*fx.bytes], k, stride, one)
						DotQ8_0Rows4(n, qq, qStride, k, stride, four)
					} else {
						DotQ4_0Rows(qq[:nb*fx.bytes], k, stride, one)
						DotQ4_0Rows4(n, qq, qStride, k, stride, four)
					}
					for j := range rows {
						for h := range 4 {
							var want float32
							if name == "Q8_0" {
								want = DotQ8_0Q8_0(n, k[j*stride:j*stride+nb*fk.bytes], qq[h*qStride:h*qStride+nb*fx.bytes])
							} else {
								want = DotQ4_0Q8_0Lanes(n, k[j*stride:j*stride+nb*fk.bytes], qq[h*qStride:h*qStride+nb*fx.bytes])
							}
							if !sameBits(four[4*j+h], want) || (h == 0 && !sameBits(one[j], want)) {
								t.Fatalf("%s %s %s nb=%d row %d query %d: %g (one query %g), single-row call %g", impl, name, mode, nb, j, h, four[4*j+h], one[j], want)
							}
						}
					}
				})
			}
		}
	}
}
