//go:build amd64 && !purego

#include "textflag.h"

// Float kernels (AVX2, FMA, F16C). Each loop runs 32 elements per
// iteration (four YMM registers), then 8, then scalar elements, so any
// length is handled; callers guarantee len > 0 and equal lengths.

// HSUM reduces the 8 lanes of Y into lane 0 of X (X is Y's low half), using T.
#define HSUM(Y, X, T) \
	VEXTRACTF128 $1, Y, T; \
	VADDPS       T, X, X;  \
	VMOVHLPS     X, X, T;  \
	VADDPS       T, X, X;  \
	VMOVSHDUP    X, T;     \
	VADDSS       T, X, X

// func dotF32AVX2(a, b []float32) float32
TEXT ·dotF32AVX2(SB), NOSPLIT, $0-52
	MOVQ   a_base+0(FP), SI
	MOVQ   b_base+24(FP), DI
	MOVQ   a_len+8(FP), CX
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	XORQ   AX, AX

f32dot32:
	LEAQ        32(AX), DX
	CMPQ        DX, CX
	JA          f32dot8
	VMOVUPS     (SI)(AX*4), Y4
	VMOVUPS     32(SI)(AX*4), Y5
	VMOVUPS     64(SI)(AX*4), Y6
	VMOVUPS     96(SI)(AX*4), Y7
	VFMADD231PS (DI)(AX*4), Y4, Y0
	VFMADD231PS 32(DI)(AX*4), Y5, Y1
	VFMADD231PS 64(DI)(AX*4), Y6, Y2
	VFMADD231PS 96(DI)(AX*4), Y7, Y3
	MOVQ        DX, AX
	JMP         f32dot32

f32dot8:
	LEAQ        8(AX), DX
	CMPQ        DX, CX
	JA          f32dotreduce
	VMOVUPS     (SI)(AX*4), Y4
	VFMADD231PS (DI)(AX*4), Y4, Y0
	MOVQ        DX, AX
	JMP         f32dot8

f32dotreduce:
	VADDPS Y1, Y0, Y0
	VADDPS Y3, Y2, Y2
	VADDPS Y2, Y0, Y0
	HSUM(Y0, X0, X1)
	CMPQ   AX, CX
	JAE    f32dotdone

f32dot1:
	VMOVSS      (SI)(AX*4), X4
	VFMADD231SS (DI)(AX*4), X4, X0
	INCQ        AX
	CMPQ        AX, CX
	JB          f32dot1

f32dotdone:
	VMOVSS X0, ret+48(FP)
	VZEROUPPER
	RET

// func dotF16AVX2(a, b []uint16) float32
TEXT ·dotF16AVX2(SB), NOSPLIT, $0-52
	MOVQ   a_base+0(FP), SI
	MOVQ   b_base+24(FP), DI
	MOVQ   a_len+8(FP), CX
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	XORQ   AX, AX

f16dot32:
	LEAQ        32(AX), DX
	CMPQ        DX, CX
	JA          f16dot8
	VCVTPH2PS   (SI)(AX*2), Y4
	VCVTPH2PS   16(SI)(AX*2), Y5
	VCVTPH2PS   32(SI)(AX*2), Y6
	VCVTPH2PS   48(SI)(AX*2), Y7
	VCVTPH2PS   (DI)(AX*2), Y8
	VCVTPH2PS   16(DI)(AX*2), Y9
	VCVTPH2PS   32(DI)(AX*2), Y10
	VCVTPH2PS   48(DI)(AX*2), Y11
	VFMADD231PS Y8, Y4, Y0
	VFMADD231PS Y9, Y5, Y1
	VFMADD231PS Y10, Y6, Y2
	VFMADD231PS Y11, Y7, Y3
	MOVQ        DX, AX
	JMP         f16dot32

f16dot8:
	LEAQ        8(AX), DX
	CMPQ        DX, CX
	JA          f16dotreduce
	VCVTPH2PS   (SI)(AX*2), Y4
	VCVTPH2PS   (DI)(AX*2), Y8
	VFMADD231PS Y8, Y4, Y0
	MOVQ        DX, AX
	JMP         f16dot8

f16dotreduce:
	VADDPS Y1, Y0, Y0
	VADDPS Y3, Y2, Y2
	VADDPS Y2, Y0, Y0
	HSUM(Y0, X0, X1)
	CMPQ   AX, CX
	JAE    f16dotdone

f16dot1:
	MOVWLZX     (SI)(AX*2), DX
	VMOVD       DX, X4
	VCVTPH2PS   X4, X4
	MOVWLZX     (DI)(AX*2), DX
	VMOVD       DX, X5
	VCVTPH2PS   X5, X5
	VFMADD231SS X5, X4, X0
	INCQ        AX
	CMPQ        AX, CX
	JB          f16dot1

f16dotdone:
	VMOVSS X0, ret+48(FP)
	VZEROUPPER
	RET

// func dotBF16AVX2(a, b []uint16) float32
TEXT ·dotBF16AVX2(SB), NOSPLIT, $0-52
	MOVQ   a_base+0(FP), SI
	MOVQ   b_base+24(FP), DI
	MOVQ   a_len+8(FP), CX
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	XORQ   AX, AX

bf16dot16:
	LEAQ        16(AX), DX
	CMPQ        DX, CX
	JA          bf16dot8
	VPMOVZXWD   (SI)(AX*2), Y4
	VPMOVZXWD   16(SI)(AX*2), Y5
	VPMOVZXWD   (DI)(AX*2), Y8
	VPMOVZXWD   16(DI)(AX*2), Y9
	VPSLLD      $16, Y4, Y4
	VPSLLD      $16, Y5, Y5
	VPSLLD      $16, Y8, Y8
	VPSLLD      $16, Y9, Y9
	VFMADD231PS Y8, Y4, Y0
	VFMADD231PS Y9, Y5, Y1
	MOVQ        DX, AX
	JMP         bf16dot16

bf16dot8:
	LEAQ        8(AX), DX
	CMPQ        DX, CX
	JA          bf16dotreduce
	VPMOVZXWD   (SI)(AX*2), Y4
	VPMOVZXWD   (DI)(AX*2), Y8
	VPSLLD      $16, Y4, Y4
	VPSLLD      $16, Y8, Y8
	VFMADD231PS Y8, Y4, Y2
	MOVQ        DX, AX
	JMP         bf16dot8

bf16dotreduce:
	VADDPS Y1, Y0, Y0
	VADDPS Y2, Y0, Y0
	HSUM(Y0, X0, X1)
	CMPQ   AX, CX
	JAE    bf16dotdone

bf16dot1:
	MOVWLZX     (SI)(AX*2), DX
	SHLL        $16, DX
	VMOVD       DX, X4
	MOVWLZX     (DI)(AX*2), DX
	SHLL        $16, DX
	VMOVD       DX, X5
	VFMADD231SS X5, X4, X0
	INCQ        AX
	CMPQ        AX, CX
	JB          bf16dot1

bf16dotdone:
	VMOVSS X0, ret+48(FP)
	VZEROUPPER
	RET

// func dotF32F16AVX2(a []float32, b []uint16) float32
TEXT ·dotF32F16AVX2(SB), NOSPLIT, $0-52
	MOVQ   a_base+0(FP), SI
	MOVQ   b_base+24(FP), DI
	MOVQ   a_len+8(FP), CX
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	XORQ   AX, AX

f32f16dot32:
	LEAQ        32(AX), DX
	CMPQ        DX, CX
	JA          f32f16dot8
	VCVTPH2PS   (DI)(AX*2), Y4
	VCVTPH2PS   16(DI)(AX*2), Y5
	VCVTPH2PS   32(DI)(AX*2), Y6
	VCVTPH2PS   48(DI)(AX*2), Y7
	VFMADD231PS (SI)(AX*4), Y4, Y0
	VFMADD231PS 32(SI)(AX*4), Y5, Y1
	VFMADD231PS 64(SI)(AX*4), Y6, Y2
	VFMADD231PS 96(SI)(AX*4), Y7, Y3
	MOVQ        DX, AX
	JMP         f32f16dot32

f32f16dot8:
	LEAQ        8(AX), DX
	CMPQ        DX, CX
	JA          f32f16dotreduce
	VCVTPH2PS   (DI)(AX*2), Y4
	VFMADD231PS (SI)(AX*4), Y4, Y0
	MOVQ        DX, AX
	JMP         f32f16dot8

f32f16dotreduce:
	VADDPS Y1, Y0, Y0
	VADDPS Y3, Y2, Y2
	VADDPS Y2, Y0, Y0
	HSUM(Y0, X0, X1)
	CMPQ   AX, CX
	JAE    f32f16dotdone

f32f16dot1:
	MOVWLZX     (DI)(AX*2), DX
	VMOVD       DX, X4
	VCVTPH2PS   X4, X4
	VFMADD231SS (SI)(AX*4), X4, X0
	INCQ        AX
	CMPQ        AX, CX
	JB          f32f16dot1

f32f16dotdone:
	VMOVSS X0, ret+48(FP)
	VZEROUPPER
	RET

// func sumSquaresAVX2(x []float32) float32
TEXT ·sumSquaresAVX2(SB), NOSPLIT, $0-28
	MOVQ   x_base+0(FP), SI
	MOVQ   x_len+8(FP), CX
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	XORQ   AX, AX

ss32:
	LEAQ        32(AX), DX
	CMPQ        DX, CX
	JA          ss8
	VMOVUPS     (SI)(AX*4), Y4
	VMOVUPS     32(SI)(AX*4), Y5
	VMOVUPS     64(SI)(AX*4), Y6
	VMOVUPS     96(SI)(AX*4), Y7
	VFMADD231PS Y4, Y4, Y0
	VFMADD231PS Y5, Y5, Y1
	VFMADD231PS Y6, Y6, Y2
	VFMADD231PS Y7, Y7, Y3
	MOVQ        DX, AX
	JMP         ss32

ss8:
	LEAQ        8(AX), DX
	CMPQ        DX, CX
	JA          ssreduce
	VMOVUPS     (SI)(AX*4), Y4
	VFMADD231PS Y4, Y4, Y0
	MOVQ        DX, AX
	JMP         ss8

ssreduce:
	VADDPS Y1, Y0, Y0
	VADDPS Y3, Y2, Y2
	VADDPS Y2, Y0, Y0
	HSUM(Y0, X0, X1)
	CMPQ   AX, CX
	JAE    ssdone

ss1:
	VMOVSS      (SI)(AX*4), X4
	VFMADD231SS X4, X4, X0
	INCQ        AX
	CMPQ        AX, CX
	JB          ss1

ssdone:
	VMOVSS X0, ret+24(FP)
	VZEROUPPER
	RET

DATA negInf<>+0(SB)/4, $0xff800000
GLOBL negInf<>(SB), RODATA|NOPTR, $4

// func maxAVX2(x []float32) float32
// Y0 holds running maxima, Y9 ORs an "is NaN" mask of every element seen:
// VMAXPS alone would drop a NaN that is not its second operand.
TEXT ·maxAVX2(SB), NOSPLIT, $0-28
	MOVQ         x_base+0(FP), SI
	MOVQ         x_len+8(FP), CX
	VBROADCASTSS negInf<>(SB), Y0
	VMOVAPS      Y0, Y1
	VXORPS       Y9, Y9, Y9
	XORQ         AX, AX

max16:
	LEAQ    16(AX), DX
	CMPQ    DX, CX
	JA      max8
	VMOVUPS (SI)(AX*4), Y4
	VMOVUPS 32(SI)(AX*4), Y5
	VMAXPS  Y4, Y0, Y0
	VMAXPS  Y5, Y1, Y1
	VCMPPS  $3, Y4, Y4, Y6
	VCMPPS  $3, Y5, Y5, Y7
	VORPS   Y6, Y9, Y9
	VORPS   Y7, Y9, Y9
	MOVQ    DX, AX
	JMP     max16

max8:
	LEAQ    8(AX), DX
	CMPQ    DX, CX
	JA      maxreduce
	VMOVUPS (SI)(AX*4), Y4
	VMAXPS  Y4, Y0, Y0
	VCMPPS  $3, Y4, Y4, Y6
	VORPS   Y6, Y9, Y9
	MOVQ    DX, AX
	JMP     max8

maxreduce:
	VMOVMSKPS    Y9, DX
	TESTL        DX, DX
	JNZ          maxnan
	VMAXPS       Y1, Y0, Y0
	VEXTRACTF128 $1, Y0, X1
	VMAXPS       X1, X0, X0
	VMOVHLPS     X0, X0, X1
	VMAXPS       X1, X0, X0
	VMOVSHDUP    X0, X1
	VMAXSS       X1, X0, X0
	CMPQ         AX, CX
	JAE          maxdone

max1:
	VMOVSS   (SI)(AX*4), X4
	VUCOMISS X4, X4
	JPS      maxnan
	VMAXSS   X4, X0, X0
	INCQ     AX
	CMPQ     AX, CX
	JB       max1

maxdone:
	VMOVSS X0, ret+24(FP)
	VZEROUPPER
	RET

maxnan:
	MOVL $0x7fc00000, ret+24(FP)
	VZEROUPPER
	RET

// func axpyAVX2(alpha float32, x, y []float32)
TEXT ·axpyAVX2(SB), NOSPLIT, $0-56
	VBROADCASTSS alpha+0(FP), Y15
	MOVQ         x_base+8(FP), SI
	MOVQ         y_base+32(FP), DI
	MOVQ         x_len+16(FP), CX
	XORQ         AX, AX

axpy32:
	LEAQ        32(AX), DX
	CMPQ        DX, CX
	JA          axpy8
	VMOVUPS     (DI)(AX*4), Y0
	VMOVUPS     32(DI)(AX*4), Y1
	VMOVUPS     64(DI)(AX*4), Y2
	VMOVUPS     96(DI)(AX*4), Y3
	VFMADD231PS (SI)(AX*4), Y15, Y0
	VFMADD231PS 32(SI)(AX*4), Y15, Y1
	VFMADD231PS 64(SI)(AX*4), Y15, Y2
	VFMADD231PS 96(SI)(AX*4), Y15, Y3
	VMOVUPS     Y0, (DI)(AX*4)
	VMOVUPS     Y1, 32(DI)(AX*4)
	VMOVUPS     Y2, 64(DI)(AX*4)
	VMOVUPS     Y3, 96(DI)(AX*4)
	MOVQ        DX, AX
	JMP         axpy32

axpy8:
	LEAQ        8(AX), DX
	CMPQ        DX, CX
	JA          axpy1check
	VMOVUPS     (DI)(AX*4), Y0
	VFMADD231PS (SI)(AX*4), Y15, Y0
	VMOVUPS     Y0, (DI)(AX*4)
	MOVQ        DX, AX
	JMP         axpy8

axpy1check:
	CMPQ AX, CX
	JAE  axpydone

axpy1:
	VMOVSS      (DI)(AX*4), X0
	VFMADD231SS (SI)(AX*4), X15, X0
	VMOVSS      X0, (DI)(AX*4)
	INCQ        AX
	CMPQ        AX, CX
	JB          axpy1

axpydone:
	VZEROUPPER
	RET

// func axpyF16AVX2(alpha float32, x []uint16, y []float32)
TEXT ·axpyF16AVX2(SB), NOSPLIT, $0-56
	VBROADCASTSS alpha+0(FP), Y15
	MOVQ         x_base+8(FP), SI
	MOVQ         y_base+32(FP), DI
	MOVQ         x_len+16(FP), CX
	XORQ         AX, AX

axpyh32:
	LEAQ        32(AX), DX
	CMPQ        DX, CX
	JA          axpyh8
	VCVTPH2PS   (SI)(AX*2), Y4
	VCVTPH2PS   16(SI)(AX*2), Y5
	VCVTPH2PS   32(SI)(AX*2), Y6
	VCVTPH2PS   48(SI)(AX*2), Y7
	VMOVUPS     (DI)(AX*4), Y0
	VMOVUPS     32(DI)(AX*4), Y1
	VMOVUPS     64(DI)(AX*4), Y2
	VMOVUPS     96(DI)(AX*4), Y3
	VFMADD231PS Y4, Y15, Y0
	VFMADD231PS Y5, Y15, Y1
	VFMADD231PS Y6, Y15, Y2
	VFMADD231PS Y7, Y15, Y3
	VMOVUPS     Y0, (DI)(AX*4)
	VMOVUPS     Y1, 32(DI)(AX*4)
	VMOVUPS     Y2, 64(DI)(AX*4)
	VMOVUPS     Y3, 96(DI)(AX*4)
	MOVQ        DX, AX
	JMP         axpyh32

axpyh8:
	LEAQ        8(AX), DX
	CMPQ        DX, CX
	JA          axpyh1check
	VCVTPH2PS   (SI)(AX*2), Y4
	VMOVUPS     (DI)(AX*4), Y0
	VFMADD231PS Y4, Y15, Y0
	VMOVUPS     Y0, (DI)(AX*4)
	MOVQ        DX, AX
	JMP         axpyh8

axpyh1check:
	CMPQ AX, CX
	JAE  axpyhdone

axpyh1:
	MOVWLZX     (SI)(AX*2), DX
	VMOVD       DX, X4
	VCVTPH2PS   X4, X4
	VMOVSS      (DI)(AX*4), X0
	VFMADD231SS X4, X15, X0
	VMOVSS      X0, (DI)(AX*4)
	INCQ        AX
	CMPQ        AX, CX
	JB          axpyh1

axpyhdone:
	VZEROUPPER
	RET

// func scaleAVX2(alpha float32, x []float32)
TEXT ·scaleAVX2(SB), NOSPLIT, $0-32
	VBROADCASTSS alpha+0(FP), Y15
	MOVQ         x_base+8(FP), SI
	MOVQ         x_len+16(FP), CX
	XORQ         AX, AX

scale32:
	LEAQ    32(AX), DX
	CMPQ    DX, CX
	JA      scale8
	VMULPS  (SI)(AX*4), Y15, Y0
	VMULPS  32(SI)(AX*4), Y15, Y1
	VMULPS  64(SI)(AX*4), Y15, Y2
	VMULPS  96(SI)(AX*4), Y15, Y3
	VMOVUPS Y0, (SI)(AX*4)
	VMOVUPS Y1, 32(SI)(AX*4)
	VMOVUPS Y2, 64(SI)(AX*4)
	VMOVUPS Y3, 96(SI)(AX*4)
	MOVQ    DX, AX
	JMP     scale32

scale8:
	LEAQ    8(AX), DX
	CMPQ    DX, CX
	JA      scale1check
	VMULPS  (SI)(AX*4), Y15, Y0
	VMOVUPS Y0, (SI)(AX*4)
	MOVQ    DX, AX
	JMP     scale8

scale1check:
	CMPQ AX, CX
	JAE  scaledone

scale1:
	VMULSS (SI)(AX*4), X15, X0
	VMOVSS X0, (SI)(AX*4)
	INCQ   AX
	CMPQ   AX, CX
	JB     scale1

scaledone:
	VZEROUPPER
	RET

// func addAVX2(dst, a, b []float32)
TEXT ·addAVX2(SB), NOSPLIT, $0-72
	MOVQ dst_base+0(FP), DI
	MOVQ a_base+24(FP), SI
	MOVQ b_base+48(FP), BX
	MOVQ dst_len+8(FP), CX
	XORQ AX, AX
addloop32:
	LEAQ 32(AX), DX
	CMPQ DX, CX
	JA addloop8
	VMOVUPS (SI)(AX*4), Y0
	VMOVUPS 32(SI)(AX*4), Y1
	VMOVUPS 64(SI)(AX*4), Y2
	VMOVUPS 96(SI)(AX*4), Y3
	VADDPS (BX)(AX*4), Y0, Y0
	VADDPS 32(BX)(AX*4), Y1, Y1
	VADDPS 64(BX)(AX*4), Y2, Y2
	VADDPS 96(BX)(AX*4), Y3, Y3
	VMOVUPS Y0, (DI)(AX*4)
	VMOVUPS Y1, 32(DI)(AX*4)
	VMOVUPS Y2, 64(DI)(AX*4)
	VMOVUPS Y3, 96(DI)(AX*4)
	MOVQ DX, AX
	JMP addloop32
addloop8:
	LEAQ 8(AX), DX
	CMPQ DX, CX
	JA addloop1check
	VMOVUPS (SI)(AX*4), Y0
	VADDPS (BX)(AX*4), Y0, Y0
	VMOVUPS Y0, (DI)(AX*4)
	MOVQ DX, AX
	JMP addloop8
addloop1check:
	CMPQ AX, CX
	JAE adddone
addloop1:
	VMOVSS (SI)(AX*4), X0
	VADDSS (BX)(AX*4), X0, X0
	VMOVSS X0, (DI)(AX*4)
	INCQ AX
	CMPQ AX, CX
	JB addloop1
adddone:
	VZEROUPPER
	RET


// func mulAVX2(dst, a, b []float32)
TEXT ·mulAVX2(SB), NOSPLIT, $0-72
	MOVQ dst_base+0(FP), DI
	MOVQ a_base+24(FP), SI
	MOVQ b_base+48(FP), BX
	MOVQ dst_len+8(FP), CX
	XORQ AX, AX
mulloop32:
	LEAQ 32(AX), DX
	CMPQ DX, CX
	JA mulloop8
	VMOVUPS (SI)(AX*4), Y0
	VMOVUPS 32(SI)(AX*4), Y1
	VMOVUPS 64(SI)(AX*4), Y2
	VMOVUPS 96(SI)(AX*4), Y3
	VMULPS (BX)(AX*4), Y0, Y0
	VMULPS 32(BX)(AX*4), Y1, Y1
	VMULPS 64(BX)(AX*4), Y2, Y2
	VMULPS 96(BX)(AX*4), Y3, Y3
	VMOVUPS Y0, (DI)(AX*4)
	VMOVUPS Y1, 32(DI)(AX*4)
	VMOVUPS Y2, 64(DI)(AX*4)
	VMOVUPS Y3, 96(DI)(AX*4)
	MOVQ DX, AX
	JMP mulloop32
mulloop8:
	LEAQ 8(AX), DX
	CMPQ DX, CX
	JA mulloop1check
	VMOVUPS (SI)(AX*4), Y0
	VMULPS (BX)(AX*4), Y0, Y0
	VMOVUPS Y0, (DI)(AX*4)
	MOVQ DX, AX
	JMP mulloop8
mulloop1check:
	CMPQ AX, CX
	JAE muldone
mulloop1:
	VMOVSS (SI)(AX*4), X0
	VMULSS (BX)(AX*4), X0, X0
	VMOVSS X0, (DI)(AX*4)
	INCQ AX
	CMPQ AX, CX
	JB mulloop1
muldone:
	VZEROUPPER
	RET


// func f16ToF32RowAVX2(src []uint16, dst []float32)
TEXT ·f16ToF32RowAVX2(SB), NOSPLIT, $0-48
	MOVQ src_base+0(FP), SI
	MOVQ dst_base+24(FP), DI
	MOVQ src_len+8(FP), CX
	XORQ AX, AX

h2f32:
	LEAQ      32(AX), DX
	CMPQ      DX, CX
	JA        h2f8
	VCVTPH2PS (SI)(AX*2), Y0
	VCVTPH2PS 16(SI)(AX*2), Y1
	VCVTPH2PS 32(SI)(AX*2), Y2
	VCVTPH2PS 48(SI)(AX*2), Y3
	VMOVUPS   Y0, (DI)(AX*4)
	VMOVUPS   Y1, 32(DI)(AX*4)
	VMOVUPS   Y2, 64(DI)(AX*4)
	VMOVUPS   Y3, 96(DI)(AX*4)
	MOVQ      DX, AX
	JMP       h2f32

h2f8:
	LEAQ      8(AX), DX
	CMPQ      DX, CX
	JA        h2f1check
	VCVTPH2PS (SI)(AX*2), Y0
	VMOVUPS   Y0, (DI)(AX*4)
	MOVQ      DX, AX
	JMP       h2f8

h2f1check:
	CMPQ AX, CX
	JAE  h2fdone

h2f1:
	MOVWLZX   (SI)(AX*2), DX
	VMOVD     DX, X0
	VCVTPH2PS X0, X0
	VMOVSS    X0, (DI)(AX*4)
	INCQ      AX
	CMPQ      AX, CX
	JB        h2f1

h2fdone:
	VZEROUPPER
	RET

// func f32ToF16RowAVX2(src []float32, dst []uint16)
// Rounding control 0 in VCVTPS2PH's immediate: round to nearest even.
TEXT ·f32ToF16RowAVX2(SB), NOSPLIT, $0-48
	MOVQ src_base+0(FP), SI
	MOVQ dst_base+24(FP), DI
	MOVQ src_len+8(FP), CX
	XORQ AX, AX

f2h32:
	LEAQ      32(AX), DX
	CMPQ      DX, CX
	JA        f2h8
	VMOVUPS   (SI)(AX*4), Y0
	VMOVUPS   32(SI)(AX*4), Y1
	VMOVUPS   64(SI)(AX*4), Y2
	VMOVUPS   96(SI)(AX*4), Y3
	VCVTPS2PH $0, Y0, (DI)(AX*2)
	VCVTPS2PH $0, Y1, 16(DI)(AX*2)
	VCVTPS2PH $0, Y2, 32(DI)(AX*2)
	VCVTPS2PH $0, Y3, 48(DI)(AX*2)
	MOVQ      DX, AX
	JMP       f2h32

f2h8:
	LEAQ      8(AX), DX
	CMPQ      DX, CX
	JA        f2h1check
	VMOVUPS   (SI)(AX*4), Y0
	VCVTPS2PH $0, Y0, (DI)(AX*2)
	MOVQ      DX, AX
	JMP       f2h8

f2h1check:
	CMPQ AX, CX
	JAE  f2hdone

f2h1:
	VMOVSS    (SI)(AX*4), X0
	VCVTPS2PH $0, X0, X1
	VPEXTRW   $0, X1, DX
	MOVW      DX, (DI)(AX*2)
	INCQ      AX
	CMPQ      AX, CX
	JB        f2h1

f2hdone:
	VZEROUPPER
	RET
