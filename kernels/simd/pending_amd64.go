//go:build amd64 && !purego

package simd

func dotQ8_0Q8_0AVX2(nb int, w, x []byte) float32 { return dotQ8_0Q8_0Generic(nb, w, x) }
func dotQ4_0Q8_0AVX2(nb int, w, x []byte) float32 { return dotQ4_0Q8_0Generic(nb, w, x) }
func dotQ4_1Q8_1AVX2(nb int, w, x []byte) float32 { return dotQ4_1Q8_1Generic(nb, w, x) }
func dotQ5_0Q8_0AVX2(nb int, w, x []byte) float32 { return dotQ5_0Q8_0Generic(nb, w, x) }
func dotQ5_1Q8_1AVX2(nb int, w, x []byte) float32 { return dotQ5_1Q8_1Generic(nb, w, x) }
func dotQ4_KQ8_KAVX2(nb int, w, x []byte) float32 { return dotQ4_KQ8_KGeneric(nb, w, x) }
func dotQ5_KQ8_KAVX2(nb int, w, x []byte) float32 { return dotQ5_KQ8_KGeneric(nb, w, x) }
func dotQ6_KQ8_KAVX2(nb int, w, x []byte) float32 { return dotQ6_KQ8_KGeneric(nb, w, x) }
