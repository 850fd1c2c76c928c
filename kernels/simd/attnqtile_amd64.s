//go:build amd64 && !purego

#include "textflag.h"

// Tile kernels for attention over a Q8_0 cache on AVX-512 (F, BW, VL,
// VNNI). Semantics and the reference: attnqtile.go. Hand-written.

// lanes 0, 4, 8, 12: where the four heads' sums end up (VPERMPS index).
DATA aqIdx<>+0(SB)/4, $0
DATA aqIdx<>+4(SB)/4, $4
DATA aqIdx<>+8(SB)/4, $8
DATA aqIdx<>+12(SB)/4, $12
DATA aqIdx<>+16(SB)/8, $0
DATA aqIdx<>+24(SB)/8, $0
DATA aqIdx<>+32(SB)/8, $0
DATA aqIdx<>+40(SB)/8, $0
DATA aqIdx<>+48(SB)/8, $0
DATA aqIdx<>+56(SB)/8, $0
GLOBL aqIdx<>(SB), RODATA|NOPTR, $64

// func attnScoresQ8_0AVX512(nb, n int, qp, k *byte, offs *int32, scale float32, m *[4]float32, gmask int, args *float32, ev *uint8)
//
// Per key: the row's quants biased to unsigned (x^0x80) go through
// VPDPBUSD with each query's quants, started from -128*sum(query quants of
// the lane): the exact int32 lane sums I_j of llama.cpp's AVX2 dot (lane j:
// elements 4j..4j+3 of a block). A block is loaded into both halves of a
// register and dotted with two heads' quants of that block at once, giving
// [I(h0) | I(h1)] (and [I(h2) | I(h3)]), accumulated as
// L = fma(dk*dq, float(I), L) block after block, then summed as
// hsum_float_8 does for all four heads at once: (L0+L4)+(L2+L6) and
// (L1+L5)+(L3+L7), added. Then the score scale and the running maximum.
TEXT ·attnScoresQ8_0AVX512(SB), NOSPLIT, $0-80
	MOVQ    nb+0(FP), BX
	SHRQ    $1, BX              // pairs of blocks
	MOVQ    n+8(FP), CX
	MOVQ    qp+16(FP), R8
	MOVQ    k+24(FP), SI
	MOVQ    offs+32(FP), DX
	VBROADCASTSS scale+40(FP), X31
	MOVQ    m+48(FP), AX
	VMOVUPS (AX), X30           // running maxima
	MOVQ    gmask+56(FP), R10
	MOVQ    args+64(FP), DI
	MOVQ    ev+72(FP), R9
	MOVL    $0x80808080, AX
	VPBROADCASTD AX, Z29
	VMOVDQU32 aqIdx<>(SB), Z28

aqsKey:
	CMPQ    CX, $9
	JB      aqsNoPf
	MOVLQSX 32(DX), AX          // prefetch the row 8 keys ahead
	PREFETCHT0 (SI)(AX*1)
	PREFETCHT0 63(SI)(AX*1)
aqsNoPf:
	MOVLQSX (DX), R11
	ADDQ    SI, R11             // the key row
	VPXORD  Z16, Z16, Z16       // L of heads 0,1
	VPXORD  Z17, Z17, Z17       // L of heads 2,3
	MOVQ    R8, R12
	MOVQ    BX, R13

aqsPair:
	VBROADCASTI64X4 2(R11), Z0      // block b's quants in both halves
	VPXORD       Z29, Z0, Z0
	VBROADCASTI64X4 36(R11), Z10    // block b+1's
	VPXORD       Z29, Z10, Z10
	VMOVDQU32    256(R12), Z1
	VPDPBUSD     (R12), Z0, Z1      // block b: [I(h0) | I(h1)]
	VMOVDQU32    320(R12), Z2
	VPDPBUSD     64(R12), Z10, Z2   // block b+1
	VMOVDQU32    384(R12), Z3
	VPDPBUSD     128(R12), Z0, Z3   // block b: [I(h2) | I(h3)]
	VMOVDQU32    448(R12), Z4
	VPDPBUSD     192(R12), Z10, Z4
	VPBROADCASTW (R11), Y5
	VCVTPH2PS    Y5, Z5             // dk of block b
	VPBROADCASTW 34(R11), Y6
	VCVTPH2PS    Y6, Z6             // dk of block b+1
	VCVTDQ2PS    Z1, Z1
	VCVTDQ2PS    Z2, Z2
	VCVTDQ2PS    Z3, Z3
	VCVTDQ2PS    Z4, Z4
	VMULPS       512(R12), Z5, Z9
	VFMADD231PS  Z9, Z1, Z16
	VMULPS       576(R12), Z6, Z9
	VFMADD231PS  Z9, Z2, Z16
	VMULPS       640(R12), Z5, Z9
	VFMADD231PS  Z9, Z3, Z17
	VMULPS       704(R12), Z6, Z9
	VFMADD231PS  Z9, Z4, Z17
	ADDQ         $68, R11
	ADDQ         $768, R12
	DECQ         R13
	JNZ          aqsPair

	// hsum_float_8 of the four heads: r = hi128 + lo128, then
	// r0+r2, r1+r3, then their sum, in lanes 0, 4, 8, 12.
	VSHUFF32X4 $0x88, Z17, Z16, Z18 // [L01.0, L01.2, L23.0, L23.2]: lanes 0-3 of each head
	VSHUFF32X4 $0xdd, Z17, Z16, Z19 // lanes 4-7
	VADDPS     Z18, Z19, Z18
	VPERMILPS  $0x4e, Z18, Z19
	VADDPS     Z19, Z18, Z18
	VMOVSHDUP  Z18, Z19
	VADDPS     Z19, Z18, Z18
	VPERMPS    Z18, Z28, Z18
	VMULPS     X31, X18, X18        // s = dot*scale
	VCMPPS     $0x1e, X30, X18, K1  // s > m (ordered)
	VSUBPS     X30, X18, X19        // s - m
	VSUBPS     X18, X30, K1, X19    // m - s at new maxima
	VMOVAPS    X18, K1, X30         // m = s there
	VMOVUPS    X19, (DI)
	KMOVW      K1, AX
	ANDL       R10, AX
	MOVB       AL, (R9)
	ADDQ       $16, DI
	INCQ       R9
	ADDQ       $4, DX
	DECQ       CX
	JNZ        aqsKey

	MOVQ    m+48(FP), AX
	VMOVUPS X30, (AX)
	VZEROUPPER
	RET

// func attnValuesQ8_0AVX512(nb, heads, n int, p *float32, ev *uint8, scl *float32, v *byte, offs *int32, acc *float32, s *[4]float32)
//
// The running sums first (four lanes, one key at a time), then per pair of
// blocks (64 elements) the g heads' accumulators in Z0..Z15, every key's
// value row dequantized once (q*d, exact) and added to each head with one
// FMA per element, in key order.
TEXT ·attnValuesQ8_0AVX512(SB), NOSPLIT, $0-80
	MOVQ    n+16(FP), CX
	MOVQ    p+24(FP), R8
	MOVQ    ev+32(FP), R9
	MOVQ    scl+40(FP), R10
	MOVQ    s+72(FP), AX
	VMOVUPS (AX), X20

aqvSum:
	MOVBLZX (R9), AX
	TESTL   AX, AX
	JZ      aqvSumPlain
	VMULPS  (R10), X20, X20
aqvSumPlain:
	VADDPS  (R8), X20, X20
	ADDQ    $16, R8
	ADDQ    $16, R10
	INCQ    R9
	DECQ    CX
	JNZ     aqvSum
	MOVQ    s+72(FP), AX
	VMOVUPS X20, (AX)

	MOVQ    nb+0(FP), BX
	MOVQ    BX, R13
	SHLQ    $7, R13             // bytes per head's accumulator (nb*32*4)
	SHRQ    $1, BX              // pairs of blocks
	MOVQ    v+48(FP), SI
	MOVQ    acc+64(FP), R12
	XORQ    DI, DI              // byte offset of the pair in a row
	MOVQ    heads+8(FP), AX
	CMPQ    AX, $1
	JEQ     aqv1
	CMPQ    AX, $2
	JEQ     aqv2
	CMPQ    AX, $3
	JEQ     aqv3
	JMP     aqv4

aqv1:
	MOVQ    R12, R14
	MOVQ    n+16(FP), CX
	MOVQ    p+24(FP), R8
	MOVQ    ev+32(FP), R9
	MOVQ    scl+40(FP), R10
	MOVQ    offs+56(FP), DX
	VMOVUPS 0(R14), Z0
	VMOVUPS 64(R14), Z1
	VMOVUPS 128(R14), Z2
	VMOVUPS 192(R14), Z3
aqv1Key:
	CMPQ    CX, $9
	JB      aqv1NoPf
	MOVLQSX 32(DX), AX
	ADDQ    SI, AX
	PREFETCHT0 (AX)(DI*1)
	PREFETCHT0 63(AX)(DI*1)
aqv1NoPf:
	MOVLQSX (DX), R11
	ADDQ    SI, R11
	ADDQ    DI, R11
	MOVBLZX (R9), AX
	TESTL   AX, AX
	JNZ     aqv1Ev
aqv1Row:
	VPMOVSXBD    2(R11), Z20
	VPMOVSXBD    18(R11), Z21
	VPMOVSXBD    36(R11), Z22
	VPMOVSXBD    52(R11), Z23
	VPBROADCASTW (R11), Y24
	VCVTPH2PS    Y24, Z24
	VPBROADCASTW 34(R11), Y25
	VCVTPH2PS    Y25, Z25
	VCVTDQ2PS    Z20, Z20
	VCVTDQ2PS    Z21, Z21
	VCVTDQ2PS    Z22, Z22
	VCVTDQ2PS    Z23, Z23
	VMULPS       Z24, Z20, Z20
	VMULPS       Z24, Z21, Z21
	VMULPS       Z25, Z22, Z22
	VMULPS       Z25, Z23, Z23
	VBROADCASTSS 0(R8), Z26
	VFMADD231PS  Z26, Z20, Z0
	VFMADD231PS  Z26, Z21, Z1
	VFMADD231PS  Z26, Z22, Z2
	VFMADD231PS  Z26, Z23, Z3
	ADDQ    $4, DX
	ADDQ    $16, R8
	ADDQ    $16, R10
	INCQ    R9
	DECQ    CX
	JNZ     aqv1Key
	MOVQ    R12, R14
	VMOVUPS Z0, 0(R14)
	VMOVUPS Z1, 64(R14)
	VMOVUPS Z2, 128(R14)
	VMOVUPS Z3, 192(R14)
	ADDQ    $256, R12
	ADDQ    $68, DI
	DECQ    BX
	JNZ     aqv1
	VZEROUPPER
	RET

aqv1Ev:
	VBROADCASTSS 0(R10), Z26
	VMULPS       Z26, Z0, Z0
	VMULPS       Z26, Z1, Z1
	VMULPS       Z26, Z2, Z2
	VMULPS       Z26, Z3, Z3
	JMP     aqv1Row

aqv2:
	MOVQ    R12, R14
	MOVQ    n+16(FP), CX
	MOVQ    p+24(FP), R8
	MOVQ    ev+32(FP), R9
	MOVQ    scl+40(FP), R10
	MOVQ    offs+56(FP), DX
	VMOVUPS 0(R14), Z0
	VMOVUPS 64(R14), Z1
	VMOVUPS 128(R14), Z2
	VMOVUPS 192(R14), Z3
	ADDQ    R13, R14
	VMOVUPS 0(R14), Z4
	VMOVUPS 64(R14), Z5
	VMOVUPS 128(R14), Z6
	VMOVUPS 192(R14), Z7
aqv2Key:
	CMPQ    CX, $9
	JB      aqv2NoPf
	MOVLQSX 32(DX), AX
	ADDQ    SI, AX
	PREFETCHT0 (AX)(DI*1)
	PREFETCHT0 63(AX)(DI*1)
aqv2NoPf:
	MOVLQSX (DX), R11
	ADDQ    SI, R11
	ADDQ    DI, R11
	MOVBLZX (R9), AX
	TESTL   AX, AX
	JNZ     aqv2Ev
aqv2Row:
	VPMOVSXBD    2(R11), Z20
	VPMOVSXBD    18(R11), Z21
	VPMOVSXBD    36(R11), Z22
	VPMOVSXBD    52(R11), Z23
	VPBROADCASTW (R11), Y24
	VCVTPH2PS    Y24, Z24
	VPBROADCASTW 34(R11), Y25
	VCVTPH2PS    Y25, Z25
	VCVTDQ2PS    Z20, Z20
	VCVTDQ2PS    Z21, Z21
	VCVTDQ2PS    Z22, Z22
	VCVTDQ2PS    Z23, Z23
	VMULPS       Z24, Z20, Z20
	VMULPS       Z24, Z21, Z21
	VMULPS       Z25, Z22, Z22
	VMULPS       Z25, Z23, Z23
	VBROADCASTSS 0(R8), Z26
	VFMADD231PS  Z26, Z20, Z0
	VFMADD231PS  Z26, Z21, Z1
	VFMADD231PS  Z26, Z22, Z2
	VFMADD231PS  Z26, Z23, Z3
	VBROADCASTSS 4(R8), Z26
	VFMADD231PS  Z26, Z20, Z4
	VFMADD231PS  Z26, Z21, Z5
	VFMADD231PS  Z26, Z22, Z6
	VFMADD231PS  Z26, Z23, Z7
	ADDQ    $4, DX
	ADDQ    $16, R8
	ADDQ    $16, R10
	INCQ    R9
	DECQ    CX
	JNZ     aqv2Key
	MOVQ    R12, R14
	VMOVUPS Z0, 0(R14)
	VMOVUPS Z1, 64(R14)
	VMOVUPS Z2, 128(R14)
	VMOVUPS Z3, 192(R14)
	ADDQ    R13, R14
	VMOVUPS Z4, 0(R14)
	VMOVUPS Z5, 64(R14)
	VMOVUPS Z6, 128(R14)
	VMOVUPS Z7, 192(R14)
	ADDQ    $256, R12
	ADDQ    $68, DI
	DECQ    BX
	JNZ     aqv2
	VZEROUPPER
	RET

aqv2Ev:
	VBROADCASTSS 0(R10), Z26
	VMULPS       Z26, Z0, Z0
	VMULPS       Z26, Z1, Z1
	VMULPS       Z26, Z2, Z2
	VMULPS       Z26, Z3, Z3
	VBROADCASTSS 4(R10), Z26
	VMULPS       Z26, Z4, Z4
	VMULPS       Z26, Z5, Z5
	VMULPS       Z26, Z6, Z6
	VMULPS       Z26, Z7, Z7
	JMP     aqv2Row

aqv3:
	MOVQ    R12, R14
	MOVQ    n+16(FP), CX
	MOVQ    p+24(FP), R8
	MOVQ    ev+32(FP), R9
	MOVQ    scl+40(FP), R10
	MOVQ    offs+56(FP), DX
	VMOVUPS 0(R14), Z0
	VMOVUPS 64(R14), Z1
	VMOVUPS 128(R14), Z2
	VMOVUPS 192(R14), Z3
	ADDQ    R13, R14
	VMOVUPS 0(R14), Z4
	VMOVUPS 64(R14), Z5
	VMOVUPS 128(R14), Z6
	VMOVUPS 192(R14), Z7
	ADDQ    R13, R14
	VMOVUPS 0(R14), Z8
	VMOVUPS 64(R14), Z9
	VMOVUPS 128(R14), Z10
	VMOVUPS 192(R14), Z11
aqv3Key:
	CMPQ    CX, $9
	JB      aqv3NoPf
	MOVLQSX 32(DX), AX
	ADDQ    SI, AX
	PREFETCHT0 (AX)(DI*1)
	PREFETCHT0 63(AX)(DI*1)
aqv3NoPf:
	MOVLQSX (DX), R11
	ADDQ    SI, R11
	ADDQ    DI, R11
	MOVBLZX (R9), AX
	TESTL   AX, AX
	JNZ     aqv3Ev
aqv3Row:
	VPMOVSXBD    2(R11), Z20
	VPMOVSXBD    18(R11), Z21
	VPMOVSXBD    36(R11), Z22
	VPMOVSXBD    52(R11), Z23
	VPBROADCASTW (R11), Y24
	VCVTPH2PS    Y24, Z24
	VPBROADCASTW 34(R11), Y25
	VCVTPH2PS    Y25, Z25
	VCVTDQ2PS    Z20, Z20
	VCVTDQ2PS    Z21, Z21
	VCVTDQ2PS    Z22, Z22
	VCVTDQ2PS    Z23, Z23
	VMULPS       Z24, Z20, Z20
	VMULPS       Z24, Z21, Z21
	VMULPS       Z25, Z22, Z22
	VMULPS       Z25, Z23, Z23
	VBROADCASTSS 0(R8), Z26
	VFMADD231PS  Z26, Z20, Z0
	VFMADD231PS  Z26, Z21, Z1
	VFMADD231PS  Z26, Z22, Z2
	VFMADD231PS  Z26, Z23, Z3
	VBROADCASTSS 4(R8), Z26
	VFMADD231PS  Z26, Z20, Z4
	VFMADD231PS  Z26, Z21, Z5
	VFMADD231PS  Z26, Z22, Z6
	VFMADD231PS  Z26, Z23, Z7
	VBROADCASTSS 8(R8), Z26
	VFMADD231PS  Z26, Z20, Z8
	VFMADD231PS  Z26, Z21, Z9
	VFMADD231PS  Z26, Z22, Z10
	VFMADD231PS  Z26, Z23, Z11
	ADDQ    $4, DX
	ADDQ    $16, R8
	ADDQ    $16, R10
	INCQ    R9
	DECQ    CX
	JNZ     aqv3Key
	MOVQ    R12, R14
	VMOVUPS Z0, 0(R14)
	VMOVUPS Z1, 64(R14)
	VMOVUPS Z2, 128(R14)
	VMOVUPS Z3, 192(R14)
	ADDQ    R13, R14
	VMOVUPS Z4, 0(R14)
	VMOVUPS Z5, 64(R14)
	VMOVUPS Z6, 128(R14)
	VMOVUPS Z7, 192(R14)
	ADDQ    R13, R14
	VMOVUPS Z8, 0(R14)
	VMOVUPS Z9, 64(R14)
	VMOVUPS Z10, 128(R14)
	VMOVUPS Z11, 192(R14)
	ADDQ    $256, R12
	ADDQ    $68, DI
	DECQ    BX
	JNZ     aqv3
	VZEROUPPER
	RET

aqv3Ev:
	VBROADCASTSS 0(R10), Z26
	VMULPS       Z26, Z0, Z0
	VMULPS       Z26, Z1, Z1
	VMULPS       Z26, Z2, Z2
	VMULPS       Z26, Z3, Z3
	VBROADCASTSS 4(R10), Z26
	VMULPS       Z26, Z4, Z4
	VMULPS       Z26, Z5, Z5
	VMULPS       Z26, Z6, Z6
	VMULPS       Z26, Z7, Z7
	VBROADCASTSS 8(R10), Z26
	VMULPS       Z26, Z8, Z8
	VMULPS       Z26, Z9, Z9
	VMULPS       Z26, Z10, Z10
	VMULPS       Z26, Z11, Z11
	JMP     aqv3Row

aqv4:
	MOVQ    R12, R14
	MOVQ    n+16(FP), CX
	MOVQ    p+24(FP), R8
	MOVQ    ev+32(FP), R9
	MOVQ    scl+40(FP), R10
	MOVQ    offs+56(FP), DX
	VMOVUPS 0(R14), Z0
	VMOVUPS 64(R14), Z1
	VMOVUPS 128(R14), Z2
	VMOVUPS 192(R14), Z3
	ADDQ    R13, R14
	VMOVUPS 0(R14), Z4
	VMOVUPS 64(R14), Z5
	VMOVUPS 128(R14), Z6
	VMOVUPS 192(R14), Z7
	ADDQ    R13, R14
	VMOVUPS 0(R14), Z8
	VMOVUPS 64(R14), Z9
	VMOVUPS 128(R14), Z10
	VMOVUPS 192(R14), Z11
	ADDQ    R13, R14
	VMOVUPS 0(R14), Z12
	VMOVUPS 64(R14), Z13
	VMOVUPS 128(R14), Z14
	VMOVUPS 192(R14), Z15
aqv4Key:
	CMPQ    CX, $9
	JB      aqv4NoPf
	MOVLQSX 32(DX), AX
	ADDQ    SI, AX
	PREFETCHT0 (AX)(DI*1)
	PREFETCHT0 63(AX)(DI*1)
aqv4NoPf:
	MOVLQSX (DX), R11
	ADDQ    SI, R11
	ADDQ    DI, R11
	MOVBLZX (R9), AX
	TESTL   AX, AX
	JNZ     aqv4Ev
aqv4Row:
	VPMOVSXBD    2(R11), Z20
	VPMOVSXBD    18(R11), Z21
	VPMOVSXBD    36(R11), Z22
	VPMOVSXBD    52(R11), Z23
	VPBROADCASTW (R11), Y24
	VCVTPH2PS    Y24, Z24
	VPBROADCASTW 34(R11), Y25
	VCVTPH2PS    Y25, Z25
	VCVTDQ2PS    Z20, Z20
	VCVTDQ2PS    Z21, Z21
	VCVTDQ2PS    Z22, Z22
	VCVTDQ2PS    Z23, Z23
	VMULPS       Z24, Z20, Z20
	VMULPS       Z24, Z21, Z21
	VMULPS       Z25, Z22, Z22
	VMULPS       Z25, Z23, Z23
	VBROADCASTSS 0(R8), Z26
	VFMADD231PS  Z26, Z20, Z0
	VFMADD231PS  Z26, Z21, Z1
	VFMADD231PS  Z26, Z22, Z2
	VFMADD231PS  Z26, Z23, Z3
	VBROADCASTSS 4(R8), Z26
	VFMADD231PS  Z26, Z20, Z4
	VFMADD231PS  Z26, Z21, Z5
	VFMADD231PS  Z26, Z22, Z6
	VFMADD231PS  Z26, Z23, Z7
	VBROADCASTSS 8(R8), Z26
	VFMADD231PS  Z26, Z20, Z8
	VFMADD231PS  Z26, Z21, Z9
	VFMADD231PS  Z26, Z22, Z10
	VFMADD231PS  Z26, Z23, Z11
	VBROADCASTSS 12(R8), Z26
	VFMADD231PS  Z26, Z20, Z12
	VFMADD231PS  Z26, Z21, Z13
	VFMADD231PS  Z26, Z22, Z14
	VFMADD231PS  Z26, Z23, Z15
	ADDQ    $4, DX
	ADDQ    $16, R8
	ADDQ    $16, R10
	INCQ    R9
	DECQ    CX
	JNZ     aqv4Key
	MOVQ    R12, R14
	VMOVUPS Z0, 0(R14)
	VMOVUPS Z1, 64(R14)
	VMOVUPS Z2, 128(R14)
	VMOVUPS Z3, 192(R14)
	ADDQ    R13, R14
	VMOVUPS Z4, 0(R14)
	VMOVUPS Z5, 64(R14)
	VMOVUPS Z6, 128(R14)
	VMOVUPS Z7, 192(R14)
	ADDQ    R13, R14
	VMOVUPS Z8, 0(R14)
	VMOVUPS Z9, 64(R14)
	VMOVUPS Z10, 128(R14)
	VMOVUPS Z11, 192(R14)
	ADDQ    R13, R14
	VMOVUPS Z12, 0(R14)
	VMOVUPS Z13, 64(R14)
	VMOVUPS Z14, 128(R14)
	VMOVUPS Z15, 192(R14)
	ADDQ    $256, R12
	ADDQ    $68, DI
	DECQ    BX
	JNZ     aqv4
	VZEROUPPER
	RET

aqv4Ev:
	VBROADCASTSS 0(R10), Z26
	VMULPS       Z26, Z0, Z0
	VMULPS       Z26, Z1, Z1
	VMULPS       Z26, Z2, Z2
	VMULPS       Z26, Z3, Z3
	VBROADCASTSS 4(R10), Z26
	VMULPS       Z26, Z4, Z4
	VMULPS       Z26, Z5, Z5
	VMULPS       Z26, Z6, Z6
	VMULPS       Z26, Z7, Z7
	VBROADCASTSS 8(R10), Z26
	VMULPS       Z26, Z8, Z8
	VMULPS       Z26, Z9, Z9
	VMULPS       Z26, Z10, Z10
	VMULPS       Z26, Z11, Z11
	VBROADCASTSS 12(R10), Z26
	VMULPS       Z26, Z12, Z12
	VMULPS       Z26, Z13, Z13
	VMULPS       Z26, Z14, Z14
	VMULPS       Z26, Z15, Z15
	JMP     aqv4Row

// glibc's expf constants and 2^(i/32) table (as attn_amd64.s's ef*).
DATA aqeTab<>+0(SB)/8, $0x3ff0000000000000
DATA aqeTab<>+8(SB)/8, $0x3fefd9b0d3158574
DATA aqeTab<>+16(SB)/8, $0x3fefb5586cf9890f
DATA aqeTab<>+24(SB)/8, $0x3fef9301d0125b51
DATA aqeTab<>+32(SB)/8, $0x3fef72b83c7d517b
DATA aqeTab<>+40(SB)/8, $0x3fef54873168b9aa
DATA aqeTab<>+48(SB)/8, $0x3fef387a6e756238
DATA aqeTab<>+56(SB)/8, $0x3fef1e9df51fdee1
DATA aqeTab<>+64(SB)/8, $0x3fef06fe0a31b715
DATA aqeTab<>+72(SB)/8, $0x3feef1a7373aa9cb
DATA aqeTab<>+80(SB)/8, $0x3feedea64c123422
DATA aqeTab<>+88(SB)/8, $0x3feece086061892d
DATA aqeTab<>+96(SB)/8, $0x3feebfdad5362a27
DATA aqeTab<>+104(SB)/8, $0x3feeb42b569d4f82
DATA aqeTab<>+112(SB)/8, $0x3feeab07dd485429
DATA aqeTab<>+120(SB)/8, $0x3feea47eb03a5585
DATA aqeTab<>+128(SB)/8, $0x3feea09e667f3bcd
DATA aqeTab<>+136(SB)/8, $0x3fee9f75e8ec5f74
DATA aqeTab<>+144(SB)/8, $0x3feea11473eb0187
DATA aqeTab<>+152(SB)/8, $0x3feea589994cce13
DATA aqeTab<>+160(SB)/8, $0x3feeace5422aa0db
DATA aqeTab<>+168(SB)/8, $0x3feeb737b0cdc5e5
DATA aqeTab<>+176(SB)/8, $0x3feec49182a3f090
DATA aqeTab<>+184(SB)/8, $0x3feed503b23e255d
DATA aqeTab<>+192(SB)/8, $0x3feee89f995ad3ad
DATA aqeTab<>+200(SB)/8, $0x3feeff76f2fb5e47
DATA aqeTab<>+208(SB)/8, $0x3fef199bdd85529c
DATA aqeTab<>+216(SB)/8, $0x3fef3720dcef9069
DATA aqeTab<>+224(SB)/8, $0x3fef5818dcfba487
DATA aqeTab<>+232(SB)/8, $0x3fef7c97337b9b5f
DATA aqeTab<>+240(SB)/8, $0x3fefa4afa2a490da
DATA aqeTab<>+248(SB)/8, $0x3fefd0765b6e4540
GLOBL aqeTab<>(SB), RODATA|NOPTR, $256
DATA aqeInv<>+0(SB)/8, $0x40471547652b82fe
GLOBL aqeInv<>(SB), RODATA|NOPTR, $8
DATA aqeShift<>+0(SB)/8, $0x4338000000000000
GLOBL aqeShift<>(SB), RODATA|NOPTR, $8
DATA aqeC0<>+0(SB)/8, $0x3ebc6af84b912394
GLOBL aqeC0<>(SB), RODATA|NOPTR, $8
DATA aqeC1<>+0(SB)/8, $0x3f2ebfce50fac4f3
GLOBL aqeC1<>(SB), RODATA|NOPTR, $8
DATA aqeC2<>+0(SB)/8, $0x3f962e42ff0c52d6
GLOBL aqeC2<>(SB), RODATA|NOPTR, $8
DATA aqeOne<>+0(SB)/8, $0x3ff0000000000000
GLOBL aqeOne<>(SB), RODATA|NOPTR, $8
DATA aqeMask<>+0(SB)/8, $0x000000000000001f
GLOBL aqeMask<>(SB), RODATA|NOPTR, $8

// func expfRowAVX512(y, x *float32, n int) int
//
// Expf of n (a multiple of 8) values, eight per step in float64 lanes:
// expfRowAVX2's operations, the table read by two two-register permutes
// instead of a gather. It stops before the first eight holding an input
// Expf treats apart (|x| >= 88, Inf, NaN: exponent field >= 0x42b of the
// top 11 bits after the sign) and returns how many it wrote.
TEXT ·expfRowAVX512(SB), NOSPLIT, $0-32
	MOVQ y+0(FP), DI
	MOVQ x+8(FP), SI
	MOVQ n+16(FP), CX
	XORQ DX, DX
	VBROADCASTSD aqeInv<>(SB), Z10
	VBROADCASTSD aqeShift<>(SB), Z11
	VBROADCASTSD aqeC0<>(SB), Z12
	VBROADCASTSD aqeC1<>(SB), Z13
	VBROADCASTSD aqeC2<>(SB), Z14
	VBROADCASTSD aqeOne<>(SB), Z15
	VMOVDQU64 aqeTab<>+0(SB), Z20
	VMOVDQU64 aqeTab<>+64(SB), Z21
	VMOVDQU64 aqeTab<>+128(SB), Z22
	VMOVDQU64 aqeTab<>+192(SB), Z23
	MOVL $0x7ff, AX
	VPBROADCASTD AX, Y24
	MOVL $0x42b, AX
	VPBROADCASTD AX, Y25
	MOVQ $16, AX
	VPBROADCASTQ AX, Z26
	TESTQ CX, CX
	JZ aqeDone
aqeLoop:
	VMOVDQU (SI), Y0
	VPSRLD $20, Y0, Y1
	VPANDD Y24, Y1, Y1
	VPCMPUD $5, Y25, Y1, K1 // top >= 0x42b
	KORTESTW K1, K1
	JNZ aqeDone
	VCVTPS2PD Y0, Z0
	VMOVAPD Z11, Z1
	VFMADD231PD Z0, Z10, Z1 // kd = fma(32/ln2, x, shift)
	VSUBPD Z11, Z1, Z3
	VFMSUB231PD Z0, Z10, Z3 // r = fma(32/ln2, x, -(kd-shift))
	VMOVDQA64 Z1, Z4
	VPERMI2Q Z21, Z20, Z4   // tab[ki%16]
	VMOVDQA64 Z1, Z5
	VPERMI2Q Z23, Z22, Z5   // tab[16+ki%16]
	VPTESTMQ Z26, Z1, K2
	VMOVDQA64 Z5, K2, Z4    // tab[ki%32]
	VPSLLQ $47, Z1, Z1
	VPADDQ Z1, Z4, Z6       // s
	VMOVAPD Z13, Z7
	VFMADD231PD Z3, Z12, Z7 // z = fma(c0, r, c1)
	VMOVAPD Z15, Z8
	VFMADD231PD Z3, Z14, Z8 // y = fma(c2, r, 1)
	VMULPD Z3, Z3, Z2
	VFMADD231PD Z2, Z7, Z8  // y = fma(z, r*r, y)
	VMULPD Z6, Z8, Z8
	VCVTPD2PS Z8, Y8
	VMOVUPS Y8, (DI)
	ADDQ $32, SI
	ADDQ $32, DI
	ADDQ $8, DX
	SUBQ $8, CX
	JNZ aqeLoop
aqeDone:
	MOVQ DX, ret+24(FP)
	VZEROUPPER
	RET
