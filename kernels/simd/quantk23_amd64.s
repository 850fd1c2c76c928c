//go:build amd64 && !purego

#include "textflag.h"

// Q2_K and Q3_K row dots against Q8_K (AVX2), in llama.cpp's
// ggml_vec_dot_q2_K_q8_K / ggml_vec_dot_q3_K_q8_K AVX2 order: per
// super-block the integer products stay in 8 int32 lanes (VPMADDUBSW with
// the unsigned 2-bit quants, VPMADDWD with the int16 scales: lane m holds
// elements 32c+4m..32c+4m+3 of every 32-element chunk c), exact; then one
// 8-lane FMA chain acc = fma(d, float(lanes), acc) with d = dx*d_w, and
// hsum_float_8 at the end. Q2_K's mins go first into the same chain:
// acc = fma(-dx*dmin_w, float(min[2m]*bsums[2m]+min[2m+1]*bsums[2m+1]), acc).
// No int16 saturates: |2-bit q * q8| pairs are at most 3*128*2, Q3_K's
// high-bit term 4*128*2.
//
// Arguments: nb (super-blocks, > 0), w, x as slices; result float32.

// k23c03, k23c0f, k23c20: 0x03, 0x0f, 0x20 bytes.
DATA k23c03<>+0(SB)/8, $0x0303030303030303
DATA k23c03<>+8(SB)/8, $0x0303030303030303
DATA k23c03<>+16(SB)/8, $0x0303030303030303
DATA k23c03<>+24(SB)/8, $0x0303030303030303
GLOBL k23c03<>(SB), RODATA|NOPTR, $32

DATA k23c0f<>+0(SB)/8, $0x0f0f0f0f0f0f0f0f
DATA k23c0f<>+8(SB)/8, $0x0f0f0f0f0f0f0f0f
DATA k23c0f<>+16(SB)/8, $0x0f0f0f0f0f0f0f0f
DATA k23c0f<>+24(SB)/8, $0x0f0f0f0f0f0f0f0f
GLOBL k23c0f<>(SB), RODATA|NOPTR, $32

DATA k23c20<>+0(SB)/8, $0x2020202020202020
DATA k23c20<>+8(SB)/8, $0x2020202020202020
DATA k23c20<>+16(SB)/8, $0x2020202020202020
DATA k23c20<>+24(SB)/8, $0x2020202020202020
GLOBL k23c20<>(SB), RODATA|NOPTR, $32

// k23bit + 32b: bytes 1<<b (the hmask bit of Q3_K quants 32b..32b+31).
DATA k23bit<>+0(SB)/8, $0x0101010101010101
DATA k23bit<>+8(SB)/8, $0x0101010101010101
DATA k23bit<>+16(SB)/8, $0x0101010101010101
DATA k23bit<>+24(SB)/8, $0x0101010101010101
DATA k23bit<>+32(SB)/8, $0x0202020202020202
DATA k23bit<>+40(SB)/8, $0x0202020202020202
DATA k23bit<>+48(SB)/8, $0x0202020202020202
DATA k23bit<>+56(SB)/8, $0x0202020202020202
DATA k23bit<>+64(SB)/8, $0x0404040404040404
DATA k23bit<>+72(SB)/8, $0x0404040404040404
DATA k23bit<>+80(SB)/8, $0x0404040404040404
DATA k23bit<>+88(SB)/8, $0x0404040404040404
DATA k23bit<>+96(SB)/8, $0x0808080808080808
DATA k23bit<>+104(SB)/8, $0x0808080808080808
DATA k23bit<>+112(SB)/8, $0x0808080808080808
DATA k23bit<>+120(SB)/8, $0x0808080808080808
DATA k23bit<>+128(SB)/8, $0x1010101010101010
DATA k23bit<>+136(SB)/8, $0x1010101010101010
DATA k23bit<>+144(SB)/8, $0x1010101010101010
DATA k23bit<>+152(SB)/8, $0x1010101010101010
DATA k23bit<>+160(SB)/8, $0x2020202020202020
DATA k23bit<>+168(SB)/8, $0x2020202020202020
DATA k23bit<>+176(SB)/8, $0x2020202020202020
DATA k23bit<>+184(SB)/8, $0x2020202020202020
DATA k23bit<>+192(SB)/8, $0x4040404040404040
DATA k23bit<>+200(SB)/8, $0x4040404040404040
DATA k23bit<>+208(SB)/8, $0x4040404040404040
DATA k23bit<>+216(SB)/8, $0x4040404040404040
DATA k23bit<>+224(SB)/8, $0x8080808080808080
DATA k23bit<>+232(SB)/8, $0x8080808080808080
DATA k23bit<>+240(SB)/8, $0x8080808080808080
DATA k23bit<>+248(SB)/8, $0x8080808080808080
GLOBL k23bit<>(SB), RODATA|NOPTR, $256

// k23shuf + 32i: VPSHUFB mask (get_scale_shuffle_q3k(i)) taking int16
// scale 2i of a 128-bit half to the low half's 8 words and scale 2i+1 to
// the high half's.
DATA k23shuf<>+0(SB)/8, $0x0100010001000100
DATA k23shuf<>+8(SB)/8, $0x0100010001000100
DATA k23shuf<>+16(SB)/8, $0x0302030203020302
DATA k23shuf<>+24(SB)/8, $0x0302030203020302
DATA k23shuf<>+32(SB)/8, $0x0504050405040504
DATA k23shuf<>+40(SB)/8, $0x0504050405040504
DATA k23shuf<>+48(SB)/8, $0x0706070607060706
DATA k23shuf<>+56(SB)/8, $0x0706070607060706
DATA k23shuf<>+64(SB)/8, $0x0908090809080908
DATA k23shuf<>+72(SB)/8, $0x0908090809080908
DATA k23shuf<>+80(SB)/8, $0x0b0a0b0a0b0a0b0a
DATA k23shuf<>+88(SB)/8, $0x0b0a0b0a0b0a0b0a
DATA k23shuf<>+96(SB)/8, $0x0d0c0d0c0d0c0d0c
DATA k23shuf<>+104(SB)/8, $0x0d0c0d0c0d0c0d0c
DATA k23shuf<>+112(SB)/8, $0x0f0e0f0e0f0e0f0e
DATA k23shuf<>+120(SB)/8, $0x0f0e0f0e0f0e0f0e
GLOBL k23shuf<>(SB), RODATA|NOPTR, $128

// K23_SCALE: Y1 += the scaled products of the quants in Y10 (int16 pair
// sums) of scales 2i, 2i+1 of Y5 (SOFF = 32i). Clobbers Y12.
#define K23_SCALE(SOFF) \
	VPSHUFB  k23shuf<>+SOFF(SB), Y5, Y12; \
	VPMADDWD Y12, Y10, Y10;              \
	VPADDD   Y10, Y1, Y1

// K23_HSUM8: lane 0 of XR = ((l0+l4)+(l2+l6)) + ((l1+l5)+(l3+l7)) of YR
// (hsum_float_8; XR is YR's low half). Clobbers XT.
#define K23_HSUM8(YR, XR, XT) \
	VEXTRACTF128 $1, YR, XT; \
	VADDPS       XT, XR, XR; \
	VMOVHLPS     XR, XR, XT; \
	VADDPS       XT, XR, XR; \
	VMOVSHDUP    XR, XT;     \
	VADDSS       XT, XR, XR

// ---------------------------------------------------------------- Q2_K·Q8_K

// Q2_SUB: the 2-bit quants at bit SHIFT of Y9 (32 qs bytes) against the
// Q8_K quants at DI+XOFF, scales 2i, 2i+1 of Y5 (SOFF = 32i).
#define Q2_SUB(SHIFT, XOFF, SOFF) \
	VPSRLW     $SHIFT, Y9, Y10;   \
	VPAND      Y14, Y10, Y10;     \
	VPMADDUBSW XOFF(DI), Y10, Y10; \
	K23_SCALE(SOFF)

// func dotQ2_KQ8_KAVX2(nb int, w, x []byte) float32
// Y0 = the 8 float32 lanes, Y1 = the super-block's int32 lanes, Y4 = the
// 16 int16 scales, Y5 = those of one 128-element half in both halves.
TEXT ·dotQ2_KQ8_KAVX2(SB), NOSPLIT, $0-60
	MOVQ    nb+0(FP), CX
	MOVQ    w_base+8(FP), SI
	MOVQ    x_base+32(FP), DI
	VXORPS  Y0, Y0, Y0
	VMOVDQU k23c03<>(SB), Y14
	VMOVDQU k23c0f<>(SB), Y15

q2kloop:
	VMOVDQU      (SI), X3
	VPAND        X15, X3, X4    // scales
	VPSRLW       $4, X3, X6
	VPAND        X15, X6, X6    // mins
	VPMOVZXBW    X6, Y6
	VPMADDWD     260(DI), Y6, Y6
	VCVTDQ2PS    Y6, Y6
	VMOVD        80(SI), X2
	VCVTPH2PS    X2, X2
	VBROADCASTSS (DI), X7
	VMULPS       X7, X2, X2     // [dx*d_w, dx*dmin_w]
	VMOVSHDUP    X2, X7
	VBROADCASTSS X7, Y7
	VFNMADD231PS Y6, Y7, Y0     // acc = fma(-dx*dmin_w, mins, acc)
	VBROADCASTSS X2, Y2
	VPMOVZXBW    X4, Y4
	VPXOR        Y1, Y1, Y1
	VPERMQ       $0x44, Y4, Y5
	VMOVDQU      16(SI), Y9
	Q2_SUB(0, 4, 0)
	Q2_SUB(2, 36, 32)
	Q2_SUB(4, 68, 64)
	Q2_SUB(6, 100, 96)
	VPERMQ       $0xee, Y4, Y5
	VMOVDQU      48(SI), Y9
	Q2_SUB(0, 132, 0)
	Q2_SUB(2, 164, 32)
	Q2_SUB(4, 196, 64)
	Q2_SUB(6, 228, 96)
	VCVTDQ2PS    Y1, Y1
	VFMADD231PS  Y1, Y2, Y0
	ADDQ         $84, SI
	ADDQ         $292, DI
	DECQ         CX
	JNZ          q2kloop

	K23_HSUM8(Y0, X0, X1)
	VMOVSS X0, ret+56(FP)
	VZEROUPPER
	RET

// ---------------------------------------------------------------- Q3_K·Q8_K

// Q3_SUB: the quants at bit SHIFT of Y9 (32 qs bytes), high bits at bit
// BIT of Y13 (hmask; BOFF = 32*BIT), against the Q8_K quants at DI+XOFF:
// low*q8 - (4 where the high bit is clear)*q8, in int16 pairs, then the
// scales (K23_SCALE). Clobbers Y10, Y11.
#define Q3_SUB(SHIFT, BIT, BOFF, XOFF, SOFF) \
	VPSRLW     $SHIFT, Y9, Y10;             \
	VPAND      Y14, Y10, Y10;               \
	VPANDN     k23bit<>+BOFF(SB), Y13, Y11; \
	VPSRLW     $BIT, Y11, Y11;              \
	VPSLLW     $2, Y11, Y11;                \
	VPMADDUBSW XOFF(DI), Y10, Y10;          \
	VPMADDUBSW XOFF(DI), Y11, Y11;          \
	VPSUBW     Y11, Y10, Y10;               \
	K23_SCALE(SOFF)

// Q3_SCALES: Y4 = the sixteen 6-bit scales of the Q3_K block at SI minus
// 32, as int16, unpacked as llama.cpp does (kmask1/kmask2 on three
// uint32s). Clobbers AX, BX, DX, R8, R9, R13.
#define Q3_SCALES \
	MOVL      96(SI), AX;            \
	MOVL      100(SI), BX;           \
	MOVL      104(SI), DX;           \
	MOVL      AX, R8;                \
	ANDL      $0x0f0f0f0f, R8;       \
	MOVL      DX, R9;                \
	ANDL      $0x03030303, R9;       \
	SHLL      $4, R9;                \
	ORL       R9, R8;                \
	MOVL      BX, R13;               \
	ANDL      $0x0f0f0f0f, R13;      \
	MOVL      DX, R9;                \
	SHRL      $2, R9;                \
	ANDL      $0x03030303, R9;       \
	SHLL      $4, R9;                \
	ORL       R9, R13;               \
	SHRL      $4, AX;                \
	ANDL      $0x0f0f0f0f, AX;       \
	MOVL      DX, R9;                \
	SHRL      $4, R9;                \
	ANDL      $0x03030303, R9;       \
	SHLL      $4, R9;                \
	ORL       R9, AX;                \
	SHRL      $4, BX;                \
	ANDL      $0x0f0f0f0f, BX;       \
	SHRL      $6, DX;                \
	ANDL      $0x03030303, DX;       \
	SHLL      $4, DX;                \
	ORL       DX, BX;                \
	SHLQ      $32, R13;              \
	ORQ       R13, R8;               \
	SHLQ      $32, BX;               \
	ORQ       BX, AX;                \
	VMOVQ     R8, X4;                \
	VPINSRQ   $1, AX, X4, X4;        \
	VPSUBB    k23c20<>(SB), X4, X4;  \
	VPMOVSXBW X4, Y4

// func dotQ3_KQ8_KAVX2(nb int, w, x []byte) float32
// Registers as dotQ2_KQ8_KAVX2; Y13 = hmask. The sixteen 6-bit scales are
// unpacked as llama.cpp does (kmask1/kmask2 on three uint32s), minus 32.
TEXT ·dotQ3_KQ8_KAVX2(SB), NOSPLIT, $0-60
	MOVQ    nb+0(FP), CX
	MOVQ    w_base+8(FP), SI
	MOVQ    x_base+32(FP), DI
	VXORPS  Y0, Y0, Y0
	VMOVDQU k23c03<>(SB), Y14

q3kloop:
	Q3_SCALES
	VMOVDQU      (SI), Y13
	VPXOR        Y1, Y1, Y1
	VPERMQ       $0x44, Y4, Y5
	VMOVDQU      32(SI), Y9
	Q3_SUB(0, 0, 0, 4, 0)
	Q3_SUB(2, 1, 32, 36, 32)
	Q3_SUB(4, 2, 64, 68, 64)
	Q3_SUB(6, 3, 96, 100, 96)
	VPERMQ       $0xee, Y4, Y5
	VMOVDQU      64(SI), Y9
	Q3_SUB(0, 4, 128, 132, 0)
	Q3_SUB(2, 5, 160, 164, 32)
	Q3_SUB(4, 6, 192, 196, 64)
	Q3_SUB(6, 7, 224, 228, 96)
	MOVWLZX      108(SI), AX
	VMOVD        AX, X2
	VCVTPH2PS    X2, X2
	VMULSS       (DI), X2, X2
	VBROADCASTSS X2, Y2
	VCVTDQ2PS    Y1, Y1
	VFMADD231PS  Y1, Y2, Y0
	ADDQ         $110, SI
	ADDQ         $292, DI
	DECQ         CX
	JNZ          q3kloop

	K23_HSUM8(Y0, X0, X1)
	VMOVSS X0, ret+56(FP)
	VZEROUPPER
	RET

// ---------------------------------------------------------------- x4 flavours
// One weight row against four activation rows (xStride bytes apart), each
// row's lanes and FMA chain as in the single-row kernels above: rows 0..3
// in DI, R10, R11, R12, their float32 chains in Y0..Y3, their int32 lanes
// per super-block in Y8..Y11. Integer lanes are exact sums, so adding the
// high-bit term as its own VPMADDWD product changes no bit.

// K23X_POINTERS: DI, R10, R11, R12 = the four rows from DI and the
// stride in R8.
#define K23X_POINTERS \
	LEAQ (DI)(R8*1), R10; \
	LEAQ (DI)(R8*2), R11; \
	LEAQ (R10)(R8*2), R12

#define K23X_ADVANCE \
	ADDQ $292, DI;  \
	ADDQ $292, R10; \
	ADDQ $292, R11; \
	ADDQ $292, R12

// K23X_ACC: YL += (or -= with OP VPSUBD) the quants YQ against the row at
// XP+XOFF, scaled by Y7. Clobbers Y14.
#define K23X_ACC(OP, YQ, XOFF, XP, YL) \
	VPMADDUBSW XOFF(XP), YQ, Y14; \
	VPMADDWD   Y7, Y14, Y14;      \
	OP         Y14, YL, YL

// K23X_FOLD: YACC = fma(dx*dw, float(YL), YACC) for the row at XP, dw
// broadcast in Y5's place YD. Clobbers Y14.
#define K23X_FOLD(XP, YD, YL, YACC) \
	VBROADCASTSS (XP), Y14;    \
	VMULPS       YD, Y14, Y14; \
	VCVTDQ2PS    YL, YL;       \
	VFMADD231PS  YL, Y14, YACC

// K23X_HSUM_OUT: out (at AX) = hsum8 of Y0..Y3. Clobbers X5.
#define K23X_HSUM_OUT \
	K23_HSUM8(Y0, X0, X5);       \
	K23_HSUM8(Y1, X1, X5);       \
	K23_HSUM8(Y2, X2, X5);       \
	K23_HSUM8(Y3, X3, X5);       \
	VINSERTPS $0x10, X1, X0, X0; \
	VINSERTPS $0x20, X2, X0, X0; \
	VINSERTPS $0x30, X3, X0, X0; \
	VMOVUPS   X0, (AX)

#define K23X_ZERO \
	VXORPS Y0, Y0, Y0; \
	VXORPS Y1, Y1, Y1; \
	VXORPS Y2, Y2, Y2; \
	VXORPS Y3, Y3, Y3

// Q2X_MIN: acc YACC = fma(-dx*dmin_w, float(mins . bsums), YACC) for the
// row at XP (the single-row kernel's first FMA): Y6 = the int16 mins, Y7 =
// dmin_w broadcast. Clobbers Y8, Y14.
#define Q2X_MIN(XP, YACC) \
	VPMADDWD     260(XP), Y6, Y14; \
	VCVTDQ2PS    Y14, Y14;         \
	VBROADCASTSS (XP), Y8;         \
	VMULPS       Y7, Y8, Y8;       \
	VFNMADD231PS Y14, Y8, YACC

// Q2X_SUB: Q2_SUB for the four rows: the 2-bit quants at bit SHIFT of Y12
// into Y6, scales 2i, 2i+1 of Y5 (SOFF = 32i) into Y7.
#define Q2X_SUB(SHIFT, XOFF, SOFF) \
	VPSRLW  $SHIFT, Y12, Y6;              \
	VPAND   Y15, Y6, Y6;                  \
	VPSHUFB k23shuf<>+SOFF(SB), Y5, Y7;   \
	K23X_ACC(VPADDD, Y6, XOFF, DI, Y8);   \
	K23X_ACC(VPADDD, Y6, XOFF, R10, Y9);  \
	K23X_ACC(VPADDD, Y6, XOFF, R11, Y10); \
	K23X_ACC(VPADDD, Y6, XOFF, R12, Y11)

// func dotQ2_KQ8_Kx4AVX2(nb int, w, x []byte, xStride int, out *[4]float32)
TEXT ·dotQ2_KQ8_Kx4AVX2(SB), NOSPLIT, $0-72
	MOVQ    nb+0(FP), CX
	MOVQ    w_base+8(FP), SI
	MOVQ    x_base+32(FP), DI
	MOVQ    xStride+56(FP), R8
	K23X_POINTERS
	K23X_ZERO
	VMOVDQU k23c03<>(SB), Y15

q2kx4:
	// mins first: acc_k = fma(-dx_k*dmin_w, float(mins . bsums_k), acc_k)
	VMOVDQU      (SI), X4
	VPSRLW       $4, X4, X6
	VPAND        k23c0f<>(SB), X6, X6
	VPMOVZXBW    X6, Y6             // mins
	VPAND        k23c0f<>(SB), X4, X4
	VPMOVZXBW    X4, Y4             // scales
	VMOVD        80(SI), X13
	VCVTPH2PS    X13, X13           // [d_w, dmin_w]
	VMOVSHDUP    X13, X7
	VBROADCASTSS X7, Y7             // dmin_w
	Q2X_MIN(DI, Y0)
	Q2X_MIN(R10, Y1)
	Q2X_MIN(R11, Y2)
	Q2X_MIN(R12, Y3)
	VPXOR        Y8, Y8, Y8
	VPXOR        Y9, Y9, Y9
	VPXOR        Y10, Y10, Y10
	VPXOR        Y11, Y11, Y11
	VPERMQ       $0x44, Y4, Y5
	VMOVDQU      16(SI), Y12
	Q2X_SUB(0, 4, 0)
	Q2X_SUB(2, 36, 32)
	Q2X_SUB(4, 68, 64)
	Q2X_SUB(6, 100, 96)
	VPERMQ       $0xee, Y4, Y5
	VMOVDQU      48(SI), Y12
	Q2X_SUB(0, 132, 0)
	Q2X_SUB(2, 164, 32)
	Q2X_SUB(4, 196, 64)
	Q2X_SUB(6, 228, 96)
	VBROADCASTSS X13, Y13           // d_w
	K23X_FOLD(DI, Y13, Y8, Y0)
	K23X_FOLD(R10, Y13, Y9, Y1)
	K23X_FOLD(R11, Y13, Y10, Y2)
	K23X_FOLD(R12, Y13, Y11, Y3)
	ADDQ         $84, SI
	K23X_ADVANCE
	DECQ         CX
	JNZ          q2kx4

	MOVQ         out+64(FP), AX
	K23X_HSUM_OUT
	VZEROUPPER
	RET

// Q3X_SUB: Q3_SUB for the four rows: low bits in Y6 (reloaded from the qs
// at SI+QOFF), 4 where the high bit is clear in Y12, scales in Y7; the two
// products enter each row's lanes as separate VPMADDWD terms.
#define Q3X_SUB(SHIFT, BIT, BOFF, QOFF, XOFF, SOFF) \
	VMOVDQU    QOFF(SI), Y6;                 \
	VPSRLW     $SHIFT, Y6, Y6;               \
	VPAND      Y15, Y6, Y6;                  \
	VPANDN     k23bit<>+BOFF(SB), Y13, Y12;  \
	VPSRLW     $BIT, Y12, Y12;               \
	VPSLLW     $2, Y12, Y12;                 \
	VPSHUFB    k23shuf<>+SOFF(SB), Y5, Y7;   \
	K23X_ACC(VPADDD, Y6, XOFF, DI, Y8);      \
	K23X_ACC(VPSUBD, Y12, XOFF, DI, Y8);     \
	K23X_ACC(VPADDD, Y6, XOFF, R10, Y9);     \
	K23X_ACC(VPSUBD, Y12, XOFF, R10, Y9);    \
	K23X_ACC(VPADDD, Y6, XOFF, R11, Y10);    \
	K23X_ACC(VPSUBD, Y12, XOFF, R11, Y10);   \
	K23X_ACC(VPADDD, Y6, XOFF, R12, Y11);    \
	K23X_ACC(VPSUBD, Y12, XOFF, R12, Y11)

// func dotQ3_KQ8_Kx4AVX2(nb int, w, x []byte, xStride int, out *[4]float32)
TEXT ·dotQ3_KQ8_Kx4AVX2(SB), NOSPLIT, $0-72
	MOVQ    nb+0(FP), CX
	MOVQ    w_base+8(FP), SI
	MOVQ    x_base+32(FP), DI
	MOVQ    xStride+56(FP), R8
	K23X_POINTERS
	K23X_ZERO
	VMOVDQU k23c03<>(SB), Y15

q3kx4:
	Q3_SCALES
	VMOVDQU      (SI), Y13
	VPXOR        Y8, Y8, Y8
	VPXOR        Y9, Y9, Y9
	VPXOR        Y10, Y10, Y10
	VPXOR        Y11, Y11, Y11
	VPERMQ       $0x44, Y4, Y5
	Q3X_SUB(0, 0, 0, 32, 4, 0)
	Q3X_SUB(2, 1, 32, 32, 36, 32)
	Q3X_SUB(4, 2, 64, 32, 68, 64)
	Q3X_SUB(6, 3, 96, 32, 100, 96)
	VPERMQ       $0xee, Y4, Y5
	Q3X_SUB(0, 4, 128, 64, 132, 0)
	Q3X_SUB(2, 5, 160, 64, 164, 32)
	Q3X_SUB(4, 6, 192, 64, 196, 64)
	Q3X_SUB(6, 7, 224, 64, 228, 96)
	MOVWLZX      108(SI), AX
	VMOVD        AX, X13
	VCVTPH2PS    X13, X13
	VBROADCASTSS X13, Y13           // d_w
	K23X_FOLD(DI, Y13, Y8, Y0)
	K23X_FOLD(R10, Y13, Y9, Y1)
	K23X_FOLD(R11, Y13, Y10, Y2)
	K23X_FOLD(R12, Y13, Y11, Y3)
	ADDQ         $110, SI
	K23X_ADVANCE
	DECQ         CX
	JNZ          q3kx4

	MOVQ         out+64(FP), AX
	K23X_HSUM_OUT
	VZEROUPPER
	RET
