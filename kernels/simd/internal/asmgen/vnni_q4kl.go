package main

import (
	"fmt"
	"strings"
)

// Load-time layout of Q4_K expert matrices (simd.PackQ4_KG, gemmq4kg.go),
// a panel of R = 16 rows (or 8) per super-block, 148R bytes (the raw
// 144R plus the scales unpacked to bytes and d, dmin gathered):
//
//	QS[g][k] at (8g+k)*4R, g = 0..3, k = 0..7: lane r (4 bytes) = raw
//	        qs[32g+4k..32g+4k+3] of row r: low nibbles elements 4k..4k+3 of
//	        sub-block 2g, high nibbles those of sub-block 2g+1
//	SCB[s]  at 128R + R*s: byte r = scale[r][s]  (get_scale_min_k4, 0..63)
//	MNB[s]  at 136R + R*s: byte r = min[r][s]
//	D       at 144R: f16 d of rows 0..R-1;  DMIN at 146R: f16 dmin
const (
	q4klSCB, q4klMNB, q4klD, q4klDmin, q4klBlock = 128, 136, 144, 146, 148 // times R
)

// q4klAhead is how many super-blocks ahead vnniQ4_KL prefetches its panel
// (one stream, read once from DRAM per call's first pass).
const q4klAhead = 2

// vnniQ4_KL (gemmQ4_KGL16Q8_Kx*; R = 8 would give YMM kernels, unused):
// one load-time panel of R = 16 rows (ZMM) against nx Q8_K rows, in
// DotQ4_KQ8_KGemv's order, reading the panel in place: no per-call
// repacking. Per super-block and activation row j (vnniQ4_KFold's
// integers and float steps, only the weights come from this layout):
//
//	dmin*dx = VCVTPH2PS(DMIN) * bcast dx
//	MN2[s]  = VPMOVZXBD(MNB[s]) as int16 pairs (mn, mn) (VPSLLD 16, VPORD)
//	imin    = sum_g VPDPWSSD(MN2[2g], bcast bsums 4g,4g+1)
//	               + VPDPWSSD(MN2[2g+1], bcast bsums 4g+2,4g+3)     exact
//	accMin  = fma(float(imin), dmin*dx, accMin)
//	lo, hi  = QS[g][k] & 0x0f, (QS[g][k] >> 4) & 0x0f  (sub-blocks 2g, 2g+1)
//	T_s     = sum_k VPDPBUSD(lo or hi, bcast X_sk)                  exact
//	iacc    = sum_g T_2g*SC[2g] + T_2g+1*SC[2g+1]  (VPMOVZXBD(SCB), VPMULLD)
//	acc     = fma(float(iacc), d*dx, acc)
//
// and out = acc - accMin.
//
//	V0, V1 lo/hi (then scales, mins); V2+j acc_j, V2+nx+j iacc_j,
//	V2+2nx+j T_2g (imin first), V2+3nx+j T_2g+1 (dmin*dx, d*dx first);
//	V30 d / dmin / temporary, V31 the nibble mask. Frame: d*dx of row j
//	at 64j, accMin_j at 64(nx+j).
//
// Registers: CX super-blocks, SI panel, R9 out, R8 outStride in bytes,
// activation rows in DI, R10, R11, R12, R13, DX, AX (panelStride unused).
func vnniQ4_KL(a *asm, R, nx int) {
	V := "Z"
	if R == 8 {
		V = "Y"
	}
	reg := func(n int) string { return fmt.Sprintf("%s%d", V, n) }
	acc := func(j int) string { return reg(2 + j) }
	iacc := func(j int) string { return reg(2 + nx + j) }
	t0 := func(j int) string { return reg(2 + 2*nx + j) }
	t1 := func(j int) string { return reg(2 + 3*nx + j) }
	xp := [vnniQ4_KMaxNX]string{"DI", "R10", "R11", "R12", "R13", "DX", "AX"}
	minMem := func(j int) int { return 64 * (nx + j) }
	name := fmt.Sprintf("gemmQ4_KGL%dQ8_Kx%d", R, nx)
	frame := 128 * nx
	flags := "NOSPLIT"
	if frame > 512 {
		flags = "0" // over the nosplit stack limit: let the prologue check the stack
	}
	vnniPrologue(a, name, flags, frame)
	for j := 1; j < nx; j++ {
		a.i("MOVQ AX, %s", xp[j])
		a.i("IMULQ $%d, %s", j, xp[j])
		a.i("ADDQ DI, %s", xp[j])
	}
	a.i("VPBROADCASTD vnniB0F<>(SB), Z31")
	for j := 0; j < nx; j++ {
		a.i("VPXORD %s, %s, %s", acc(j), acc(j), acc(j))
		a.i("VMOVUPS %s, %d(SP)", acc(j), minMem(j))
	}
	lbl := strings.ToLower(name)
	a.p("%s:", lbl)
	// dmin*dx, then the mins.
	a.i("VCVTPH2PS %d(SI), %s", q4klDmin*R, reg(30))
	for j := 0; j < nx; j++ {
		a.i("VMULPS.BCST (%s), %s, %s", xp[j], reg(30), t1(j))
	}
	for g := 0; g < 4; g++ {
		// Prefetch the scale lines of the super-block q4klAhead ahead
		// (the quants' lines go one per step of the group loop).
		for l := 32 * 4 * R / 64; l < (q4klBlock*R+63)/64; l++ {
			if l%4 == g {
				a.i("PREFETCHT0 %d(SI)", q4klAhead*q4klBlock*R+64*l)
			}
		}
		for h := 0; h < 2; h++ {
			a.i("VPMOVZXBD %d(SI), %s", q4klMNB*R+R*(2*g+h), reg(h))
			a.i("VPSLLD $16, %s, %s", reg(h), reg(30))
			a.i("VPORD %s, %s, %s", reg(30), reg(h), reg(h)) // (mn, mn) pairs
		}
		for j := 0; j < nx; j++ {
			if g == 0 {
				a.i("VPXORD %s, %s, %s", t0(j), t0(j), t0(j))
			}
			a.i("VPDPWSSD.BCST %d(%s), %s, %s", 260+8*g, xp[j], reg(0), t0(j))
			a.i("VPDPWSSD.BCST %d(%s), %s, %s", 260+8*g+4, xp[j], reg(1), t0(j))
		}
	}
	for j := 0; j < nx; j++ {
		a.i("VCVTDQ2PS %s, %s", t0(j), t0(j))                      // float(imin)
		a.i("VFMADD213PS %d(SP), %s, %s", minMem(j), t1(j), t0(j)) // fma(imin, dmin*dx, accMin)
		a.i("VMOVUPS %s, %d(SP)", t0(j), minMem(j))
	}
	// d*dx into the frame.
	a.i("VCVTPH2PS %d(SI), %s", q4klD*R, reg(30))
	for j := 0; j < nx; j++ {
		a.i("VMULPS.BCST (%s), %s, %s", xp[j], reg(30), t1(j))
		a.i("VMOVUPS %s, %d(SP)", t1(j), 64*j)
	}
	for g := 0; g < 4; g++ {
		for j := 0; j < nx; j++ {
			a.i("VPXORD %s, %s, %s", t0(j), t0(j), t0(j))
			a.i("VPXORD %s, %s, %s", t1(j), t1(j), t1(j))
		}
		for k := 0; k < 8; k++ {
			for o := (8*g + k) * 4 * R; o < (8*g+k+1)*4*R; o += 64 {
				a.i("PREFETCHT0 %d(SI)", q4klAhead*q4klBlock*R+o)
			}
			if R == 16 {
				a.i("VMOVDQU64 %d(SI), Z0", (8*g+k)*4*R)
			} else {
				a.i("VMOVDQU %d(SI), Y0", (8*g+k)*4*R)
			}
			a.i("VPSRLW $4, %s, %s", reg(0), reg(1))
			a.i("VPANDD %s, %s, %s", reg(31), reg(0), reg(0)) // sub-block 2g
			a.i("VPANDD %s, %s, %s", reg(31), reg(1), reg(1)) // sub-block 2g+1
			for j := 0; j < nx; j++ {
				a.i("VPDPBUSD.BCST %d(%s), %s, %s", 4+32*(2*g)+4*k, xp[j], reg(0), t0(j))
				a.i("VPDPBUSD.BCST %d(%s), %s, %s", 4+32*(2*g+1)+4*k, xp[j], reg(1), t1(j))
			}
		}
		a.i("VPMOVZXBD %d(SI), %s", q4klSCB*R+R*(2*g), reg(0))
		a.i("VPMOVZXBD %d(SI), %s", q4klSCB*R+R*(2*g+1), reg(1))
		for j := 0; j < nx; j++ {
			a.i("VPMULLD %s, %s, %s", reg(0), t0(j), t0(j))
			a.i("VPMULLD %s, %s, %s", reg(1), t1(j), t1(j))
			if g == 0 {
				a.i("VPADDD %s, %s, %s", t1(j), t0(j), iacc(j)) // I_0
			} else {
				a.i("VPADDD %s, %s, %s", t1(j), t0(j), t0(j)) // I_g
				a.i("VPADDD %s, %s, %s", t0(j), iacc(j), iacc(j))
			}
		}
	}
	for j := 0; j < nx; j++ {
		a.i("VCVTDQ2PS %s, %s", iacc(j), iacc(j))                // float(iacc)
		a.i("VFMADD231PS %d(SP), %s, %s", 64*j, iacc(j), acc(j)) // acc = fma(iacc, d*dx, acc)
	}
	a.i("ADDQ $%d, SI", q4klBlock*R)
	for j := 0; j < nx; j++ {
		a.i("ADDQ $292, %s", xp[j])
	}
	a.i("DECQ CX")
	a.i("JNZ %s", lbl)
	for j := 0; j < nx; j++ {
		a.i("VSUBPS %d(SP), %s, %s", minMem(j), acc(j), acc(j)) // acc - accMin
		a.i("VMOVUPS %s, (R9)", acc(j))
		if j < nx-1 {
			a.i("ADDQ R8, R9")
		}
	}
	a.i("VZEROUPPER")
	a.i("RET")
	a.p("")
}

// packQ4_KL (gemmPackQ4_KL, AVX2): half h (rows 8h..8h+7; the wStride
// argument) of a 16-row load-time panel (vnniQ4_KL's layout) into the
// per-call 8-row panel of the Q4_K kernels (kquant.go's layout), for the
// sets without AVX-512: the nibbles split (no transposes: the layout
// already holds them by lane), the scale and min bytes widened to int16
// pairs, d and dmin converted from f16.
//
// Registers: CX super-blocks, SI the panel's quants (+32h), R10 its scale
// bytes (+8h), R11 its d/dmin (+16h), DI the per-call panel.
func packQ4_KL(a *asm) {
	const R = 16
	name := "gemmPackQ4_KL"
	a.p("// func %s(nb int, w *byte, wStride int, panel *byte)", name)
	a.p("TEXT ·%s(SB), NOSPLIT, $0-32", name)
	a.i("MOVQ nb+0(FP), CX")
	a.i("MOVQ w+8(FP), SI")
	a.i("MOVQ wStride+16(FP), R8") // h
	a.i("MOVQ panel+24(FP), DI")
	a.i("LEAQ (SI)(R8*8), R10")
	a.i("LEAQ (SI)(R8*8), R11")
	a.i("LEAQ (R11)(R8*8), R11")
	a.i("SHLQ $5, R8")
	a.i("ADDQ R8, SI")
	a.i("VMOVDQU gemmNib<>(SB), Y15")
	lbl := strings.ToLower(name)
	a.p("%s:", lbl)
	for g := 0; g < 4; g++ {
		for k := 0; k < 8; k++ {
			r := k % 4
			a.i("VMOVDQU %d(SI), Y%d", (8*g+k)*4*R, r)
			a.i("VPSRLW $4, Y%d, Y%d", r, r+4)
			a.i("VPAND Y15, Y%d, Y%d", r, r)
			a.i("VPAND Y15, Y%d, Y%d", r+4, r+4)
			a.i("VMOVDQU Y%d, %d(DI)", r, q4kV+(8*(2*g)+k)*32)
			a.i("VMOVDQU Y%d, %d(DI)", r+4, q4kV+(8*(2*g+1)+k)*32)
		}
	}
	for s := 0; s < 8; s++ {
		for h, dst := range []int{q4kSC, q4kMN} {
			src := q4klSCB*R + R*s
			if h == 1 {
				src = q4klMNB*R + R*s
			}
			a.i("VPMOVZXBD %d(R10), Y%d", src, h)
			a.i("VPSLLD $16, Y%d, Y%d", h, h+2)
			a.i("VPOR Y%d, Y%d, Y%d", h+2, h, h) // (x, x) int16 pairs
			a.i("VMOVDQU Y%d, %d(DI)", h, dst+32*s)
		}
	}
	a.i("VCVTPH2PS %d(R11), Y0", q4klD*R)
	a.i("VMOVUPS Y0, %d(DI)", q4kD)
	a.i("VCVTPH2PS %d(R11), Y1", q4klDmin*R)
	a.i("VMOVUPS Y1, %d(DI)", q4kDmin)
	a.i("ADDQ $%d, SI", q4klBlock*R)
	a.i("ADDQ $%d, R10", q4klBlock*R)
	a.i("ADDQ $%d, R11", q4klBlock*R)
	a.i("ADDQ $%d, DI", q4kBlock)
	a.i("DECQ CX")
	a.i("JNZ %s", lbl)
	a.i("VZEROUPPER")
	a.i("RET")
	a.p("")
}
