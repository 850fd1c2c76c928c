//go:build amd64 && !purego

#include "textflag.h"

// Activation quantization to Q8_0, instruction for instruction llama.cpp's
// AVX2 quantize_row_q8_0 (ggml-cpu/arch/x86/quants.c), so the bytes equal
// quant.QuantizeActQ8_0's emulation of it, NaNs and infinities included.

DATA qaAbs<>+0(SB)/8, $0x7fffffff7fffffff
DATA qaAbs<>+8(SB)/8, $0x7fffffff7fffffff
DATA qaAbs<>+16(SB)/8, $0x7fffffff7fffffff
DATA qaAbs<>+24(SB)/8, $0x7fffffff7fffffff
GLOBL qaAbs<>(SB), RODATA|NOPTR, $32

// _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7): undoes the lane order of the packs.
DATA qaPerm<>+0(SB)/8, $0x0000000400000000
DATA qaPerm<>+8(SB)/8, $0x0000000500000001
DATA qaPerm<>+16(SB)/8, $0x0000000600000002
DATA qaPerm<>+24(SB)/8, $0x0000000700000003
GLOBL qaPerm<>(SB), RODATA|NOPTR, $32

DATA qa127<>+0(SB)/4, $127.0
GLOBL qa127<>(SB), RODATA|NOPTR, $4

// func quantizeActQ8_0AVX2(nb int, x *float32, dst *byte)
TEXT ·quantizeActQ8_0AVX2(SB), NOSPLIT, $0-24
	MOVQ    nb+0(FP), CX
	MOVQ    x+8(FP), SI
	MOVQ    dst+16(FP), DI
	VMOVUPS qaAbs<>(SB), Y15
	VMOVDQU qaPerm<>(SB), Y14
	VMOVSS  qa127<>(SB), X13
	VXORPS  X12, X12, X12

qa80loop:
	VMOVUPS (SI), Y0
	VMOVUPS 32(SI), Y1
	VMOVUPS 64(SI), Y2
	VMOVUPS 96(SI), Y3
	// maxAbs = max(max(max(|v0|, |v1|), |v2|), |v3|), lane-wise a > b ? a : b
	VANDPS  Y15, Y0, Y4
	VANDPS  Y15, Y1, Y5
	VANDPS  Y15, Y2, Y6
	VANDPS  Y15, Y3, Y7
	VMAXPS  Y5, Y4, Y4
	VMAXPS  Y6, Y4, Y4
	VMAXPS  Y7, Y4, Y4
	// max4 = max(high128, low128); max(max4, movehl); max_ss(max4, movehdup)
	VEXTRACTF128 $1, Y4, X5
	VMAXPS       X4, X5, X5
	VMOVHLPS     X5, X5, X6
	VMAXPS       X6, X5, X5
	VMOVSHDUP    X5, X6
	VMAXSS       X6, X5, X5
	// d = max/127 as a half
	VDIVSS    X13, X5, X6
	VCVTPS2PH $0, X6, X6
	VMOVD     X6, AX
	MOVW      AX, (DI)
	// id = max != 0 ? 127/max : 0 (NaN != 0 holds: id = NaN)
	VDIVSS       X5, X13, X7
	VCMPSS       $4, X12, X5, X8
	VANDPS       X8, X7, X7
	VBROADCASTSS X7, Y7
	VMULPS       Y7, Y0, Y0
	VMULPS       Y7, Y1, Y1
	VMULPS       Y7, Y2, Y2
	VMULPS       Y7, Y3, Y3
	VROUNDPS     $0, Y0, Y0
	VROUNDPS     $0, Y1, Y1
	VROUNDPS     $0, Y2, Y2
	VROUNDPS     $0, Y3, Y3
	VCVTPS2DQ    Y0, Y0
	VCVTPS2DQ    Y1, Y1
	VCVTPS2DQ    Y2, Y2
	VCVTPS2DQ    Y3, Y3
	VPACKSSDW    Y1, Y0, Y0
	VPACKSSDW    Y3, Y2, Y2
	VPACKSSWB    Y2, Y0, Y0
	VPERMD       Y0, Y14, Y0
	VMOVDQU      Y0, 2(DI)
	ADDQ         $128, SI
	ADDQ         $34, DI
	DECQ         CX
	JNZ          qa80loop
	VZEROUPPER
	RET
