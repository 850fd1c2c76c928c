package main

import "fmt"

// AVX-512 (ZMM) forms of the element-wise attention and activation
// primitives of attn.go (avx512vnni kernel set): 16 float32 lanes per
// register instead of 8, each lane computing exactly the operations of the
// AVX2 kernel (axpyRows in attn.go) with the same operands
// in the same positions, so the same bits. Horizontal sums keep the AVX2
// tree per 8-element chunk and the chunk order. A remainder of 8 elements
// runs through YMM (or a ZMM whose upper half is ignored).
//
// Only AVX512F instructions on ZMM (no DQ): integer VPANDD for the float
// masks, compares into K registers and masked moves for ggml's blends
// (a select is a select, whatever computes the mask).

// flt512 emits the kernels and their constants.
func flt512(a *asm) {
	axpyRows512(a, "axpyF16Rows512", true)
	axpyRows512(a, "axpyF32Rows512", false)
}

// axpyRows512: func name(p *float32, n int, v *byte, stride int, acc *float32, d int)
// axpyRows on ZMM, d a positive multiple of 8: 128 elements (8 ZMM) of
// acc in registers per pass over the rows while d >= 128, then the rest in
// one pass: (d%128)/16 ZMM and, for d%16 = 8, one YMM (15 variants chosen
// by compares). Each lane: acc = fma(p[j], v_j, acc) for j in order.
//
//	GPR: DI p, CX n, SI v, R8 stride, R11 acc, DX elements left,
//	AX row pointer, BX row counter, R9 p cursor. Z0..Z7 acc, Z16 p[j],
//	Z17 widened values.
func axpyRows512(a *asm, name string, f16 bool) {
	esz := 4
	if f16 {
		esz = 2
	}
	lbl := func(s string) string { return name + s }
	a.p("// func %s(p *float32, n int, v *byte, stride int, acc *float32, d int)", name)
	a.p("TEXT ·%s(SB), NOSPLIT, $0-48", name)
	a.i("MOVQ p+0(FP), DI")
	a.i("MOVQ n+8(FP), CX")
	a.i("MOVQ v+16(FP), SI")
	a.i("MOVQ stride+24(FP), R8")
	a.i("MOVQ acc+32(FP), R11")
	a.i("MOVQ d+40(FP), DX")
	// block: nz ZMM and ny (0 or 1) YMM of acc, one pass over the rows.
	block := func(nz, ny int, tag string) {
		for v := 0; v < nz; v++ {
			a.i("VMOVUPS %d(R11), Z%d", 64*v, v)
		}
		if ny > 0 {
			a.i("VMOVUPS %d(R11), Y%d", 64*nz, nz)
		}
		a.i("MOVQ SI, AX")
		a.i("MOVQ DI, R9")
		a.i("MOVQ CX, BX")
		a.p("%s:", lbl(tag+"row"))
		a.i("VBROADCASTSS (R9), Z16")
		for v := 0; v < nz+ny; v++ {
			R := "Z"
			if v == nz {
				R = "Y"
			}
			if f16 {
				a.i("VCVTPH2PS %d(AX), %s17", 32*v, R)
				a.i("VFMADD231PS %s17, %s16, %s%d", R, R, R, v)
			} else {
				a.i("VFMADD231PS %d(AX), %s16, %s%d", 64*v, R, R, v)
			}
		}
		a.i("ADDQ R8, AX")
		a.i("ADDQ $4, R9")
		a.i("DECQ BX")
		a.i("JNZ %s", lbl(tag+"row"))
		for v := 0; v < nz; v++ {
			a.i("VMOVUPS Z%d, %d(R11)", v, 64*v)
		}
		if ny > 0 {
			a.i("VMOVUPS Y%d, %d(R11)", nz, 64*nz)
		}
	}
	a.p("%s:", lbl("wide"))
	a.i("CMPQ DX, $128")
	a.i("JB %s", lbl("tail"))
	block(8, 0, "w")
	a.i("ADDQ $512, R11")
	a.i("ADDQ $%d, SI", 128*esz)
	a.i("SUBQ $128, DX")
	a.i("JMP %s", lbl("wide"))
	a.p("%s:", lbl("tail"))
	for k := 8; k < 128; k += 8 {
		a.i("CMPQ DX, $%d", k)
		a.i("JEQ %s", lbl(fmt.Sprintf("t%d", k)))
	}
	a.i("JMP %s", lbl("ret"))
	for k := 8; k < 128; k += 8 {
		tag := fmt.Sprintf("t%d", k)
		a.p("%s:", lbl(tag))
		block(k/16, k%16/8, tag)
		a.i("JMP %s", lbl("ret"))
	}
	a.p("%s:", lbl("ret"))
	a.i("VZEROUPPER")
	a.i("RET")
	a.p("")
}
