package simd

import (
	"fmt"
	"math"
)

// Primitives for attention and the feed-forward activation, with the
// roundings of llama.cpp's CPU code (flash attention in its tiled form,
// ggml_vec_soft_max_f32, ggml_vec_swiglu_f32), so that a caller built on
// them can agree with llama.cpp bit for bit. Unlike the float dots
// (DotF32 etc.), every implementation here gives the same bits: the
// assembly uses the same fused multiply-adds in the same order as the
// llama.cpp code, and the portable code emulates them exactly (fma32).
//
// Key and value rows are read in place from a cache: row j of k starts at
// k[j*stride] and holds len(q) (or len(acc)) elements; stride >= that.
//
//	k: | row 0 (D used) .... | row 1 ... | row 2 ... |      D = len(q)
//	   ^0                    ^stride     ^2*stride

// DotF32F16Rows sets out[j], for each j < len(out), to the dot product of
// q with the F16 key row k[j*stride : j*stride+D], D = len(q), computed as
// one float32 fused multiply-add chain in element order:
//
//	out[j] = fma(q[D-1], k_j[D-1], ... fma(q[1], k_j[1], q[0]*k_j[0]))
//
// (F16 keys widened exactly), the order of the q·k scores of llama.cpp's
// tiled flash attention (ggml's simd_gemm over a transposed K tile). The
// assembly transposes 8 rows at a time in registers, so one call serves a
// whole tile; D a multiple of 8 takes the fast path. It panics if stride <
// D or k is shorter than (len(out)-1)*stride + D.
func DotF32F16Rows(q []float32, k []uint16, stride int, out []float32) {
	checkRows("DotF32F16Rows", len(q), len(k), stride, len(out))
	n, d := len(out), len(q)
	if d == 0 {
		clear(out)
		return
	}
	g := 0
	if fast.Load() && d%8 == 0 && n >= 8 {
		if g16 := n / 16; vnni.Load() && g16 > 0 {
			// AVX-512: 16 rows per register, the same chains.
			dotF32F16Rows512(&q[0], d, &k[0], 2*stride, &out[0], g16)
			g = 2 * g16
		}
		if rest := n/8 - g; rest > 0 {
			dotF32F16RowsAVX2(&q[0], d, &k[8*g*stride], 2*stride, &out[8*g], rest)
			g += rest
		}
	}
	for j := 8 * g; j < n; j++ {
		out[j] = dotChainF16(q, k[j*stride:j*stride+d])
	}
}

// DotF32Rows is DotF32F16Rows for float32 key rows.
func DotF32Rows(q, k []float32, stride int, out []float32) {
	checkRows("DotF32Rows", len(q), len(k), stride, len(out))
	n, d := len(out), len(q)
	if d == 0 {
		clear(out)
		return
	}
	g := 0
	if fast.Load() && d%8 == 0 && n >= 8 {
		g = n / 8
		dotF32RowsAVX2(&q[0], d, &k[0], 4*stride, &out[0], g)
	}
	for j := 8 * g; j < n; j++ {
		out[j] = dotChainF32(q, k[j*stride:j*stride+d])
	}
}

// AxpyF16Rows adds the F16 value rows v[j*stride : j*stride+D], D =
// len(acc), weighted by p[j], to acc, one fused multiply-add per element
// and row, rows in order:
//
//	for j := range p { acc[d] = fma(p[j], v_j[d], acc[d]) }     d < D
//
// the order in which llama.cpp's tiled flash attention accumulates values
// (probabilities times V, position by position). The assembly keeps up to
// 64 elements of acc in registers across all rows (128 in the avx512vnni
// set's ZMM registers); D a multiple of 8 takes the fast path. It panics if stride < D or v is shorter than
// (len(p)-1)*stride + D.
func AxpyF16Rows(p []float32, v []uint16, stride int, acc []float32) {
	checkRows("AxpyF16Rows", len(acc), len(v), stride, len(p))
	if len(p) == 0 || len(acc) == 0 {
		return
	}
	if fast.Load() && len(acc)%8 == 0 {
		if vnni.Load() { // AVX-512: 16 lanes per register, the same FMAs
			axpyF16Rows512(&p[0], len(p), &v[0], 2*stride, &acc[0], len(acc))
			return
		}
		axpyF16RowsAVX2(&p[0], len(p), &v[0], 2*stride, &acc[0], len(acc))
		return
	}
	d := len(acc)
	for j, pj := range p {
		row := v[j*stride : j*stride+d]
		for i := range acc {
			acc[i] = fma32(pj, F16ToF32(row[i]), acc[i])
		}
	}
}

// AxpyF32Rows is AxpyF16Rows for float32 value rows.
func AxpyF32Rows(p, v []float32, stride int, acc []float32) {
	checkRows("AxpyF32Rows", len(acc), len(v), stride, len(p))
	if len(p) == 0 || len(acc) == 0 {
		return
	}
	if fast.Load() && len(acc)%8 == 0 {
		if vnni.Load() {
			axpyF32Rows512(&p[0], len(p), &v[0], 4*stride, &acc[0], len(acc))
			return
		}
		axpyF32RowsAVX2(&p[0], len(p), &v[0], 4*stride, &acc[0], len(acc))
		return
	}
	d := len(acc)
	for j, pj := range p {
		row := v[j*stride : j*stride+d]
		for i := range acc {
			acc[i] = fma32(pj, row[i], acc[i])
		}
	}
}

// ExpSum sets y[i] = e^(x[i]-max) and returns the sum of the y[i] in
// float64, exactly as ggml_vec_soft_max_f32 on AVX2: groups of 8 through
// ggml_v_expf, each group's sum folded in float32 as
// ((y0+y4)+(y2+y6))+((y1+y5)+(y3+y7)) and added in float64; the last
// len(x)%8 elements through expf (Expf) one by one. y may alias x; len(y)
// must equal len(x). The avx512vnni set runs ggml_v_expf on 16 lanes and
// folds both 8-groups of a register with that tree, in order: the same bits.
func ExpSum(y, x []float32, max float32) float64 {
	checkLen2("ExpSum", len(y), len(x))
	n := len(x) &^ 7
	var sum float64
	if n > 0 {
		if vnni.Load() { // AVX-512: exp on 16 lanes, the same chunk sums
			sum = expSum512(&y[0], &x[0], n, max)
		} else if fast.Load() {
			sum = expSumAVX2(&y[0], &x[0], n, max)
		} else {
			for i := 0; i < n; i += 8 {
				var e [8]float32
				for l := range e {
					e[l] = vexpf(x[i+l] - max)
					y[i+l] = e[l]
				}
				sum += float64(((e[0] + e[4]) + (e[2] + e[6])) + ((e[1] + e[5]) + (e[3] + e[7])))
			}
		}
	}
	for i := n; i < len(x); i++ {
		v := Expf(x[i] - max)
		sum += float64(v)
		y[i] = v
	}
	return sum
}

// SwiGLU sets y[i] = silu(x[i]) * g[i], silu(x) = x/(1+e^-x), exactly as
// ggml_vec_swiglu_f32 on AVX2: groups of 8 through ggml_v_silu (e^ by
// ggml_v_expf of 0-x), the last len(x)%8 elements with expf (Expf). y may
// alias x or g; the three lengths must be equal.
func SwiGLU(y, x, g []float32) {
	checkLen3("SwiGLU", len(y), len(x), len(g))
	n := len(x) &^ 7
	if n > 0 {
		if vnni.Load() { // AVX-512: 16 lanes, the same operations
			swiglu512(&y[0], &x[0], &g[0], n)
		} else if fast.Load() {
			swigluAVX2(&y[0], &x[0], &g[0], n)
		} else {
			for i := range n {
				xi := x[i]
				y[i] = xi / (1 + vexpf(0-xi)) * g[i]
			}
		}
	}
	for i := n; i < len(x); i++ {
		xi := x[i]
		y[i] = xi / (1 + Expf(-xi)) * g[i]
	}
}

// checkRows validates a strided-rows call: d elements per row, rows rows
// stride elements apart in a slice of length have.
func checkRows(fn string, d, have, stride, rows int) {
	if rows == 0 || d == 0 {
		return
	}
	if stride < d {
		panic(fmt.Sprintf("simd: %s: stride %d is shorter than a row of %d", fn, stride, d))
	}
	if need := (rows-1)*stride + d; have < need {
		panic(fmt.Sprintf("simd: %s: %d rows of %d at stride %d need %d elements, have %d", fn, rows, d, stride, need, have))
	}
}

func dotChainF16(q []float32, k []uint16) float32 {
	s := q[0] * F16ToF32(k[0])
	for i := 1; i < len(q); i++ {
		s = fma32(q[i], F16ToF32(k[i]), s)
	}
	return s
}

func dotChainF32(q, k []float32) float32 {
	s := q[0] * k[0]
	for i := 1; i < len(q); i++ {
		s = fma32(q[i], k[i], s)
	}
	return s
}

// VExpf is ggml_v_expf (AVX2+FMA) for one lane: e^x within about 2 ulp,
// with the same fused operations, so it matches the assembly bit for bit
// (kernels' softmax and SiLU use it one element at a time).
func VExpf(x float32) float32 { return vexpf(x) }

func vexpf(x float32) float32 {
	const (
		r     = 0x1.8p23
		log2e = 0x1.715476p+0
		ln2hi = 0x1.62e4p-1
		ln2lo = 0x1.7f7d1cp-20
		c0    = 0x1.0e4020p-7
		c1    = 0x1.573e2ep-5
		c2    = 0x1.555e66p-3
		c3    = 0x1.fffdb6p-2
		c4    = 0x1.ffffecp-1
	)
	z := fma32(x, log2e, r)
	n := z - r
	b := fma32(-n, ln2lo, fma32(-n, ln2hi, x))
	e := math.Float32bits(z) << 23
	k := math.Float32frombits(e + math.Float32bits(1))
	c := math.Abs(float64(n)) > 126
	u := b * b
	j := fma32(fma32(fma32(c0, b, c1), u, fma32(c2, b, c3)), u, c4*b)
	if !c {
		return fma32(j, k, k)
	}
	var g uint32
	if n <= 0 {
		g = 0x82000000
	}
	s1 := math.Float32frombits(g + 0x7f000000)
	s2 := math.Float32frombits(e - g)
	if math.Abs(float64(n)) > 192 {
		return s1 * s1
	}
	return fma32(s2, j, s2) * s1
}

// Expf returns e^x as glibc's expf on x86-64 with FMA (the variant ggml's
// scalar tails and llama.cpp's flash attention call), bit for bit: x*32/ln2
// = k + r with k integral, e^x = 2^(k/32) * 2^(r/32), the first factor
// from a table of 2^(i/32) with k's multiple of 32 added to the exponent,
// the second a cubic in r, in float64 with FMAs where glibc's FMA build has
// them, rounded once to float32.
func Expf(x float32) float32 {
	const (
		invLn2N = 0x1.71547652b82fep+5 // 32/ln2
		shift   = 0x1.8p+52
		c0      = 0x1.c6af84b912394p-20
		c1      = 0x1.ebfce50fac4f3p-13
		c2      = 0x1.62e42ff0c52d6p-6
	)
	bits := math.Float32bits(x)
	if top := bits >> 20 & 0x7ff; top >= 0x42b { // |x| >= 88, or Inf/NaN
		switch {
		case bits == 0xff800000: // -Inf
			return 0
		case top >= 0x7f8: // +Inf or NaN
			return x + x
		case x > 0x1.62e42ep6: // overflow
			return float32(math.Inf(1))
		case x < -0x1.9fe368p6: // underflow to 0
			return 0
		case x < -0x1.9d1d9ep6: // glibc's __math_may_uflowf: 0x1.4p-75 squared
			return 0x1p-149
		}
	}
	xd := float64(x)
	kd := math.FMA(invLn2N, xd, shift)
	ki := math.Float64bits(kd)
	kd -= shift
	r := math.FMA(invLn2N, xd, -kd)
	s := math.Float64frombits(exp2Tab32[ki%32] + ki<<47)
	z := math.FMA(c0, r, c1)
	y := math.FMA(c2, r, 1)
	y = math.FMA(z, r*r, y)
	return float32(y * s)
}

// exp2Tab32[i] holds the bits of 2^(i/32) (rounded to float64) minus
// i<<47, glibc's __exp2f_data.tab: adding k<<47 for k = 32m+i multiplies
// by 2^m.
var exp2Tab32 = [32]uint64{
	0x3ff0000000000000, 0x3fefd9b0d3158574, 0x3fefb5586cf9890f, 0x3fef9301d0125b51,
	0x3fef72b83c7d517b, 0x3fef54873168b9aa, 0x3fef387a6e756238, 0x3fef1e9df51fdee1,
	0x3fef06fe0a31b715, 0x3feef1a7373aa9cb, 0x3feedea64c123422, 0x3feece086061892d,
	0x3feebfdad5362a27, 0x3feeb42b569d4f82, 0x3feeab07dd485429, 0x3feea47eb03a5585,
	0x3feea09e667f3bcd, 0x3fee9f75e8ec5f74, 0x3feea11473eb0187, 0x3feea589994cce13,
	0x3feeace5422aa0db, 0x3feeb737b0cdc5e5, 0x3feec49182a3f090, 0x3feed503b23e255d,
	0x3feee89f995ad3ad, 0x3feeff76f2fb5e47, 0x3fef199bdd85529c, 0x3fef3720dcef9069,
	0x3fef5818dcfba487, 0x3fef7c97337b9b5f, 0x3fefa4afa2a490da, 0x3fefd0765b6e4540,
}
