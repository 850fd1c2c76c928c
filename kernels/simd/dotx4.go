package simd

import "fmt"

// Multi-row micro-kernels for matrix products with several activation rows
// (prefill, batched decode): one weight row against four activation rows,
//
//	out[k] = Dot(n, w, x[k*xStride:])     k = 0..3
//
// The weight's blocks are loaded and unpacked (nibbles, scales) once for
// the four rows, which is most of the work for 4-bit and K-quant weights.
// Each out[k] has exactly the bits of the single-row call: the quantized
// dots are bit-identical across implementations and tile shapes, so a
// matmul may mix x4 and single-row calls without changing any result.
//
//	x: | row 0 (nb blocks) ... | row 1 ... | row 2 ... | row 3 ... |
//	   ^0                      ^xStride    ^2*xStride  ^3*xStride

// DotQ8_0Q8_0x4 is DotQ8_0Q8_0 for four activation rows.
func DotQ8_0Q8_0x4(n int, w, x []byte, xStride int, out *[4]float32) {
	nb := checkX4("DotQ8_0Q8_0x4", n, qk, w, bytesQ8_0, x, bytesQ8_0, xStride, out)
	if fast.Load() && nb > 0 {
		dotQ8_0Q8_0x4AVX2(nb, w, x, xStride, out)
		return
	}
	dotX4Generic(dotQ8_0Q8_0Generic, nb, w, x, xStride, out)
}

// DotQ4_0Q8_0x4 is DotQ4_0Q8_0 for four activation rows.
func DotQ4_0Q8_0x4(n int, w, x []byte, xStride int, out *[4]float32) {
	nb := checkX4("DotQ4_0Q8_0x4", n, qk, w, bytesQ4_0, x, bytesQ8_0, xStride, out)
	if fast.Load() && nb > 0 {
		dotQ4_0Q8_0x4AVX2(nb, w, x, xStride, out)
		return
	}
	dotX4Generic(dotQ4_0Q8_0Generic, nb, w, x, xStride, out)
}

// DotQ4_KQ8_Kx4 is DotQ4_KQ8_K for four activation rows.
func DotQ4_KQ8_Kx4(n int, w, x []byte, xStride int, out *[4]float32) {
	nb := checkX4("DotQ4_KQ8_Kx4", n, qkK, w, bytesQ4_K, x, bytesQ8_K, xStride, out)
	if fast.Load() && nb > 0 {
		dotQ4_KQ8_Kx4AVX2(nb, w, x, xStride, out)
		return
	}
	dotX4Generic(dotQ4_KQ8_KGeneric, nb, w, x, xStride, out)
}

// DotQ2_KQ8_Kx4 is DotQ2_KQ8_K for four activation rows.
func DotQ2_KQ8_Kx4(n int, w, x []byte, xStride int, out *[4]float32) {
	nb := checkX4("DotQ2_KQ8_Kx4", n, qkK, w, bytesQ2_K, x, bytesQ8_K, xStride, out)
	if fast.Load() && nb > 0 {
		dotQ2_KQ8_Kx4AVX2(nb, w, x, xStride, out)
		return
	}
	dotX4Generic(dotQ2_KQ8_KGeneric, nb, w, x, xStride, out)
}

// DotQ3_KQ8_Kx4 is DotQ3_KQ8_K for four activation rows.
func DotQ3_KQ8_Kx4(n int, w, x []byte, xStride int, out *[4]float32) {
	nb := checkX4("DotQ3_KQ8_Kx4", n, qkK, w, bytesQ3_K, x, bytesQ8_K, xStride, out)
	if fast.Load() && nb > 0 {
		dotQ3_KQ8_Kx4AVX2(nb, w, x, xStride, out)
		return
	}
	dotX4Generic(dotQ3_KQ8_KGeneric, nb, w, x, xStride, out)
}

// DotQ5_KQ8_Kx4 is DotQ5_KQ8_K for four activation rows: the weight's
// quants, fifth bits and scales unpacked once, each row's 8-lane FMA chain
// and scalar min chain as in the single-row dot.
func DotQ5_KQ8_Kx4(n int, w, x []byte, xStride int, out *[4]float32) {
	nb := checkX4("DotQ5_KQ8_Kx4", n, qkK, w, bytesQ5_K, x, bytesQ8_K, xStride, out)
	if fast.Load() && nb > 0 {
		dotQ5_KQ8_Kx4AVX2(nb, w, x, xStride, out)
		return
	}
	dotX4Generic(dotQ5_KQ8_KGeneric, nb, w, x, xStride, out)
}

// DotQ6_KQ8_Kx4 is DotQ6_KQ8_K for four activation rows.
func DotQ6_KQ8_Kx4(n int, w, x []byte, xStride int, out *[4]float32) {
	nb := checkX4("DotQ6_KQ8_Kx4", n, qkK, w, bytesQ6_K, x, bytesQ8_K, xStride, out)
	if fast.Load() && nb > 0 {
		dotQ6_KQ8_Kx4AVX2(nb, w, x, xStride, out)
		return
	}
	dotX4Generic(dotQ6_KQ8_KGeneric, nb, w, x, xStride, out)
}

// dotX4Generic runs a single-row generic dot on each of the four rows.
func dotX4Generic(dot func(nb int, w, x []byte) float32, nb int, w, x []byte, xStride int, out *[4]float32) {
	for k := range out {
		out[k] = dot(nb, w, x[k*xStride:])
	}
}

// checkX4 validates an x4 call: the weight row as checkBlocks, and four
// activation rows of nb blocks starting xStride bytes apart.
func checkX4(fn string, n, block int, w []byte, wBytes int, x []byte, xBytes, xStride int, out *[4]float32) int {
	nb := checkBlocks(fn, n, block, w, wBytes, nil, 0)
	if out == nil {
		panic(fmt.Sprintf("simd: %s: nil out", fn))
	}
	if xStride < 0 || xStride > len(x) || len(x)-3*xStride < nb*xBytes {
		panic(fmt.Sprintf("simd: %s: activations hold %d bytes, 4 rows of %d blocks of %d at stride %d need %d",
			fn, len(x), nb, xBytes, xStride, 3*xStride+nb*xBytes))
	}
	return nb
}
