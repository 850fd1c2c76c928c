package main

import (
	"fmt"
	"strings"
)

// K-quant GEMMs: Q4_K and Q6_K weights against Q8_K activations, used as
// they are (d f32 at 0, qs int8[256] at 4, bsums int16[16] at 260). Q6_K's
// follow llama.cpp's ggml_vec_dot_q6_K_q8_K lane order (simd.DotQ6_KQ8_K).

// Q4_K panel of 8 rows, per super-block (2624 bytes):
//
//	V[s][k] at (8s+k)*32, s, k = 0..7: lane r = the nibbles (one per byte)
//	        of elements 32s+4k..32s+4k+3 of row r
//	SC[s]   at 2048+32s: lane r = int16 pair (scale[r][s], scale[r][s])
//	MN[s]   at 2304+32s: lane r = int16 pair (min[r][s], min[r][s])
//	D       at 2560: float32 d of rows 0..7;  DMIN at 2592: float32 dmin
const (
	q4kV, q4kSC, q4kMN, q4kD, q4kDmin, q4kBlock = 0, 2048, 2304, 2560, 2592, 2624
)

// kscales unpacks the 12 packed 6-bit scales/mins of the Q4_K super-block
// whose scale bytes start at the address base+4 (get_scale_min_k4) into X8
// = [scale0..7, min0..7] bytes:
//
//	scales 0..3 = u0 & 0x3f3f3f3f
//	scales 4..7 = u2&0x0f0f0f0f | (u0>>6 & 0x03030303)<<4
//	mins   0..3 = u1 & 0x3f3f3f3f
//	mins   4..7 = u2>>4&0x0f0f0f0f | (u1>>6 & 0x03030303)<<4
//
// u0, u1, u2 at m4, m8, m12. Clobbers AX, BX, DX, R11, R12.
func kscales(a *asm, m4, m8, m12 string) {
	a.i("MOVL %s, AX", m4)
	a.i("MOVL %s, BX", m8)
	a.i("MOVL %s, DX", m12)
	a.i("MOVL AX, R11")
	a.i("SHRL $6, R11")
	a.i("ANDL $0x03030303, R11")
	a.i("SHLL $4, R11")
	a.i("MOVL DX, R12")
	a.i("ANDL $0x0f0f0f0f, R12")
	a.i("ORL R12, R11") // scales 4..7
	a.i("ANDL $0x3f3f3f3f, AX")
	a.i("MOVL BX, R12")
	a.i("SHRL $6, R12")
	a.i("ANDL $0x03030303, R12")
	a.i("SHLL $4, R12")
	a.i("SHRL $4, DX")
	a.i("ANDL $0x0f0f0f0f, DX")
	a.i("ORL R12, DX") // mins 4..7
	a.i("ANDL $0x3f3f3f3f, BX")
	a.i("SHLQ $32, R11")
	a.i("ORQ R11, AX")
	a.i("SHLQ $32, DX")
	a.i("ORQ DX, BX")
	a.i("VMOVQ AX, X8")
	a.i("VPINSRQ $1, BX, X8, X8")
}

func packQ4_K(a *asm) { packQ4_KLayout(a, false) }

// packQ4_KLayout is gemmPackQ4_K, or (interleaved) gemmPackQ4_KI, which
// reads the load-time layout (PackQ4_K: a panel's 8 rows' super-block b
// one after the other, 1152 bytes per super-block, wStride = 144).
func packQ4_KLayout(a *asm, interleaved bool) {
	name, adv := "gemmPackQ4_K", 144
	if interleaved {
		name, adv = "gemmPackQ4_KI", 8*144
	}
	lbl := strings.ToLower(name)
	packPrologue(a, name)
	if interleaved {
		a.i("LEAQ %d(SI), R13", q4kPrefetch) // prefetch cursor: ahead in the stream
	} else {
		a.i("LEAQ (SI)(R8*8), R13") // prefetch cursor: the next panel's rows
	}
	a.p("%s:", lbl)
	packPrefetch(a, 8*144)
	off := func(o int) [8]string { return rowAddr8(o, "SI", "R10", "R8", "R9") }
	m4, m8, m12 := off(4), off(8), off(12)
	// Scales and mins: per row A_r = [sc0 sc0 .. sc3 sc3 | mn0 mn0 .. mn3 mn3]
	// and B_r (4..7) as int16; B_r waits in V[7]'s space (filled last).
	for r := 0; r < 8; r++ {
		kscales(a, m4[r], m8[r], m12[r])
		a.i("VPMOVZXBW X8, Y8")
		a.i("VPUNPCKLWD Y8, Y8, Y%d", r)
		a.i("VPUNPCKHWD Y8, Y8, Y9")
		a.i("VMOVDQU Y9, %d(DI)", q4kV+(56+r)*32)
	}
	transpose8x8(a, func(c int) string {
		if c < 4 {
			return fmt.Sprintf("%d(DI)", q4kSC+32*c)
		}
		return fmt.Sprintf("%d(DI)", q4kMN+32*(c-4))
	})
	for r := 0; r < 8; r++ {
		a.i("VMOVDQU %d(DI), Y%d", q4kV+(56+r)*32, r)
	}
	transpose8x8(a, func(c int) string {
		if c < 4 {
			return fmt.Sprintf("%d(DI)", q4kSC+32*(4+c))
		}
		return fmt.Sprintf("%d(DI)", q4kMN+32*c)
	})
	halves8(a, off(0), fmt.Sprintf("%d(DI)", q4kD))
	halves8(a, off(2), fmt.Sprintf("%d(DI)", q4kDmin))
	// Nibbles: group g's 32 bytes hold sub-block 2g (low) and 2g+1 (high).
	for s := 0; s < 8; s++ {
		g := s / 2
		q := off(16 + 32*g)
		for r := 0; r < 8; r++ {
			a.i("VMOVDQU %s, Y%d", q[r], r)
			if s%2 == 1 {
				a.i("VPSRLW $4, Y%d, Y%d", r, r)
			}
			a.i("VPAND gemmNib<>(SB), Y%d, Y%d", r, r)
		}
		transpose8x8(a, func(k int) string { return fmt.Sprintf("%d(DI)", q4kV+(8*s+k)*32) })
	}
	a.i("ADDQ $%d, SI", adv)
	a.i("ADDQ $%d, R10", adv)
	a.i("ADDQ $%d, DI", q4kBlock)
	a.i("DECQ CX")
	a.i("JNZ %s", lbl)
	a.i("VZEROUPPER")
	a.i("RET")
	a.p("")
}

// kernelQ4_K: one 8-row Q4_K panel against nx Q8_K rows, in
// DotQ4_KQ8_K's order (llama.cpp's q4_K_8x8 GEMM). Per super-block, per
// 64-element group g (sub-blocks s = 2g, 2g+1) and activation row j:
//
//	S_s (int16) = sum_k VPMADDUBSW(V[s][k], bcast(q8 quad))
//	              (|.| <= 8*2*15*128 = 30720)
//	I   = VPMADDWD(S_2g, SC[2g]) + VPMADDWD(S_2g+1, SC[2g+1])   iacc, exact
//	acc = fma(float(I), d*dx, acc)                  (8 rows at once)
//
// and after the four groups, g = 0..3 in order:
//
//	M      = VPMADDWD(MN[2g], bcast(bsums 4g, 4g+1))
//	       + VPMADDWD(MN[2g+1], bcast(bsums 4g+2, 4g+3))            imin, exact
//	accMin = fma(float(M), dmin*dx, accMin)
//
// out = acc - accMin at the end.
//
//	Y0..Y3 S (then M), Y4..Y7 I (then accMin), Y8 V, Y9 broadcasts, Y10
//	products, Y11..Y14 acc, Y15 dmin*dx. Frame: accMin of row j at 32j,
//	d*dx of row j at 32(nx+j) (per super-block).
func kernelQ4_K(a *asm, nx int) { kernelQ4_KGen(a, nx, false) }

// kernelQ4_KVEX is kernelQ4_K with AVX-VNNI (the avxvnni set,
// gemmQ4_KXQ8_Kx*): the sub-block sums go straight into int32 by VEX
// VPDPBUSD (nibbles unsigned, activations signed), as in vnniQ4_K:
//
//	T_s = sum_k VPDPBUSD(V[s][k], bcast X_sk)          exact int32
//	I   = T_2g*scale_2g + T_2g+1*scale_2g+1   (VPMULLD, VPADDD; exact)
//
// I is kernelQ4_K's VPMADDWD sum (the same exact integer: its int16 sums
// never saturate), scale_s SC[s]'s int16 pair >> 16; the float part (d*dx,
// the acc and accMin FMA chains, the mins) is kernelQ4_K's, instruction for
// instruction, so every output has its bits. Both sub-blocks of a group run
// in one pass over k (2*nx accumulator chains); for nx = 1, 2 each T_s is
// further split over k mod q4kSplit(nx) and the parts added (exact) to keep
// enough independent VPDPBUSD chains in flight.
//
//	Y0..Y7 T parts (I of row j in Y(2jq), q = q4kSplit(nx)), Y8/Y9
//	V[2g][k], V[2g+1][k] (then scales), Y10 broadcasts, Y11..Y14 acc;
//	the mins use kernelQ4_K's registers.
func kernelQ4_KVEX(a *asm, nx int) { kernelQ4_KGen(a, nx, true) }

// q4kSplit is how many partial accumulators kernelQ4_KVEX keeps per
// sub-block sum for nx activation rows (2*nx*split <= 8 registers).
func q4kSplit(nx int) int {
	switch nx {
	case 1:
		return 4
	case 2:
		return 2
	}
	return 1
}

// kernelQ4_KGen emits kernelQ4_K (vnni: kernelQ4_KVEX) or, with gemv,
// the same in DotQ4_KQ8_KGemv's order (gemmQ4_KGQ8_Kx*, gemmQ4_KGXQ8_Kx*:
// llama.cpp's repacked Q4_K gemv, which its mul_mat_id runs for expert
// rows): the same exact integers, summed over the super-block and folded
// once each,
//
//	iacc   = sum_g I_g                  acc    = fma(float(iacc), d*dx, acc)
//	imin   = sum_g M_g                  accMin = fma(float(imin), dmin*dx, accMin)
//
// I_g adds into Y4+j (kernelQ4_K) or into the frame at 32(2nx+j)
// (kernelQ4_KVEX, whose registers are all taken), M_g into Yj.
func kernelQ4_KGen(a *asm, nx int, vnni bool) { kernelQ4_KFold(a, nx, vnni, false) }

func kernelQ4_KFold(a *asm, nx int, vnni, gemv bool) {
	G := ""
	if gemv {
		G = "G"
	}
	name := fmt.Sprintf("gemmQ4_K%sQ8_Kx%d", G, nx)
	if vnni {
		name = fmt.Sprintf("gemmQ4_K%sXQ8_Kx%d", G, nx)
	}
	frame := 64 * nx
	if gemv && vnni {
		frame = 96 * nx
	}
	kernelPrologueFrame(a, name, nx, "NOSPLIT", frame, false)
	dd := func(j int) int { return 32 * (nx + j) }
	isum := func(j int) int { return 32 * (2*nx + j) } // gemv, vnni: iacc of row j
	for j := 0; j < nx; j++ {
		a.i("VXORPS Y%d, Y%d, Y%d", 11+j, 11+j, 11+j)
		a.i("VMOVUPS Y%d, %d(SP)", 11+j, 32*j)
	}
	lbl := "gemmq4k" + strings.ToLower(G) + "q8kx" + fmt.Sprint(nx)
	if vnni {
		lbl = "gemmq4k" + strings.ToLower(G) + "xq8kx" + fmt.Sprint(nx)
	}
	a.p("%s:", lbl)
	for j := 0; j < nx; j++ {
		a.i("VBROADCASTSS (%s), Y9", xPtr[j]) // dx
		a.i("VMULPS %d(SI), Y9, Y10", q4kD)   // d*dx
		a.i("VMOVUPS Y10, %d(SP)", dd(j))
	}
	for g := 0; g < 4; g++ {
		var iacc func(int) int
		if vnni {
			iacc = q4kGroupVEX(a, nx, g)
		} else {
			iacc = q4kGroup(a, nx, g, gemv && g > 0)
		}
		for j := 0; j < nx; j++ {
			r := iacc(j)
			if gemv && vnni {
				switch {
				case g == 0:
					a.i("VMOVDQU Y%d, %d(SP)", r, isum(j))
					continue
				case g < 3:
					a.i("VPADDD %d(SP), Y%d, Y%d", isum(j), r, r)
					a.i("VMOVDQU Y%d, %d(SP)", r, isum(j))
					continue
				}
				a.i("VPADDD %d(SP), Y%d, Y%d", isum(j), r, r) // iacc
			} else if gemv && g < 3 {
				continue // I_g adds into Y4+j
			}
			a.i("VCVTDQ2PS Y%d, Y%d", r, r)                     // float(iacc)
			a.i("VFMADD231PS %d(SP), Y%d, Y%d", dd(j), r, 11+j) // acc = fma(iacc, d*dx, acc)
		}
	}
	for j := 0; j < nx; j++ {
		a.i("VBROADCASTSS (%s), Y9", xPtr[j])
		a.i("VMULPS %d(SI), Y9, Y15", q4kDmin) // dmin*dx
		a.i("VMOVUPS %d(SP), Y%d", 32*j, 4+j)
		for g := 0; g < 4; g++ {
			a.i("VPBROADCASTD %d(%s), Y9", 260+8*g, xPtr[j])
			if gemv && g > 0 {
				a.i("VPMADDWD %d(SI), Y9, Y10", q4kMN+32*2*g)
				a.i("VPADDD Y10, Y%d, Y%d", j, j)
			} else {
				a.i("VPMADDWD %d(SI), Y9, Y%d", q4kMN+32*2*g, j)
			}
			a.i("VPBROADCASTD %d(%s), Y9", 260+8*g+4, xPtr[j])
			a.i("VPMADDWD %d(SI), Y9, Y10", q4kMN+32*(2*g+1))
			a.i("VPADDD Y10, Y%d, Y%d", j, j)
			if gemv && g < 3 {
				continue // imin sums on
			}
			a.i("VCVTDQ2PS Y%d, Y%d", j, j)
			a.i("VFMADD231PS Y15, Y%d, Y%d", j, 4+j) // accMin = fma(imin, dmin*dx, accMin)
		}
		a.i("VMOVUPS Y%d, %d(SP)", 4+j, 32*j)
	}
	a.i("ADDQ $%d, SI", q4kBlock)
	for j := 0; j < nx; j++ {
		a.i("ADDQ $292, %s", xPtr[j])
	}
	a.i("DECQ CX")
	a.i("JNZ %s", lbl)
	for j := 0; j < nx; j++ {
		a.i("VSUBPS %d(SP), Y%d, Y%d", 32*j, 11+j, 11+j) // acc - accMin
		a.i("VMOVUPS Y%d, %s", 11+j, outAddr(j, 0))
	}
	a.i("VZEROUPPER")
	a.i("RET")
	a.p("")
}

// q4kGroup leaves group g's exact integer sum I of row j in Y(4+j)
// (kernelQ4_K: int16 VPMADDUBSW chains, widened by VPMADDWD), or adds it
// there (add), and returns where: j -> register number.
func q4kGroup(a *asm, nx, g int, add bool) func(int) int {
	for s := 2 * g; s < 2*g+2; s++ {
		for k := 0; k < 8; k++ {
			a.i("VMOVDQU %d(SI), Y8", q4kV+(8*s+k)*32)
			for j := 0; j < nx; j++ {
				a.i("VPBROADCASTD %d(%s), Y9", 4+32*s+4*k, xPtr[j])
				if k == 0 {
					a.i("VPMADDUBSW Y9, Y8, Y%d", j)
				} else {
					a.i("VPMADDUBSW Y9, Y8, Y10")
					a.i("VPADDW Y10, Y%d, Y%d", j, j)
				}
			}
		}
		for j := 0; j < nx; j++ {
			if s == 2*g && !add {
				a.i("VPMADDWD %d(SI), Y%d, Y%d", q4kSC+32*s, j, 4+j)
			} else {
				a.i("VPMADDWD %d(SI), Y%d, Y%d", q4kSC+32*s, j, j)
				a.i("VPADDD Y%d, Y%d, Y%d", j, 4+j, 4+j)
			}
		}
	}
	return func(j int) int { return 4 + j }
}

// q4kGroupVEX is q4kGroup by VEX VPDPBUSD (see kernelQ4_KVEX): the same I
// of row j, in Y(2jq) (q = q4kSplit(nx)).
func q4kGroupVEX(a *asm, nx, g int) func(int) int {
	q := q4kSplit(nx)
	t := func(j, h, p int) int { return (2*j+h)*q + p } // part p of T_2g+h, row j
	for k := 0; k < 8; k++ {
		a.i("VMOVDQU %d(SI), Y8", q4kV+(8*(2*g)+k)*32)
		a.i("VMOVDQU %d(SI), Y9", q4kV+(8*(2*g+1)+k)*32)
		for j := 0; j < nx; j++ {
			for h := 0; h < 2; h++ {
				r := t(j, h, k%q)
				a.i("VPBROADCASTD %d(%s), Y10", 4+32*(2*g+h)+4*k, xPtr[j])
				if k < q {
					a.i("VPXOR Y%d, Y%d, Y%d", r, r, r)
				}
				vexDPBUSD(a, 10, 8+h, r)
			}
		}
	}
	for j := 0; j < nx; j++ {
		for h := 0; h < 2; h++ {
			for p := 1; p < q; p++ {
				a.i("VPADDD Y%d, Y%d, Y%d", t(j, h, p), t(j, h, 0), t(j, h, 0))
			}
		}
	}
	a.i("VMOVDQU %d(SI), Y8", q4kSC+32*2*g)
	a.i("VMOVDQU %d(SI), Y9", q4kSC+32*(2*g+1))
	a.i("VPSRLD $16, Y8, Y8") // scale_2g
	a.i("VPSRLD $16, Y9, Y9") // scale_2g+1
	for j := 0; j < nx; j++ {
		t0, t1 := t(j, 0, 0), t(j, 1, 0)
		a.i("VPMULLD Y8, Y%d, Y%d", t0, t0)
		a.i("VPMULLD Y9, Y%d, Y%d", t1, t1)
		a.i("VPADDD Y%d, Y%d, Y%d", t1, t0, t0) // iacc
	}
	return func(j int) int { return t(j, 0, 0) }
}

// gemvQ4_K: 8 Q4_K rows against one Q8_K row (decode), straight from the
// weights, in DotQ4_KQ8_K's order. As in gemvQ4_0, rows p and p+4 share a
// register, one per 128-bit half, so each VPMADDUBSW serves two rows with
// broadcast activation halves. Per super-block:
//
//	SCP_p = [sc0..3 mn0..3 sc4..7 mn4..7 of row p | the same of row p+4]
//	        (get_scale_min_k4 on the vector unit), kept on the stack
//	M_p   = VPHADDD(VPMADDWD(VPSHUFB(SCP_p, [mn0 mn0 .. mn3 mn3]), bsums 0..7),
//	              VPMADDWD(VPSHUFB(SCP_p, [mn4 mn4 .. mn7 mn7]), bsums 8..15))
//	      = [imin_0..3 of row p | of row p+4], transposed to imin_g of rows 0..7
//	accMin = fma(float(imin_g), dmin*dx, accMin)             g = 0..3
//	I_p   = VPMADDWD(VPMADDUBSW(nibbles, q8) pair sums, bcast(scale[s]))
//	        summed over the group's two sub-blocks (int16 sums at most
//	        2*2*15*128 = 7680), reduced to iacc_g of rows 0..7 (reducePairs)
//	acc    = fma(float(iacc_g), d*dx, acc)                   g = 0..3
//
// and out = acc - accMin at the end.
//
//	Y0..Y3 M_p, then I_p; Y4..Y9 temporaries; Y10 accMin, Y11 acc (rows
//	0..7); Y12..Y15 activation halves (bsums first). Frame: SCP_p at 32p,
//	d*dx of rows 0..7 at 128.
func gemvQ4_K(a *asm) { gemvQ4_KLayout(a, false) }

// q4kPrefetch is how far ahead (bytes) the interleaved-layout Q4_K
// routines prefetch their one stream.
const q4kPrefetch = 16 * 8 * 144

// gemvQ4_KLayout is gemvQ4_KQ8_K, or (interleaved) gemvQ4_KQ8_KI over the
// load-time layout (see packQ4_KLayout), which streams it from DRAM.
//
// The raw-row kernel is emitted twice: in DotQ4_KQ8_K's order and
// (gemvQ4_KGQ8_K; see gemvQ4_KFold) in DotQ4_KQ8_KGemv's.
func gemvQ4_KLayout(a *asm, interleaved bool) {
	if interleaved {
		gemvQ4_KBody(a, "gemvQ4_KQ8_KI", 8*144, fmt.Sprintf("LEAQ %d(SI), R12", q4kPrefetch), false)
		return
	}
	a.p("// scale/min byte selection for gemvQ4_KQ8_K (see kquant.go)")
	// k4sc + 32s: words = scale[s] (byte s, or s+4 for s >= 4) in both halves.
	for sb := 0; sb < 8; sb++ {
		idx := sb
		if sb >= 4 {
			idx = sb + 4
		}
		for q := 0; q < 4; q++ {
			a.p("DATA k4sc<>+%d(SB)/8, $0x80%02x80%02x80%02x80%02x", 32*sb+8*q, idx, idx, idx, idx)
		}
	}
	a.p("GLOBL k4sc<>(SB), RODATA|NOPTR, $256")
	// k4mn: [mn0 mn0 mn1 mn1 mn2 mn2 mn3 mn3], then the same for mn4..7.
	for h, base := range []int{4, 12} {
		for half := 0; half < 2; half++ {
			// words j = 0..7: byte base + j/2
			a.p("DATA k4mn<>+%d(SB)/8, $0x80%02x80%02x80%02x80%02x", 32*h+16*half, base+1, base+1, base, base)
			a.p("DATA k4mn<>+%d(SB)/8, $0x80%02x80%02x80%02x80%02x", 32*h+16*half+8, base+3, base+3, base+2, base+2)
		}
	}
	a.p("GLOBL k4mn<>(SB), RODATA|NOPTR, $64")
	for q := 0; q < 4; q++ {
		a.p("DATA k4m3f<>+%d(SB)/8, $0x3f3f3f3f3f3f3f3f", 8*q)
		a.p("DATA k4m03<>+%d(SB)/8, $0x0303030303030303", 8*q)
	}
	a.p("GLOBL k4m3f<>(SB), RODATA|NOPTR, $32")
	a.p("GLOBL k4m03<>(SB), RODATA|NOPTR, $32")
	// Per-dword shift counts [0, 0, 0, 4] in each half.
	a.p("DATA k4sh<>+0(SB)/8, $0")
	a.p("DATA k4sh<>+8(SB)/8, $0x0000000400000000")
	a.p("DATA k4sh<>+16(SB)/8, $0")
	a.p("DATA k4sh<>+24(SB)/8, $0x0000000400000000")
	a.p("GLOBL k4sh<>(SB), RODATA|NOPTR, $32")
	a.p("")

	gemvQ4_KBody(a, "gemvQ4_KQ8_K", 144, "LEAQ (SI)(R8*8), R12", false) // prefetch cursor: the next 8 rows
	gemvQ4_KBody(a, "gemvQ4_KGQ8_K", 144, "LEAQ (SI)(R8*8), R12", true)
}

// gemvQ4_KFrame is the frame of the Q4_K gemv bodies: SCP_p at 32p, d*dx
// at 128 and, in DotQ4_KQ8_KGemv's order, the running iacc at 160.
func gemvQ4_KFrame(gemv bool) int {
	if gemv {
		return 192
	}
	return 160
}

// gemvQ4_KFold folds group g's iacc_g of rows 0..7 (Y0) into acc (Y11):
// at once (DotQ4_KQ8_K's order), or (gemv, DotQ4_KQ8_KGemv's order)
// summed in int32 at 160(SP) over the super-block's four groups and
// folded after the last, acc = fma(float(iacc), d*dx, acc).
func gemvQ4_KFold(a *asm, g int, gemv bool) {
	switch {
	case !gemv:
	case g == 0:
		a.i("VMOVDQU Y0, 160(SP)")
		return
	case g < 3:
		a.i("VPADDD 160(SP), Y0, Y0")
		a.i("VMOVDQU Y0, 160(SP)")
		return
	default:
		a.i("VPADDD 160(SP), Y0, Y0") // iacc
	}
	a.i("VCVTDQ2PS Y0, Y0")
	a.i("VFMADD231PS 128(SP), Y0, Y11") // acc = fma(iacc(_g), d*dx, acc)
}

func gemvQ4_KBody(a *asm, name string, adv int, cursor string, gemv bool) {
	gemvPrologueFrame(a, name, gemvQ4_KFrame(gemv), cursor)
	a.i("VXORPS Y10, Y10, Y10")
	a.i("VXORPS Y11, Y11, Y11")
	a.p("%s:", strings.ToLower(name))
	off := func(o int) [8]string { return rowAddr8(o, "SI", "R10", "R8", "R9") }
	sc := off(4)
	a.i("VBROADCASTI128 260(DI), Y12") // bsums 0..7
	a.i("VBROADCASTI128 276(DI), Y13") // bsums 8..15
	for p := 0; p < 4; p++ {
		gemvQ4_KSCP(a, sc[p], sc[p+4], p)
		a.i("VPSHUFB k4mn<>(SB), Y5, Y6")
		a.i("VPMADDWD Y12, Y6, Y6") // sub-blocks 0..3
		a.i("VPSHUFB k4mn<>+32(SB), Y5, Y7")
		a.i("VPMADDWD Y13, Y7, Y7")   // sub-blocks 4..7
		a.i("VPHADDD Y7, Y6, Y%d", p) // [imin_0..3 of row p | of row p+4]
	}
	gemvQ4_KMins(a, off, gemv)
	for g := 0; g < 4; g++ {
		// Prefetch the next 8 rows (1152 bytes per super-block), spread
		// over the groups.
		for off := 320 * g; off < min(320*(g+1), 8*144); off += 64 {
			a.i("PREFETCHT0 %d(R12)", off)
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
			a.i("VMOVDQU %d(SP), Y8", 32*p)
			// sub-block 2g: low nibbles, elements 64g+0..31
			a.i("VPMADDUBSW Y12, Y4, Y4")
			a.i("VPMADDUBSW Y13, Y5, Y5")
			a.i("VPADDW Y5, Y4, Y4")
			a.i("VPSHUFB k4sc<>+%d(SB), Y8, Y9", 64*g)
			a.i("VPMADDWD Y9, Y4, Y4")
			// sub-block 2g+1: high nibbles, elements 64g+32..63
			a.i("VPMADDUBSW Y14, Y6, Y6")
			a.i("VPMADDUBSW Y15, Y7, Y7")
			a.i("VPADDW Y7, Y6, Y6")
			a.i("VPSHUFB k4sc<>+%d(SB), Y8, Y9", 64*g+32)
			a.i("VPMADDWD Y9, Y6, Y6")
			a.i("VPADDD Y6, Y4, Y%d", p)
		}
		reducePairs(a) // iacc_g, rows 0..7
		gemvQ4_KFold(a, g, gemv)
	}
	gemvQ4_KEpilogue(a, name, adv)
}

// gemvQ4_KMins folds the mins of a super-block: Y0..Y3 hold M_p =
// [imin_0..3 of row p | of row p+4]; the 4x4 transposes of each half
// give imin_g of rows 0..7, and accMin (Y10) = fma(float(imin_g),
// dmin*dx, accMin), g = 0..3. Also stores d*dx of rows 0..7 at 128(SP)
// (off: the 8 rows' addresses). Clobbers Y0..Y9. With gemv
// (DotQ4_KQ8_KGemv's order) the four imin_g are summed first (exact) and
// folded once: accMin = fma(float(imin), dmin*dx, accMin).
func gemvQ4_KMins(a *asm, off func(int) [8]string, gemv bool) {
	// Transpose each half's 4x4: Y_g = imin_g of [rows 0..3 | rows 4..7].
	a.i("VPUNPCKLDQ Y1, Y0, Y4")
	a.i("VPUNPCKHDQ Y1, Y0, Y5")
	a.i("VPUNPCKLDQ Y3, Y2, Y6")
	a.i("VPUNPCKHDQ Y3, Y2, Y7")
	a.i("VPUNPCKLQDQ Y6, Y4, Y0")
	a.i("VPUNPCKHQDQ Y6, Y4, Y1")
	a.i("VPUNPCKLQDQ Y7, Y5, Y2")
	a.i("VPUNPCKHQDQ Y7, Y5, Y3")
	halves8Reg(a, off(0), 8)
	a.i("VBROADCASTSS (DI), Y9")
	a.i("VMULPS Y9, Y8, Y8") // d*dx
	a.i("VMOVUPS Y8, 128(SP)")
	halves8Reg(a, off(2), 8)
	a.i("VMULPS Y9, Y8, Y8") // dmin*dx
	if gemv {
		a.i("VPADDD Y1, Y0, Y0")
		a.i("VPADDD Y3, Y2, Y2")
		a.i("VPADDD Y2, Y0, Y0") // imin of rows 0..7
		a.i("VCVTDQ2PS Y0, Y0")
		a.i("VFMADD231PS Y8, Y0, Y10") // accMin = fma(imin, dmin*dx, accMin)
		return
	}
	for g := 0; g < 4; g++ {
		a.i("VCVTDQ2PS Y%d, Y%d", g, g)
		a.i("VFMADD231PS Y8, Y%d, Y10", g) // accMin = fma(imin_g, dmin*dx, accMin)
	}
}

// gemvQ4_KSCP emits get_scale_min_k4 of rows p and p+4 (12 scale bytes
// at lo and hi) on the vector unit: Y5 = SCP_p = [sc0-3 mn0-3 sc4-7 mn4-7
// of row p | of row p+4], also stored at 32p(SP). Clobbers Y4, Y6, Y7.
func gemvQ4_KSCP(a *asm, lo, hi string, p int) {
	a.i("VMOVDQU %s, X4", lo)
	a.i("VINSERTI128 $1, %s, Y4, Y4", hi) // dwords [u0 u1 u2 .] per half
	a.i("VPAND k4m3f<>(SB), Y4, Y5")      // [sc0-3 mn0-3 . .]
	a.i("VPSRLD $6, Y4, Y6")
	a.i("VPAND k4m03<>(SB), Y6, Y6")
	a.i("VPSLLD $4, Y6, Y6")          // [(u0>>6&3)<<4 (u1>>6&3)<<4 . .]
	a.i("VPSHUFD $0xaa, Y4, Y7")      // u2 everywhere
	a.i("VPSRLVD k4sh<>(SB), Y7, Y7") // [u2 u2 u2 u2>>4]
	a.i("VPAND gemmNib<>(SB), Y7, Y7")
	a.i("VPSHUFD $0x40, Y6, Y6")      // dword 2 = hi bits of u0, dword 3 = of u1
	a.i("VPOR Y6, Y7, Y7")            // dword 2 = sc4-7, dword 3 = mn4-7
	a.i("VPBLENDD $0xcc, Y7, Y5, Y5") // [sc0-3 mn0-3 sc4-7 mn4-7]
	a.i("VMOVDQU Y5, %d(SP)", 32*p)
}

// gemvQ4_KEpilogue ends a Q4_K gemv's super-block loop (SI, R10 rows
// advanced by adv, DI the Q8_K row, R12 the prefetch cursor) and stores
// acc - accMin (Y11 - Y10) of the 8 rows at R11.
func gemvQ4_KEpilogue(a *asm, name string, adv int) {
	a.i("ADDQ $%d, SI", adv)
	a.i("ADDQ $%d, R10", adv)
	a.i("ADDQ $292, DI")
	a.i("ADDQ $%d, R12", 8*144)
	a.i("DECQ CX")
	a.i("JNZ %s", strings.ToLower(name))
	a.i("VSUBPS Y10, Y11, Y11") // acc - accMin
	a.i("VMOVUPS Y11, (R11)")
	a.i("VZEROUPPER")
	a.i("RET")
	a.p("")
}

// Q6_K panel of 8 rows, per super-block (2592 bytes), built for
// llama.cpp's lane order (see kernelQ6_K): the quads of chunks c = 2p and
// c' = 2p+1 (p = 0..3) that fall into the same lane travel together, so
// that one VPMADDWD applies both chunks' scales.
//
//	V[p][k] at (16p+k)*32, k = 0..15 (element pair 2k, 2k+1 of a chunk):
//	        lane r = bytes (q[32c+2k], q[32c+2k+1], q[32c'+2k], q[32c'+2k+1])
//	        of row r, unsigned 6-bit quants
//	SC2[d]  at 2048+32d, d = 2p+s (s = 0, 1: first or second 16 elements of
//	        a chunk): lane r = int16 pair (sc[r][2c+s], sc[r][2c'+s])
//	SCB[m]  at 2304+32m, m = 0..7: lane r = int16 pair
//	        (-32*sc[r][2m], -32*sc[r][2m+1])   (|.| <= 4096)
//	D       at 2560: float32 d of rows 0..7
const (
	q6kV, q6kSC2, q6kSCB, q6kD, q6kBlock = 0, 2048, 2304, 2560, 2592
)

// q6kPairWord: where element pair k (0..15) of a chunk lands in the
// VPUNPCKLWD (bytes 0..31) / VPUNPCKHWD (32..63) of chunks c and c': both
// interleave within 128-bit halves, so lo holds pairs 0..3 | 8..11 and hi
// pairs 4..7 | 12..15. Returns the byte offset of pair k's dword.
func q6kPairWord(k int) int {
	return 4*(k&3) + 32*((k>>2)&1) + 16*(k>>3)
}

// packQ6_K builds Q6_K panels; see the layout above. Element order of a
// half h (128 elements) per doc.go: chunk 4h+i takes ql[64h+(i&1)*32+l]'s
// low (i < 2) or high nibble and bits 2i..2i+1 of qh[32h+l]. The frame
// holds the 8 rows' lo interleaves while hi is transposed.
func packQ6_K(a *asm) { packQ6_KGen(a, "gemmPackQ6_K", false) }

// packQ6_KW builds the half of a 16-row Q6_K panel (the avx512vnni
// kernels' vnniQ6_K, 5184 bytes per super-block) that holds 8 rows: the
// 8-row panel's 32-byte units, each at twice its offset, so that a call
// for rows 0..7 at panel and one for rows 8..15 at panel+32 leave every
// quantity of the 16 rows in one 64-byte ZMM load.
func packQ6_KW(a *asm) { packQ6_KGen(a, "gemmPackQ6_KW", true) }

func packQ6_KGen(a *asm, name string, wide bool) {
	st := func(o int) int { return o } // where the 8-row panel's offset o goes
	if wide {
		st = func(o int) int { return 2 * o }
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
	packPrefetch(a, 8*210)
	off := func(o int) [8]string { return rowAddr8(o, "SI", "R10", "R8", "R9") }
	sc := off(192)
	// SC2: per row the words (0,2,1,3) of each 4 int16 scales.
	for r := 0; r < 8; r++ {
		a.i("VPMOVSXBW %s, Y%d", sc[r], r)
		a.i("VPSHUFLW $0xd8, Y%d, Y%d", r, r)
		a.i("VPSHUFHW $0xd8, Y%d, Y%d", r, r)
	}
	transpose8x8(a, func(d int) string { return fmt.Sprintf("%d(DI)", st(q6kSC2+32*d)) })
	// SCB: per row -32 * the int16 scales.
	for r := 0; r < 8; r++ {
		a.i("VPMOVSXBW %s, Y%d", sc[r], r)
		a.i("VPSLLW $5, Y%d, Y%d", r, r)
		a.i("VPXOR Y8, Y8, Y8")
		a.i("VPSUBW Y%d, Y8, Y%d", r, r)
	}
	transpose8x8(a, func(m int) string { return fmt.Sprintf("%d(DI)", st(q6kSCB+32*m)) })
	halves8(a, off(208), fmt.Sprintf("%d(DI)", st(q6kD)))
	// chunk 4h+i of row r into Y(dst), qh through Y(tmp).
	chunk := func(r, h, i, dst, tmp int) {
		ql := off(64*h + 32*(i&1))
		qh := off(128 + 32*h)
		a.i("VMOVDQU %s, Y%d", ql[r], dst)
		a.i("VMOVDQU %s, Y%d", qh[r], tmp)
		if i >= 2 {
			a.i("VPSRLW $4, Y%d, Y%d", dst, dst)
		}
		a.i("VPAND gemmNib<>(SB), Y%d, Y%d", dst, dst)
		// bits 2i..2i+1 of qh to bits 4..5
		switch s := 2*i - 4; {
		case s < 0:
			a.i("VPSLLW $%d, Y%d, Y%d", -s, tmp, tmp)
		case s > 0:
			a.i("VPSRLW $%d, Y%d, Y%d", s, tmp, tmp)
		}
		a.i("VPAND gemmQ6Hi<>(SB), Y%d, Y%d", tmp, tmp)
		a.i("VPOR Y%d, Y%d, Y%d", tmp, dst, dst)
	}
	// lo dword d holds pair d (d < 4) or d+4; hi dword d pair d+4 or d+8.
	loK := func(d int) int { return d + 4*(d/4) }
	for p := 0; p < 4; p++ {
		h, i := p/2, 2*(p%2)
		for r := 0; r < 8; r++ {
			chunk(r, h, i, r, 8)
			chunk(r, h, i+1, 9, 10)
			a.i("VPUNPCKLWD Y9, Y%d, Y10", r)
			a.i("VPUNPCKHWD Y9, Y%d, Y%d", r, r)
			a.i("VMOVDQU Y10, %d(SP)", 32*r)
		}
		transpose8x8(a, func(d int) string { return fmt.Sprintf("%d(DI)", st(q6kV+(16*p+loK(d)+4)*32)) })
		for r := 0; r < 8; r++ {
			a.i("VMOVDQU %d(SP), Y%d", 32*r, r)
		}
		transpose8x8(a, func(d int) string { return fmt.Sprintf("%d(DI)", st(q6kV+(16*p+loK(d))*32)) })
	}
	a.i("ADDQ $210, SI")
	a.i("ADDQ $210, R10")
	a.i("ADDQ $%d, DI", st(q6kBlock))
	a.i("DECQ CX")
	a.i("JNZ %s", strings.ToLower(name))
	a.i("VZEROUPPER")
	a.i("RET")
	a.p("")
}

// kernelQ6_K: one 8-row Q6_K panel against nx Q8_K rows, in llama.cpp's
// ggml_vec_dot_q6_K_q8_K order (DotQ6_KQ8_K): every output has 8 float32
// lane accumulators. Lane m of a row collects element pairs 2m, 2m+1 of
// the 8 chunks (scale sc[2c+m/4] for chunk c). Per super-block each
// activation row is first interleaved like the panel (X[p] = VPUNPCK?WD of
// its chunks 2p, 2p+1, in the frame); then per lane m and row j:
//
//	S = VPMADDUBSW(V[p][2m], bcast X[p] pair 2m)
//	  + VPMADDUBSW(V[p][2m+1], bcast X[p] pair 2m+1)   int16: (c, c') sums
//	    of 4 products each, |.| <= 4*63*128 = 32256
//	I = sum_p VPMADDWD(S, SC2[2p+m/4])                  exact int32
//	  + VPMADDWD(SCB[m], bcast(bsums[2m], bsums[2m+1]))   the -32 offset
//	A[j][m] = fma(dx*d, float(I), A[j][m])        8 weight rows per register
//
// and at the end out_j = ((A0+A4)+(A2+A6)) + ((A1+A5)+(A3+A7)) (hsum8,
// lane by lane). Frame: A[j][m] at 32*(8j+m), X of row j at 256*(nx+j)+64p.
// Registers: Y0..Y3 I, Y4..Y7 dx*d, Y8/Y14 V, Y9/Y10 broadcasts, Y11/Y12
// products, Y13 offset.
func kernelQ6_K(a *asm, nx int) { kernelQ6_KGen(a, nx, false) }

// kernelQ6_KVEX is kernelQ6_K with AVX-VNNI (the avxvnni set,
// gemmQ6_KXQ8_Kx*): each VPMADDWD + VPADDD that adds into I becomes one
// VEX VPDPWSSD (the same pairwise int16 products, added without
// saturation: the same exact int32 I), the scale vector (SC2, SCB) loaded
// once into a register for all rows (Y15, Y14). Everything else, the float
// part in particular, is kernelQ6_K's, so every output has its bits.
func kernelQ6_KVEX(a *asm, nx int) { kernelQ6_KGen(a, nx, true) }

func kernelQ6_KGen(a *asm, nx int, vnni bool) {
	name := fmt.Sprintf("gemmQ6_KQ8_Kx%d", nx)
	if vnni {
		name = fmt.Sprintf("gemmQ6_KXQ8_Kx%d", nx)
	}
	kernelPrologueFrame(a, name, nx, "0", 512*nx, false)
	acc := func(j, m int) string { return fmt.Sprintf("%d(SP)", 32*(8*j+m)) }
	xs := func(j, p, off int) string { return fmt.Sprintf("%d(SP)", 256*(nx+j)+64*p+off) }
	a.i("VXORPS Y8, Y8, Y8")
	for j := 0; j < nx; j++ {
		for m := 0; m < 8; m++ {
			a.i("VMOVUPS Y8, %s", acc(j, m))
		}
	}
	lbl := "gemmq6kq8kx" + fmt.Sprint(nx)
	if vnni {
		lbl = "gemmq6kxq8kx" + fmt.Sprint(nx)
	}
	a.p("%s:", lbl)
	for j := 0; j < nx; j++ {
		a.i("VBROADCASTSS (%s), Y%d", xPtr[j], 4+j)
		a.i("VMULPS %d(SI), Y%d, Y%d", q6kD, 4+j, 4+j) // dx*d
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
			a.i("VMOVDQU %d(SI), Y8", q6kV+(16*p+2*m)*32)
			a.i("VMOVDQU %d(SI), Y14", q6kV+(16*p+2*m+1)*32)
			sc2 := q6kSC2 + 32*(2*p+m/4)
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
		if vnni {
			a.i("VMOVDQU %d(SI), Y14", q6kSCB+32*m)
		}
		for j := 0; j < nx; j++ {
			a.i("VPBROADCASTD %d(%s), Y13", 260+4*m, xPtr[j])
			if vnni {
				vexDPWSSD(a, 13, 14, j)
			} else {
				a.i("VPMADDWD %d(SI), Y13, Y13", q6kSCB+32*m)
				a.i("VPADDD Y13, Y%d, Y%d", j, j)
			}
			a.i("VCVTDQ2PS Y%d, Y%d", j, j)
			a.i("VFMADD213PS %s, Y%d, Y%d", acc(j, m), 4+j, j)
			a.i("VMOVUPS Y%d, %s", j, acc(j, m))
		}
	}
	a.i("ADDQ $%d, SI", q6kBlock)
	for j := 0; j < nx; j++ {
		a.i("ADDQ $292, %s", xPtr[j])
	}
	a.i("DECQ CX")
	a.i("JNZ %s", lbl)
	// hsum8 across the lane accumulators, 8 weight rows at a time.
	for j := 0; j < nx; j++ {
		for k := 0; k < 4; k++ {
			a.i("VMOVUPS %s, Y%d", acc(j, k), k)
			a.i("VADDPS %s, Y%d, Y%d", acc(j, k+4), k, k) // Yk = A[k]+A[k+4]
		}
		a.i("VADDPS Y2, Y0, Y0") // (A0+A4)+(A2+A6)
		a.i("VADDPS Y3, Y1, Y1") // (A1+A5)+(A3+A7)
		a.i("VADDPS Y1, Y0, Y0")
		a.i("VMOVUPS Y0, %s", outAddr(j, 0))
	}
	a.i("VZEROUPPER")
	a.i("RET")
	a.p("")
}
