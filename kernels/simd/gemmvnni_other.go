//go:build !amd64 || purego

package simd

// No AVX-512 kernels on this build (cpuLevel is generic, so these are
// never called; they keep the dispatchers platform-independent).

func vnniUnavailable() { panic("simd: AVX-512 VNNI kernel called on a build without it") }

func gemmQ8_0V16Q8_0x1(int, *byte, int, *byte, int, *float32, int) { vnniUnavailable() }
func gemmQ8_0V16Q8_0x2(int, *byte, int, *byte, int, *float32, int) { vnniUnavailable() }
func gemmQ8_0V16Q8_0x3(int, *byte, int, *byte, int, *float32, int) { vnniUnavailable() }
func gemmQ8_0V8Q8_0x1(int, *byte, int, *byte, int, *float32, int)  { vnniUnavailable() }
func gemmQ8_0V8Q8_0x2(int, *byte, int, *byte, int, *float32, int)  { vnniUnavailable() }
func gemmQ8_0V8Q8_0x3(int, *byte, int, *byte, int, *float32, int)  { vnniUnavailable() }

func gemmQ4_0VQ8_0x1(int, *byte, *byte, int, *float32, int) { vnniUnavailable() }
func gemmQ4_0VQ8_0x2(int, *byte, *byte, int, *float32, int) { vnniUnavailable() }
func gemmQ4_0VQ8_0x3(int, *byte, *byte, int, *float32, int) { vnniUnavailable() }
func gemmQ4_0VQ8_0x4(int, *byte, *byte, int, *float32, int) { vnniUnavailable() }
func gemmQ4_0VQ8_0x5(int, *byte, *byte, int, *float32, int) { vnniUnavailable() }
func gemmQ4_0VQ8_0x6(int, *byte, *byte, int, *float32, int) { vnniUnavailable() }
func gemmQ4_0VQ8_0x7(int, *byte, *byte, int, *float32, int) { vnniUnavailable() }
func gemmQ4_0VQ8_0x8(int, *byte, *byte, int, *float32, int) { vnniUnavailable() }

func dotF32F16Rows512(*float32, int, *uint16, int, *float32, int) { vnniUnavailable() }

func axpyF16Rows512(*float32, int, *uint16, int, *float32, int)  { vnniUnavailable() }
func axpyF32Rows512(*float32, int, *float32, int, *float32, int) { vnniUnavailable() }
func expSum512(*float32, *float32, int, float32) float64         { vnniUnavailable(); return 0 }
func swiglu512(*float32, *float32, *float32, int)                { vnniUnavailable() }
