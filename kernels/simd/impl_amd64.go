//go:build amd64 && !purego

package simd

import (
	"strings"

	"golang.org/x/sys/cpu"
)

// cpuSets: the kernel sets this CPU runs. The AVX2 set needs AVX2 (256-bit
// integer ops), FMA and F16C (half conversions); avxvnni adds AVX-VNNI
// (VEX-encoded VPDPBUSD); avx512vnni adds AVX-512 F, BW (byte and word
// ops), VL (EVEX on 128/256-bit registers) and AVX512-VNNI. x/sys/cpu also
// checks that the OS saves YMM (and for AVX-512 the ZMM and mask) state.
var cpuSets = func() (s [numImpls]bool) {
	x := &cpu.X86
	s[implGeneric] = true
	s[implAVX2] = x.HasAVX2 && x.HasFMA && x.HasF16C
	s[implAVXVNNI] = s[implAVX2] && x.HasAVXVNNI
	s[implAVX512] = s[implAVX2] && x.HasAVX512F && x.HasAVX512BW && x.HasAVX512VL && x.HasAVX512VNNI
	return s
}()

// CPUFeatures lists the CPU features the kernel sets look at that this
// CPU reports (and the OS enables).
func CPUFeatures() string {
	x := &cpu.X86
	var f []string
	for _, c := range []struct {
		has  bool
		name string
	}{{x.HasAVX2, "avx2"}, {x.HasFMA, "fma"}, {x.HasF16C, "f16c"}, {x.HasAVX512F, "avx512f"},
		{x.HasAVX512BW, "avx512bw"}, {x.HasAVX512VL, "avx512vl"}, {x.HasAVX512VNNI, "avx512_vnni"},
		{x.HasAVXVNNI, "avx_vnni"}, {x.HasAVX512BF16, "avx512_bf16"}} {
		if c.has {
			f = append(f, c.name)
		}
	}
	if len(f) == 0 {
		return "none of avx2, fma, f16c, avx512*"
	}
	return strings.Join(f, " ")
}
