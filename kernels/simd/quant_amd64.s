//go:build amd64 && !purego

#include "textflag.h"

// Quantized row dots (AVX2, FMA, F16C), after ggml-cpu/arch/x86/quants.c.
// Every integer product is exact for every input byte: signed×signed
// (Q8_0·Q8_0) sign-extends to int16 and uses VPMADDWD; unsigned×signed
// (all others) uses VPMADDUBSW with the weight quants as the unsigned
// operand (at most 63*128*2 per int16 pair, no saturation) and removes
// an offset (-8, -16, -32) by subtracting VPMADDUBSW(offset, q8).
// llama.cpp's sign trick (VPSIGNB) is avoided: it overflows when an
// activation quant is -128.
//
// Arguments: nb (blocks, > 0), w, x as slices; result float32.

// Byte constants, 32 bytes each (loaded with VMOVDQU).
DATA c0f<>+0(SB)/8, $0x0f0f0f0f0f0f0f0f
DATA c0f<>+8(SB)/8, $0x0f0f0f0f0f0f0f0f
DATA c0f<>+16(SB)/8, $0x0f0f0f0f0f0f0f0f
DATA c0f<>+24(SB)/8, $0x0f0f0f0f0f0f0f0f
GLOBL c0f<>(SB), RODATA|NOPTR, $32

DATA c08<>+0(SB)/8, $0x0808080808080808
DATA c08<>+8(SB)/8, $0x0808080808080808
DATA c08<>+16(SB)/8, $0x0808080808080808
DATA c08<>+24(SB)/8, $0x0808080808080808
GLOBL c08<>(SB), RODATA|NOPTR, $32

DATA c10<>+0(SB)/8, $0x1010101010101010
DATA c10<>+8(SB)/8, $0x1010101010101010
DATA c10<>+16(SB)/8, $0x1010101010101010
DATA c10<>+24(SB)/8, $0x1010101010101010
GLOBL c10<>(SB), RODATA|NOPTR, $32

DATA c20<>+0(SB)/8, $0x2020202020202020
DATA c20<>+8(SB)/8, $0x2020202020202020
DATA c20<>+16(SB)/8, $0x2020202020202020
DATA c20<>+24(SB)/8, $0x2020202020202020
GLOBL c20<>(SB), RODATA|NOPTR, $32

DATA c30<>+0(SB)/8, $0x3030303030303030
DATA c30<>+8(SB)/8, $0x3030303030303030
DATA c30<>+16(SB)/8, $0x3030303030303030
DATA c30<>+24(SB)/8, $0x3030303030303030
GLOBL c30<>(SB), RODATA|NOPTR, $32

DATA c01<>+0(SB)/8, $0x0101010101010101
DATA c01<>+8(SB)/8, $0x0101010101010101
DATA c01<>+16(SB)/8, $0x0101010101010101
DATA c01<>+24(SB)/8, $0x0101010101010101
GLOBL c01<>(SB), RODATA|NOPTR, $32

// ones16: sixteen int16 ones (VPMADDWD with it sums int16 pairs to int32).
DATA ones16<>+0(SB)/8, $0x0001000100010001
DATA ones16<>+8(SB)/8, $0x0001000100010001
DATA ones16<>+16(SB)/8, $0x0001000100010001
DATA ones16<>+24(SB)/8, $0x0001000100010001
GLOBL ones16<>(SB), RODATA|NOPTR, $32

// bytes_from_bits_32 (ggml): broadcast the 32-bit qh, send byte j/8 to
// byte j, OR every bit but bit j%8, and compare with all-ones: byte j is
// 0xff exactly when bit j of qh is set.
DATA shufBits<>+0(SB)/8, $0x0000000000000000
DATA shufBits<>+8(SB)/8, $0x0101010101010101
DATA shufBits<>+16(SB)/8, $0x0202020202020202
DATA shufBits<>+24(SB)/8, $0x0303030303030303
GLOBL shufBits<>(SB), RODATA|NOPTR, $32

DATA bitMask<>+0(SB)/8, $0x7fbfdfeff7fbfdfe
DATA bitMask<>+8(SB)/8, $0x7fbfdfeff7fbfdfe
DATA bitMask<>+16(SB)/8, $0x7fbfdfeff7fbfdfe
DATA bitMask<>+24(SB)/8, $0x7fbfdfeff7fbfdfe
GLOBL bitMask<>(SB), RODATA|NOPTR, $32

// shufK4 + 32k: VPSHUFB mask broadcasting int16 lane k (of each 128-bit
// half) to all lanes: the scale of sub-block k in Q4_K/Q5_K.
DATA shufK4<>+0(SB)/8, $0x0100010001000100
DATA shufK4<>+8(SB)/8, $0x0100010001000100
DATA shufK4<>+16(SB)/8, $0x0100010001000100
DATA shufK4<>+24(SB)/8, $0x0100010001000100
DATA shufK4<>+32(SB)/8, $0x0302030203020302
DATA shufK4<>+40(SB)/8, $0x0302030203020302
DATA shufK4<>+48(SB)/8, $0x0302030203020302
DATA shufK4<>+56(SB)/8, $0x0302030203020302
DATA shufK4<>+64(SB)/8, $0x0504050405040504
DATA shufK4<>+72(SB)/8, $0x0504050405040504
DATA shufK4<>+80(SB)/8, $0x0504050405040504
DATA shufK4<>+88(SB)/8, $0x0504050405040504
DATA shufK4<>+96(SB)/8, $0x0706070607060706
DATA shufK4<>+104(SB)/8, $0x0706070607060706
DATA shufK4<>+112(SB)/8, $0x0706070607060706
DATA shufK4<>+120(SB)/8, $0x0706070607060706
DATA shufK4<>+128(SB)/8, $0x0908090809080908
DATA shufK4<>+136(SB)/8, $0x0908090809080908
DATA shufK4<>+144(SB)/8, $0x0908090809080908
DATA shufK4<>+152(SB)/8, $0x0908090809080908
DATA shufK4<>+160(SB)/8, $0x0b0a0b0a0b0a0b0a
DATA shufK4<>+168(SB)/8, $0x0b0a0b0a0b0a0b0a
DATA shufK4<>+176(SB)/8, $0x0b0a0b0a0b0a0b0a
DATA shufK4<>+184(SB)/8, $0x0b0a0b0a0b0a0b0a
DATA shufK4<>+192(SB)/8, $0x0d0c0d0c0d0c0d0c
DATA shufK4<>+200(SB)/8, $0x0d0c0d0c0d0c0d0c
DATA shufK4<>+208(SB)/8, $0x0d0c0d0c0d0c0d0c
DATA shufK4<>+216(SB)/8, $0x0d0c0d0c0d0c0d0c
DATA shufK4<>+224(SB)/8, $0x0f0e0f0e0f0e0f0e
DATA shufK4<>+232(SB)/8, $0x0f0e0f0e0f0e0f0e
DATA shufK4<>+240(SB)/8, $0x0f0e0f0e0f0e0f0e
DATA shufK4<>+248(SB)/8, $0x0f0e0f0e0f0e0f0e
GLOBL shufK4<>(SB), RODATA|NOPTR, $256

// shufQ6 + 16i: 128-bit VPSHUFB mask taking int8 scale 2i to bytes 0..7
// and scale 2i+1 to bytes 8..15 (Q6_K: one scale per 16 elements).
DATA shufQ6<>+0(SB)/8, $0x0000000000000000
DATA shufQ6<>+8(SB)/8, $0x0101010101010101
DATA shufQ6<>+16(SB)/8, $0x0202020202020202
DATA shufQ6<>+24(SB)/8, $0x0303030303030303
DATA shufQ6<>+32(SB)/8, $0x0404040404040404
DATA shufQ6<>+40(SB)/8, $0x0505050505050505
DATA shufQ6<>+48(SB)/8, $0x0606060606060606
DATA shufQ6<>+56(SB)/8, $0x0707070707070707
DATA shufQ6<>+64(SB)/8, $0x0808080808080808
DATA shufQ6<>+72(SB)/8, $0x0909090909090909
DATA shufQ6<>+80(SB)/8, $0x0a0a0a0a0a0a0a0a
DATA shufQ6<>+88(SB)/8, $0x0b0b0b0b0b0b0b0b
DATA shufQ6<>+96(SB)/8, $0x0c0c0c0c0c0c0c0c
DATA shufQ6<>+104(SB)/8, $0x0d0d0d0d0d0d0d0d
DATA shufQ6<>+112(SB)/8, $0x0e0e0e0e0e0e0e0e
DATA shufQ6<>+120(SB)/8, $0x0f0f0f0f0f0f0f0f
GLOBL shufQ6<>(SB), RODATA|NOPTR, $128

// HSUM8 reduces the 8 float lanes of YR into lane 0 of XR using XT.
#define HSUM8(YR, XR, XT) \
	VEXTRACTF128 $1, YR, XT; \
	VADDPS       XT, XR, XR; \
	VMOVHLPS     XR, XR, XT; \
	VADDPS       XT, XR, XR; \
	VMOVSHDUP    XR, XT;     \
	VADDSS       XT, XR, XR

// NIBBLES32 loads 16 packed bytes at MEM into YR as 32 unsigned nibbles in
// element order: bytes 0..15 = low nibbles, 16..31 = high nibbles.
// XR is YR's low half, XT a temporary, YMASK holds 0x0f bytes.
#define NIBBLES32(MEM, YR, XR, XT, YMASK) \
	VMOVDQU     MEM, XR;         \
	VPSRLW      $4, XR, XT;      \
	VINSERTI128 $1, XT, YR, YR;  \
	VPAND       YMASK, YR, YR

// ---------------------------------------------------------------- Q8_0·Q8_0

// Q8_0 block at byte offset OFF of SI (w) and DI (x): ACC += YD * float(sum qw*qx).
#define Q8_0_BLOCK(OFF, YD, ACC) \
	VPMOVSXBW   OFF+2(SI), Y4;  \
	VPMOVSXBW   OFF+18(SI), Y5; \
	VPMOVSXBW   OFF+2(DI), Y6;  \
	VPMOVSXBW   OFF+18(DI), Y7; \
	VPMADDWD    Y6, Y4, Y4;     \
	VPMADDWD    Y7, Y5, Y5;     \
	VPADDD      Y5, Y4, Y4;     \
	VCVTDQ2PS   Y4, Y4;         \
	VFMADD231PS Y4, YD, ACC

// func dotQ8_0Q8_0AVX2(nb int, w, x []byte) float32
TEXT ·dotQ8_0Q8_0AVX2(SB), NOSPLIT, $0-60
	MOVQ   nb+0(FP), CX
	MOVQ   w_base+8(FP), SI
	MOVQ   x_base+32(FP), DI
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1

q80pair:
	CMPQ CX, $2
	JB   q80single
	// Scales of two blocks: [dw0, dx0, dw1, dx1] -> d0 = dw0*dx0, d1 = dw1*dx1.
	VMOVD        (SI), X2
	VPINSRW      $1, (DI), X2, X2
	VPINSRW      $2, 34(SI), X2, X2
	VPINSRW      $3, 34(DI), X2, X2
	VCVTPH2PS    X2, X2
	VMOVSHDUP    X2, X3
	VMULPS       X3, X2, X2
	VBROADCASTSS X2, Y8
	VMOVHLPS     X2, X2, X3
	VBROADCASTSS X3, Y9
	Q8_0_BLOCK(0, Y8, Y0)
	Q8_0_BLOCK(34, Y9, Y1)
	ADDQ         $68, SI
	ADDQ         $68, DI
	SUBQ         $2, CX
	JMP          q80pair

q80single:
	TESTQ        CX, CX
	JZ           q80done
	VMOVD        (SI), X2
	VPINSRW      $1, (DI), X2, X2
	VCVTPH2PS    X2, X2
	VMOVSHDUP    X2, X3
	VMULSS       X3, X2, X2
	VBROADCASTSS X2, Y8
	Q8_0_BLOCK(0, Y8, Y0)

q80done:
	VADDPS Y1, Y0, Y0
	HSUM8(Y0, X0, X1)
	VMOVSS X0, ret+56(FP)
	VZEROUPPER
	RET

// ---------------------------------------------------------------- Q4_0·Q8_0

// Q4_0 block at SI+WOFF (18 B), Q8_0 at DI+XOFF (34 B):
// ACC += YD * float(sum nib*q - 8*sum q). Y12 = 0x0f, Y13 = 0x08, Y15 = ones16.
#define Q4_0_BLOCK(WOFF, XOFF, YD, ACC) \
	NIBBLES32(WOFF+2(SI), Y4, X4, X5, Y12); \
	VMOVDQU     XOFF+2(DI), Y6; \
	VPMADDUBSW  Y6, Y4, Y4;     \
	VPMADDUBSW  Y6, Y13, Y6;    \
	VPSUBW      Y6, Y4, Y4;     \
	VPMADDWD    Y15, Y4, Y4;    \
	VCVTDQ2PS   Y4, Y4;         \
	VFMADD231PS Y4, YD, ACC

// func dotQ4_0Q8_0AVX2(nb int, w, x []byte) float32
TEXT ·dotQ4_0Q8_0AVX2(SB), NOSPLIT, $0-60
	MOVQ    nb+0(FP), CX
	MOVQ    w_base+8(FP), SI
	MOVQ    x_base+32(FP), DI
	VXORPS  Y0, Y0, Y0
	VXORPS  Y1, Y1, Y1
	VMOVDQU c0f<>(SB), Y12
	VMOVDQU c08<>(SB), Y13
	VMOVDQU ones16<>(SB), Y15

q40pair:
	CMPQ         CX, $2
	JB           q40single
	VMOVD        (SI), X2
	VPINSRW      $1, (DI), X2, X2
	VPINSRW      $2, 18(SI), X2, X2
	VPINSRW      $3, 34(DI), X2, X2
	VCVTPH2PS    X2, X2
	VMOVSHDUP    X2, X3
	VMULPS       X3, X2, X2
	VBROADCASTSS X2, Y8
	VMOVHLPS     X2, X2, X3
	VBROADCASTSS X3, Y9
	Q4_0_BLOCK(0, 0, Y8, Y0)
	Q4_0_BLOCK(18, 34, Y9, Y1)
	ADDQ         $36, SI
	ADDQ         $68, DI
	SUBQ         $2, CX
	JMP          q40pair

q40single:
	TESTQ        CX, CX
	JZ           q40done
	VMOVD        (SI), X2
	VPINSRW      $1, (DI), X2, X2
	VCVTPH2PS    X2, X2
	VMOVSHDUP    X2, X3
	VMULSS       X3, X2, X2
	VBROADCASTSS X2, Y8
	Q4_0_BLOCK(0, 0, Y8, Y0)

q40done:
	VADDPS Y1, Y0, Y0
	HSUM8(Y0, X0, X1)
	VMOVSS X0, ret+56(FP)
	VZEROUPPER
	RET

// ---------------------------------------------------------------- Q4_1·Q8_1

// SCALES_DM converts a weight's (d, m) and an activation's (d, s), 4 bytes
// each at WMEM and XMEM: YD = broadcast dw*dx, XSUM += mw*sx.
#define SCALES_DM(WMEM, XMEM, YD, XSUM) \
	VMOVD        WMEM, X2;         \
	VPINSRD      $1, XMEM, X2, X2; \
	VCVTPH2PS    X2, X2;           \
	VMOVHLPS     X2, X2, X3;       \
	VMULPS       X3, X2, X2;       \
	VBROADCASTSS X2, YD;           \
	VMOVSHDUP    X2, X3;           \
	VADDSS       X3, XSUM, XSUM

// Q4_1 block at SI (20 B), Q8_1 at DI (36 B): ACC += YD * float(sum nib*q).
#define Q4_1_BLOCK(WOFF, XOFF, YD, ACC) \
	NIBBLES32(WOFF+4(SI), Y4, X4, X5, Y12); \
	VPMADDUBSW  XOFF+4(DI), Y4, Y4; \
	VPMADDWD    Y15, Y4, Y4;        \
	VCVTDQ2PS   Y4, Y4;             \
	VFMADD231PS Y4, YD, ACC

// func dotQ4_1Q8_1AVX2(nb int, w, x []byte) float32
// X10 sums the m*s terms, as ggml's summs.
TEXT ·dotQ4_1Q8_1AVX2(SB), NOSPLIT, $0-60
	MOVQ    nb+0(FP), CX
	MOVQ    w_base+8(FP), SI
	MOVQ    x_base+32(FP), DI
	VXORPS  Y0, Y0, Y0
	VXORPS  Y1, Y1, Y1
	VXORPS  X10, X10, X10
	VMOVDQU c0f<>(SB), Y12
	VMOVDQU ones16<>(SB), Y15

q41pair:
	CMPQ CX, $2
	JB   q41single
	SCALES_DM((SI), (DI), Y8, X10)
	SCALES_DM(20(SI), 36(DI), Y9, X10)
	Q4_1_BLOCK(0, 0, Y8, Y0)
	Q4_1_BLOCK(20, 36, Y9, Y1)
	ADDQ $40, SI
	ADDQ $72, DI
	SUBQ $2, CX
	JMP  q41pair

q41single:
	TESTQ CX, CX
	JZ    q41done
	SCALES_DM((SI), (DI), Y8, X10)
	Q4_1_BLOCK(0, 0, Y8, Y0)

q41done:
	VADDPS Y1, Y0, Y0
	HSUM8(Y0, X0, X1)
	VADDSS X10, X0, X0
	VMOVSS X0, ret+56(FP)
	VZEROUPPER
	RET

// ---------------------------------------------------------------- Q5_0·Q8_0

// HIGHBITS turns the 32-bit qh at MEM into YR: byte j = 0x10 if bit j of
// qh is set, else 0. Y10 = shufBits, Y11 = bitMask, Y14 = all ones,
// Y13 = 0x10 bytes.
#define HIGHBITS(MEM, YR) \
	VPBROADCASTD MEM, YR;         \
	VPSHUFB      Y10, YR, YR;     \
	VPOR         Y11, YR, YR;     \
	VPCMPEQB     Y14, YR, YR;     \
	VPAND        Y13, YR, YR

// Q5_0 block at SI (22 B: d, qh[4], qs[16]), Q8_0 at DI (34 B):
// ACC += YD * float(sum q5*q - 16*sum q).
#define Q5_0_BLOCK(WOFF, XOFF, YD, ACC) \
	NIBBLES32(WOFF+6(SI), Y4, X4, X5, Y12); \
	HIGHBITS(WOFF+2(SI), Y5); \
	VPOR        Y5, Y4, Y4;   \
	VMOVDQU     XOFF+2(DI), Y6; \
	VPMADDUBSW  Y6, Y4, Y4;   \
	VPMADDUBSW  Y6, Y13, Y6;  \
	VPSUBW      Y6, Y4, Y4;   \
	VPMADDWD    Y15, Y4, Y4;  \
	VCVTDQ2PS   Y4, Y4;       \
	VFMADD231PS Y4, YD, ACC

// func dotQ5_0Q8_0AVX2(nb int, w, x []byte) float32
TEXT ·dotQ5_0Q8_0AVX2(SB), NOSPLIT, $0-60
	MOVQ     nb+0(FP), CX
	MOVQ     w_base+8(FP), SI
	MOVQ     x_base+32(FP), DI
	VXORPS   Y0, Y0, Y0
	VXORPS   Y1, Y1, Y1
	VMOVDQU  shufBits<>(SB), Y10
	VMOVDQU  bitMask<>(SB), Y11
	VMOVDQU  c0f<>(SB), Y12
	VMOVDQU  c10<>(SB), Y13
	VPCMPEQB Y14, Y14, Y14
	VMOVDQU  ones16<>(SB), Y15

q50pair:
	CMPQ         CX, $2
	JB           q50single
	VMOVD        (SI), X2
	VPINSRW      $1, (DI), X2, X2
	VPINSRW      $2, 22(SI), X2, X2
	VPINSRW      $3, 34(DI), X2, X2
	VCVTPH2PS    X2, X2
	VMOVSHDUP    X2, X3
	VMULPS       X3, X2, X2
	VBROADCASTSS X2, Y8
	VMOVHLPS     X2, X2, X3
	VBROADCASTSS X3, Y9
	Q5_0_BLOCK(0, 0, Y8, Y0)
	Q5_0_BLOCK(22, 34, Y9, Y1)
	ADDQ         $44, SI
	ADDQ         $68, DI
	SUBQ         $2, CX
	JMP          q50pair

q50single:
	TESTQ        CX, CX
	JZ           q50done
	VMOVD        (SI), X2
	VPINSRW      $1, (DI), X2, X2
	VCVTPH2PS    X2, X2
	VMOVSHDUP    X2, X3
	VMULSS       X3, X2, X2
	VBROADCASTSS X2, Y8
	Q5_0_BLOCK(0, 0, Y8, Y0)

q50done:
	VADDPS Y1, Y0, Y0
	HSUM8(Y0, X0, X1)
	VMOVSS X0, ret+56(FP)
	VZEROUPPER
	RET

// ---------------------------------------------------------------- Q5_1·Q8_1

// Q5_1 block at SI (24 B: d, m, qh[4], qs[16]), Q8_1 at DI (36 B):
// ACC += YD * float(sum q5*q).
#define Q5_1_BLOCK(WOFF, XOFF, YD, ACC) \
	NIBBLES32(WOFF+8(SI), Y4, X4, X5, Y12); \
	HIGHBITS(WOFF+4(SI), Y5); \
	VPOR        Y5, Y4, Y4;   \
	VPMADDUBSW  XOFF+4(DI), Y4, Y4; \
	VPMADDWD    Y15, Y4, Y4;  \
	VCVTDQ2PS   Y4, Y4;       \
	VFMADD231PS Y4, YD, ACC

// func dotQ5_1Q8_1AVX2(nb int, w, x []byte) float32
TEXT ·dotQ5_1Q8_1AVX2(SB), NOSPLIT, $0-60
	MOVQ     nb+0(FP), CX
	MOVQ     w_base+8(FP), SI
	MOVQ     x_base+32(FP), DI
	VXORPS   Y0, Y0, Y0
	VXORPS   Y1, Y1, Y1
	VXORPS   X7, X7, X7
	VMOVDQU  shufBits<>(SB), Y10
	VMOVDQU  bitMask<>(SB), Y11
	VMOVDQU  c0f<>(SB), Y12
	VMOVDQU  c10<>(SB), Y13
	VPCMPEQB Y14, Y14, Y14
	VMOVDQU  ones16<>(SB), Y15

q51pair:
	CMPQ CX, $2
	JB   q51single
	SCALES_DM((SI), (DI), Y8, X7)
	SCALES_DM(24(SI), 36(DI), Y9, X7)
	Q5_1_BLOCK(0, 0, Y8, Y0)
	Q5_1_BLOCK(24, 36, Y9, Y1)
	ADDQ $48, SI
	ADDQ $72, DI
	SUBQ $2, CX
	JMP  q51pair

q51single:
	TESTQ CX, CX
	JZ    q51done
	SCALES_DM((SI), (DI), Y8, X7)
	Q5_1_BLOCK(0, 0, Y8, Y0)

q51done:
	VADDPS Y1, Y0, Y0
	HSUM8(Y0, X0, X1)
	VADDSS X7, X0, X0
	VMOVSS X0, ret+56(FP)
	VZEROUPPER
	RET

// ---------------------------------------------------------------- K-quant helpers

// KSCALES unpacks the 12 packed scale bytes at SI+4 of a Q4_K/Q5_K
// super-block (get_scale_min_k4) into X4 = [scale0..7, min0..7] bytes:
//
//	scales 0..3 = u0 & 0x3f3f3f3f
//	scales 4..7 = u2&0x0f0f0f0f | (u0>>6 & 0x03030303)<<4
//	mins   0..3 = u1 & 0x3f3f3f3f
//	mins   4..7 = u2>>4&0x0f0f0f0f | (u1>>6 & 0x03030303)<<4
//
// with u0, u1, u2 the little-endian words at SI+4, SI+8, SI+12.
// Clobbers AX, BX, DX, R8, R9.
#define KSCALES \
	MOVL    4(SI), AX;           \
	MOVL    8(SI), BX;           \
	MOVL    12(SI), DX;          \
	MOVL    AX, R8;              \
	SHRL    $6, R8;              \
	ANDL    $0x03030303, R8;     \
	SHLL    $4, R8;              \
	MOVL    DX, R9;              \
	ANDL    $0x0f0f0f0f, R9;     \
	ORL     R9, R8;              \
	ANDL    $0x3f3f3f3f, AX;     \
	MOVL    BX, R9;              \
	SHRL    $6, R9;              \
	ANDL    $0x03030303, R9;     \
	SHLL    $4, R9;              \
	SHRL    $4, DX;              \
	ANDL    $0x0f0f0f0f, DX;     \
	ORL     R9, DX;              \
	ANDL    $0x3f3f3f3f, BX;     \
	SHLQ    $32, R8;             \
	ORQ     R8, AX;              \
	SHLQ    $32, DX;             \
	ORQ     DX, BX;              \
	VMOVQ   AX, X4;              \
	VPINSRQ $1, BX, X4, X4

// KMINS: X4 = 16 scale/min bytes (KSCALES). Widens them to Y4 =
// [scale0..7 | min0..7] int16, and does XACCM -= XDMIN * float(sum_j
// min[j] * (bsums[2j]+bsums[2j+1])) with the Q8_K bsums at DI+260.
// Leaves Y4 = [scale0..7 | scale0..7] for KSHUF. Clobbers Y5..Y7.
#define KMINS(XDMIN, XACCM) \
	VPMOVZXBW     X4, Y4;           \
	VEXTRACTI128  $1, Y4, X5;       \
	VMOVDQU       260(DI), Y6;      \
	VEXTRACTI128  $1, Y6, X7;       \
	VPHADDW       X7, X6, X6;       \
	VPMADDWD      X6, X5, X5;       \
	VCVTDQ2PS     X5, X5;           \
	VFNMADD231PS  X5, XDMIN, XACCM; \
	VPERMQ        $0x44, Y4, Y4

// KD: X2 = [d, dmin] = Q8_K d (f32 at DI) times the f16 d, dmin at SI;
// Y8 = broadcast d, X9 = broadcast dmin.
#define KD \
	VMOVD        (SI), X2;   \
	VCVTPH2PS    X2, X2;     \
	VBROADCASTSS (DI), X3;   \
	VMULPS       X3, X2, X2; \
	VBROADCASTSS X2, Y8;     \
	VMOVSHDUP    X2, X9;     \
	VBROADCASTSS X9, X9

// K4_PAIR: sub-blocks 2G (YLO, low nibbles or 5-bit values) and 2G+1 (YHI)
// against Q8_K quants at DI+4+64G: Y12 += scale[2G]*sum lo*q8 +
// scale[2G+1]*sum hi*q8. Y4 holds the int16 scales (KMINS).
#define K4_PAIR(G, YLO, YHI) \
	VPMADDUBSW 4+64*G(DI), YLO, YLO;     \
	VPMADDUBSW 36+64*G(DI), YHI, YHI;    \
	VPSHUFB    shufK4<>+64*G(SB), Y4, Y6;    \
	VPSHUFB    shufK4<>+64*G+32(SB), Y4, Y7; \
	VPMADDWD   Y6, YLO, YLO;             \
	VPMADDWD   Y7, YHI, YHI;             \
	VPADDD     YLO, Y12, Y12;            \
	VPADDD     YHI, Y12, Y12

// ---------------------------------------------------------------- Q4_K·Q8_K

// Q4_K_GROUP: 64 elements, the 32 qs bytes at SI+16+32G.
#define Q4_K_GROUP(G) \
	VMOVDQU 16+32*G(SI), Y10; \
	VPSRLW  $4, Y10, Y11;     \
	VPAND   Y14, Y10, Y10;    \
	VPAND   Y14, Y11, Y11;    \
	K4_PAIR(G, Y10, Y11)

// func dotQ4_KQ8_KAVX2(nb int, w, x []byte) float32
// Y0: d-scaled sums; X1: dmin-scaled min terms (subtracted).
TEXT ·dotQ4_KQ8_KAVX2(SB), NOSPLIT, $0-60
	MOVQ    nb+0(FP), CX
	MOVQ    w_base+8(FP), SI
	MOVQ    x_base+32(FP), DI
	VXORPS  Y0, Y0, Y0
	VXORPS  X1, X1, X1
	VMOVDQU c0f<>(SB), Y14

q4kloop:
	KD
	KSCALES
	KMINS(X9, X1)
	VPXOR       Y12, Y12, Y12
	Q4_K_GROUP(0)
	Q4_K_GROUP(1)
	Q4_K_GROUP(2)
	Q4_K_GROUP(3)
	VCVTDQ2PS   Y12, Y12
	VFMADD231PS Y12, Y8, Y0
	ADDQ        $144, SI
	ADDQ        $292, DI
	DECQ        CX
	JNZ         q4kloop

	HSUM8(Y0, X0, X2)
	VMOVHLPS  X1, X1, X2
	VADDPS    X2, X1, X1
	VMOVSHDUP X1, X2
	VADDSS    X2, X1, X1
	VADDSS    X1, X0, X0
	VMOVSS    X0, ret+56(FP)
	VZEROUPPER
	RET

// ---------------------------------------------------------------- Q5_K·Q8_K

// Q5_K_GROUP: as Q4_K_GROUP with qs at SI+48+32G and the fifth bits from
// Y13 (qh, shifted right one bit per sub-block: bit 0 of each byte is the
// current sub-block's bit). Y15 = 0x01 bytes.
#define Q5_K_GROUP(G) \
	VMOVDQU 48+32*G(SI), Y10; \
	VPSRLW  $4, Y10, Y11;     \
	VPAND   Y14, Y10, Y10;    \
	VPAND   Y14, Y11, Y11;    \
	VPAND   Y15, Y13, Y5;     \
	VPSLLW  $4, Y5, Y5;       \
	VPOR    Y5, Y10, Y10;     \
	VPSRLW  $1, Y13, Y13;     \
	VPAND   Y15, Y13, Y5;     \
	VPSLLW  $4, Y5, Y5;       \
	VPOR    Y5, Y11, Y11;     \
	VPSRLW  $1, Y13, Y13;     \
	K4_PAIR(G, Y10, Y11)

// func dotQ5_KQ8_KAVX2(nb int, w, x []byte) float32
TEXT ·dotQ5_KQ8_KAVX2(SB), NOSPLIT, $0-60
	MOVQ    nb+0(FP), CX
	MOVQ    w_base+8(FP), SI
	MOVQ    x_base+32(FP), DI
	VXORPS  Y0, Y0, Y0
	VXORPS  X1, X1, X1
	VMOVDQU c0f<>(SB), Y14
	VMOVDQU c01<>(SB), Y15

q5kloop:
	KD
	KSCALES
	KMINS(X9, X1)
	VPXOR       Y12, Y12, Y12
	VMOVDQU     16(SI), Y13
	Q5_K_GROUP(0)
	Q5_K_GROUP(1)
	Q5_K_GROUP(2)
	Q5_K_GROUP(3)
	VCVTDQ2PS   Y12, Y12
	VFMADD231PS Y12, Y8, Y0
	ADDQ        $176, SI
	ADDQ        $292, DI
	DECQ        CX
	JNZ         q5kloop

	HSUM8(Y0, X0, X2)
	VMOVHLPS  X1, X1, X2
	VADDPS    X2, X1, X1
	VMOVSHDUP X1, X2
	VADDSS    X2, X1, X1
	VADDSS    X1, X0, X0
	VMOVSS    X0, ret+56(FP)
	VZEROUPPER
	RET

// ---------------------------------------------------------------- Q6_K·Q8_K

// Q6_SUB: YQ holds 32 6-bit quants (0..63) of sub-blocks 2I, 2I+1 against
// the Q8_K quants at DI+XOFF: Y1 += scale * (sum q6*q8 - 32*sum q8).
// SOFF = 16*I selects the shufQ6 mask (an offset, not an index: macro
// arguments are pasted as text, so products must not be nested).
// X3 = the 16 int8 scales, Y15 = 0x20 bytes.
#define Q6_SUB(YQ, XOFF, SOFF) \
	VMOVDQU    XOFF(DI), Y11;          \
	VPMADDUBSW Y11, YQ, YQ;            \
	VPMADDUBSW Y11, Y15, Y11;          \
	VPSUBW     Y11, YQ, YQ;            \
	VPSHUFB    shufQ6<>+SOFF(SB), X3, X11; \
	VPMOVSXBW  X11, Y11;               \
	VPMADDWD   Y11, YQ, YQ;            \
	VPADDD     YQ, Y1, Y1

// Q6_HALF: elements 128H..128H+127: ql at SI+64H (Y9, 32 bytes) and
// SI+64H+32 (Y10), qh at SI+128+32H (Y4). Y13 = 0x0f, Y14 = 0x30.
#define Q6_HALF(H) \
	VMOVDQU 128+32*H(SI), Y4;  \
	VMOVDQU 64*H(SI), Y9;      \
	VMOVDQU 64*H+32(SI), Y10;  \
	VPSLLW  $4, Y4, Y5;        \
	VPAND   Y14, Y5, Y5;       \
	VPAND   Y13, Y9, Y6;       \
	VPOR    Y6, Y5, Y5;        \
	Q6_SUB(Y5, 4+128*H, 64*H);  \
	VPSLLW  $2, Y4, Y5;        \
	VPAND   Y14, Y5, Y5;       \
	VPAND   Y13, Y10, Y6;      \
	VPOR    Y6, Y5, Y5;        \
	Q6_SUB(Y5, 36+128*H, 64*H+16); \
	VPAND   Y14, Y4, Y5;       \
	VPSRLW  $4, Y9, Y6;        \
	VPAND   Y13, Y6, Y6;       \
	VPOR    Y6, Y5, Y5;        \
	Q6_SUB(Y5, 68+128*H, 64*H+32); \
	VPSRLW  $2, Y4, Y5;        \
	VPAND   Y14, Y5, Y5;       \
	VPSRLW  $4, Y10, Y6;       \
	VPAND   Y13, Y6, Y6;       \
	VPOR    Y6, Y5, Y5;        \
	Q6_SUB(Y5, 100+128*H, 64*H+48)

// func dotQ6_KQ8_KAVX2(nb int, w, x []byte) float32
TEXT ·dotQ6_KQ8_KAVX2(SB), NOSPLIT, $0-60
	MOVQ    nb+0(FP), CX
	MOVQ    w_base+8(FP), SI
	MOVQ    x_base+32(FP), DI
	VXORPS  Y0, Y0, Y0
	VMOVDQU c0f<>(SB), Y13
	VMOVDQU c30<>(SB), Y14
	VMOVDQU c20<>(SB), Y15

q6kloop:
	MOVWLZX      208(SI), AX
	VMOVD        AX, X2
	VCVTPH2PS    X2, X2
	VMULSS       (DI), X2, X2
	VBROADCASTSS X2, Y2
	VMOVDQU      192(SI), X3
	VPXOR        Y1, Y1, Y1
	Q6_HALF(0)
	Q6_HALF(1)
	VCVTDQ2PS    Y1, Y1
	VFMADD231PS  Y1, Y2, Y0
	ADDQ         $210, SI
	ADDQ         $292, DI
	DECQ         CX
	JNZ          q6kloop

	HSUM8(Y0, X0, X1)
	VMOVSS X0, ret+56(FP)
	VZEROUPPER
	RET
