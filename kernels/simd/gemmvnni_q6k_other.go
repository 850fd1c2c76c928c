//go:build !amd64 || purego

package simd

func gemmQ6_KV16Q8_Kx1(int, *byte, *byte, int, *float32, int) { vnniUnavailable() }
func gemmQ6_KV16Q8_Kx2(int, *byte, *byte, int, *float32, int) { vnniUnavailable() }
func gemmQ6_KV16Q8_Kx3(int, *byte, *byte, int, *float32, int) { vnniUnavailable() }
