//go:build !amd64 || purego

package simd

// No Q4_K gemv-order kernels on this build (see gemmq4kg_amd64.go).

func gemmQ4_KGQ8_Kx1(int, *byte, *byte, int, *float32, int)         { gemmUnavailable() }
func gemmQ4_KGQ8_Kx2(int, *byte, *byte, int, *float32, int)         { gemmUnavailable() }
func gemmQ4_KGQ8_Kx3(int, *byte, *byte, int, *float32, int)         { gemmUnavailable() }
func gemmQ4_KGQ8_Kx4(int, *byte, *byte, int, *float32, int)         { gemmUnavailable() }
func gemmQ4_KGXQ8_Kx1(int, *byte, *byte, int, *float32, int)        { gemmUnavailable() }
func gemmQ4_KGXQ8_Kx2(int, *byte, *byte, int, *float32, int)        { gemmUnavailable() }
func gemmQ4_KGXQ8_Kx3(int, *byte, *byte, int, *float32, int)        { gemmUnavailable() }
func gemmQ4_KGXQ8_Kx4(int, *byte, *byte, int, *float32, int)        { gemmUnavailable() }
func gemvQ4_KGQ8_K(int, *byte, int, *byte, *float32)                { gemmUnavailable() }
func gemmPackQ4_KL(int, *byte, int, *byte)                          { gemmUnavailable() }
func gemmQ4_KGV16Q8_Kx1(int, *byte, int, *byte, int, *float32, int) { vnniUnavailable() }
func gemmQ4_KGV16Q8_Kx2(int, *byte, int, *byte, int, *float32, int) { vnniUnavailable() }
func gemmQ4_KGV16Q8_Kx3(int, *byte, int, *byte, int, *float32, int) { vnniUnavailable() }
func gemmQ4_KGV16Q8_Kx4(int, *byte, int, *byte, int, *float32, int) { vnniUnavailable() }
func gemmQ4_KGV16Q8_Kx5(int, *byte, int, *byte, int, *float32, int) { vnniUnavailable() }
func gemmQ4_KGV16Q8_Kx6(int, *byte, int, *byte, int, *float32, int) { vnniUnavailable() }
func gemmQ4_KGV16Q8_Kx7(int, *byte, int, *byte, int, *float32, int) { vnniUnavailable() }
func gemmQ4_KGV8Q8_Kx1(int, *byte, int, *byte, int, *float32, int)  { vnniUnavailable() }
func gemmQ4_KGV8Q8_Kx2(int, *byte, int, *byte, int, *float32, int)  { vnniUnavailable() }
func gemmQ4_KGV8Q8_Kx3(int, *byte, int, *byte, int, *float32, int)  { vnniUnavailable() }
func gemmQ4_KGV8Q8_Kx4(int, *byte, int, *byte, int, *float32, int)  { vnniUnavailable() }
func gemmQ4_KGV8Q8_Kx5(int, *byte, int, *byte, int, *float32, int)  { vnniUnavailable() }
func gemmQ4_KGV8Q8_Kx6(int, *byte, int, *byte, int, *float32, int)  { vnniUnavailable() }
func gemmQ4_KGV8Q8_Kx7(int, *byte, int, *byte, int, *float32, int)  { vnniUnavailable() }
func gemmQ4_KGL16Q8_Kx1(int, *byte, int, *byte, int, *float32, int) { vnniUnavailable() }
func gemmQ4_KGL16Q8_Kx2(int, *byte, int, *byte, int, *float32, int) { vnniUnavailable() }
func gemmQ4_KGL16Q8_Kx3(int, *byte, int, *byte, int, *float32, int) { vnniUnavailable() }
func gemmQ4_KGL16Q8_Kx4(int, *byte, int, *byte, int, *float32, int) { vnniUnavailable() }
func gemmQ4_KGL16Q8_Kx5(int, *byte, int, *byte, int, *float32, int) { vnniUnavailable() }
func gemmQ4_KGL16Q8_Kx6(int, *byte, int, *byte, int, *float32, int) { vnniUnavailable() }
func gemmQ4_KGL16Q8_Kx7(int, *byte, int, *byte, int, *float32, int) { vnniUnavailable() }
func gemvQ4_KGQ8_KV(int, *byte, int, *byte, *float32)               { vnniUnavailable() }
