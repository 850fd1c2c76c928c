//go:build !amd64 || purego

package simd

// Without the assembly the lane-order entry points are the generic code
// (never selected: hasFast is false; see avx2_other.go).

func dotQ4_0Q8_0LanesAVX2(nb int, w, x []byte) float32 {
	return dotQ4_0Q8_0LanesGeneric(nb, w, x)
}

func dotQ4_0Q8_0Lanesx4AVX2(nb int, w, x []byte, s int, out *[4]float32) {
	dotX4Generic(dotQ4_0Q8_0LanesGeneric, nb, w, x, s, out)
}
