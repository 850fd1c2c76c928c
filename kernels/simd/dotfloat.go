package simd

import (
	"fmt"
	"math"
)

// Float dots in llama.cpp's exact orders (weights a, activations b already
// converted to the weight type: F16 and BF16 elements are widened to
// float32 exactly, so only the float32 operations below round).
//
// Lanes8 (llamafile tinyBLAS, used by llama.cpp for weight matrices with
// Rows%4 == 0 and n%8 == 0, i.e. every real model): 8 float32 lanes, lane j
// a fused chain over the elements k ≡ j (mod 8), then hsum8:
//
//	L_j = fma32(a[k], b[k], L_j)   k = j, j+8, j+16, ...   (L_j starts at +0)
//	dot = ((L0+L4)+(L2+L6)) + ((L1+L5)+(L3+L7))
//
// DotF32/DotF16 (ggml_vec_dot_f32/f16, the Rows%4 != 0 fallback): four
// 8-lane accumulators over steps of 32 elements, then a reduction tree,
// then the np..n tail:
//
//	A_j[l] = fma32(a[i+8j+l], b[i+8j+l], A_j[l])   i = 0, 32, ..., np-32
//	S[l]   = (A0[l]+A2[l]) + (A1[l]+A3[l])          np = n &^ 31
//	t[l]   = S[l] + S[l+4]                           l = 0..3
//	s      = (t0+t1) + (t2+t3)
//	F32 tail: s = fma32(a[i], b[i], s) in float32
//	F16 tail: s in float64 (ggml_float): s += float64(float32(a[i]*b[i]))
//
// DotBF16 (ggml_vec_dot_bf16, AVX2 branch): the same four accumulators but
// not fused, each product rounded and then added; hsum8's tree on the
// folded lanes; the tail in float64:
//
//	C_j[l] = float32(a*b) + C_j[l]
//	c[l]   = (C0[l]+C2[l]) + (C1[l]+C3[l])
//	g[l]   = c[l] + c[l+4];  s = (g0+g2) + (g1+g3)
//	tail:  d = 0.0 + float64(s); d += float64(float32(a[i]*b[i])); float32(d)
//
// The caller picks the order by the weight matrix, as llama.cpp does, so
// that a row's result never depends on the batch. The tails follow
// ggml-cpu/vec.cpp (float sumf for F32, ggml_float sumf for F16 and BF16);
// internal/llamaorder's F16 tail (fused float32) differs, only for
// Rows%4 != 0 matrices with Cols%32 != 0, which no real model has.
// A single Lanes8 row is bound by its FMA chain's latency (4 cycles per 8
// elements); the x4 flavours run four independent chains.

// DotF32 returns sum a[i]*b[i] in ggml_vec_dot_f32's order (see above).
// len(a) must equal len(b).
func DotF32(a, b []float32) float32 {
	checkLen2("DotF32", len(a), len(b))
	if fast.Load() && len(a) > 0 {
		return dotF32AVX2(a, b)
	}
	return dotF32Generic(a, b)
}

// DotF16 returns sum f16(a[i])*f16(b[i]) for IEEE half bits a, b (F16
// weights against activations converted to F16) in ggml_vec_dot_f16's
// order (see above).
func DotF16(a, b []uint16) float32 {
	checkLen2("DotF16", len(a), len(b))
	if fast.Load() && len(a) > 0 {
		return dotF16AVX2(a, b)
	}
	return dotF16Generic(a, b)
}

// DotBF16 returns sum bf16(a[i])*bf16(b[i]) in ggml_vec_dot_bf16's order
// (see above).
func DotBF16(a, b []uint16) float32 {
	checkLen2("DotBF16", len(a), len(b))
	if fast.Load() && len(a) > 0 {
		return dotBF16AVX2(a, b)
	}
	return dotBF16Generic(a, b)
}

// DotF32Lanes8 returns sum a[i]*b[i] in tinyBLAS's 8-lane order (see
// above). len(a) must equal len(b) and be a multiple of 8.
func DotF32Lanes8(a, b []float32) float32 {
	checkLanes8("DotF32Lanes8", len(a), len(b))
	if fast.Load() && len(a) > 0 {
		return dotF32Lanes8AVX2(a, b)
	}
	return lanes8F32(a, b)
}

// DotF16Lanes8 is DotF32Lanes8 for IEEE half bits.
func DotF16Lanes8(a, b []uint16) float32 {
	checkLanes8("DotF16Lanes8", len(a), len(b))
	if fast.Load() && len(a) > 0 {
		return dotF16Lanes8AVX2(a, b)
	}
	return lanes8F16(a, b)
}

// DotBF16Lanes8 is DotF32Lanes8 for bfloat16 bits.
func DotBF16Lanes8(a, b []uint16) float32 {
	checkLanes8("DotBF16Lanes8", len(a), len(b))
	if fast.Load() && len(a) > 0 {
		return dotBF16Lanes8AVX2(a, b)
	}
	return lanes8BF16(a, b)
}

// DotF32Lanes8x4 is DotF32Lanes8 of one weight row against four activation
// rows:
//
//	out[k] = DotF32Lanes8(w[:n], x[k*xStride : k*xStride+n])   k = 0..3
//
// bit for bit (the four lane chains are independent, which is where the
// speed comes from: a single row is bound by the FMA latency of its chain).
// Because fma32(w, x, L) = fma32(x, w, L), the roles may be swapped: one
// activation row as w against four weight rows xStride apart gives each
// weight row's DotF32Lanes8 as well (decode).
//
//	x: | row 0 (n) ... | row 1 ... | row 2 ... | row 3 (n) |
//	   ^0              ^xStride    ^2*xStride  ^3*xStride
//
// n must be a multiple of 8, len(w) >= n, len(x) >= 3*xStride+n.
func DotF32Lanes8x4(n int, w []float32, x []float32, xStride int, out *[4]float32) {
	checkLanes8x4("DotF32Lanes8x4", n, len(w), len(x), xStride, out)
	if fast.Load() && n > 0 {
		dotF32Lanes8x4AVX2(n, &w[0], &x[0], 4*xStride, out)
		return
	}
	for k := range out {
		out[k] = lanes8F32(w[:n], x[k*xStride:k*xStride+n])
	}
}

// DotF16Lanes8x4 is DotF32Lanes8x4 for IEEE half bits.
func DotF16Lanes8x4(n int, w []uint16, x []uint16, xStride int, out *[4]float32) {
	checkLanes8x4("DotF16Lanes8x4", n, len(w), len(x), xStride, out)
	if fast.Load() && n > 0 {
		dotF16Lanes8x4AVX2(n, &w[0], &x[0], 2*xStride, out)
		return
	}
	for k := range out {
		out[k] = lanes8F16(w[:n], x[k*xStride:k*xStride+n])
	}
}

// DotBF16Lanes8x4 is DotF32Lanes8x4 for bfloat16 bits.
func DotBF16Lanes8x4(n int, w []uint16, x []uint16, xStride int, out *[4]float32) {
	checkLanes8x4("DotBF16Lanes8x4", n, len(w), len(x), xStride, out)
	if fast.Load() && n > 0 {
		dotBF16Lanes8x4AVX2(n, &w[0], &x[0], 2*xStride, out)
		return
	}
	for k := range out {
		out[k] = lanes8BF16(w[:n], x[k*xStride:k*xStride+n])
	}
}

// DotF32F16 returns sum a[i]*f16(b[i]): a float32 query against a float16
// key row in attention. Not bit-exact across implementations (the generic
// code sums in float64, the AVX2 code in float32 lanes).
func DotF32F16(a []float32, b []uint16) float32 {
	checkLen2("DotF32F16", len(a), len(b))
	if fast.Load() && len(a) > 0 {
		return dotF32F16AVX2(a, b)
	}
	return dotF32F16Generic(a, b)
}

// checkLanes8 panics unless a Lanes8 dot's lengths agree and are a
// multiple of 8.
func checkLanes8(fn string, a, b int) {
	checkLen2(fn, a, b)
	if a%8 != 0 {
		panic(fmt.Sprintf("simd: %s: length %d is not a multiple of 8", fn, a))
	}
}

// checkLanes8x4 validates a Lanes8 x4 call (lengths in elements).
func checkLanes8x4(fn string, n, lw, lx, xStride int, out *[4]float32) {
	if n < 0 || n%8 != 0 {
		panic(fmt.Sprintf("simd: %s: n=%d is not a non-negative multiple of 8", fn, n))
	}
	if lw < n {
		panic(fmt.Sprintf("simd: %s: weights hold %d elements, need %d", fn, lw, n))
	}
	if out == nil {
		panic(fmt.Sprintf("simd: %s: nil out", fn))
	}
	if xStride < 0 || xStride > lx || lx-3*xStride < n {
		panic(fmt.Sprintf("simd: %s: activations hold %d elements, 4 rows of %d at stride %d need %d",
			fn, lx, n, xStride, 3*xStride+n))
	}
}

// fma8 sets l[j] = fma32(x[j], y[j], l[j]) for the 8 lanes, with fma32's
// common case written out here (the float64 sum of the exact product and
// l[j], unless it sits on a float32 halfway point): the generic kernels
// spend most of their time in this loop.
func fma8(l, x, y *[8]float32) {
	for j := range 8 {
		s := float64(x[j])*float64(y[j]) + float64(l[j])
		if math.Float64bits(s)&(1<<29-1) != 1<<28 {
			l[j] = float32(s)
		} else {
			l[j] = fma32(x[j], y[j], l[j])
		}
	}
}

// widenF16x8 and widenBF16x8 convert 8 elements to float32 (exactly).
func widenF16x8(dst *[8]float32, src []uint16) {
	for j, h := range (*[8]uint16)(src) {
		dst[j] = F16ToF32(h)
	}
}

func widenBF16x8(dst *[8]float32, src []uint16) {
	for j, h := range (*[8]uint16)(src) {
		dst[j] = BF16ToF32(h)
	}
}

// The generic kernels below widen F16/BF16 elements to float32 and then
// run the float32 recipe.

// lanes8F32 is the Lanes8 order; len(a) == len(b), a multiple of 8.
func lanes8F32(a, b []float32) float32 {
	b = b[:len(a)]
	var l [8]float32
	for k := 0; k+8 <= len(a); k += 8 {
		fma8(&l, (*[8]float32)(a[k:]), (*[8]float32)(b[k:]))
	}
	return hsum8(&l)
}

func lanes8F16(a, b []uint16) float32 {
	b = b[:len(a)]
	var l, x, y [8]float32
	for k := 0; k+8 <= len(a); k += 8 {
		widenF16x8(&x, a[k:])
		widenF16x8(&y, b[k:])
		fma8(&l, &x, &y)
	}
	return hsum8(&l)
}

func lanes8BF16(a, b []uint16) float32 {
	b = b[:len(a)]
	var l, x, y [8]float32
	for k := 0; k+8 <= len(a); k += 8 {
		widenBF16x8(&x, a[k:])
		widenBF16x8(&y, b[k:])
		fma8(&l, &x, &y)
	}
	return hsum8(&l)
}

// vecReduce is GGML_F32x8_REDUCE on four 8-lane accumulators:
// (A0+A2)+(A1+A3), then t[l] = S[l]+S[l+4], then (t0+t1)+(t2+t3).
func vecReduce(acc *[4][8]float32) float32 {
	var t [4]float32
	for l := range 4 {
		t[l] = ((acc[0][l] + acc[2][l]) + (acc[1][l] + acc[3][l])) +
			((acc[0][l+4] + acc[2][l+4]) + (acc[1][l+4] + acc[3][l+4]))
	}
	return (t[0] + t[1]) + (t[2] + t[3])
}

// dotF32Generic is ggml_vec_dot_f32's order (see the top of this file).
func dotF32Generic(a, b []float32) float32 {
	b = b[:len(a)]
	n := len(a)
	np := n &^ 31
	var acc [4][8]float32
	for i := 0; i < np; i += 32 {
		for j := range 4 {
			k := i + 8*j
			fma8(&acc[j], (*[8]float32)(a[k:]), (*[8]float32)(b[k:]))
		}
	}
	s := vecReduce(&acc)
	for i := np; i < n; i++ {
		s = fma32(a[i], b[i], s)
	}
	return s
}

// dotF16Generic is ggml_vec_dot_f16's order: as F32, but the tail sums
// rounded float32 products in float64 (ggml_float sumf).
func dotF16Generic(a, b []uint16) float32 {
	b = b[:len(a)]
	n := len(a)
	np := n &^ 31
	var acc [4][8]float32
	var x, y [8]float32
	for i := 0; i < np; i += 32 {
		for j := range 4 {
			k := i + 8*j
			widenF16x8(&x, a[k:])
			widenF16x8(&y, b[k:])
			fma8(&acc[j], &x, &y)
		}
	}
	d := float64(vecReduce(&acc))
	for i := np; i < n; i++ {
		d += float64(float32(F16ToF32(a[i]) * F16ToF32(b[i])))
	}
	return float32(d)
}

// dotBF16Generic is ggml_vec_dot_bf16's AVX2 order (see the top of this
// file). The float32(...) conversions keep Go from fusing a*b+c.
func dotBF16Generic(a, b []uint16) float32 {
	b = b[:len(a)]
	n := len(a)
	np := n &^ 31
	var acc [4][8]float32
	for i := 0; i < np; i += 32 {
		x, y := (*[32]uint16)(a[i:]), (*[32]uint16)(b[i:])
		for j := range 4 {
			for l := range 8 {
				acc[j][l] = float32(BF16ToF32(x[8*j+l])*BF16ToF32(y[8*j+l])) + acc[j][l]
			}
		}
	}
	var c [8]float32
	for l := range 8 {
		c[l] = (acc[0][l] + acc[2][l]) + (acc[1][l] + acc[3][l])
	}
	var g [4]float32
	for l := range 4 {
		g[l] = c[l] + c[l+4]
	}
	d := 0.0 // ggml_float sumf = 0; sumf += g
	d += float64((g[0] + g[2]) + (g[1] + g[3]))
	for i := np; i < n; i++ {
		d += float64(float32(BF16ToF32(a[i]) * BF16ToF32(b[i])))
	}
	return float32(d)
}

func dotF32F16Generic(a []float32, b []uint16) float32 {
	b = b[:len(a)]
	var s float64
	for i, v := range a {
		s += float64(v * F16ToF32(b[i]))
	}
	return float32(s)
}
