package main

// dotRows16F16 emits dotF32F16Rows512(q *float32, d int, k *uint16,
// stride int, out *float32, groups int): DotF32F16Rows on 16 key rows per
// ZMM register, each row's score the same chain in element order as
// dotF32F16RowsAVX2 (the first product rounded, then one FMA per element,
// the first chunk peeled), so the same bits. Per chunk of 8 elements a
// group's rows r (XMM, low lane) and r+8 (high lane) share one YMM, and the
// AVX2 kernel's 16-bit 8x8 transpose runs on both 128-bit lanes at once
// (the unpacks work per lane): element e of rows 0..7 | rows 8..15 in one
// YMM, widened to 16 floats in row order by one VCVTPH2PS. Groups go in
// pairs (32 rows: two independent chains, Z12 and Z13); an odd last group
// alone.
//
//	GPR: DI q, BX k, R8 stride S, R9 3S, R14 5S, R15 7S, R11 out, CX
//	groups, DX chunks left, AX q cursor; row pointers SI (rows 0..7),
//	R10 (8..15), R12 (16..23), R13 (24..31).
func dotRows16F16(a *asm) {
	const name = "dotF32F16Rows512"
	a.p("// func %s(q *float32, d int, k *uint16, stride int, out *float32, groups int)", name)
	a.p("TEXT ·%s(SB), NOSPLIT, $0-48", name)
	a.i("MOVQ q+0(FP), DI")
	a.i("MOVQ k+16(FP), BX")
	a.i("MOVQ stride+24(FP), R8")
	a.i("MOVQ out+32(FP), R11")
	a.i("MOVQ groups+40(FP), CX")
	a.i("LEAQ (R8)(R8*2), R9")
	a.i("LEAQ (R8)(R8*4), R14")
	a.i("LEAQ (R9)(R8*4), R15")
	lbl := func(s string) string { return name + s }
	row := func(p string, r int) string {
		return "(" + p + ")" + [8]string{"", "(R8*1)", "(R8*2)", "(R9*1)", "(R8*4)", "(R14*1)", "(R9*2)", "(R15*1)"}[r]
	}
	// group emits one chunk of 16 rows (0..7 from pointer lo, 8..15 from
	// hi) into the chain in Z(acc).
	group := func(lo, hi string, acc int, first bool) {
		for r := 0; r < 8; r++ {
			a.i("VMOVDQU %s, X%d", row(lo, r), r)
			a.i("VINSERTI128 $1, %s, Y%d, Y%d", row(hi, r), r, r)
		}
		transposeF16(a, "Y", func(e int) {
			a.i("VCVTPH2PS Y10, Z10")
			a.i("VBROADCASTSS %d(AX), Z9", 4*e)
			if first && e == 0 {
				a.i("VMULPS Z9, Z10, Z%d", acc)
			} else {
				a.i("VFMADD231PS Z9, Z10, Z%d", acc)
			}
		})
	}
	run := func(two bool, tag string) {
		ptrs := []string{"SI", "R10"}
		a.i("MOVQ BX, SI")
		a.i("LEAQ (SI)(R8*8), R10")
		if two {
			ptrs = append(ptrs, "R12", "R13")
			a.i("LEAQ (R10)(R8*8), R12")
			a.i("LEAQ (R12)(R8*8), R13")
		}
		a.i("MOVQ DI, AX")
		chunk := func(first bool) {
			group("SI", "R10", 12, first)
			if two {
				group("R12", "R13", 13, first)
			}
			for _, p := range ptrs {
				a.i("ADDQ $16, %s", p)
			}
			a.i("ADDQ $32, AX")
		}
		chunk(true)
		a.i("MOVQ d+8(FP), DX")
		a.i("SHRQ $3, DX")
		a.i("DECQ DX")
		a.i("JZ %s", lbl(tag+"done"))
		a.p("%s:", lbl(tag+"chunk"))
		chunk(false)
		a.i("DECQ DX")
		a.i("JNZ %s", lbl(tag+"chunk"))
		a.p("%s:", lbl(tag+"done"))
		a.i("VMOVUPS Z12, (R11)")
		if two {
			a.i("VMOVUPS Z13, 64(R11)")
		}
	}
	a.p("%s:", lbl("pairs"))
	a.i("CMPQ CX, $2")
	a.i("JB %s", lbl("single"))
	run(true, "p")
	a.i("ADDQ $128, R11")
	for i := 0; i < 4; i++ {
		a.i("LEAQ (BX)(R8*8), BX") // 32 rows on
	}
	a.i("SUBQ $2, CX")
	a.i("JMP %s", lbl("pairs"))
	a.p("%s:", lbl("single"))
	a.i("TESTQ CX, CX")
	a.i("JZ %s", lbl("ret"))
	run(false, "s")
	a.p("%s:", lbl("ret"))
	a.i("VZEROUPPER")
	a.i("RET")
	a.p("")
}
