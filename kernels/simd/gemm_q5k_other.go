//go:build !amd64 || purego

package simd

// No Q5_K GEMM assembly on this build (see avx2_other.go).

func gemmPackQ5_K(int, *byte, int, *byte)                     { gemmUnavailable() }
func gemmQ5_KQ8_Kx1(int, *byte, *byte, int, *float32, int)    { gemmUnavailable() }
func gemmQ5_KQ8_Kx2(int, *byte, *byte, int, *float32, int)    { gemmUnavailable() }
func gemmQ5_KQ8_Kx3(int, *byte, *byte, int, *float32, int)    { gemmUnavailable() }
func gemmQ5_KQ8_Kx4(int, *byte, *byte, int, *float32, int)    { gemmUnavailable() }
func gemmQ5_KXQ8_Kx1(int, *byte, *byte, int, *float32, int)   { gemmUnavailable() }
func gemmQ5_KXQ8_Kx2(int, *byte, *byte, int, *float32, int)   { gemmUnavailable() }
func gemmQ5_KXQ8_Kx3(int, *byte, *byte, int, *float32, int)   { gemmUnavailable() }
func gemmQ5_KXQ8_Kx4(int, *byte, *byte, int, *float32, int)   { gemmUnavailable() }
func gemmPackQ5_KW(int, *byte, int, *byte)                    { vnniUnavailable() }
func gemmQ5_KV16Q8_Kx1(int, *byte, *byte, int, *float32, int) { vnniUnavailable() }
func gemmQ5_KV16Q8_Kx2(int, *byte, *byte, int, *float32, int) { vnniUnavailable() }
func gemmQ5_KV16Q8_Kx3(int, *byte, *byte, int, *float32, int) { vnniUnavailable() }
func dotQ5_KQ8_KV(int, []byte, []byte) float32                { vnniUnavailable(); return 0 }
