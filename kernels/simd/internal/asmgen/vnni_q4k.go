package main

import (
	"fmt"
	"strings"
)

// vnniQ4_KMaxNX is the most activation rows one Q4_K VNNI call takes:
// 4 registers per row (acc, accMin, T_2g, T_2g+1) and 2 for the weights.
const vnniQ4_KMaxNX = 7

// vnniQ4_KKernels emits the Q4_K VNNI kernels: 16 rows (two per-call
// panels, ZMM) and 8 rows (one panel, YMM), nx = 1..vnniQ4_KMaxNX, in
// DotQ4_KQ8_K's order and (gemmQ4_KGV*, see vnniQ4_KFold) in
// DotQ4_KQ8_KGemv's.
func vnniQ4_KKernels(a *asm) {
	for _, gemv := range []bool{false, true} {
		for _, rows := range []int{16, 8} {
			for nx := 1; nx <= vnniQ4_KMaxNX; nx++ {
				vnniQ4_KFold(a, rows, nx, gemv)
			}
		}
	}
	for nx := 1; nx <= vnniQ4_KMaxNX; nx++ {
		vnniQ4_KL(a, 16, nx) // DotQ4_KQ8_KGemv's order over the load-time layout
	}
}

// vnniQ4_K: rows/8 consecutive per-call Q4_K panels (gemmPackQ4_K's layout,
// kquant.go; panel p+1 at panelStride bytes after panel p) against nx Q8_K
// rows (292 bytes each, as they are), in kernelQ4_K's float order. Per
// super-block and activation row j, with X_sk = quad k of sub-block s:
//
//	accMin = fma(float(M_g), dmin*dx, accMin)          g = 0..3, in order
//	  M_g  = VPDPWSSD(VPDPWSSD(0, MN[2g], bcast bsums 4g, 4g+1),
//	                  MN[2g+1], bcast bsums 4g+2, 4g+3)            exact
//	T_s    = sum_k VPDPBUSD(V[s][k], bcast X_sk)  = sum(nib*x), exact int32
//	I_g    = T_2g*scale_2g + T_2g+1*scale_2g+1   (VPMULLD, VPADDD; exact)
//	acc    = fma(float(I_g), d*dx, acc)                g = 0..3, in order
//
// and out = acc - accMin. I_g and M_g are kernelQ4_K's VPMADDWD sums (the
// same exact integers), d*dx and dmin*dx the same single products, and the
// two FMA chains run in the same order, so every output has its bits.
// scale_s comes from SC[s]'s int16 pair (scale, scale) >> 16 (scales are
// 0..63). The accMin chain of a super-block runs first here: the chains
// are independent.
//
//	Z0, Z1 V[2g][k], V[2g+1][k] (then SC, MN); Z2+j acc_j, Z2+nx+j accMin_j,
//	Z2+2nx+j T_2g of row j (temporary M), Z2+3nx+j T_2g+1 (dmin*dx first),
//	Z30 D/DMIN, Z31 products. Frame: d*dx of row j at 64j.
//
// Registers: CX super-blocks, SI panel, BX panelStride, R9 out, R8
// outStride in bytes, activation rows in DI, R10, R11, R12, R13, DX, AX.
func vnniQ4_K(a *asm, rows, nx int) { vnniQ4_KFold(a, rows, nx, false) }

// vnniQ4_KFold is vnniQ4_K, or with gemv (gemmQ4_KGV16Q8_Kx*,
// gemmQ4_KGV8Q8_Kx*) vnniQ4_K in DotQ4_KQ8_KGemv's order, the fold of llama.cpp's repacked Q4_K gemv
// (ggml_gemv_q4_K_8x8_q8_K) that its mul_mat_id runs for expert rows:
// the same exact integers, summed over the whole super-block before one
// fold each,
//
//	imin   = sum_g M_g   (one VPDPWSSD chain over the 8 sub-blocks, exact)
//	accMin = fma(float(imin), dmin*dx, accMin)
//	iacc   = sum_g I_g   (VPADDD, exact)
//	acc    = fma(float(iacc), d*dx, acc)
//
// and out = acc - accMin. iacc needs a fifth register per activation row,
// so accMin lives in the frame (one VFMADD213PS from memory and a store
// per super-block): Z2+nx+j holds iacc_j, accMin_j is at 64(nx+j).
func vnniQ4_KFold(a *asm, rows, nx int, gemv bool) {
	V := "Z"
	if rows == 8 {
		V = "Y"
	}
	reg := func(n int) string { return fmt.Sprintf("%s%d", V, n) }
	acc := func(j int) string { return reg(2 + j) }
	accMin := func(j int) string { return reg(2 + nx + j) }
	t0 := func(j int) string { return reg(2 + 2*nx + j) }
	t1 := func(j int) string { return reg(2 + 3*nx + j) }
	xp := [vnniQ4_KMaxNX]string{"DI", "R10", "R11", "R12", "R13", "DX", "AX"}
	// load the panel vector at off into register n (16 rows: both panels).
	load := func(n, off int) {
		mov := "VMOVDQU"
		if n >= 16 {
			mov = "VMOVDQU32" // EVEX only
		}
		a.i("%s %d(SI), Y%d", mov, off, n)
		if rows == 16 {
			a.i("VINSERTI64X4 $1, %d(SI)(BX*1), Z%d, Z%d", off, n, n)
		}
	}
	name := fmt.Sprintf("gemmQ4_KV%dQ8_Kx%d", rows, nx)
	frame := 64 * nx
	if gemv {
		name = fmt.Sprintf("gemmQ4_KGV%dQ8_Kx%d", rows, nx)
		frame = 128 * nx
	}
	iacc := accMin                                     // gemv: the int32 iacc
	minMem := func(j int) int { return 64 * (nx + j) } // gemv: accMin
	flags := "NOSPLIT"
	if frame > 512 {
		flags = "0" // over the nosplit stack limit: let the prologue check the stack
	}
	vnniPrologue(a, name, flags, frame)
	// Row pointers; AX (the stride) last.
	for j := 1; j < nx; j++ {
		a.i("MOVQ AX, %s", xp[j])
		a.i("IMULQ $%d, %s", j, xp[j])
		a.i("ADDQ DI, %s", xp[j])
	}
	for j := 0; j < nx; j++ {
		a.i("VPXORD %s, %s, %s", acc(j), acc(j), acc(j))
		if gemv {
			a.i("VMOVUPS %s, %d(SP)", acc(j), minMem(j))
		} else {
			a.i("VPXORD %s, %s, %s", accMin(j), accMin(j), accMin(j))
		}
	}
	lbl := strings.ToLower(name)
	a.p("%s:", lbl)
	// dmin*dx (in T_2g+1), then the mins chain.
	load(30, q4kDmin)
	for j := 0; j < nx; j++ {
		a.i("VMULPS.BCST (%s), %s, %s", xp[j], reg(30), t1(j))
	}
	for g := 0; g < 4; g++ {
		load(0, q4kMN+32*2*g)
		load(1, q4kMN+32*(2*g+1))
		for j := 0; j < nx; j++ {
			if !gemv || g == 0 {
				a.i("VPXORD %s, %s, %s", t0(j), t0(j), t0(j))
			}
			a.i("VPDPWSSD.BCST %d(%s), %s, %s", 260+8*g, xp[j], reg(0), t0(j))
			a.i("VPDPWSSD.BCST %d(%s), %s, %s", 260+8*g+4, xp[j], reg(1), t0(j))
			if !gemv {
				a.i("VCVTDQ2PS %s, %s", t0(j), t0(j))
				a.i("VFMADD231PS %s, %s, %s", t1(j), t0(j), accMin(j)) // accMin = fma(imin, dmin*dx, accMin)
			}
		}
	}
	if gemv {
		for j := 0; j < nx; j++ {
			a.i("VCVTDQ2PS %s, %s", t0(j), t0(j))                      // float(imin)
			a.i("VFMADD213PS %d(SP), %s, %s", minMem(j), t1(j), t0(j)) // fma(imin, dmin*dx, accMin)
			a.i("VMOVUPS %s, %d(SP)", t0(j), minMem(j))
		}
	}
	// d*dx into the frame.
	load(30, q4kD)
	for j := 0; j < nx; j++ {
		a.i("VMULPS.BCST (%s), %s, %s", xp[j], reg(30), reg(31))
		a.i("VMOVUPS %s, %d(SP)", reg(31), 64*j)
	}
	for g := 0; g < 4; g++ {
		for j := 0; j < nx; j++ {
			a.i("VPXORD %s, %s, %s", t0(j), t0(j), t0(j))
			a.i("VPXORD %s, %s, %s", t1(j), t1(j), t1(j))
		}
		for k := 0; k < 8; k++ {
			load(0, q4kV+(8*(2*g)+k)*32)
			load(1, q4kV+(8*(2*g+1)+k)*32)
			for j := 0; j < nx; j++ {
				a.i("VPDPBUSD.BCST %d(%s), %s, %s", 4+32*(2*g)+4*k, xp[j], reg(0), t0(j))
				a.i("VPDPBUSD.BCST %d(%s), %s, %s", 4+32*(2*g+1)+4*k, xp[j], reg(1), t1(j))
			}
		}
		load(0, q4kSC+32*2*g)
		load(1, q4kSC+32*(2*g+1))
		a.i("VPSRLD $16, %s, %s", reg(0), reg(0))
		a.i("VPSRLD $16, %s, %s", reg(1), reg(1))
		for j := 0; j < nx; j++ {
			a.i("VPMULLD %s, %s, %s", reg(0), t0(j), t0(j))
			a.i("VPMULLD %s, %s, %s", reg(1), t1(j), t1(j))
			switch {
			case !gemv:
				a.i("VPADDD %s, %s, %s", t1(j), t0(j), t0(j))          // iacc
				a.i("VCVTDQ2PS %s, %s", t0(j), t0(j))                  // float(iacc)
				a.i("VFMADD231PS %d(SP), %s, %s", 64*j, t0(j), acc(j)) // acc = fma(iacc, d*dx, acc)
			case g == 0:
				a.i("VPADDD %s, %s, %s", t1(j), t0(j), iacc(j)) // I_0
			default:
				a.i("VPADDD %s, %s, %s", t1(j), t0(j), t0(j)) // I_g
				a.i("VPADDD %s, %s, %s", t0(j), iacc(j), iacc(j))
			}
		}
	}
	if gemv {
		for j := 0; j < nx; j++ {
			a.i("VCVTDQ2PS %s, %s", iacc(j), iacc(j))                // float(iacc)
			a.i("VFMADD231PS %d(SP), %s, %s", 64*j, iacc(j), acc(j)) // acc = fma(iacc, d*dx, acc)
		}
	}
	a.i("ADDQ $%d, SI", q4kBlock)
	for j := 0; j < nx; j++ {
		a.i("ADDQ $292, %s", xp[j])
	}
	a.i("DECQ CX")
	a.i("JNZ %s", lbl)
	for j := 0; j < nx; j++ {
		if gemv {
			a.i("VSUBPS %d(SP), %s, %s", minMem(j), acc(j), acc(j)) // acc - accMin
		} else {
			a.i("VSUBPS %s, %s, %s", accMin(j), acc(j), acc(j)) // acc - accMin
		}
		a.i("VMOVUPS %s, (R9)", acc(j))
		if j < nx-1 {
			a.i("ADDQ R8, R9")
		}
	}
	a.i("VZEROUPPER")
	a.i("RET")
	a.p("")
}
