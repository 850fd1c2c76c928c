package main

import "fmt"

// K-quant GEMMs: Q4_K and Q6_K weights against Q8_K activations, used as
// they are (d f32 at 0, qs int8[256] at 4, bsums int16[16] at 260).

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

func packQ4_K(a *asm) {
	packPrologue(a, "gemmPackQ4_K")
	a.p("packq4k:")
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
	a.i("ADDQ $144, SI")
	a.i("ADDQ $144, R10")
	a.i("ADDQ $%d, DI", q4kBlock)
	a.i("DECQ CX")
	a.i("JNZ packq4k")
	a.i("VZEROUPPER")
	a.i("RET")
	a.p("")
}

// kernelQ4_K: one 8-row Q4_K panel against nx Q8_K rows. Per super-block
// and activation row j:
//
//	S (int16) = sum_k VPMADDUBSW(V[s][k], bcast(q8 quad)) per sub-block s
//	            (|.| <= 8*2*15*128 = 30720)
//	I += VPMADDWD(S, SC[s])              isum, exact int32
//	M  = sum_s VPMADDWD(MN[s], bcast(bsums[2s], bsums[2s+1]))   summs
//	out += (d*dx)*float(I); out -= (dmin*dx)*float(M)   (the single-row fold)
//
//	Y0..Y3 S (then M), Y4..Y7 I, Y8 V, Y9/Y10 broadcasts, Y11/Y12 products,
//	Y13/Y14 fold. The running sums live in out (zeroed first).
func kernelQ4_K(a *asm, nx int) {
	name := fmt.Sprintf("gemmQ4_KQ8_Kx%d", nx)
	kernelPrologue(a, name, nx)
	a.i("VXORPS Y8, Y8, Y8")
	for j := 0; j < nx; j++ {
		a.i("VMOVUPS Y8, %s", outAddr(j, 0))
	}
	lbl := "gemmq4kq8kx" + fmt.Sprint(nx)
	a.p("%s:", lbl)
	for s := 0; s < 8; s++ {
		for k := 0; k < 8; k++ {
			a.i("VMOVDQU %d(SI), Y8", q4kV+(8*s+k)*32)
			for j := 0; j < nx; j++ {
				b := 9 + j%2
				a.i("VPBROADCASTD %d(%s), Y%d", 4+32*s+4*k, xPtr[j], b)
				if k == 0 {
					a.i("VPMADDUBSW Y%d, Y8, Y%d", b, j)
				} else {
					t := 11 + j%2
					a.i("VPMADDUBSW Y%d, Y8, Y%d", b, t)
					a.i("VPADDW Y%d, Y%d, Y%d", t, j, j)
				}
			}
		}
		for j := 0; j < nx; j++ {
			if s == 0 {
				a.i("VPMADDWD %d(SI), Y%d, Y%d", q4kSC+32*s, j, 4+j)
			} else {
				a.i("VPMADDWD %d(SI), Y%d, Y%d", q4kSC+32*s, j, j)
				a.i("VPADDD Y%d, Y%d, Y%d", j, 4+j, 4+j)
			}
		}
	}
	for j := 0; j < nx; j++ {
		for s := 0; s < 8; s++ {
			a.i("VPBROADCASTD %d(%s), Y9", 260+4*s, xPtr[j])
			if s == 0 {
				a.i("VPMADDWD %d(SI), Y9, Y%d", q4kMN+32*s, j)
			} else {
				a.i("VPMADDWD %d(SI), Y9, Y11", q4kMN+32*s)
				a.i("VPADDD Y11, Y%d, Y%d", j, j)
			}
		}
		a.i("VBROADCASTSS (%s), Y13", xPtr[j]) // dx
		a.i("VMULPS %d(SI), Y13, Y14", q4kD)   // d*dx
		a.i("VCVTDQ2PS Y%d, Y%d", 4+j, 4+j)    // float(isum)
		a.i("VMULPS Y14, Y%d, Y%d", 4+j, 4+j)  // (d*dx)*isum
		a.i("VADDPS %s, Y%d, Y%d", outAddr(j, 0), 4+j, 4+j)
		a.i("VMULPS %d(SI), Y13, Y14", q4kDmin) // dmin*dx
		a.i("VCVTDQ2PS Y%d, Y%d", j, j)         // float(summs)
		a.i("VMULPS Y14, Y%d, Y%d", j, j)
		a.i("VSUBPS Y%d, Y%d, Y%d", j, 4+j, 4+j) // acc - (dmin*dx)*summs
		a.i("VMOVUPS Y%d, %s", 4+j, outAddr(j, 0))
	}
	a.i("ADDQ $%d, SI", q4kBlock)
	for j := 0; j < nx; j++ {
		a.i("ADDQ $292, %s", xPtr[j])
	}
	a.i("DECQ CX")
	a.i("JNZ %s", lbl)
	a.i("VZEROUPPER")
	a.i("RET")
	a.p("")
}
