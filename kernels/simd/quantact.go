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
