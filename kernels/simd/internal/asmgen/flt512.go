package main

import "fmt"

// AVX-512 (ZMM) forms of the element-wise attention and activation
// primitives of attn.go (avx512vnni kernel set): 16 float32 lanes per
// register instead of 8, each lane computing exactly the operations of the
// AVX2 kernel (axpyRows, expSum, swiglu in attn.go) with the same operands
// in the same positions, so the same bits. Horizontal sums keep the AVX2
// tree per 8-element chunk and the chunk order. A remainder of 8 elements
// runs through YMM (or a ZMM whose upper half is ignored).
//
// Only AVX512F instructions on ZMM (no DQ): integer VPANDD for the float
// masks, compares into K registers and masked moves for ggml's blends
// (a select is a select, whatever computes the mask).

// flt512 emits the kernels and their constants.
func flt512(a *asm) {
	for _, c := range expConstList {
		a.p("DATA z%s<>+0(SB)/4, $0x%08x", c.name, c.v)
		a.p("GLOBL z%s<>(SB), RODATA|NOPTR, $4", c.name)
	}
	a.p("")
	axpyRows512(a, "axpyF16Rows512", true)
	axpyRows512(a, "axpyF32Rows512", false)
	expSum512(a)
	swiglu512(a)
}

// Registers of the ZMM vexpf: the 15 constants broadcast once per call
// into Z16..Z30 (in expConstList order), Z31 zero.
func vexpf512Consts(a *asm) {
	for i, c := range expConstList {
		a.i("VBROADCASTSS z%s<>(SB), Z%d", c.name, 16+i)
	}
	a.i("VPXORD Z31, Z31, Z31")
}

// zc names the register holding constant name (vexpf512Consts).
func zc(name string) string {
	for i, c := range expConstList {
		if c.name == name {
			return fmt.Sprintf("Z%d", 16+i)
		}
	}
	panic("asmgen: no constant " + name)
}

// vexpf512 is vexpf on Z0: the same operations, operand for operand, on
// 16 lanes; the AVX2 kernel's and/andnot/or blends of the slow paths
// become masked moves under the same compares (K1: |n| > 126, K3: |n| >
// 192; K2: n <= 0 selects g). Clobbers Z1..Z11, K1..K3.
func vexpf512(a *asm) {
	a.i("VMOVAPS %s, Z1", zc("exR"))
	a.i("VFMADD231PS %s, Z0, Z1", zc("exLog2e")) // z = x*log2e + r
	a.i("VSUBPS %s, Z1, Z2", zc("exR"))          // n = z - r
	a.i("VMOVAPS Z0, Z3")
	a.i("VFNMADD231PS %s, Z2, Z3", zc("exLn2hi")) // x - n*ln2hi
	a.i("VFNMADD231PS %s, Z2, Z3", zc("exLn2lo")) // b = that - n*ln2lo
	a.i("VPSLLD $23, Z1, Z4")                     // e
	a.i("VPADDD %s, Z4, Z5", zc("exOne"))         // k = e + bits(1)
	a.i("VPANDD %s, Z2, Z6", zc("exAbs"))         // |n|
	a.i("VCMPPS $0x1e, %s, Z6, K1", zc("ex126"))  // c = |n| > 126
	a.i("VMULPS Z3, Z3, Z7")                      // u = b*b
	a.i("VMOVAPS %s, Z8", zc("exC1"))
	a.i("VFMADD231PS %s, Z3, Z8", zc("exC0")) // c0*b + c1
	a.i("VMOVAPS %s, Z9", zc("exC3"))
	a.i("VFMADD231PS %s, Z3, Z9", zc("exC2")) // c2*b + c3
	a.i("VFMADD231PS Z7, Z8, Z9")             // (c0*b+c1)*u + (c2*b+c3)
	a.i("VMULPS %s, Z3, Z10", zc("exC4"))     // c4*b
	a.i("VFMADD231PS Z7, Z9, Z10")            // j
	a.i("VMOVAPS Z5, Z11")
	a.i("VFMADD231PS Z5, Z10, Z11")              // fast = j*k + k
	a.i("VCMPPS $0x12, Z31, Z2, K2")             // n <= 0
	a.i("VPXORD Z8, Z8, Z8")                     //
	a.i("VMOVDQA32 %s, K2, Z8", zc("ex82"))      // g
	a.i("VPADDD %s, Z8, Z9", zc("ex7f"))         // s1 = g + 0x7f000000
	a.i("VPSUBD Z8, Z4, Z7")                     // s2 = e - g
	a.i("VCMPPS $0x1e, %s, Z6, K3", zc("ex192")) // d = |n| > 192
	a.i("VMULPS Z9, Z9, Z4")                     // s1*s1
	a.i("VFMADD231PS Z10, Z7, Z7")               // s2*j + s2
	a.i("VMULPS Z9, Z7, Z7")                     // (s2*j+s2)*s1
	a.i("VMOVAPS Z11, Z0")                       // fast,
	a.i("VMOVAPS Z7, K1, Z0")                    // c: the scaled form,
	a.i("VMOVAPS Z4, K3, Z0")                    // d: s1*s1
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

// expSum512: func expSum512(y *float32, x *float32, n int, max float32) float64
// expSum on 16 elements per ZMM, n a positive multiple of 8: both 8-element
// chunks (a: lanes 0..7, b: 8..15) reduced by the AVX2 tree side by side
// in one YMM (a in its low 128-bit lane, b in its high one), then a and b
// added to the float64 sum in that order. A last chunk of 8 runs the AVX2
// loop's reduction as it is.
func expSum512(a *asm) {
	a.p("// func expSum512(y *float32, x *float32, n int, max float32) float64")
	a.p("TEXT ·expSum512(SB), NOSPLIT, $0-40")
	a.i("MOVQ y+0(FP), DI")
	a.i("MOVQ x+8(FP), SI")
	a.i("MOVQ n+16(FP), CX")
	a.i("VBROADCASTSS max+24(FP), Z15")
	a.i("VXORPD X14, X14, X14") // float64 sum
	vexpf512Consts(a)
	a.p("expsum512loop:")
	a.i("CMPQ CX, $16")
	a.i("JB expsum512tail")
	a.i("VMOVUPS (SI), Z0")
	a.i("VSUBPS Z15, Z0, Z0")
	vexpf512(a)
	a.i("VMOVUPS Z0, (DI)")
	a.i("VSHUFF64X2 $0x88, Z0, Z0, Z1") // a lo | b lo
	a.i("VSHUFF64X2 $0xdd, Z0, Z0, Z2") // a hi | b hi
	a.i("VADDPS Y1, Y2, Y1")            // hi + lo
	a.i("VPERMILPS $0xee, Y1, Y2")      // VMOVHLPS per lane
	a.i("VADDPS Y2, Y1, Y1")
	a.i("VMOVSHDUP Y1, Y2")
	a.i("VADDPS Y2, Y1, Y1") // lane 0: a's sum, lane 4: b's
	a.i("VEXTRACTF128 $1, Y1, X3")
	a.i("VCVTSS2SD X1, X1, X1")
	a.i("VADDSD X1, X14, X14")
	a.i("VCVTSS2SD X3, X3, X3")
	a.i("VADDSD X3, X14, X14")
	a.i("ADDQ $64, SI")
	a.i("ADDQ $64, DI")
	a.i("SUBQ $16, CX")
	a.i("JMP expsum512loop")
	a.p("expsum512tail:")
	a.i("TESTQ CX, CX")
	a.i("JZ expsum512done")
	a.i("VMOVUPS (SI), Y0") // upper half zeroed: computed, not used
	a.i("VSUBPS Y15, Y0, Y0")
	vexpf512(a)
	a.i("VMOVUPS Y0, (DI)")
	a.i("VEXTRACTF128 $1, Y0, X1")
	a.i("VADDPS X0, X1, X1") // hi + lo
	a.i("VMOVHLPS X1, X1, X2")
	a.i("VADDPS X2, X1, X1")
	a.i("VMOVSHDUP X1, X2")
	a.i("VADDSS X2, X1, X1")
	a.i("VCVTSS2SD X1, X1, X1")
	a.i("VADDSD X1, X14, X14")
	a.p("expsum512done:")
	a.i("VMOVSD X14, ret+32(FP)")
	a.i("VZEROUPPER")
	a.i("RET")
	a.p("")
}

// swiglu512: func swiglu512(y *float32, x *float32, gate *float32, n int)
// swiglu on 16 elements per ZMM, n a positive multiple of 8 (a last 8
// through the ZMM exp, the rest in YMM).
func swiglu512(a *asm) {
	a.p("// func swiglu512(y *float32, x *float32, gate *float32, n int)")
	a.p("TEXT ·swiglu512(SB), NOSPLIT, $0-32")
	a.i("MOVQ y+0(FP), DI")
	a.i("MOVQ x+8(FP), SI")
	a.i("MOVQ gate+16(FP), DX")
	a.i("MOVQ n+24(FP), CX")
	vexpf512Consts(a)
	a.p("swiglu512loop:")
	a.i("CMPQ CX, $16")
	a.i("JB swiglu512tail")
	a.i("VMOVUPS (SI), Z12")
	a.i("VSUBPS Z12, Z31, Z0") // 0 - x
	vexpf512(a)
	a.i("VADDPS %s, Z0, Z0", zc("exOne")) // 1 + e^-x
	a.i("VDIVPS Z0, Z12, Z0")             // x / (1 + e^-x)
	a.i("VMULPS (DX), Z0, Z0")
	a.i("VMOVUPS Z0, (DI)")
	a.i("ADDQ $64, SI")
	a.i("ADDQ $64, DX")
	a.i("ADDQ $64, DI")
	a.i("SUBQ $16, CX")
	a.i("JMP swiglu512loop")
	a.p("swiglu512tail:")
	a.i("TESTQ CX, CX")
	a.i("JZ swiglu512done")
	a.i("VMOVUPS (SI), Y12")
	a.i("VSUBPS Y12, Y31, Y0")
	vexpf512(a)
	a.i("VADDPS Y%s, Y0, Y0", zc("exOne")[1:])
	a.i("VDIVPS Y0, Y12, Y0")
	a.i("VMULPS (DX), Y0, Y0")
	a.i("VMOVUPS Y0, (DI)")
	a.p("swiglu512done:")
	a.i("VZEROUPPER")
	a.i("RET")
	a.p("")
}
