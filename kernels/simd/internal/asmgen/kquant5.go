package main

import (
	"fmt"
	"strings"
)

// Q5_K GEMMs against Q8_K rows as they are, in llama.cpp's
// ggml_vec_dot_q5_K_q8_K lane order (simd.DotQ5_KQ8_K): per super-block,
// lane m = the exact sum over the eight 32-element chunks c of
// sc_c * (q5.q8 over elements 32c+4m..32c+4m+3), folded as
// acc_m = fma(d*dx, float(lane m), acc_m); the mins as one
// summs = fma(-(dmin*dx), float(sum_s mn_s*(bsums 2s + 2s+1)), summs);
// out = hsum8(acc) + summs. The lane part is Q6_K's (kernelQ6_K): the
// quants of chunks 2p and 2p+1 that meet in a lane are interleaved by
// element pair, the activation rows alike, so that one VPMADDWD applies
// both chunks' scales.

// Q5_K panel of 8 rows, per super-block (2368 bytes):
//
//	V[p][k] at (16p+k)*32, p = 0..3, k = 0..15 (element pair 2k, 2k+1 of a
//	        chunk): lane r = bytes (q[32c+2k], q[32c+2k+1], q[32c'+2k],
//	        q[32c'+2k+1]) of row r, c = 2p, c' = 2p+1, unsigned 5-bit quants
//	SC2[p]  at 2048+32p: lane r = int16 pair (sc[r][2p], sc[r][2p+1])
//	MN2[k]  at 2176+32k, k = 0..3: lane r = int16 pair (mn[r][2k], mn[r][2k+1])
//	D       at 2304: float32 d of rows 0..7;  DMIN at 2336: float32 dmin
//
// Chunk c of a row is the low (c even) or high nibble of qs[32(c/2)+l]
// with bit c of qh[l] as bit 4 (l = 0..31).
const (
	q5kV, q5kSC2, q5kMN2, q5kD, q5kDmin, q5kBlock = 0, 2048, 2176, 2304, 2336, 2368
)

// packQ5_K builds Q5_K panels (gemmPackQ5_K; layout above). SC2 and MN2
// come out of one 8x8 dword transpose of the rows' [sc0..7 | mn0..7] as
// int16; the quants as packQ6_K's, chunk by chunk. The frame holds the 8
// rows' low interleaves while the high ones are transposed.
func packQ5_K(a *asm) { packQ5_KLayout(a, false) }

// packQ5_KWide is gemmPackQ5_KW, the 16-row layout of the avx512vnni
// kernels: two 8-row panels interleaved by 32-byte vector, so that one
// 64-byte load holds a panel quantity of 16 rows. Every 8-row quantity at
// offset o of packQ5_K's layout goes to 2*o, rows 0..7 in the low 32
// bytes, rows 8..15 in the high (4736 bytes per super-block); one call
// writes one half: rows 0..7 with panel = the layout, rows 8..15 with
// panel = the layout + 32.
func packQ5_KWide(a *asm) { packQ5_KLayout(a, true) }

func packQ5_KLayout(a *asm, wide bool) {
	name, po := "gemmPackQ5_K", func(o int) int { return o }
	if wide {
		name, po = "gemmPackQ5_KW", func(o int) int { return 2 * o }
	}
	a.p("// func %s(nb int, w *byte, wStride int, panel *byte)", name)
	a.p("TEXT ·%s(SB), $256-32", name)
	a.i("MOVQ nb+0(FP), CX")
	a.i("MOVQ w+8(FP), SI")
	a.i("MOVQ wStride+16(FP), R8")
	a.i("MOVQ panel+24(FP), DI")
	a.i("LEAQ (R8)(R8*2), R9")
	a.i("LEAQ (SI)(R9*1), R10")
	a.i("LEAQ (SI)(R8*8), R13") // prefetch cursor: the next panel's rows
	a.p("%s:", strings.ToLower(name))
	packPrefetch(a, 8*176)
	off := func(o int) [8]string { return rowAddr8(o, "SI", "R10", "R8", "R9") }
	m4, m8, m12 := off(4), off(8), off(12)
	for r := 0; r < 8; r++ {
		kscales(a, m4[r], m8[r], m12[r])
		a.i("VPMOVZXBW X8, Y%d", r) // words sc0..7 | mn0..7
	}
	transpose8x8(a, func(c int) string {
		if c < 4 {
			return fmt.Sprintf("%d(DI)", po(q5kSC2+32*c))
		}
		return fmt.Sprintf("%d(DI)", po(q5kMN2+32*(c-4)))
	})
	halves8(a, off(0), fmt.Sprintf("%d(DI)", po(q5kD)))
	halves8(a, off(2), fmt.Sprintf("%d(DI)", po(q5kDmin)))
	// chunk c of row r into Y(dst), qh through Y(tmp).
	chunk := func(r, c, dst, tmp int) {
		q, qh := off(48+32*(c/2)), off(16)
		a.i("VMOVDQU %s, Y%d", q[r], dst)
		a.i("VMOVDQU %s, Y%d", qh[r], tmp)
		if c%2 == 1 {
			a.i("VPSRLW $4, Y%d, Y%d", dst, dst)
		}
		a.i("VPAND gemmNib<>(SB), Y%d, Y%d", dst, dst)
		// bit c of qh to bit 4 (word shifts: a byte's bit moves within it)
		switch s := c - 4; {
		case s < 0:
			a.i("VPSLLW $%d, Y%d, Y%d", -s, tmp, tmp)
		case s > 0:
			a.i("VPSRLW $%d, Y%d, Y%d", s, tmp, tmp)
		}
		a.i("VPAND gemmQ5Hi<>(SB), Y%d, Y%d", tmp, tmp)
		a.i("VPOR Y%d, Y%d, Y%d", tmp, dst, dst)
	}
	loK := func(d int) int { return d + 4*(d/4) }
	for p := 0; p < 4; p++ {
		for r := 0; r < 8; r++ {
			chunk(r, 2*p, r, 8)
			chunk(r, 2*p+1, 9, 10)
			a.i("VPUNPCKLWD Y9, Y%d, Y10", r)
			a.i("VPUNPCKHWD Y9, Y%d, Y%d", r, r)
			a.i("VMOVDQU Y10, %d(SP)", 32*r)
		}
		transpose8x8(a, func(d int) string { return fmt.Sprintf("%d(DI)", po(q5kV+(16*p+loK(d)+4)*32)) })
		for r := 0; r < 8; r++ {
			a.i("VMOVDQU %d(SP), Y%d", 32*r, r)
		}
		transpose8x8(a, func(d int) string { return fmt.Sprintf("%d(DI)", po(q5kV+(16*p+loK(d))*32)) })
	}
	a.i("ADDQ $176, SI")
	a.i("ADDQ $176, R10")
	a.i("ADDQ $%d, DI", po(q5kBlock))
	a.i("DECQ CX")
	a.i("JNZ %s", strings.ToLower(name))
	a.i("VZEROUPPER")
	a.i("RET")
	a.p("")
}

// kernelQ5_K: one 8-row Q5_K panel against nx Q8_K rows (gemmQ5_KQ8_Kx*),
// in DotQ5_KQ8_K's order. Per super-block and activation row j, first the
// mins:
//
//	B   = VPHADDW(bsums 0..7, bsums 8..15)      int16 (bs[2s]+bs[2s+1]), |.| <= 4096
//	M   = sum_k VPMADDWD(MN2[k], bcast B pair k)          exact int32
//	S_j = fma(-(dmin*dx), float(M), S_j)        (VFNMADD231PS: one rounding)
//
// then per lane m, as kernelQ6_K:
//
//	T = VPMADDUBSW(V[p][2m], bcast X[p] pair 2m)
//	  + VPMADDUBSW(V[p][2m+1], bcast X[p] pair 2m+1)   int16 (c, c') sums of
//	    4 products each, |.| <= 4*31*128 = 15872
//	I = sum_p VPMADDWD(T, SC2[p])                       exact int32
//	A[j][m] = fma(dx*d, float(I), A[j][m])
//
// and out_j = hsum8(A[j]) + S_j. Frame: A[j][m] at 32*(8j+m), X of row j
// at 256*(nx+j)+64p, S_j at 512nx+32j, B of row j at 544nx+16j.
// Registers: Y0..Y3 I, Y4..Y7 dx*d, Y8/Y14 V, Y9/Y10 broadcasts, Y11/Y12
// products, Y13 M, Y15 dmin*dx (then, VEX, SC2).
func kernelQ5_K(a *asm, nx int) { kernelQ5_KGen(a, nx, false) }

// kernelQ5_KVEX is kernelQ5_K with AVX-VNNI (gemmQ5_KXQ8_Kx*): each
// VPMADDWD + VPADDD into I is one VEX VPDPWSSD (the same exact int32), as
// in kernelQ6_KVEX; the floats are kernelQ5_K's.
func kernelQ5_KVEX(a *asm, nx int) { kernelQ5_KGen(a, nx, true) }

func kernelQ5_KGen(a *asm, nx int, vnni bool) {
	name := fmt.Sprintf("gemmQ5_KQ8_Kx%d", nx)
	if vnni {
		name = fmt.Sprintf("gemmQ5_KXQ8_Kx%d", nx)
	}
	kernelPrologueFrame(a, name, nx, "0", 560*nx, false)
	acc := func(j, m int) string { return fmt.Sprintf("%d(SP)", 32*(8*j+m)) }
	xs := func(j, p, off int) string { return fmt.Sprintf("%d(SP)", 256*(nx+j)+64*p+off) }
	sm := func(j int) string { return fmt.Sprintf("%d(SP)", 512*nx+32*j) }
	bp := func(j, k int) string { return fmt.Sprintf("%d(SP)", 544*nx+16*j+4*k) }
	a.i("VXORPS Y8, Y8, Y8")
	for j := 0; j < nx; j++ {
		for m := 0; m < 8; m++ {
			a.i("VMOVUPS Y8, %s", acc(j, m))
		}
		a.i("VMOVUPS Y8, %s", sm(j))
	}
	lbl := strings.ToLower(name)
	a.p("%s:", lbl)
	for j := 0; j < nx; j++ {
		a.i("VBROADCASTSS (%s), Y%d", xPtr[j], 4+j)
		a.i("VMULPS %d(SI), Y%d, Y15", q5kDmin, 4+j)   // dmin*dx
		a.i("VMULPS %d(SI), Y%d, Y%d", q5kD, 4+j, 4+j) // dx*d
		a.i("VMOVDQU 260(%s), X9", xPtr[j])
		a.i("VPHADDW 276(%s), X9, X9", xPtr[j])
		a.i("VMOVDQU X9, %s", bp(j, 0))
		for k := 0; k < 4; k++ {
			a.i("VPBROADCASTD %s, Y10", bp(j, k))
			if k == 0 {
				a.i("VPMADDWD %d(SI), Y10, Y13", q5kMN2)
				continue
			}
			a.i("VPMADDWD %d(SI), Y10, Y10", q5kMN2+32*k)
			a.i("VPADDD Y10, Y13, Y13")
		}
		a.i("VCVTDQ2PS Y13, Y13")
		a.i("VMOVUPS %s, Y11", sm(j))
		a.i("VFNMADD231PS Y15, Y13, Y11") // summs = fma(-(dmin*dx), M, summs)
		a.i("VMOVUPS Y11, %s", sm(j))
		for p := 0; p < 4; p++ {
			a.i("VMOVDQU %d(%s), Y9", 4+64*p, xPtr[j])
			a.i("VPUNPCKLWD %d(%s), Y9, Y10", 4+64*p+32, xPtr[j])
			a.i("VPUNPCKHWD %d(%s), Y9, Y9", 4+64*p+32, xPtr[j])
			a.i("VMOVDQU Y10, %s", xs(j, p, 0))
			a.i("VMOVDQU Y9, %s", xs(j, p, 32))
		}
	}
	for m := 0; m < 8; m++ {
		for p := 0; p < 4; p++ {
			a.i("VMOVDQU %d(SI), Y8", q5kV+(16*p+2*m)*32)
			a.i("VMOVDQU %d(SI), Y14", q5kV+(16*p+2*m+1)*32)
			sc2 := q5kSC2 + 32*p
			if vnni && p > 0 {
				a.i("VMOVDQU %d(SI), Y15", sc2)
			}
			for j := 0; j < nx; j++ {
				a.i("VPBROADCASTD %s, Y9", xs(j, p, q6kPairWord(2*m)))
				a.i("VPBROADCASTD %s, Y10", xs(j, p, q6kPairWord(2*m+1)))
				a.i("VPMADDUBSW Y9, Y8, Y11")
				a.i("VPMADDUBSW Y10, Y14, Y12")
				a.i("VPADDW Y12, Y11, Y11")
				if p == 0 {
					a.i("VPMADDWD %d(SI), Y11, Y%d", sc2, j)
					continue
				}
				if vnni {
					vexDPWSSD(a, 15, 11, j)
					continue
				}
				a.i("VPMADDWD %d(SI), Y11, Y11", sc2)
				a.i("VPADDD Y11, Y%d, Y%d", j, j)
			}
		}
		for j := 0; j < nx; j++ {
			a.i("VCVTDQ2PS Y%d, Y%d", j, j)
			a.i("VFMADD213PS %s, Y%d, Y%d", acc(j, m), 4+j, j)
			a.i("VMOVUPS Y%d, %s", j, acc(j, m))
		}
	}
	a.i("ADDQ $%d, SI", q5kBlock)
	for j := 0; j < nx; j++ {
		a.i("ADDQ $292, %s", xPtr[j])
	}
	a.i("DECQ CX")
	a.i("JNZ %s", lbl)
	// hsum8 across the lane accumulators, 8 weight rows at a time, + summs.
	for j := 0; j < nx; j++ {
		for k := 0; k < 4; k++ {
			a.i("VMOVUPS %s, Y%d", acc(j, k), k)
			a.i("VADDPS %s, Y%d, Y%d", acc(j, k+4), k, k) // Yk = A[k]+A[k+4]
		}
		a.i("VADDPS Y2, Y0, Y0") // (A0+A4)+(A2+A6)
		a.i("VADDPS Y3, Y1, Y1") // (A1+A5)+(A3+A7)
		a.i("VADDPS Y1, Y0, Y0")
		a.i("VADDPS %s, Y0, Y0", sm(j)) // + summs
		a.i("VMOVUPS Y0, %s", outAddr(j, 0))
	}
	a.i("VZEROUPPER")
	a.i("RET")
	a.p("")
}

// vnniQ5_KKernels emits the avx512vnni Q5_K GEMM kernels
// gemmQ5_KV16Q8_Kx1..x3: a 16-row panel in packQ5_KWide's layout (4736 B
// per super-block; that packer, AVX2 code, is in gemm_amd64.s with its
// constants) against nx = 1..3 Q8_K rows.
func vnniQ5_KKernels(a *asm) {
	for nx := 1; nx <= 3; nx++ {
		vnniQ5_K(a, nx)
	}
}

// vnniQ5_K: kernelQ5_K's arithmetic on 16 rows (lane r < 8: row r of the
// first 8-row half, r >= 8: row r-8 of the second), as vnniQ6_K is
// kernelQ6_K's: the same integers (VPDPWSSD = VPMADDWD + VPADDD, exact)
// and float operations:
//
//	M = sum_k VPDPWSSD(MN2[k], bcast B pair k);  S_j = fma(-(dmin*dx), float(M), S_j)
//	I = VPMADDWD(T_0, SC2[0]) + VPDPWSSD over p = 1..3 (T_p, SC2[p])
//	A[j][m] = fma(dx*d, float(I), A[j][m]);  out_j = hsum8(A[j]) + S_j
//
// Every panel quantity is one 64-byte load (the wide layout: offset 2*o
// of packQ5_K's o), the scales SC2 are memory operands.
//
//	Z0..Z2 I of rows j (first M), Z3/Z4 V (first MN2, dmin*dx), Z5
//	broadcasts, Z6/Z7 products (first d, dmin), Z8+8j+m A[j][m]
//	(registers throughout). Frame: X of row j at 256j+64p; dx*d of row j
//	at xsB+64j, S_j at xsB+64nx+64j, B of row j at xsB+128nx+16j
//	(xsB = 256nx).
func vnniQ5_K(a *asm, nx int) {
	name := fmt.Sprintf("gemmQ5_KV16Q8_Kx%d", nx)
	xsB := 256 * nx
	dxd := func(j int) int { return xsB + 64*j }
	sm := func(j int) int { return xsB + 64*nx + 64*j }
	bp := func(j, k int) int { return xsB + 128*nx + 16*j + 4*k }
	xs := func(j, p, off int) int { return 256*j + 64*p + off }
	acc := func(j, m int) string { return fmt.Sprintf("Z%d", 8+8*j+m) }
	w := func(o int) int { return 2 * o } // the wide layout's offset of o

	kernelPrologueFrame(a, name, nx, "0", xsB+144*nx, false)
	for j := 0; j < nx; j++ {
		for m := 0; m < 8; m++ {
			a.i("VPXORD %s, %s, %s", acc(j, m), acc(j, m), acc(j, m))
		}
		a.i("VMOVDQU64 %s, %d(SP)", acc(j, 0), sm(j))
	}
	lbl := strings.ToLower(name)
	a.p("%s:", lbl)
	a.i("VMOVUPS %d(SI), Z6", w(q5kD))
	a.i("VMOVUPS %d(SI), Z7", w(q5kDmin))
	for j := 0; j < nx; j++ {
		a.i("VMULPS.BCST (%s), Z6, Z5", xPtr[j]) // dx*d
		a.i("VMOVUPS Z5, %d(SP)", dxd(j))
	}
	// The mins: M of row j in Zj.
	for j := 0; j < nx; j++ {
		a.i("VMOVDQU 260(%s), X5", xPtr[j])
		a.i("VPHADDW 276(%s), X5, X5", xPtr[j])
		a.i("VMOVDQU X5, %d(SP)", bp(j, 0))
		a.i("VPXORD Z%d, Z%d, Z%d", j, j, j)
	}
	for k := 0; k < 4; k++ {
		a.i("VMOVDQU64 %d(SI), Z3", w(q5kMN2+32*k))
		for j := 0; j < nx; j++ {
			a.i("VPDPWSSD.BCST %d(SP), Z3, Z%d", bp(j, k), j)
		}
	}
	for j := 0; j < nx; j++ {
		a.i("VCVTDQ2PS Z%d, Z%d", j, j)
		a.i("VMULPS.BCST (%s), Z7, Z4", xPtr[j]) // dmin*dx
		a.i("VMOVUPS %d(SP), Z5", sm(j))
		a.i("VFNMADD231PS Z4, Z%d, Z5", j) // summs = fma(-(dmin*dx), M, summs)
		a.i("VMOVUPS Z5, %d(SP)", sm(j))
	}
	// Activation rows interleaved like the panel (kernelQ6_K).
	for j := 0; j < nx; j++ {
		for p := 0; p < 4; p++ {
			a.i("VMOVDQU %d(%s), Y6", 4+64*p, xPtr[j])
			a.i("VPUNPCKLWD %d(%s), Y6, Y7", 4+64*p+32, xPtr[j])
			a.i("VPUNPCKHWD %d(%s), Y6, Y6", 4+64*p+32, xPtr[j])
			a.i("VMOVDQU Y7, %d(SP)", xs(j, p, 0))
			a.i("VMOVDQU Y6, %d(SP)", xs(j, p, 32))
		}
	}
	for m := 0; m < 8; m++ {
		for p := 0; p < 4; p++ {
			a.i("VMOVDQU64 %d(SI), Z3", w(q5kV+(16*p+2*m)*32))
			a.i("VMOVDQU64 %d(SI), Z4", w(q5kV+(16*p+2*m+1)*32))
			sc2 := w(q5kSC2 + 32*p)
			for j := 0; j < nx; j++ {
				a.i("VPBROADCASTD %d(SP), Z5", xs(j, p, q6kPairWord(2*m)))
				a.i("VPMADDUBSW Z5, Z3, Z6")
				a.i("VPBROADCASTD %d(SP), Z5", xs(j, p, q6kPairWord(2*m+1)))
				a.i("VPMADDUBSW Z5, Z4, Z7")
				a.i("VPADDW Z7, Z6, Z6")
				if p == 0 {
					a.i("VPMADDWD %d(SI), Z6, Z%d", sc2, j)
				} else {
					a.i("VPDPWSSD %d(SI), Z6, Z%d", sc2, j)
				}
			}
		}
		for j := 0; j < nx; j++ {
			a.i("VCVTDQ2PS Z%d, Z%d", j, j)
			a.i("VFMADD231PS %d(SP), Z%d, %s", dxd(j), j, acc(j, m)) // A = fma(dx*d, float(I), A)
		}
	}
	a.i("ADDQ $%d, SI", w(q5kBlock))
	for j := 0; j < nx; j++ {
		a.i("ADDQ $292, %s", xPtr[j])
	}
	a.i("DECQ CX")
	a.i("JNZ %s", lbl)
	// out = hsum8 of each row's lanes + summs.
	for j := 0; j < nx; j++ {
		r := func(m int) string { return acc(j, m) }
		a.i("VADDPS %s, %s, %s", r(4), r(0), r(0))
		a.i("VADDPS %s, %s, %s", r(6), r(2), r(2))
		a.i("VADDPS %s, %s, %s", r(2), r(0), r(0))
		a.i("VADDPS %s, %s, %s", r(5), r(1), r(1))
		a.i("VADDPS %s, %s, %s", r(7), r(3), r(3))
		a.i("VADDPS %s, %s, %s", r(3), r(1), r(1))
		a.i("VADDPS %s, %s, %s", r(1), r(0), r(0))
		a.i("VADDPS %d(SP), %s, %s", sm(j), r(0), r(0))
		a.i("VMOVUPS %s, %s", r(0), outAddr(j, 0))
	}
	a.i("VZEROUPPER")
	a.i("RET")
	a.p("")
}

// dotQ5_KVConsts emits dotQ5_KV's tables.
func dotQ5_KVConsts(a *asm) {
	var dw [16]uint32
	for i := range dw {
		dw[i] = 0 // qs word shifts: 0 (even chunk, low nibbles) | 4 (odd)
		if i >= 8 {
			dw[i] = 0x00040004
		}
	}
	data64(a, "dq5kShQ", dw)
	// qh word shifts of group g taking bit c (c = 2g | 2g+1) to bit 4:
	// left 4-c for g < 2, right c-4 for g >= 2.
	for g, s := range [4][2]uint32{{4, 3}, {2, 1}, {0, 1}, {2, 3}} {
		for i := range dw {
			v := s[i/8]
			dw[i] = v | v<<16
		}
		data64(a, fmt.Sprintf("dq5kShH%d", g), dw)
	}
	data64(a, "dq5kM10", lanes4(0x10101010, 0x10101010, 0x10101010, 0x10101010))
	// VPERMW indexes: group g's scale words (sc[2g] | sc[2g+1]) from
	// [sc0..7 mn0..7]; the mins doubled [mn0 mn0 mn1 mn1 .. mn7 mn7].
	for g := 0; g < 4; g++ {
		for i := range dw {
			v := uint32(2*g + i/8)
			dw[i] = v | v<<16
		}
		data64(a, fmt.Sprintf("dq5kSc%d", g), dw)
	}
	for i := range dw {
		v := uint32(8 + i%8)
		dw[i] = v | v<<16
	}
	data64(a, "dq5kMn", dw)
	a.p("")
}

// dotQ5_KV: dotQ5_KQ8_KAVX2 (quant_amd64.s) on AVX-512, one Q5_K row
// against one Q8_K row (decode), the same float operations in the same
// order (8 float32 lanes, one fma per super-block with d*dx; the mins'
// scalar chain; hsum8(lanes) + summs); only the exact int32 lanes are
// summed differently. Per 64-element group g, the group's two chunks in
// one ZMM (256-bit halves):
//
//	Q = [chunk 2g | chunk 2g+1] = (VPSRLVW(qs, [0|4]) & 15) | (VPS?LVW(qh, shifts_g) & 0x10)
//	T += VPMADDWD(VPMADDUBSW(Q, q8 (64 bytes)), [sc[2g] | sc[2g+1]] words)
//
// (the scale words from VPERMW of the zero-extended scales); lane m =
// T[m] + T[8+m]. The mins: M = hsum(VPMADDWD(doubled mins, bsums)) (exact),
// summs = fma(-(dmin*dx), float(M), summs).
//
//	Y0 lanes; X7 summs; Z1..Z6 temporaries; Y8 scales and mins; Z9..Z10
//	mins, d; Z11..Z14 scale words; Z20 0x0f; Z21 0x10; Z22..Z25 qh
//	shifts; Z26 qs shifts; Z27..Z30, Z31 VPERMW indexes.
//
// It prefetches q5kDotPrefetch bytes ahead in the row, and so into the
// next rows (a matrix's rows are contiguous): decode streams the weights
// from DRAM. Measured (one thread, 2048-element rows streamed from a
// 500 MB matrix, CPU time on a loaded host): 1408 or 2816 bytes ahead
// 57-62 ms per pass, 704 69-71 ms, none 78-91 ms, the AVX2 dot 90-97 ms.
func dotQ5_KV(a *asm) { dotQ5_KVGen(a, "dotQ5_KQ8_KV", q5kDotPrefetch) }

// q5kDotPrefetch is dotQ5_KV's prefetch distance: 16 super-blocks.
const q5kDotPrefetch = 16 * 176

func dotQ5_KVGen(a *asm, name string, pf int) {
	a.p("// func %s(nb int, w, x []byte) float32", name)
	a.p("TEXT ·%s(SB), NOSPLIT, $0-60", name)
	a.i("MOVQ nb+0(FP), CX")
	a.i("MOVQ w_base+8(FP), SI")
	a.i("MOVQ x_base+32(FP), DI")
	a.i("VXORPS Y0, Y0, Y0")
	a.i("VXORPS X7, X7, X7")
	a.i("VMOVDQU64 dq4kNib<>(SB), Z20")
	a.i("VMOVDQU64 dq5kM10<>(SB), Z21")
	for g := 0; g < 4; g++ {
		a.i("VMOVDQU64 dq5kShH%d<>(SB), Z%d", g, 22+g)
		a.i("VMOVDQU64 dq5kSc%d<>(SB), Z%d", g, 27+g)
	}
	a.i("VMOVDQU64 dq5kShQ<>(SB), Z26")
	a.i("VMOVDQU64 dq5kMn<>(SB), Z31")
	a.p("%s:", strings.ToLower(name))
	if pf > 0 {
		for o := 0; o < 176; o += 64 {
			a.i("PREFETCHT0 %d(SI)", pf+o)
		}
	}
	kscales(a, "4(SI)", "8(SI)", "12(SI)") // X8 = [sc0..7 mn0..7]
	a.i("VPMOVZXBW X8, Y8")
	// The mins' exact sum and fold.
	a.i("VPERMW Y8, Y31, Y9")
	a.i("VPMADDWD 260(DI), Y9, Y9")
	a.i("VEXTRACTI128 $1, Y9, X10")
	a.i("VPADDD X10, X9, X9")
	a.i("VPSHUFD $0x4e, X9, X10")
	a.i("VPADDD X10, X9, X9")
	a.i("VPSHUFD $0xb1, X9, X10")
	a.i("VPADDD X10, X9, X9")
	a.i("VCVTDQ2PS X9, X9")
	a.i("MOVL (SI), AX")
	a.i("VMOVD AX, X10")
	a.i("VCVTPH2PS X10, X10") // [d, dmin]
	a.i("VBROADCASTSS (DI), X11")
	a.i("VMULPS X11, X10, X10") // [d*dx, dmin*dx]
	a.i("VMOVSHDUP X10, X11")
	a.i("VFNMADD231SS X11, X9, X7") // summs = fma(-(dmin*dx), M, summs)
	a.i("VBROADCASTSS X10, Y10")    // d*dx
	for g := 0; g < 4; g++ {
		a.i("VPERMW Z8, Z%d, Z%d", 27+g, 11+g)
	}
	a.i("VBROADCASTI64X4 16(SI), Z2") // qh
	for g := 0; g < 4; g++ {
		a.i("VBROADCASTI64X4 %d(SI), Z1", 48+32*g)
		a.i("VPSRLVW Z26, Z1, Z1")
		if g < 2 {
			a.i("VPSLLVW Z%d, Z2, Z3", 22+g)
		} else {
			a.i("VPSRLVW Z%d, Z2, Z3", 22+g)
		}
		a.i("VPANDD Z21, Z3, Z3")
		a.i("VPTERNLOGD $0xf8, Z20, Z1, Z3") // Z3 |= Z1 & 0x0f: [chunk 2g | chunk 2g+1]
		a.i("VPMADDUBSW %d(DI), Z3, Z3", 4+64*g)
		if g == 0 {
			a.i("VPMADDWD Z11, Z3, Z5")
		} else {
			a.i("VPDPWSSD Z%d, Z3, Z5", 11+g)
		}
	}
	a.i("VEXTRACTI64X4 $1, Z5, Y6")
	a.i("VPADDD Y6, Y5, Y5")
	a.i("VCVTDQ2PS Y5, Y5")
	a.i("VFMADD231PS Y5, Y10, Y0") // lanes = fma(d*dx, float(lane), lanes)
	a.i("ADDQ $176, SI")
	a.i("ADDQ $292, DI")
	a.i("DECQ CX")
	a.i("JNZ %s", strings.ToLower(name))
	// hsum8: ((l0+l4)+(l2+l6)) + ((l1+l5)+(l3+l7)), then + summs
	a.i("VEXTRACTF128 $1, Y0, X1")
	a.i("VADDPS X1, X0, X0")
	a.i("VMOVHLPS X0, X0, X1")
	a.i("VADDPS X1, X0, X0")
	a.i("VMOVSHDUP X0, X1")
	a.i("VADDSS X1, X0, X0")
	a.i("VADDSS X7, X0, X0")
	a.i("VMOVSS X0, ret+56(FP)")
	a.i("VZEROUPPER")
	a.i("RET")
	a.p("")
}
