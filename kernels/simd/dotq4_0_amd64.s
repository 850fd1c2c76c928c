//go:build amd64 && !purego

#include "textflag.h"

// Q4_0·Q8_0 in llama.cpp's lane order for weight matrices with
// Rows%8 != 0 (tinyBLAS_Q0_AVX; see DotQ4_0Q8_0Lanes): per block b
//
//	I  = VPMADDWD(VPMADDUBSW(nib, q) - VPMADDUBSW(8, q), ones)
//	     8 int32 lanes, lane j = sum of (nib_e-8)*q_e, e = 4j..4j+3
//	L  = fma(bcast(dw*dx), float(I), L)   (one VFMADD231PS)
//
// and hsum8(L) at the end. The nibbles are unpacked in element order
// (low nibbles of bytes 0..15 = elements 0..15 in the low 128 bits, high
// nibbles = elements 16..31 in the high 128 bits), so the lanes are
// llama.cpp's without any permutation. The integer part is exact for every
// input byte (VPMADDUBSW pairs: |nib*q| sums <= 2*15*128, 8*q sums <=
// 2*8*128; no saturation), activation quants of -128 included.
//
// Arguments: nb (blocks, > 0), w, x as slices (x4: xStride, out).

DATA q4lNib<>+0(SB)/8, $0x0f0f0f0f0f0f0f0f
DATA q4lNib<>+8(SB)/8, $0x0f0f0f0f0f0f0f0f
DATA q4lNib<>+16(SB)/8, $0x0f0f0f0f0f0f0f0f
DATA q4lNib<>+24(SB)/8, $0x0f0f0f0f0f0f0f0f
GLOBL q4lNib<>(SB), RODATA|NOPTR, $32

DATA q4l08<>+0(SB)/8, $0x0808080808080808
DATA q4l08<>+8(SB)/8, $0x0808080808080808
DATA q4l08<>+16(SB)/8, $0x0808080808080808
DATA q4l08<>+24(SB)/8, $0x0808080808080808
GLOBL q4l08<>(SB), RODATA|NOPTR, $32

DATA q4lOnes16<>+0(SB)/8, $0x0001000100010001
DATA q4lOnes16<>+8(SB)/8, $0x0001000100010001
DATA q4lOnes16<>+16(SB)/8, $0x0001000100010001
DATA q4lOnes16<>+24(SB)/8, $0x0001000100010001
GLOBL q4lOnes16<>(SB), RODATA|NOPTR, $32

// Q4L_NIBBLES: YR = the 32 nibbles of the 16 bytes at MEM in element
// order. XR is YR's low half; XT a temporary; YMASK = 0x0f bytes.
#define Q4L_NIBBLES(MEM, YR, XR, XT, YMASK) \
	VMOVDQU     MEM, XR;        \
	VPSRLW      $4, XR, XT;     \
	VINSERTI128 $1, XT, YR, YR; \
	VPAND       YMASK, YR, YR

// Q4L_LANES: YR = float32 lanes I_j of the nibbles in YN against the 32
// activation quants at MEM. YT a temporary; Y14 = 0x08, Y15 = ones16.
#define Q4L_LANES(MEM, YN, YR, YT) \
	VMOVDQU    MEM, YT;      \
	VPMADDUBSW YT, YN, YR;   \
	VPMADDUBSW YT, Y14, YT;  \
	VPSUBW     YT, YR, YR;   \
	VPMADDWD   Y15, YR, YR;  \
	VCVTDQ2PS  YR, YR

// Q4L_HSUM8: lane 0 of XR = ((l0+l4)+(l2+l6)) + ((l1+l5)+(l3+l7)) for the
// 8 float32 lanes l of YR (hsum_float_8). XR is YR's low half.
#define Q4L_HSUM8(YR, XR, XT) \
	VEXTRACTF128 $1, YR, XT; \
	VADDPS       XT, XR, XR; \
	VMOVHLPS     XR, XR, XT; \
	VADDPS       XT, XR, XR; \
	VMOVSHDUP    XR, XT;     \
	VADDSS       XT, XR, XR

// func dotQ4_0Q8_0LanesAVX2(nb int, w, x []byte) float32
TEXT ·dotQ4_0Q8_0LanesAVX2(SB), NOSPLIT, $0-60
	MOVQ    nb+0(FP), CX
	MOVQ    w_base+8(FP), SI
	MOVQ    x_base+32(FP), DI
	VXORPS  Y0, Y0, Y0
	VMOVDQU q4lNib<>(SB), Y13
	VMOVDQU q4l08<>(SB), Y14
	VMOVDQU q4lOnes16<>(SB), Y15

q4lanes:
	Q4L_NIBBLES(2(SI), Y4, X4, X5, Y13)
	Q4L_LANES(2(DI), Y4, Y4, Y5)
	VPBROADCASTW (SI), X2
	VPBROADCASTW (DI), X3
	VCVTPH2PS    X2, Y2
	VCVTPH2PS    X3, Y3
	VMULPS       Y3, Y2, Y2 // s = dw*dx in every lane
	VFMADD231PS  Y2, Y4, Y0 // L = float(I)*s + L
	ADDQ         $18, SI
	ADDQ         $34, DI
	DECQ         CX
	JNZ          q4lanes

	Q4L_HSUM8(Y0, X0, X1)
	VMOVSS X0, ret+56(FP)
	VZEROUPPER
	RET

// Q4L_ROW: YACC = fma(bcast(dw*dx), float(I), YACC) for the activation
// block at base register XB, the weight nibbles in Y12 and dw in all 8
// lanes of Y8. Clobbers Y4, Y5, Y6.
#define Q4L_ROW(XB, YACC) \
	Q4L_LANES(2(XB), Y12, Y4, Y5); \
	VPBROADCASTW (XB), X6;         \
	VCVTPH2PS    X6, Y6;           \
	VMULPS       Y6, Y8, Y6;       \
	VFMADD231PS  Y6, Y4, YACC

// func dotQ4_0Q8_0Lanesx4AVX2(nb int, w, x []byte, xStride int, out *[4]float32)
TEXT ·dotQ4_0Q8_0Lanesx4AVX2(SB), NOSPLIT, $0-72
	MOVQ    nb+0(FP), CX
	MOVQ    w_base+8(FP), SI
	MOVQ    x_base+32(FP), DI
	MOVQ    xStride+56(FP), R8
	LEAQ    (DI)(R8*1), R10
	LEAQ    (DI)(R8*2), R11
	LEAQ    (R10)(R8*2), R12
	VXORPS  Y0, Y0, Y0
	VXORPS  Y1, Y1, Y1
	VXORPS  Y2, Y2, Y2
	VXORPS  Y3, Y3, Y3
	VMOVDQU q4lNib<>(SB), Y13
	VMOVDQU q4l08<>(SB), Y14
	VMOVDQU q4lOnes16<>(SB), Y15

q4lanesx4:
	Q4L_NIBBLES(2(SI), Y12, X12, X9, Y13)
	VPBROADCASTW (SI), X8
	VCVTPH2PS    X8, Y8
	Q4L_ROW(DI, Y0)
	Q4L_ROW(R10, Y1)
	Q4L_ROW(R11, Y2)
	Q4L_ROW(R12, Y3)
	ADDQ         $18, SI
	ADDQ         $34, DI
	ADDQ         $34, R10
	ADDQ         $34, R11
	ADDQ         $34, R12
	DECQ         CX
	JNZ          q4lanesx4

	MOVQ   out+64(FP), AX
	Q4L_HSUM8(Y0, X0, X4)
	Q4L_HSUM8(Y1, X1, X4)
	Q4L_HSUM8(Y2, X2, X4)
	Q4L_HSUM8(Y3, X3, X4)
	VMOVSS X0, (AX)
	VMOVSS X1, 4(AX)
	VMOVSS X2, 8(AX)
	VMOVSS X3, 12(AX)
	VZEROUPPER
	RET
