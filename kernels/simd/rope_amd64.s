//go:build amd64 && !purego

#include "textflag.h"

// RoPE rotations (rope.go). Per 8 (AVX2) or 16 (AVX-512) floats:
// interleaved pairs: X0 = [x0 x0 ...] (VMOVSLDUP), X1 = [x1 x1 ...]
// (VMOVSHDUP), out = fma(X0, cs, X1*csw); halves: a' = fma(a, c, b*sn),
// b' = fma(a, s, b*c). n (elements, or pairs for halves) is a positive
// multiple of 8 (AVX2) and the 512-bit loops take 16 at a time with one
// 8-wide step for a remainder of 8. Strides in bytes.

// func ropeInterleavedAVX2(x *float32, heads, stride, n int, cs, csw *float32)
TEXT ·ropeInterleavedAVX2(SB), NOSPLIT, $0-48
	MOVQ x+0(FP), DI
	MOVQ heads+8(FP), CX
	MOVQ stride+16(FP), R8
	MOVQ n+24(FP), DX
	MOVQ cs+32(FP), SI
	MOVQ csw+40(FP), R9
ilhead:
	XORQ AX, AX
ilavx2:
	VMOVUPS (DI)(AX*4), Y0
	VMOVSLDUP Y0, Y1
	VMOVSHDUP Y0, Y2
	VMULPS (R9)(AX*4), Y2, Y2
	VFMADD231PS (SI)(AX*4), Y1, Y2
	VMOVUPS Y2, (DI)(AX*4)
	ADDQ $8, AX
	CMPQ AX, DX
	JB ilavx2
	ADDQ R8, DI
	DECQ CX
	JNZ ilhead
	VZEROUPPER
	RET

// func ropeInterleaved512(x *float32, heads, stride, n int, cs, csw *float32)
TEXT ·ropeInterleaved512(SB), NOSPLIT, $0-48
	MOVQ x+0(FP), DI
	MOVQ heads+8(FP), CX
	MOVQ stride+16(FP), R8
	MOVQ n+24(FP), DX
	MOVQ cs+32(FP), SI
	MOVQ csw+40(FP), R9
	MOVQ DX, R10
	ANDQ $-16, R10
il5head:
	XORQ AX, AX
	CMPQ R10, $0
	JE il5tail
il512:
	VMOVUPS (DI)(AX*4), Z0
	VMOVSLDUP Z0, Z1
	VMOVSHDUP Z0, Z2
	VMULPS (R9)(AX*4), Z2, Z2
	VFMADD231PS (SI)(AX*4), Z1, Z2
	VMOVUPS Z2, (DI)(AX*4)
	ADDQ $16, AX
	CMPQ AX, R10
	JB il512
il5tail:
	CMPQ AX, DX
	JAE il5next
	VMOVUPS (DI)(AX*4), Y0
	VMOVSLDUP Y0, Y1
	VMOVSHDUP Y0, Y2
	VMULPS (R9)(AX*4), Y2, Y2
	VFMADD231PS (SI)(AX*4), Y1, Y2
	VMOVUPS Y2, (DI)(AX*4)
il5next:
	ADDQ R8, DI
	DECQ CX
	JNZ il5head
	VZEROUPPER
	RET

// func ropeHalvesAVX2(x *float32, heads, stride, n, halfBytes int, c, s, sn *float32)
TEXT ·ropeHalvesAVX2(SB), NOSPLIT, $0-64
	MOVQ x+0(FP), DI
	MOVQ heads+8(FP), CX
	MOVQ stride+16(FP), R8
	MOVQ n+24(FP), DX
	MOVQ halfBytes+32(FP), R11
	MOVQ c+40(FP), SI
	MOVQ s+48(FP), R9
	MOVQ sn+56(FP), R10
hvhead:
	XORQ AX, AX
	LEAQ (DI)(R11*1), BX
hvavx2:
	VMOVUPS (DI)(AX*4), Y0
	VMOVUPS (BX)(AX*4), Y1
	VMULPS (R10)(AX*4), Y1, Y2
	VMULPS (SI)(AX*4), Y1, Y3
	VFMADD231PS (SI)(AX*4), Y0, Y2
	VFMADD231PS (R9)(AX*4), Y0, Y3
	VMOVUPS Y2, (DI)(AX*4)
	VMOVUPS Y3, (BX)(AX*4)
	ADDQ $8, AX
	CMPQ AX, DX
	JB hvavx2
	ADDQ R8, DI
	DECQ CX
	JNZ hvhead
	VZEROUPPER
	RET

// func ropeHalves512(x *float32, heads, stride, n, halfBytes int, c, s, sn *float32)
TEXT ·ropeHalves512(SB), NOSPLIT, $0-64
	MOVQ x+0(FP), DI
	MOVQ heads+8(FP), CX
	MOVQ stride+16(FP), R8
	MOVQ n+24(FP), DX
	MOVQ halfBytes+32(FP), R11
	MOVQ c+40(FP), SI
	MOVQ s+48(FP), R9
	MOVQ sn+56(FP), R10
	MOVQ DX, R12
	ANDQ $-16, R12
hv5head:
	XORQ AX, AX
	LEAQ (DI)(R11*1), BX
	CMPQ R12, $0
	JE hv5tail
hv512:
	VMOVUPS (DI)(AX*4), Z0
	VMOVUPS (BX)(AX*4), Z1
	VMULPS (R10)(AX*4), Z1, Z2
	VMULPS (SI)(AX*4), Z1, Z3
	VFMADD231PS (SI)(AX*4), Z0, Z2
	VFMADD231PS (R9)(AX*4), Z0, Z3
	VMOVUPS Z2, (DI)(AX*4)
	VMOVUPS Z3, (BX)(AX*4)
	ADDQ $16, AX
	CMPQ AX, R12
	JB hv512
hv5tail:
	CMPQ AX, DX
	JAE hv5next
	VMOVUPS (DI)(AX*4), Y0
	VMOVUPS (BX)(AX*4), Y1
	VMULPS (R10)(AX*4), Y1, Y2
	VMULPS (SI)(AX*4), Y1, Y3
	VFMADD231PS (SI)(AX*4), Y0, Y2
	VFMADD231PS (R9)(AX*4), Y0, Y3
	VMOVUPS Y2, (DI)(AX*4)
	VMOVUPS Y3, (BX)(AX*4)
hv5next:
	ADDQ R8, DI
	DECQ CX
	JNZ hv5head
	VZEROUPPER
	RET
