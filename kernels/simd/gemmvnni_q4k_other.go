//go:build !amd64 || purego

package simd

// No AVX-512 kernels on this build (see gemmvnni_other.go).

func gemmQ4_KV16Q8_Kx1(int, *byte, int, *byte, int, *float32, int) { vnniUnavailable() }
func gemmQ4_KV16Q8_Kx2(int, *byte, int, *byte, int, *float32, int) { vnniUnavailable() }
func gemmQ4_KV16Q8_Kx3(int, *byte, int, *byte, int, *float32, int) { vnniUnavailable() }
func gemmQ4_KV16Q8_Kx4(int, *byte, int, *byte, int, *float32, int) { vnniUnavailable() }
func gemmQ4_KV16Q8_Kx5(int, *byte, int, *byte, int, *float32, int) { vnniUnavailable() }
func gemmQ4_KV16Q8_Kx6(int, *byte, int, *byte, int, *float32, int) { vnniUnavailable() }
func gemmQ4_KV16Q8_Kx7(int, *byte, int, *byte, int, *float32, int) { vnniUnavailable() }
func gemmQ4_KV8Q8_Kx1(int, *byte, int, *byte, int, *float32, int)  { vnniUnavailable() }
func gemmQ4_KV8Q8_Kx2(int, *byte, int, *byte, int, *float32, int)  { vnniUnavailable() }
func gemmQ4_KV8Q8_Kx3(int, *byte, int, *byte, int, *float32, int)  { vnniUnavailable() }
func gemmQ4_KV8Q8_Kx4(int, *byte, int, *byte, int, *float32, int)  { vnniUnavailable() }
func gemmQ4_KV8Q8_Kx5(int, *byte, int, *byte, int, *float32, int)  { vnniUnavailable() }
func gemmQ4_KV8Q8_Kx6(int, *byte, int, *byte, int, *float32, int)  { vnniUnavailable() }
func gemmQ4_KV8Q8_Kx7(int, *byte, int, *byte, int, *float32, int)  { vnniUnavailable() }
