//go:build amd64 && !purego

#include "textflag.h"

// Float kernels (AVX2, FMA, F16C); callers guarantee len > 0 and equal
// lengths (and, for Lanes8, a multiple of 8). The non-dot loops run 32
// elements per iteration (four YMM registers), then 8, then scalar
// elements, so any length is handled.

// HSUM reduces the 8 lanes of Y into lane 0 of X (X is Y's low half), using T.
#define HSUM(Y, X, T) \
	VEXTRACTF128 $1, Y, T; \
	VADDPS       T, X, X;  \
	VMOVHLPS     X, X, T;  \
	VADDPS       T, X, X;  \
	VMOVSHDUP    X, T;     \
	VADDSS       T, X, X

// The float dots follow llama.cpp's orders exactly (see dotfloat.go):
// every VFMADD/VMULPS/VADDPS below is one of the generic code's roundings,
// in the same association.

// VECREDUCE folds four 8-lane accumulators as ggml's GGML_F32x8_REDUCE:
// Y0 = (Y0+Y2) + (Y1+Y3); t = lo + hi; X0[0] = (t0+t1) + (t2+t3).
#define VECREDUCE \
	VADDPS       Y2, Y0, Y0;  \
	VADDPS       Y3, Y1, Y1;  \
	VADDPS       Y1, Y0, Y0;  \
	VEXTRACTF128 $1, Y0, X1;  \
	VADDPS       X1, X0, X0;  \
	VHADDPS      X0, X0, X0;  \
	VHADDPS      X0, X0, X0

// BF16LOAD widens 8 bfloat16 at mem to float32 lanes in Y (element l in
// lane l): the 16 bytes go to both 128-bit halves, then Y15 = bf16Widen<>
// moves word l of the low half (l < 4) or of the high half (l >= 4) into
// the top of dword l and zeroes the bottom (one shuffle instead of a
// zero-extension and a shift).
#define BF16LOAD(mem, Y) \
	VBROADCASTI128 mem, Y; \
	VPSHUFB        Y15, Y, Y

DATA bf16Widen<>+0(SB)/4, $0x01008080
DATA bf16Widen<>+4(SB)/4, $0x03028080
DATA bf16Widen<>+8(SB)/4, $0x05048080
DATA bf16Widen<>+12(SB)/4, $0x07068080
DATA bf16Widen<>+16(SB)/4, $0x09088080
DATA bf16Widen<>+20(SB)/4, $0x0b0a8080
DATA bf16Widen<>+24(SB)/4, $0x0d0c8080
DATA bf16Widen<>+28(SB)/4, $0x0f0e8080
GLOBL bf16Widen<>(SB), RODATA|NOPTR, $32

// Lanes8 x4: one weight row (SI) against four activation rows at DI,
// R8 = DI+stride, R9 = DI+2*stride, R10 = DI+3*stride; row k's chain in Yk.
// Each weight vector is loaded and widened once for the four chains.
#define LANES8X4_PROLOGUE \
	MOVQ   n+0(FP), CX;            \
	MOVQ   w+8(FP), SI;            \
	MOVQ   x+16(FP), DI;           \
	MOVQ   xStrideBytes+24(FP), BX; \
	LEAQ   (DI)(BX*1), R8;         \
	LEAQ   (DI)(BX*2), R9;         \
	LEAQ   (R8)(BX*2), R10;        \
	VXORPS Y0, Y0, Y0;             \
	VXORPS Y1, Y1, Y1;             \
	VXORPS Y2, Y2, Y2;             \
	VXORPS Y3, Y3, Y3;             \
	XORQ   AX, AX

#define LANES8X4_EPILOGUE \
	MOVQ   out+32(FP), DX; \
	HSUM(Y0, X0, X4);      \
	HSUM(Y1, X1, X4);      \
	HSUM(Y2, X2, X4);      \
	HSUM(Y3, X3, X4);      \
	VMOVSS X0, 0(DX);      \
	VMOVSS X1, 4(DX);      \
	VMOVSS X2, 8(DX);      \
	VMOVSS X3, 12(DX);     \
	VZEROUPPER;            \
	RET

// func dotF32AVX2(a, b []float32) float32
// ggml_vec_dot_f32: Y0..Y3 fused over steps of 32, VECREDUCE, fused
// scalar tail.
TEXT ·dotF32AVX2(SB), NOSPLIT, $0-52
	MOVQ   a_base+0(FP), SI
	MOVQ   b_base+24(FP), DI
	MOVQ   a_len+8(FP), CX
	MOVQ   CX, BX
	ANDQ   $-32, BX
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	XORQ   AX, AX
	CMPQ   AX, BX
	JAE    f32dotreduce

f32dot32:
	VMOVUPS     (SI)(AX*4), Y4
	VMOVUPS     32(SI)(AX*4), Y5
	VMOVUPS     64(SI)(AX*4), Y6
	VMOVUPS     96(SI)(AX*4), Y7
	VFMADD231PS (DI)(AX*4), Y4, Y0
	VFMADD231PS 32(DI)(AX*4), Y5, Y1
	VFMADD231PS 64(DI)(AX*4), Y6, Y2
	VFMADD231PS 96(DI)(AX*4), Y7, Y3
	ADDQ        $32, AX
	CMPQ        AX, BX
	JB          f32dot32

f32dotreduce:
	VECREDUCE
	CMPQ AX, CX
	JAE  f32dotdone

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
// ggml_vec_dot_f16: as dotF32AVX2 on widened halves, but the tail sums
// float32 products in float64 (ggml_float).
TEXT ·dotF16AVX2(SB), NOSPLIT, $0-52
	MOVQ   a_base+0(FP), SI
	MOVQ   b_base+24(FP), DI
	MOVQ   a_len+8(FP), CX
	MOVQ   CX, BX
	ANDQ   $-32, BX
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	XORQ   AX, AX
	CMPQ   AX, BX
	JAE    f16dotreduce

f16dot32:
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
	ADDQ        $32, AX
	CMPQ        AX, BX
	JB          f16dot32

f16dotreduce:
	VECREDUCE
	CMPQ      AX, CX
	JAE       f16dotdone
	VCVTSS2SD X0, X0, X0

f16dot1:
	MOVWLZX   (SI)(AX*2), DX
	VMOVD     DX, X4
	VCVTPH2PS X4, X4
	MOVWLZX   (DI)(AX*2), DX
	VMOVD     DX, X5
	VCVTPH2PS X5, X5
	VMULSS    X5, X4, X4
	VCVTSS2SD X4, X4, X4
	VADDSD    X4, X0, X0
	INCQ      AX
	CMPQ      AX, CX
	JB        f16dot1
	VCVTSD2SS X0, X0, X0

f16dotdone:
	VMOVSS X0, ret+48(FP)
	VZEROUPPER
	RET

// func dotBF16AVX2(a, b []uint16) float32
// ggml_vec_dot_bf16 (AVX2): Y0..Y3 += rounded products (not fused) over
// steps of 32; (Y0+Y2)+(Y1+Y3); HSUM; float64 tail starting from 0.0.
TEXT ·dotBF16AVX2(SB), NOSPLIT, $0-52
	VMOVDQU bf16Widen<>(SB), Y15
	MOVQ   a_base+0(FP), SI
	MOVQ   b_base+24(FP), DI
	MOVQ   a_len+8(FP), CX
	MOVQ   CX, BX
	ANDQ   $-32, BX
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	XORQ   AX, AX
	CMPQ   AX, BX
	JAE    bf16dotreduce

bf16dot32:
	BF16LOAD((SI)(AX*2), Y4)
	BF16LOAD(16(SI)(AX*2), Y5)
	BF16LOAD(32(SI)(AX*2), Y6)
	BF16LOAD(48(SI)(AX*2), Y7)
	BF16LOAD((DI)(AX*2), Y8)
	BF16LOAD(16(DI)(AX*2), Y9)
	BF16LOAD(32(DI)(AX*2), Y10)
	BF16LOAD(48(DI)(AX*2), Y11)
	VMULPS Y8, Y4, Y4
	VMULPS Y9, Y5, Y5
	VMULPS Y10, Y6, Y6
	VMULPS Y11, Y7, Y7
	VADDPS Y4, Y0, Y0
	VADDPS Y5, Y1, Y1
	VADDPS Y6, Y2, Y2
	VADDPS Y7, Y3, Y3
	ADDQ   $32, AX
	CMPQ   AX, BX
	JB     bf16dot32

bf16dotreduce:
	VADDPS    Y2, Y0, Y0
	VADDPS    Y3, Y1, Y1
	VADDPS    Y1, Y0, Y0
	HSUM(Y0, X0, X1)
	VCVTSS2SD X0, X0, X0
	VXORPD    X1, X1, X1
	VADDSD    X0, X1, X0
	CMPQ      AX, CX
	JAE       bf16dotdone

bf16dot1:
	MOVWLZX   (SI)(AX*2), DX
	SHLL      $16, DX
	VMOVD     DX, X4
	MOVWLZX   (DI)(AX*2), DX
	SHLL      $16, DX
	VMOVD     DX, X5
	VMULSS    X5, X4, X4
	VCVTSS2SD X4, X4, X4
	VADDSD    X4, X0, X0
	INCQ      AX
	CMPQ      AX, CX
	JB        bf16dot1

bf16dotdone:
	VCVTSD2SS X0, X0, X0
	VMOVSS    X0, ret+48(FP)
	VZEROUPPER
	RET

// func dotF32Lanes8AVX2(a, b []float32) float32
// tinyBLAS order: one 8-lane fused chain in Y0 (len is a multiple of 8),
// HSUM (= hsum8). Four loads per iteration run ahead; the chain is serial.
TEXT ·dotF32Lanes8AVX2(SB), NOSPLIT, $0-52
	MOVQ   a_base+0(FP), SI
	MOVQ   b_base+24(FP), DI
	MOVQ   a_len+8(FP), CX
	MOVQ   CX, BX
	ANDQ   $-32, BX
	VXORPS Y0, Y0, Y0
	XORQ   AX, AX
	CMPQ   AX, BX
	JAE    f32l8one

f32l8four:
	VMOVUPS     (SI)(AX*4), Y4
	VMOVUPS     32(SI)(AX*4), Y5
	VMOVUPS     64(SI)(AX*4), Y6
	VMOVUPS     96(SI)(AX*4), Y7
	VFMADD231PS (DI)(AX*4), Y4, Y0
	VFMADD231PS 32(DI)(AX*4), Y5, Y0
	VFMADD231PS 64(DI)(AX*4), Y6, Y0
	VFMADD231PS 96(DI)(AX*4), Y7, Y0
	ADDQ        $32, AX
	CMPQ        AX, BX
	JB          f32l8four

f32l8one:
	CMPQ        AX, CX
	JAE         f32l8done
	VMOVUPS     (SI)(AX*4), Y4
	VFMADD231PS (DI)(AX*4), Y4, Y0
	ADDQ        $8, AX
	JMP         f32l8one

f32l8done:
	HSUM(Y0, X0, X1)
	VMOVSS X0, ret+48(FP)
	VZEROUPPER
	RET

// func dotF16Lanes8AVX2(a, b []uint16) float32
TEXT ·dotF16Lanes8AVX2(SB), NOSPLIT, $0-52
	MOVQ   a_base+0(FP), SI
	MOVQ   b_base+24(FP), DI
	MOVQ   a_len+8(FP), CX
	MOVQ   CX, BX
	ANDQ   $-32, BX
	VXORPS Y0, Y0, Y0
	XORQ   AX, AX
	CMPQ   AX, BX
	JAE    f16l8one

f16l8four:
	VCVTPH2PS   (SI)(AX*2), Y4
	VCVTPH2PS   16(SI)(AX*2), Y5
	VCVTPH2PS   32(SI)(AX*2), Y6
	VCVTPH2PS   48(SI)(AX*2), Y7
	VCVTPH2PS   (DI)(AX*2), Y8
	VCVTPH2PS   16(DI)(AX*2), Y9
	VCVTPH2PS   32(DI)(AX*2), Y10
	VCVTPH2PS   48(DI)(AX*2), Y11
	VFMADD231PS Y8, Y4, Y0
	VFMADD231PS Y9, Y5, Y0
	VFMADD231PS Y10, Y6, Y0
	VFMADD231PS Y11, Y7, Y0
	ADDQ        $32, AX
	CMPQ        AX, BX
	JB          f16l8four

f16l8one:
	CMPQ        AX, CX
	JAE         f16l8done
	VCVTPH2PS   (SI)(AX*2), Y4
	VCVTPH2PS   (DI)(AX*2), Y8
	VFMADD231PS Y8, Y4, Y0
	ADDQ        $8, AX
	JMP         f16l8one

f16l8done:
	HSUM(Y0, X0, X1)
	VMOVSS X0, ret+48(FP)
	VZEROUPPER
	RET

// func dotBF16Lanes8AVX2(a, b []uint16) float32
TEXT ·dotBF16Lanes8AVX2(SB), NOSPLIT, $0-52
	VMOVDQU bf16Widen<>(SB), Y15
	MOVQ   a_base+0(FP), SI
	MOVQ   b_base+24(FP), DI
	MOVQ   a_len+8(FP), CX
	MOVQ   CX, BX
	ANDQ   $-32, BX
	VXORPS Y0, Y0, Y0
	XORQ   AX, AX
	CMPQ   AX, BX
	JAE    bf16l8one

bf16l8four:
	BF16LOAD((SI)(AX*2), Y4)
	BF16LOAD(16(SI)(AX*2), Y5)
	BF16LOAD(32(SI)(AX*2), Y6)
	BF16LOAD(48(SI)(AX*2), Y7)
	BF16LOAD((DI)(AX*2), Y8)
	BF16LOAD(16(DI)(AX*2), Y9)
	BF16LOAD(32(DI)(AX*2), Y10)
	BF16LOAD(48(DI)(AX*2), Y11)
	VFMADD231PS Y8, Y4, Y0
	VFMADD231PS Y9, Y5, Y0
	VFMADD231PS Y10, Y6, Y0
	VFMADD231PS Y11, Y7, Y0
	ADDQ        $32, AX
	CMPQ        AX, BX
	JB          bf16l8four

bf16l8one:
	CMPQ AX, CX
	JAE  bf16l8done
	BF16LOAD((SI)(AX*2), Y4)
	BF16LOAD((DI)(AX*2), Y8)
	VFMADD231PS Y8, Y4, Y0
	ADDQ        $8, AX
	JMP         bf16l8one

bf16l8done:
	HSUM(Y0, X0, X1)
	VMOVSS X0, ret+48(FP)
	VZEROUPPER
	RET

// func dotF32Lanes8x4AVX2(n int, w, x *float32, xStrideBytes int, out *[4]float32)
TEXT ·dotF32Lanes8x4AVX2(SB), NOSPLIT, $0-40
	LANES8X4_PROLOGUE

f32l8x4:
	VMOVUPS     (SI)(AX*4), Y4
	VFMADD231PS (DI)(AX*4), Y4, Y0
	VFMADD231PS (R8)(AX*4), Y4, Y1
	VFMADD231PS (R9)(AX*4), Y4, Y2
	VFMADD231PS (R10)(AX*4), Y4, Y3
	ADDQ        $8, AX
	CMPQ        AX, CX
	JB          f32l8x4

f32l8x4done:
	LANES8X4_EPILOGUE

// func dotF16Lanes8x4AVX2(n int, w, x *uint16, xStrideBytes int, out *[4]float32)
TEXT ·dotF16Lanes8x4AVX2(SB), NOSPLIT, $0-40
	LANES8X4_PROLOGUE

f16l8x4:
	VCVTPH2PS   (SI)(AX*2), Y4
	VCVTPH2PS   (DI)(AX*2), Y5
	VCVTPH2PS   (R8)(AX*2), Y6
	VCVTPH2PS   (R9)(AX*2), Y7
	VCVTPH2PS   (R10)(AX*2), Y8
	VFMADD231PS Y5, Y4, Y0
	VFMADD231PS Y6, Y4, Y1
	VFMADD231PS Y7, Y4, Y2
	VFMADD231PS Y8, Y4, Y3
	ADDQ        $8, AX
	CMPQ        AX, CX
	JB          f16l8x4
	LANES8X4_EPILOGUE

// func dotBF16Lanes8x4AVX2(n int, w, x *uint16, xStrideBytes int, out *[4]float32)
TEXT ·dotBF16Lanes8x4AVX2(SB), NOSPLIT, $0-40
	VMOVDQU bf16Widen<>(SB), Y15
	LANES8X4_PROLOGUE

bf16l8x4:
	BF16LOAD((SI)(AX*2), Y4)
	BF16LOAD((DI)(AX*2), Y5)
	BF16LOAD((R8)(AX*2), Y6)
	BF16LOAD((R9)(AX*2), Y7)
	BF16LOAD((R10)(AX*2), Y8)
	VFMADD231PS Y5, Y4, Y0
	VFMADD231PS Y6, Y4, Y1
	VFMADD231PS Y7, Y4, Y2
	VFMADD231PS Y8, Y4, Y3
	ADDQ        $8, AX
	CMPQ        AX, CX
	JB          bf16l8x4
	LANES8X4_EPILOGUE

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
