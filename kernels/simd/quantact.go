package simd

import "fmt"

// QuantizeActQ8_0 quantizes the activation row x (len(x) a multiple of 32)
// into Q8_0 blocks in dst as llama.cpp's x86 AVX2 quantize_row_q8_0 does,
// byte for byte what quant.QuantizeActQ8_0 (the portable emulation, which
// this package does not import) writes, about two orders of magnitude
// faster. It returns false, writing nothing, where the assembly is not
// available; callers then use quant's. It panics, before writing, when
// len(x) is not a multiple of 32 or dst is shorter than len(x)/32 blocks.
func QuantizeActQ8_0(x []float32, dst []byte) bool {
	if len(x)%qk != 0 {
		panic(fmt.Sprintf("simd: QuantizeActQ8_0: len(x)=%d is not a multiple of %d", len(x), qk))
	}
	nb := len(x) / qk
	if len(dst) < nb*bytesQ8_0 {
		panic(fmt.Sprintf("simd: QuantizeActQ8_0: dst holds %d bytes, %d blocks need %d", len(dst), nb, nb*bytesQ8_0))
	}
	if !fast.Load() {
		return false
	}
	if nb > 0 {
		quantizeActQ8_0AVX2(nb, &x[0], &dst[0])
	}
	return true
}

// QuantizeActQ8_K quantizes the activation row x (len(x) a multiple of
// 256) into Q8_K blocks in dst as llama.cpp's x86 backend does (it uses
// the reference quantize_row_q8_K_ref), byte for byte what
// quant.QuantizeActQ8_K writes, vectorized. It returns false, writing
// nothing, where the assembly is not available; it panics, before
// writing, on a len(x) that is not a multiple of 256 or a short dst.
func QuantizeActQ8_K(x []float32, dst []byte) bool {
	if len(x)%qkK != 0 {
		panic(fmt.Sprintf("simd: QuantizeActQ8_K: len(x)=%d is not a multiple of %d", len(x), qkK))
	}
	nb := len(x) / qkK
	if len(dst) < nb*bytesQ8_K {
		panic(fmt.Sprintf("simd: QuantizeActQ8_K: dst holds %d bytes, %d blocks need %d", len(dst), nb, nb*bytesQ8_K))
	}
	if !fast.Load() {
		return false
	}
	if nb > 0 {
		quantizeActQ8_KAVX2(nb, &x[0], &dst[0])
	}
	return true
}
