package simd

import "fmt"

// Block geometry of the formats this package reads (ggml-common.h).
const (
	qk  = 32  // elements per Q4_0/Q4_1/Q5_0/Q5_1/Q8_0/Q8_1 block
	qkK = 256 // elements per K-quant super-block

	bytesQ8_0 = 34
	bytesQ8_1 = 36
	bytesQ4_0 = 18
	bytesQ4_1 = 20
	bytesQ5_0 = 22
	bytesQ5_1 = 24
	bytesQ2_K = 84
	bytesQ3_K = 110
	bytesQ4_K = 144
	bytesQ5_K = 176
	bytesQ6_K = 210
	bytesQ8_K = 292
)

// checkBlocks validates a quantized dot's arguments and returns the number
// of blocks. It panics, naming the caller, when n is negative or not a
// multiple of block, or when w or x holds fewer than n/block blocks.
func checkBlocks(fn string, n, block int, w []byte, wBytes int, x []byte, xBytes int) int {
	if n < 0 || n%block != 0 {
		panic(fmt.Sprintf("simd: %s: n=%d is not a non-negative multiple of %d", fn, n, block))
	}
	nb := n / block
	if len(w) < nb*wBytes {
		panic(fmt.Sprintf("simd: %s: weights hold %d bytes, %d blocks of %d need %d", fn, len(w), nb, wBytes, nb*wBytes))
	}
	if len(x) < nb*xBytes {
		panic(fmt.Sprintf("simd: %s: activations hold %d bytes, %d blocks of %d need %d", fn, len(x), nb, xBytes, nb*xBytes))
	}
	return nb
}

// checkLen2 panics unless two slice lengths agree.
func checkLen2(fn string, a, b int) {
	if a != b {
		panic(fmt.Sprintf("simd: %s: lengths differ (%d and %d)", fn, a, b))
	}
}

// checkLen3 panics unless three slice lengths agree.
func checkLen3(fn string, a, b, c int) {
	if a != b || a != c {
		panic(fmt.Sprintf("simd: %s: lengths differ (%d, %d and %d)", fn, a, b, c))
	}
}
