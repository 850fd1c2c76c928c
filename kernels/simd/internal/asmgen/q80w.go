package main

import "fmt"

// Q8_0 on plain AVX2 with int16 products (gemmQ8_0PWQ8_0x8 and its
// activation form, gemmActQ8_0W): the same exact int32 lane sums as
// kernelQ8_0's VPSIGNB/VPMADDUBSW/VPMADDWD, from two VPMADDWD and a
// VPADDD, which can issue on port 5 (kernelQ8_0's three integer steps all
// need the multiply ports 0 and 1, with the conversion and FMA).
//
// A weight quad (w0 w1 w2 w3, lane r of a load-time W_j) as int16 words
// (w0 | w1<<8, w2 | w3<<8) splits into E = (w0, w2) by VPSLLW 8 then
// VPSRAW 8, and O = (w1, w3) by VPSRAW 8; the activation row carries the
// same split of each quad ready to broadcast (the W section of
// GemmActQ8_0Q8_0W, 68 B per block: E of quads 0..7, O of quads 0..7,
// float32 d), so
//
//	I_j = VPMADDWD(E_w, bcast E_x) + VPMADDWD(O_w, bcast O_x)
//	    = (w0x0 + w2x2) + (w1x1 + w3x3)
//
// exactly (|each| <= 2*128*128), and every FMA is kernelQ8_0's. The
// splits of W_j cost three shifts per lane and block, shared by the 8
// activation rows of the kernel.

// actQ8_0W writes the W section: gemmActQ8_0W(nb int, x *byte, dst *byte)
// reads nb raw Q8_0 blocks (34 B) and writes nb 68-byte blocks.
func actQ8_0W(a *asm) {
	a.p("// func gemmActQ8_0W(nb int, x *byte, dst *byte)")
	a.p("TEXT ·gemmActQ8_0W(SB), NOSPLIT, $0-24")
	a.i("MOVQ nb+0(FP), CX")
	a.i("MOVQ x+8(FP), SI")
	a.i("MOVQ dst+16(FP), DI")
	a.p("actq80w:")
	a.i("VMOVDQU 2(SI), Y0")
	a.i("VPSLLW $8, Y0, Y1")
	a.i("VPSRAW $8, Y1, Y1") // E: (x0, x2) per quad
	a.i("VPSRAW $8, Y0, Y0") // O: (x1, x3)
	a.i("VMOVDQU Y1, (DI)")
	a.i("VMOVDQU Y0, 32(DI)")
	a.i("MOVWLZX (SI), AX")
	a.i("VMOVD AX, X2")
	a.i("VCVTPH2PS X2, X2")
	a.i("VMOVSS X2, 64(DI)")
	a.i("ADDQ $34, SI")
	a.i("ADDQ $68, DI")
	a.i("DECQ CX")
	a.i("JNZ actq80w")
	a.i("VZEROUPPER")
	a.i("RET")
	a.p("")
}

// kernelQ8_0W8: one load-time Q8_0 panel (272 B per block) against 8
// activation rows in W form (68 B per block, row p at x + p*xStride), in
// chunks of q80Chunk blocks: first the chunk's scales s_p = dw*dx_p into
// sc (256 B per block), then 8 passes, pass h accumulating lane h of the
// 8 rows in Y0..Y7 (parked in the frame between chunks). Row p's lane l
// lives at 32*(8p+l)(SP). Registers: DI, R12 = rows 0 and 4, AX = xStride,
// R11 = 3*xStride, DX chunk start in the panel, BX its blocks, R10 their
// activation bytes, R13 the loop count, R14 the scales; Y8 = W_h, Y9 = E,
// Y10 = O, Y11..Y15 temporaries.
func kernelQ8_0W8(a *asm) {
	const name = "gemmQ8_0PWQ8_0x8"
	const frame = 32 * 64
	a.p("// func %s(nb int, panel *byte, x *byte, xStride int, out *float32, outStride int, sc *float32)", name)
	a.p("TEXT ·%s(SB), 0, $%d-56", name, frame)
	a.i("MOVQ nb+0(FP), CX")
	a.i("MOVQ panel+8(FP), SI")
	a.i("MOVQ x+16(FP), DI")
	a.i("MOVQ xStride+24(FP), AX")
	a.i("LEAQ (AX)(AX*2), R11")
	a.i("LEAQ (DI)(AX*4), R12")
	xa := func(p, off int) string {
		base := "DI"
		if p >= 4 {
			base = "R12"
		}
		o := ""
		if off != 0 {
			o = fmt.Sprint(off)
		}
		switch p % 4 {
		case 0:
			return fmt.Sprintf("%s(%s)", o, base)
		case 1:
			return fmt.Sprintf("%s(%s)(AX*1)", o, base)
		case 2:
			return fmt.Sprintf("%s(%s)(AX*2)", o, base)
		}
		return fmt.Sprintf("%s(%s)(R11*1)", o, base)
	}
	a.i("VXORPS Y0, Y0, Y0")
	for k := 0; k < 64; k++ {
		a.i("VMOVUPS Y0, %d(SP)", 32*k)
	}
	lbl := "q80w8"
	a.p("%s_c:", lbl)
	a.i("MOVQ $%d, BX", q80Chunk)
	a.i("CMPQ CX, BX")
	a.i("CMOVQLT CX, BX")
	a.i("IMUL3Q $68, BX, R10")
	a.i("MOVQ SI, DX")
	a.i("MOVQ BX, R13")
	a.i("MOVQ sc+48(FP), R14")
	a.p("%s_s:", lbl)
	for off := 0; off < 272; off += 64 {
		a.i("PREFETCHT0 %d(SI)", q80Chunk*272+off)
	}
	a.i("VCVTPH2PS 256(SI), Y9")
	for p := 0; p < 8; p++ {
		a.i("VBROADCASTSS %s, Y8", xa(p, 64))
		a.i("VMULPS Y9, Y8, Y8")
		a.i("VMOVUPS Y8, %d(R14)", 32*p)
	}
	a.i("ADDQ $272, SI")
	a.i("ADDQ $256, R14")
	a.i("ADDQ $68, DI")
	a.i("ADDQ $68, R12")
	a.i("DECQ R13")
	a.i("JNZ %s_s", lbl)
	temps := []int{11, 12, 13, 14, 15}
	for h := 0; h < 8; h++ {
		a.i("MOVQ DX, SI")
		a.i("MOVQ sc+48(FP), R14")
		a.i("SUBQ R10, DI")
		a.i("SUBQ R10, R12")
		a.i("MOVQ BX, R13")
		for p := 0; p < 8; p++ {
			a.i("VMOVUPS %d(SP), Y%d", 32*(8*p+h), p)
		}
		l := fmt.Sprintf("%s_%d", lbl, h)
		a.p("%s:", l)
		a.i("VMOVDQU %d(SI), Y8", 32*h)
		a.i("VPSLLW $8, Y8, Y9")
		a.i("VPSRAW $8, Y9, Y9")
		a.i("VPSRAW $8, Y8, Y10")
		ti := 0
		for p := 0; p < 8; p++ {
			t := temps[ti%len(temps)]
			ti++
			u := temps[ti%len(temps)]
			ti++
			a.i("VPBROADCASTD %s, Y%d", xa(p, 4*h), t)
			a.i("VPMADDWD Y9, Y%d, Y%d", t, t)
			a.i("VPBROADCASTD %s, Y%d", xa(p, 32+4*h), u)
			a.i("VPMADDWD Y10, Y%d, Y%d", u, u)
			a.i("VPADDD Y%d, Y%d, Y%d", u, t, t)
			a.i("VCVTDQ2PS Y%d, Y%d", t, t)
			a.i("VFMADD231PS %d(R14), Y%d, Y%d", 32*p, t, p)
		}
		a.i("ADDQ $272, SI")
		a.i("ADDQ $256, R14")
		a.i("ADDQ $68, DI")
		a.i("ADDQ $68, R12")
		a.i("DECQ R13")
		a.i("JNZ %s", l)
		for p := 0; p < 8; p++ {
			a.i("VMOVUPS Y%d, %d(SP)", p, 32*(8*p+h))
		}
	}
	a.i("SUBQ BX, CX")
	a.i("JNZ %s_c", lbl)
	// hsum8 of each row's lanes from the frame, rows outStride apart.
	a.i("MOVQ out+32(FP), R9")
	a.i("MOVQ outStride+40(FP), R8")
	a.i("SHLQ $2, R8")
	for p := 0; p < 8; p++ {
		f := func(lane int) string { return fmt.Sprintf("%d(SP)", 32*(8*p+lane)) }
		for q := 0; q < 4; q++ {
			a.i("VMOVUPS %s, Y%d", f(q), q)
			a.i("VADDPS %s, Y%d, Y%d", f(q+4), q, q)
		}
		a.i("VADDPS Y2, Y0, Y0")
		a.i("VADDPS Y3, Y1, Y1")
		a.i("VADDPS Y1, Y0, Y0")
		a.i("VMOVUPS Y0, (R9)")
		if p < 7 {
			a.i("ADDQ R8, R9")
		}
	}
	a.i("VZEROUPPER")
	a.i("RET")
	a.p("")
}
