//go:build amd64 && !purego

package simd

import "golang.org/x/sys/cpu"

// hasFast: the assembly needs AVX2 (256-bit integer ops), FMA and F16C
// (half conversions); x/sys/cpu also checks that the OS saves YMM state.
var hasFast = cpu.X86.HasAVX2 && cpu.X86.HasFMA && cpu.X86.HasF16C

const fastName = "avx2"
