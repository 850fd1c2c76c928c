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

// ---------------------------------------------------------------- Q8_K
// quant.QuantizeQ8_K (llama.cpp's quantize_row_q8_K_ref, which its x86
// backend uses for activations), vectorized with the same arithmetic:
// amax = max |x| ignoring NaN; max = the first element with |x| == amax;
// iscale = -127/max; q = min(127, nearest(iscale*x)) with nearest the
// 1.5*2^23 trick (bits & 0x7fffff - 0x400000), stored as its low byte;
// bsums[j] = sum of q[16j:16j+16]; d = 1/iscale. amax == 0 stores zeros.

DATA qk8Magic<>+0(SB)/4, $12582912.0
GLOBL qk8Magic<>(SB), RODATA|NOPTR, $4

DATA qk8M127<>+0(SB)/4, $-127.0
GLOBL qk8M127<>(SB), RODATA|NOPTR, $4

DATA qk8One<>+0(SB)/4, $1.0
GLOBL qk8One<>(SB), RODATA|NOPTR, $4

DATA qk8Mant<>+0(SB)/4, $0x007fffff
GLOBL qk8Mant<>(SB), RODATA|NOPTR, $4

DATA qk8Half<>+0(SB)/4, $0x00400000
GLOBL qk8Half<>(SB), RODATA|NOPTR, $4

DATA qk8Max<>+0(SB)/4, $127
GLOBL qk8Max<>(SB), RODATA|NOPTR, $4

DATA qk8Byte<>+0(SB)/4, $0xff
GLOBL qk8Byte<>(SB), RODATA|NOPTR, $4

DATA qk8Ones8<>+0(SB)/8, $0x0101010101010101
DATA qk8Ones8<>+8(SB)/8, $0x0101010101010101
DATA qk8Ones8<>+16(SB)/8, $0x0101010101010101
DATA qk8Ones8<>+24(SB)/8, $0x0101010101010101
GLOBL qk8Ones8<>(SB), RODATA|NOPTR, $32

DATA qk8Ones16<>+0(SB)/8, $0x0001000100010001
DATA qk8Ones16<>+8(SB)/8, $0x0001000100010001
DATA qk8Ones16<>+16(SB)/8, $0x0001000100010001
DATA qk8Ones16<>+24(SB)/8, $0x0001000100010001
GLOBL qk8Ones16<>(SB), RODATA|NOPTR, $32

// QK8_CHUNK quantizes 32 floats at OFF(SI) (4 vectors) with the broadcast
// iscale in Y15 and stores the 32 byte quants at 4+OFF/4(DI).
// Y13 = magic, Y12 = mantissa mask, Y11 = 0x400000, Y10 = 127, Y9 = 0xff.
#define QK8_CHUNK(OFF, QOFF) \
	VMULPS    OFF(SI), Y15, Y0;    \
	VMULPS    OFF+32(SI), Y15, Y1; \
	VMULPS    OFF+64(SI), Y15, Y2; \
	VMULPS    OFF+96(SI), Y15, Y3; \
	VADDPS    Y13, Y0, Y0;         \
	VADDPS    Y13, Y1, Y1;         \
	VADDPS    Y13, Y2, Y2;         \
	VADDPS    Y13, Y3, Y3;         \
	VPAND     Y12, Y0, Y0;         \
	VPAND     Y12, Y1, Y1;         \
	VPAND     Y12, Y2, Y2;         \
	VPAND     Y12, Y3, Y3;         \
	VPSUBD    Y11, Y0, Y0;         \
	VPSUBD    Y11, Y1, Y1;         \
	VPSUBD    Y11, Y2, Y2;         \
	VPSUBD    Y11, Y3, Y3;         \
	VPMINSD   Y10, Y0, Y0;         \
	VPMINSD   Y10, Y1, Y1;         \
	VPMINSD   Y10, Y2, Y2;         \
	VPMINSD   Y10, Y3, Y3;         \
	VPAND     Y9, Y0, Y0;          \
	VPAND     Y9, Y1, Y1;          \
	VPAND     Y9, Y2, Y2;          \
	VPAND     Y9, Y3, Y3;          \
	VPACKUSDW Y1, Y0, Y0;          \
	VPACKUSDW Y3, Y2, Y2;          \
	VPACKUSWB Y2, Y0, Y0;          \
	VPERMD    Y0, Y14, Y0;         \
	VMOVDQU   Y0, QOFF(DI)

// QK8_BSUM: Y(R) = [4 partial sums of q[OFF:OFF+16] | 4 of q[OFF+16:OFF+32]].
#define QK8_BSUM(OFF, YR) \
	VMOVDQU    OFF(DI), YR;       \
	VPMADDUBSW YR, Y8, YR;        \
	VPMADDWD   Y7, YR, YR

// func quantizeActQ8_KAVX2(nb int, x *float32, dst *byte)
TEXT ·quantizeActQ8_KAVX2(SB), NOSPLIT, $0-24
	MOVQ nb+0(FP), CX
	MOVQ x+8(FP), SI
	MOVQ dst+16(FP), DI
	VMOVDQU qaPerm<>(SB), Y14

qk8loop:
	// amax over 32 vectors, four running maxima: max(a, acc) keeps acc when
	// a is NaN, as absMax's "if amax < a" skips NaN.
	VMOVUPS qaAbs<>(SB), Y15
	VXORPS  Y0, Y0, Y0
	VXORPS  Y1, Y1, Y1
	VXORPS  Y2, Y2, Y2
	VXORPS  Y3, Y3, Y3
	XORQ    AX, AX

qk8amax:
	VANDPS (SI)(AX*1), Y15, Y4
	VANDPS 32(SI)(AX*1), Y15, Y5
	VANDPS 64(SI)(AX*1), Y15, Y6
	VANDPS 96(SI)(AX*1), Y15, Y7
	VMAXPS Y0, Y4, Y0
	VMAXPS Y1, Y5, Y1
	VMAXPS Y2, Y6, Y2
	VMAXPS Y3, Y7, Y3
	ADDQ   $128, AX
	CMPQ   AX, $1024
	JB     qk8amax

	VMAXPS       Y1, Y0, Y0
	VMAXPS       Y3, Y2, Y2
	VMAXPS       Y2, Y0, Y0
	VEXTRACTF128 $1, Y0, X1
	VMAXPS       X1, X0, X0
	VMOVHLPS     X0, X0, X1
	VMAXPS       X1, X0, X0
	VMOVSHDUP    X0, X1
	VMAXSS       X1, X0, X0
	VXORPS       X1, X1, X1
	VUCOMISS     X1, X0
	JEQ          qk8zero

	// max = the first element with |x| == amax.
	VBROADCASTSS X0, Y0
	XORQ         AX, AX

qk8find:
	VANDPS    (SI)(AX*4), Y15, Y4
	VCMPPS    $0, Y0, Y4, Y4
	VMOVMSKPS Y4, BX
	TESTQ     BX, BX
	JNZ       qk8found
	ADDQ      $8, AX
	JMP       qk8find

qk8found:
	BSFQ   BX, BX
	ADDQ   BX, AX
	VMOVSS (SI)(AX*4), X0

	// iscale = -127/max; d = 1/iscale.
	VMOVSS       qk8M127<>(SB), X1
	VDIVSS       X0, X1, X1
	VMOVSS       qk8One<>(SB), X2
	VDIVSS       X1, X2, X2
	VMOVSS       X2, (DI)
	VBROADCASTSS X1, Y15
	VBROADCASTSS qk8Magic<>(SB), Y13
	VPBROADCASTD qk8Mant<>(SB), Y12
	VPBROADCASTD qk8Half<>(SB), Y11
	VPBROADCASTD qk8Max<>(SB), Y10
	VPBROADCASTD qk8Byte<>(SB), Y9
	QK8_CHUNK(0, 4)
	QK8_CHUNK(128, 36)
	QK8_CHUNK(256, 68)
	QK8_CHUNK(384, 100)
	QK8_CHUNK(512, 132)
	QK8_CHUNK(640, 164)
	QK8_CHUNK(768, 196)
	QK8_CHUNK(896, 228)

	// bsums: int16 sums of 16 quants, via VPMADDUBSW(ones, q) and
	// VPMADDWD(ones) and an unpack tree over four 32-byte chunks.
	VMOVDQU qk8Ones8<>(SB), Y8
	VMOVDQU qk8Ones16<>(SB), Y7
	QK8_BSUM(4, Y0)
	QK8_BSUM(36, Y1)
	QK8_BSUM(68, Y2)
	QK8_BSUM(100, Y3)
	VPUNPCKLDQ  Y1, Y0, Y4
	VPUNPCKHDQ  Y1, Y0, Y5
	VPADDD      Y5, Y4, Y0
	VPUNPCKLDQ  Y3, Y2, Y4
	VPUNPCKHDQ  Y3, Y2, Y5
	VPADDD      Y5, Y4, Y2
	VPUNPCKLQDQ Y2, Y0, Y4
	VPUNPCKHQDQ Y2, Y0, Y5
	VPADDD      Y5, Y4, Y0  // [b0 b2 b4 b6 | b1 b3 b5 b7]
	VPERMD      Y0, Y14, Y0 // b0..b7
	VEXTRACTI128 $1, Y0, X1
	VPACKSSDW   X1, X0, X0
	VMOVDQU     X0, 260(DI)
	QK8_BSUM(132, Y0)
	QK8_BSUM(164, Y1)
	QK8_BSUM(196, Y2)
	QK8_BSUM(228, Y3)
	VPUNPCKLDQ  Y1, Y0, Y4
	VPUNPCKHDQ  Y1, Y0, Y5
	VPADDD      Y5, Y4, Y0
	VPUNPCKLDQ  Y3, Y2, Y4
	VPUNPCKHDQ  Y3, Y2, Y5
	VPADDD      Y5, Y4, Y2
	VPUNPCKLQDQ Y2, Y0, Y4
	VPUNPCKHQDQ Y2, Y0, Y5
	VPADDD      Y5, Y4, Y0
	VPERMD      Y0, Y14, Y0
	VEXTRACTI128 $1, Y0, X1
	VPACKSSDW   X1, X0, X0
	VMOVDQU     X0, 276(DI)
	JMP         qk8next

qk8zero:
	VXORPS  Y0, Y0, Y0
	MOVQ    DI, AX
	MOVQ    $9, BX

qk8zloop:
	VMOVDQU Y0, (AX)
	ADDQ    $32, AX
	DECQ    BX
	JNZ     qk8zloop
	MOVL    $0, 288(DI)

qk8next:
	ADDQ $1024, SI
	ADDQ $292, DI
	DECQ CX
	JNZ  qk8loop
	VZEROUPPER
	RET
