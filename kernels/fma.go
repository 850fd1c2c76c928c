package kernels

import "kiln/kernels/simd"

// fmaf returns a*b+c rounded once to float32, as the fused multiply-add
// instructions of llama.cpp's compiled kernels (simd.FMA32).
func fmaf(a, b, c float32) float32 { return simd.FMA32(a, b, c) }
