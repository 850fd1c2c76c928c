package main

import (
	"fmt"
	"strings"
)

// Decode (m = 1) kernels of the avxvnni set: the AVX2 gemvQ4_KQ8_KI,
// dotQ6_KQ8_KAVX2 and dotQ8_0Q8_0AVX2 with VEX VPDPBUSD / VPDPWSSD
// (vexDPBUSD, vexDPWSSD) for some of the exact int32 sums. Only AVX2
// instructions otherwise, and only Y0..Y15 (a CPU with AVX-VNNI need not
// have AVX-512). The float operations, their operands and their order
// are those of the AVX2 kernels, so the results have their bits.

// vexDecConsts emits the tables of the avxvnni decode kernels.
func vexDecConsts(a *asm) {
	a.p("// tables of the avxvnni decode kernels (vex_dec.go)")
	// k4scd + 32s: dwords = scale s zero-extended (byte s, or s+4 for
	// s >= 4, of SCP = [sc0-3 mn0-3 sc4-7 mn4-7]), in both halves.
	for s := 0; s < 8; s++ {
		idx := s
		if s >= 4 {
			idx = s + 4
		}
		for q := 0; q < 4; q++ {
			a.p("DATA k4scd<>+%d(SB)/8, $0x808080%02x808080%02x", 32*s+8*q, idx, idx)
		}
	}
	a.p("GLOBL k4scd<>(SB), RODATA|NOPTR, $256")
	// k4mnx: words [mn0 mn0 mn2 mn2 mn4 mn4 mn6 mn6] (bytes 4, 6, 12, 14
	// of SCP), then [mn1 mn1 mn3 mn3 mn5 mn5 mn7 mn7] (5, 7, 13, 15).
	for h, idx := range [][4]int{{4, 6, 12, 14}, {5, 7, 13, 15}} {
		for half := 0; half < 2; half++ {
			o := 32*h + 16*half
			a.p("DATA k4mnx<>+%d(SB)/8, $0x80%02x80%02x80%02x80%02x", o, idx[1], idx[1], idx[0], idx[0])
			a.p("DATA k4mnx<>+%d(SB)/8, $0x80%02x80%02x80%02x80%02x", o+8, idx[3], idx[3], idx[2], idx[2])
		}
	}
	a.p("GLOBL k4mnx<>(SB), RODATA|NOPTR, $64")
	// VPERMD indexes taking the bsums dword pairs (b4g, b4g+1), g = 0..3,
	// then (b4g+2, b4g+3), to both halves.
	for h := 0; h < 2; h++ {
		for q := 0; q < 4; q++ { // qword q: dwords 2q, 2q+1, at pos, pos+1 of a half
			pos := 2 * q % 4
			lo, hi := 2*pos+h, 2*(pos+1)+h
			a.p("DATA k4bsp<>+%d(SB)/8, $0x%08x%08x", 32*h+8*q, hi, lo)
		}
	}
	a.p("GLOBL k4bsp<>(SB), RODATA|NOPTR, $64")
	// vexQ6W + 32j: VPSHUFB mask taking int16 word 2j to the 8 words of
	// the low half and word 2j+1 to those of the high half (of a register
	// holding the same 8 words in both halves).
	for j := 0; j < 4; j++ {
		for q := 0; q < 4; q++ {
			w := 2*j + q/2
			b := uint64(2*w) | uint64(2*w+1)<<8
			a.p("DATA vexQ6W<>+%d(SB)/8, $0x%016x", 32*j+8*q, b*0x0001000100010001)
		}
	}
	a.p("GLOBL vexQ6W<>(SB), RODATA|NOPTR, $128")
	vec32(a, "vexB80", 0x80808080)
	a.p("")
}

// vexDecKernels emits the avxvnni decode kernels.
func vexDecKernels(a *asm) {
	vexDecConsts(a)
	// Only for the load-time layout: over raw rows (gemvQ4_KQ8_K's 8
	// strided streams) the same body measured no faster than the AVX2
	// kernel (thread CPU time 0.99-1.03x on Zen 5), against 0.93-0.96x
	// here, so raw rows keep the AVX2 gemv.
	gemvQ4_KX(a, "gemvQ4_KXQ8_KI", 8*144, fmt.Sprintf("LEAQ %d(SI), R12", q4kPrefetch))
	dotQ6_KX(a)
	dotQ8_0X(a)
}

// gemvQ4_KX is gemvQ4_KBody (kquant.go) with VEX VNNI: the same float
// operations in the same order, the same SCP_p, d*dx, dmin*dx; the exact
// int32 M_p and I_p are formed differently (rows p and p+4 in the two
// halves of a register, as there):
//
//	M_p = VPDPWSSD(VPMADDWD([mn0 mn0 mn2 mn2 mn4 mn4 mn6 mn6], bsums pairs
//	      (b0 b1)(b4 b5)(b8 b9)(b12 b13)), [mn1 mn1 mn3 mn3 ..], (b2 b3)(b6 b7)..)
//	    = [imin_0..3 of row p | of row p+4], VPHADDD's result there
//
// and per 64-element group g, with lo_c, hi_c the low and high nibbles of
// the group's 16-byte quarters c = 0, 1 (unsigned) and x_k its quarters
// of activations:
//
//	D_lo = VPDPBUSD(VPDPBUSD(0, lo_0, x_0), lo_1, x_1)   dwords of 8 products,
//	D_hi = VPDPBUSD(VPDPBUSD(0, hi_0, x_2), hi_1, x_3)   |D| <= 8*15*128 = 15360
//	I_p  = VPDPWSSD(VPMADDWD(D_lo, (sc_2g, 0)), D_hi, (sc_2g+1, 0))
//
// D fits int16, so its low word times the scale word (the high word times
// 0) is D*sc exactly; the dwords of I_p sum, as in gemvQ4_KBody, to
// iacc_g of rows p and p+4 (reducePairs).
//
//	Y0..Y3 M_p, then I_p; Y4..Y9 temporaries; Y10 accMin, Y11 acc (rows
//	0..7); Y12..Y15 bsums pairs, then activation quarters. Frame: SCP_p
//	at 32p, d*dx of rows 0..7 at 128.
func gemvQ4_KX(a *asm, name string, adv int, cursor string) {
	gemvPrologueFrame(a, name, gemvQ4_KFrame(false), cursor)
	a.i("VXORPS Y10, Y10, Y10")
	a.i("VXORPS Y11, Y11, Y11")
	a.p("%s:", strings.ToLower(name))
	off := func(o int) [8]string { return rowAddr8(o, "SI", "R10", "R8", "R9") }
	sc := off(4)
	a.i("VMOVDQU k4bsp<>(SB), Y12")
	a.i("VPERMD 260(DI), Y12, Y12") // (b0 b1)(b4 b5)(b8 b9)(b12 b13), both halves
	a.i("VMOVDQU k4bsp<>+32(SB), Y13")
	a.i("VPERMD 260(DI), Y13, Y13") // (b2 b3)(b6 b7)(b10 b11)(b14 b15)
	for p := 0; p < 4; p++ {
		gemvQ4_KSCP(a, sc[p], sc[p+4], p)
		a.i("VPSHUFB k4mnx<>(SB), Y5, Y6")
		a.i("VPMADDWD Y12, Y6, Y%d", p)
		a.i("VPSHUFB k4mnx<>+32(SB), Y5, Y6")
		vexDPWSSD(a, 13, 6, p) // [imin_0..3 of row p | of row p+4]
	}
	gemvQ4_KMins(a, off, false)
	for g := 0; g < 4; g++ {
		for o := 320 * g; o < min(320*(g+1), 8*144); o += 64 {
			a.i("PREFETCHT0 %d(R12)", o)
		}
		for c := 0; c < 4; c++ {
			a.i("VBROADCASTI128 %d(DI), Y%d", 4+64*g+16*c, 12+c)
		}
		lo, hi := off(16+32*g), off(32+32*g)
		for p := 0; p < 4; p++ {
			a.i("VMOVDQU %s, X4", lo[p])
			a.i("VINSERTI128 $1, %s, Y4, Y4", lo[p+4]) // group bytes 0..15
			a.i("VMOVDQU %s, X5", hi[p])
			a.i("VINSERTI128 $1, %s, Y5, Y5", hi[p+4]) // bytes 16..31
			a.i("VPSRLW $4, Y4, Y6")
			a.i("VPSRLW $4, Y5, Y7")
			for r := 4; r < 8; r++ {
				a.i("VPAND gemmNib<>(SB), Y%d, Y%d", r, r)
			}
			a.i("VPXOR Y%d, Y%d, Y%d", p, p, p)
			vexDPBUSD(a, 12, 4, p) // D_lo: elements 64g+0..31, sub-block 2g
			vexDPBUSD(a, 13, 5, p)
			a.i("VPXOR Y8, Y8, Y8")
			vexDPBUSD(a, 14, 6, 8) // D_hi: elements 64g+32..63, sub-block 2g+1
			vexDPBUSD(a, 15, 7, 8)
			a.i("VMOVDQU %d(SP), Y9", 32*p)
			a.i("VPSHUFB k4scd<>+%d(SB), Y9, Y4", 64*g)
			a.i("VPMADDWD Y4, Y%d, Y%d", p, p)
			a.i("VPSHUFB k4scd<>+%d(SB), Y9, Y4", 64*g+32)
			vexDPWSSD(a, 4, 8, p)
		}
		reducePairs(a) // iacc_g, rows 0..7
		gemvQ4_KFold(a, g, false)
	}
	gemvQ4_KEpilogue(a, name, adv)
}

// dotQ6_KX is dotQ6_KQ8_KAVX2 (quant_amd64.s) with VEX VPDPWSSD for each
// Q6_SUB's VPMADDWD + VPADDD: the same quants, VPMADDUBSW pairs and scale
// words, the products summed into two int32 accumulators (chunks k even,
// odd, k = 0..3 of each half: chains of 4 instead of 8 dependent
// VPDPWSSD), added, then the AVX2 kernel's -32 offset and float steps.
// The scale words [sc_2i x8 | sc_2i+1 x8] of chunk i = 4h+k come from
// one VPSHUFB of the sign-extended scales (sc0..7 or sc8..15 in both
// halves) instead of Q6_SUB's VPSHUFB + VPMOVSXBW.
//
//	Y0 float lanes; Y1, Y7 int32 accumulators; Y2 d; Y4 qh, Y9/Y10 ql;
//	Y5, Y6 quants; Y8/Y15 scales 0..7/8..15 as int16 in both halves;
//	Y11 scale words; Y12 offset; Y13 0x0f; Y14 0x30.
func dotQ6_KX(a *asm) {
	a.p("// func dotQ6_KXQ8_K(nb int, w, x []byte) float32")
	a.p("TEXT ·dotQ6_KXQ8_K(SB), NOSPLIT, $0-60")
	a.i("MOVQ nb+0(FP), CX")
	a.i("MOVQ w_base+8(FP), SI")
	a.i("MOVQ x_base+32(FP), DI")
	a.i("VXORPS Y0, Y0, Y0")
	a.i("VMOVDQU gemmNib<>(SB), Y13")
	a.i("VMOVDQU gemmQ6Hi<>(SB), Y14")
	a.p("dotq6kxq8k:")
	a.i("VPMOVSXBW 192(SI), Y12") // the 16 scales as int16
	a.i("VPERMQ $0x44, Y12, Y8")  // sc0..7 in both halves
	a.i("VPERMQ $0xee, Y12, Y15") // sc8..15 in both halves
	a.i("VPMADDWD 260(DI), Y12, Y12")
	a.i("VPSLLD $5, Y12, Y12") // 32*(sc*bsums pairs)
	for h := 0; h < 2; h++ {
		a.i("VMOVDQU %d(SI), Y4", 128+32*h) // qh
		a.i("VMOVDQU %d(SI), Y9", 64*h)     // ql bytes 0..31
		a.i("VMOVDQU %d(SI), Y10", 64*h+32) // ql bytes 32..63
		for k := 0; k < 4; k++ {
			switch k { // Q6_Q0..Q6_Q3: the k-th 32 quants into Y5
			case 0:
				a.i("VPSLLW $4, Y4, Y5")
				a.i("VPAND Y14, Y5, Y5")
				a.i("VPAND Y13, Y9, Y6")
			case 1:
				a.i("VPSLLW $2, Y4, Y5")
				a.i("VPAND Y14, Y5, Y5")
				a.i("VPAND Y13, Y10, Y6")
			case 2:
				a.i("VPAND Y14, Y4, Y5")
				a.i("VPSRLW $4, Y9, Y6")
				a.i("VPAND Y13, Y6, Y6")
			case 3:
				a.i("VPSRLW $2, Y4, Y5")
				a.i("VPAND Y14, Y5, Y5")
				a.i("VPSRLW $4, Y10, Y6")
				a.i("VPAND Y13, Y6, Y6")
			}
			a.i("VPOR Y6, Y5, Y5")
			a.i("VPMADDUBSW %d(DI), Y5, Y5", 4+32*k+128*h)
			// [sc_2i x8 | sc_2i+1 x8], i = 4h+k: the AVX2 kernel's words
			a.i("VPSHUFB vexQ6W<>+%d(SB), Y%d, Y11", 32*k, []int{8, 15}[h])
			acc := []int{1, 7}[k%2]
			if h == 0 && k < 2 {
				a.i("VPMADDWD Y11, Y5, Y%d", acc)
			} else {
				vexDPWSSD(a, 11, 5, acc)
			}
		}
	}
	a.i("VPADDD Y7, Y1, Y1")
	a.i("VPSUBD Y12, Y1, Y1")
	a.i("VCVTDQ2PS Y1, Y1")
	a.i("MOVWLZX 208(SI), AX")
	a.i("VMOVD AX, X2")
	a.i("VCVTPH2PS X2, X2")
	a.i("VMULSS (DI), X2, X2") // dw*dx
	a.i("VBROADCASTSS X2, Y2")
	a.i("VFMADD231PS Y1, Y2, Y0")
	a.i("ADDQ $210, SI")
	a.i("ADDQ $292, DI")
	a.i("DECQ CX")
	a.i("JNZ dotq6kxq8k")
	hsum8Ret(a)
}

// dotQ8_0X is dotQ8_0Q8_0AVX2 (quant_amd64.s) with VEX VPDPBUSD for the
// exact I_j (the sum of the 4 products of elements 4j..4j+3, lane j):
//
//	I_j = VPDPBUSD(0, w^0x80, x) - VPDPBUSD(0, 0x80, x)
//	    = sum (w+128)*x - 128*sum x
//
// for every byte on either side (each dword at most 4*255*128 in
// magnitude, no saturation). The float steps per block are the AVX2
// kernel's: s = dw*dx, lanes = fma(s, float(I_j), lanes), then hsum8.
//
//	Y0 lanes; Y1 w^0x80; Y2 x; Y3, Y4 sums; Y8, Y9 dw, dx; Y15 0x80.
func dotQ8_0X(a *asm) {
	a.p("// func dotQ8_0XQ8_0(nb int, w, x []byte) float32")
	a.p("TEXT ·dotQ8_0XQ8_0(SB), NOSPLIT, $0-60")
	a.i("MOVQ nb+0(FP), CX")
	a.i("MOVQ w_base+8(FP), SI")
	a.i("MOVQ x_base+32(FP), DI")
	a.i("VXORPS Y0, Y0, Y0")
	a.i("VMOVDQU vexB80<>(SB), Y15")
	a.p("dotq80xq80:")
	a.i("VMOVDQU 2(SI), Y1")
	a.i("VPXOR Y15, Y1, Y1") // w+128, unsigned
	a.i("VMOVDQU 2(DI), Y2")
	a.i("VPXOR Y3, Y3, Y3")
	vexDPBUSD(a, 2, 1, 3)
	a.i("VPXOR Y4, Y4, Y4")
	vexDPBUSD(a, 2, 15, 4)
	a.i("VPSUBD Y4, Y3, Y3") // I_j
	a.i("VCVTDQ2PS Y3, Y3")
	a.i("VPBROADCASTW (SI), X8")
	a.i("VCVTPH2PS X8, Y8")
	a.i("VPBROADCASTW (DI), X9")
	a.i("VCVTPH2PS X9, Y9")
	a.i("VMULPS Y9, Y8, Y8") // dw*dx
	a.i("VFMADD231PS Y8, Y3, Y0")
	a.i("ADDQ $34, SI")
	a.i("ADDQ $34, DI")
	a.i("DECQ CX")
	a.i("JNZ dotq80xq80")
	hsum8Ret(a)
}

// hsum8Ret returns hsum8 of Y0 (quant_amd64.s's HSUM8: ((l0+l4)+(l2+l6))
// + ((l1+l5)+(l3+l7))) as a dot's float32 result (ret+56).
func hsum8Ret(a *asm) {
	a.i("VEXTRACTF128 $1, Y0, X1")
	a.i("VADDPS X1, X0, X0")
	a.i("VMOVHLPS X0, X0, X1")
	a.i("VADDPS X1, X0, X0")
	a.i("VMOVSHDUP X0, X1")
	a.i("VADDSS X1, X0, X0")
	a.i("VMOVSS X0, ret+56(FP)")
	a.i("VZEROUPPER")
	a.i("RET")
	a.p("")
}
