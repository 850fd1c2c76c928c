package main

import (
	"fmt"
	"strings"
)

// vnniQ6_KKernels emits the avx512vnni Q6_K GEMM kernels
// gemmQ6_KV16Q8_Kx1..x3: a per-call 16-row Q6_K panel (packQ6_KW's
// layout, 5184 B per super-block) as 16 weight rows per ZMM register,
// against nx = 1..3 Q8_K rows.
func vnniQ6_KKernels(a *asm) {
	for nx := 1; nx <= 3; nx++ {
		vnniQ6_K(a, nx)
	}
}

// vnniQ6_K: kernelQ6_K's arithmetic on 16 rows (lane r < 8: row r of
// the first 8, r >= 8: row r-8 of the second) with the same integers and
// float operations, from a 16-row panel (packQ6_KW twice: the 8-row
// panel's 32-byte units of rows 0..7 and 8..15 side by side, 5184 B per
// super-block), so that every panel quantity is one ZMM load or memory
// operand. Per super-block, lane m (0..7) and activation row j:
//
//	S = VPMADDUBSW(V[p][2m], bcast X[p] pair 2m)
//	  + VPMADDUBSW(V[p][2m+1], bcast X[p] pair 2m+1)      int16, as in AVX2
//	I = VPMADDWD(S_0, SC2[m/4]) + VPDPWSSD over p = 1..3 (SC2[2p+m/4])
//	  + VPDPWSSD(SCB[m], bcast(bsums[2m], bsums[2m+1]))   exact int32 = AVX2's
//	A[j][m] = fma(dx*d, float(I), A[j][m])
//
// VPDPWSSD is VPMADDWD + VPADDD in one instruction (exact: no saturation);
// the int32 I of every lane and row is the AVX2 kernel's, the float part
// its operation for operation, and out_j = hsum8 in its order.
//
//	Z0..Z2 I of rows j, Z3/Z4 V[p][2m], V[p][2m+1], Z5 broadcasts (then
//	SCB), Z6/Z7 products, Z8+8j+m A[j][m] (registers throughout).
//	Frame: X of row j at 256j+64p; dx*d of row j at xsB+64j, xsB =
//	256*nx; rebuilt per super-block. SC2 and SCB are read from the panel.
//
// Registers: CX blocks, SI panel, DI/R10/R11 activation rows, R9 out, R8
// outStride in bytes.
func vnniQ6_K(a *asm, nx int) {
	name := fmt.Sprintf("gemmQ6_KV16Q8_Kx%d", nx)
	w := func(o int) int { return 2 * o } // 16-row panel offset of 8-row offset o
	xsB := 256 * nx
	dxd := func(j int) int { return xsB + 64*j }
	xs := func(j, p, off int) int { return 256*j + 64*p + off }
	acc := func(j, m int) string { return fmt.Sprintf("Z%d", 8+8*j+m) }
	frame := xsB + 64*nx

	a.p("// func %s(nb int, panel *byte, x *byte, xStride int, out *float32, outStride int)", name)
	a.p("TEXT ·%s(SB), 0, $%d-48", name, frame)
	a.i("MOVQ nb+0(FP), CX")
	a.i("MOVQ panel+8(FP), SI")
	a.i("MOVQ x+16(FP), DI")
	a.i("MOVQ xStride+24(FP), AX")
	a.i("MOVQ out+32(FP), R9")
	a.i("MOVQ outStride+40(FP), R8")
	a.i("SHLQ $2, R8")
	if nx > 1 {
		a.i("LEAQ (DI)(AX*1), R10")
	}
	if nx > 2 {
		a.i("LEAQ (DI)(AX*2), R11")
	}
	for j := 0; j < nx; j++ {
		for m := 0; m < 8; m++ {
			a.i("VPXORD %s, %s, %s", acc(j, m), acc(j, m), acc(j, m))
		}
	}
	lbl := strings.ToLower(name)
	a.p("%s:", lbl)
	// dx*d of the 16 rows into the frame.
	a.i("VMOVUPS %d(SI), Z0", w(q6kD))
	for j := 0; j < nx; j++ {
		a.i("VMULPS.BCST (%s), Z0, Z1", xPtr[j]) // dx*d
		a.i("VMOVUPS Z1, %d(SP)", dxd(j))
	}
	// Activation rows interleaved like the panel (kernelQ6_K).
	for j := 0; j < nx; j++ {
		for p := 0; p < 4; p++ {
			a.i("VMOVDQU %d(%s), Y0", 4+64*p, xPtr[j])
			a.i("VPUNPCKLWD %d(%s), Y0, Y1", 4+64*p+32, xPtr[j])
			a.i("VPUNPCKHWD %d(%s), Y0, Y0", 4+64*p+32, xPtr[j])
			a.i("VMOVDQU Y1, %d(SP)", xs(j, p, 0))
			a.i("VMOVDQU Y0, %d(SP)", xs(j, p, 32))
		}
	}
	for m := 0; m < 8; m++ {
		for p := 0; p < 4; p++ {
			for h := 0; h < 2; h++ {
				a.i("VMOVDQU64 %d(SI), Z%d", w(q6kV+(16*p+2*m+h)*32), 3+h)
			}
			for j := 0; j < nx; j++ {
				a.i("VPBROADCASTD %d(SP), Z5", xs(j, p, q6kPairWord(2*m)))
				a.i("VPMADDUBSW Z5, Z3, Z6")
				a.i("VPBROADCASTD %d(SP), Z5", xs(j, p, q6kPairWord(2*m+1)))
				a.i("VPMADDUBSW Z5, Z4, Z7")
				a.i("VPADDW Z7, Z6, Z6")
				sc2 := w(q6kSC2 + 32*(2*p+m/4))
				if p == 0 {
					a.i("VPMADDWD %d(SI), Z6, Z%d", sc2, j)
				} else {
					a.i("VPDPWSSD %d(SI), Z6, Z%d", sc2, j)
				}
			}
		}
		a.i("VMOVDQU64 %d(SI), Z5", w(q6kSCB+32*m))
		for j := 0; j < nx; j++ {
			a.i("VPDPWSSD.BCST %d(%s), Z5, Z%d", 260+4*m, xPtr[j], j) // the -32 offset
			a.i("VCVTDQ2PS Z%d, Z%d", j, j)
			a.i("VFMADD231PS %d(SP), Z%d, %s", dxd(j), j, acc(j, m)) // A = fma(dx*d, float(I), A)
		}
	}
	a.i("ADDQ $%d, SI", w(q6kBlock))
	for j := 0; j < nx; j++ {
		a.i("ADDQ $292, %s", xPtr[j])
	}
	a.i("DECQ CX")
	a.i("JNZ %s", lbl)
	// out = hsum8 of each row's lanes.
	for j := 0; j < nx; j++ {
		hsum8Store(a, func(m int) string { return acc(j, m) }, outAddr(j, 0))
	}
	a.i("VZEROUPPER")
	a.i("RET")
	a.p("")
}
