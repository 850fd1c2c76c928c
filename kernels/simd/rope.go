package simd

import "fmt"

// RoPE rotations (kernels.RoPE builds the per-token cos/sin tables and
// calls these for all heads of a token): the FMA contraction of ggml's
// compiled rotate_pairs, a' = fma(a, cos, -(b*sin)), b' = fma(a, sin,
// b*cos) with the products rounded, bit for bit on every implementation
// (b*(-sin) is -(b*sin) exactly).

// RotateInterleaved rotates the pairs (v[2i], v[2i+1]), i < d/2, of each
// of the heads vectors v = x[h*stride : h*stride+d]. cs holds the pairs'
// (cos, sin) and csw the (-sin, cos) the odd elements multiply:
//
//	cs  = [c0 s0 c1 s1 ...]    csw = [-s0 c0 -s1 c1 ...]     (d floats each)
//	v[2i]   = fma(v[2i], c_i, v[2i+1]*(-s_i))
//	v[2i+1] = fma(v[2i], s_i, v[2i+1]*c_i)
//
// d is even; it panics if a slice is too short.
func RotateInterleaved(x []float32, heads, stride, d int, cs, csw []float32) {
	checkRope("RotateInterleaved", len(x), heads, stride, d, len(cs), len(csw), d)
	if heads == 0 || d == 0 {
		return
	}
	n := 0
	if fast.Load() && d >= 8 {
		n = d &^ 7
		if vnni.Load() {
			ropeInterleaved512(&x[0], heads, 4*stride, n, &cs[0], &csw[0])
		} else {
			ropeInterleavedAVX2(&x[0], heads, 4*stride, n, &cs[0], &csw[0])
		}
	}
	for h := 0; h < heads; h++ {
		v := x[h*stride : h*stride+d]
		for i := n; i < d; i += 2 {
			x0, x1 := v[i], v[i+1]
			v[i] = fma32(x0, cs[i], float32(x1*csw[i]))
			v[i+1] = fma32(x0, cs[i+1], float32(x1*csw[i+1]))
		}
	}
}

// RotateHalves rotates the pairs (v[i], v[i+half]), i < half, of each of
// the heads vectors v = x[h*stride : h*stride+2*half] (neox order), with
// c, s and sn = -s the pairs' cos, sin and -sin (half floats each):
//
//	v[i]      = fma(v[i], c_i, v[i+half]*sn_i)
//	v[i+half] = fma(v[i], s_i, v[i+half]*c_i)
func RotateHalves(x []float32, heads, stride, half int, c, s, sn []float32) {
	checkRope("RotateHalves", len(x), heads, stride, 2*half, len(c), len(s), half)
	if len(sn) < half {
		panic(fmt.Sprintf("simd: RotateHalves: %d -sin values, need %d", len(sn), half))
	}
	if heads == 0 || half == 0 {
		return
	}
	n := 0
	if fast.Load() && half >= 8 {
		n = half &^ 7
		if vnni.Load() {
			ropeHalves512(&x[0], heads, 4*stride, n, 4*half, &c[0], &s[0], &sn[0])
		} else {
			ropeHalvesAVX2(&x[0], heads, 4*stride, n, 4*half, &c[0], &s[0], &sn[0])
		}
	}
	for h := 0; h < heads; h++ {
		a := x[h*stride : h*stride+half]
		b := x[h*stride+half : h*stride+2*half]
		for i := n; i < half; i++ {
			x0, x1 := a[i], b[i]
			a[i] = fma32(x0, c[i], float32(x1*sn[i]))
			b[i] = fma32(x0, s[i], float32(x1*c[i]))
		}
	}
}

func checkRope(fn string, nx, heads, stride, d, n1, n2, need int) {
	if heads < 0 || d < 0 || d%2 != 0 || stride < d || (heads > 0 && nx < (heads-1)*stride+d) || n1 < need || n2 < need {
		panic(fmt.Sprintf("simd: %s: %d heads of %d at stride %d over %d floats, tables of %d and %d (need %d)",
			fn, heads, d, stride, nx, n1, n2, need))
	}
}
