package main

import (
	"fmt"
	"strings"
)

// Decode (m = 1) kernels of the avx512vnni set, same bits as the AVX2
// ones they replace.

// data64 emits a 64-byte read-only table of 16 dwords.
func data64(a *asm, name string, dw [16]uint32) {
	for q := 0; q < 8; q++ {
		a.p("DATA %s<>+%d(SB)/8, $0x%08x%08x", name, 8*q, dw[2*q+1], dw[2*q])
	}
	a.p("GLOBL %s<>(SB), RODATA|NOPTR, $64", name)
}

// lanes4 is a 16-byte pattern (4 dwords) repeated in the four 128-bit lanes.
func lanes4(d0, d1, d2, d3 uint32) (v [16]uint32) {
	for l := 0; l < 4; l++ {
		v[4*l], v[4*l+1], v[4*l+2], v[4*l+3] = d0, d1, d2, d3
	}
	return v
}

// word2 is a dword of two VPSHUFB selectors picking byte idx zero-extended
// into both words.
func word2(idx int) uint32 { return uint32(0x80<<24 | idx<<16 | 0x80<<8 | idx) }

// vnniDecConsts emits gemvQ4_KV's tables.
func vnniDecConsts(a *asm) {
	a.p("// tables of the avx512vnni decode kernels (vnni_dec.go)")
	data64(a, "dq4kM3f", lanes4(0x3f3f3f3f, 0x3f3f3f3f, 0x3f3f3f3f, 0x3f3f3f3f))
	data64(a, "dq4kM03", lanes4(0x03030303, 0x03030303, 0x03030303, 0x03030303))
	data64(a, "dq4kNib", lanes4(0x0f0f0f0f, 0x0f0f0f0f, 0x0f0f0f0f, 0x0f0f0f0f))
	data64(a, "dq4kSh", lanes4(0, 0, 0, 4))
	// Scale selectors: words = scale s (byte s, or s+4 for s >= 4 of
	// [sc0-3 mn0-3 sc4-7 mn4-7]); then the mins: [mn0 mn0 mn2 mn2 mn4 mn4
	// mn6 mn6] and [mn1 mn1 mn3 mn3 ...] (bytes 4, 6, 12, 14 and 5, 7, 13, 15).
	for s := 0; s < 8; s++ {
		idx := s
		if s >= 4 {
			idx = s + 4
		}
		for q := 0; q < 2; q++ {
			a.p("DATA dq4kSc<>+%d(SB)/8, $0x%08x%08x", 16*s+8*q, word2(idx), word2(idx))
		}
	}
	a.p("GLOBL dq4kSc<>(SB), RODATA|NOPTR, $128")
	for h, idx := range [][4]int{{4, 6, 12, 14}, {5, 7, 13, 15}} {
		a.p("DATA dq4kMn<>+%d(SB)/8, $0x%08x%08x", 16*h, word2(idx[1]), word2(idx[0]))
		a.p("DATA dq4kMn<>+%d(SB)/8, $0x%08x%08x", 16*h+8, word2(idx[3]), word2(idx[2]))
	}
	a.p("GLOBL dq4kMn<>(SB), RODATA|NOPTR, $32")
	// bsums dword pairs (b4g, b4g+1) and (b4g+2, b4g+3) in every lane.
	data64(a, "dq4kBsA", lanes4(0, 2, 4, 6))
	data64(a, "dq4kBsB", lanes4(1, 3, 5, 7))
	// Words d of rows 0..7 then dmin of rows 0..7 from the 16-byte block
	// heads (row r in lane r of [rows 0..3] and of [rows 4..7]).
	var dw [16]uint32
	for k := 0; k < 16; k++ {
		r, w := k%8, k/8
		idx := 8*r + w
		if r >= 4 {
			idx = 32 + 8*(r-4) + w
		}
		if k%2 == 0 {
			dw[k/2] = uint32(idx)
		} else {
			dw[k/2] |= uint32(idx) << 16
		}
	}
	data64(a, "dq4kD", dw)
	// imin_g of rows 0..7 (dword 4r+g of [rows 0..3], 16+4(r-4)+g of [rows
	// 4..7]): g = 0, 1 and g = 2, 3.
	for h := 0; h < 2; h++ {
		for k := 0; k < 16; k++ {
			r, g := k%8, 2*h+k/8
			idx := 4*r + g
			if r >= 4 {
				idx = 16 + 4*(r-4) + g
			}
			dw[k] = uint32(idx)
		}
		data64(a, fmt.Sprintf("dq4kTr%d", h), dw)
	}
	a.p("")
}

// gemvQ4_KV: gemvQ4_KBody (kquant.go) on AVX-512: 8 Q4_K rows against one
// Q8_K row, the same float operations in the same order; only the exact
// int32 sums iacc_g and imin_g are formed differently. Per super-block:
//
//	H_A, H_B = the 16-byte heads [d dmin | 12 scale bytes] of rows 0..3,
//	        4..7, one row per 128-bit lane
//	d, dmin = VPERMI2W(H_A, H_B) (f16), times dx: [d*dx | dmin*dx]
//	SCP_A, SCP_B = [sc0-3 mn0-3 sc4-7 mn4-7] per lane (gemvQ4_KBody's
//	        get_scale_min_k4 steps, blend by mask)
//	M = VPDPWSSD(VPMADDWD([mn0 mn0 mn2 mn2 ..], bsums (b0 b1 b4 b5 ..)),
//	        [mn1 mn1 mn3 mn3 ..], (b2 b3 b6 b7 ..))   lane r: imin_0..3
//	accMin = fma(float(imin_g), dmin*dx, accMin)             g = 0..3
//	Q_p   = [SCP of row p twice | of row p+4 twice] (VSHUFI64X2)
//
// and per 64-element group g, rows p and p+4 sharing a ZMM (256-bit
// halves: the group's 32 bytes of each):
//
//	I_p  = VPMADDWD(VPMADDUBSW(lo nibbles, x[64g..+31]), VPSHUFB(Q_p, sc_2g))
//	     + VPDPWSSD(VPMADDUBSW(hi nibbles, x[64g+32..+63]), VPSHUFB(Q_p, sc_2g+1))
//	       (words at most 2*15*128, exact int32 dwords)
//	iacc_g of rows 0..7 = the sums of each half (in-lane reducePairs,
//	       then the lane pairs)
//	acc  = fma(float(iacc_g), d*dx, acc)                     g = 0..3
//
// out = acc - accMin. Registers: Z0..Z3 I_p (M), Z4..Z8 temporaries, Y9
// d*dx, Y10 accMin, Y11 acc, Z12/Z13 activations (bsums pairs first), Z14
// nibble mask, Z15 shift counts, Z16..Z23 scale selectors, Z24..Z27 Q_p,
// Z28/Z29 min selectors, Z30/Z31 bsums permutations, K1 dwords 2, 3.
//
// With gemv (gemvQ4_KGQ8_KV) the super-block folds in
// DotQ4_KQ8_KGemv's order instead: imin = the sum of imin_g (VPADDD),
// accMin = fma(float(imin), dmin*dx, accMin) once, and iacc = the sum of
// iacc_g in Y7 (free in the group loop), acc = fma(float(iacc), d*dx, acc)
// once.
func gemvQ4_KV(a *asm, name string, adv int, cursor string, gemv bool) {
	gemvPrologueFrame(a, name, 0, cursor)
	a.i("VMOVDQU64 dq4kNib<>(SB), Z14")
	a.i("VMOVDQU64 dq4kSh<>(SB), Z15")
	for s := 0; s < 8; s++ {
		a.i("VBROADCASTI32X4 dq4kSc<>+%d(SB), Z%d", 16*s, 16+s)
	}
	a.i("VBROADCASTI32X4 dq4kMn<>+0(SB), Z28")
	a.i("VBROADCASTI32X4 dq4kMn<>+16(SB), Z29")
	a.i("VMOVDQU64 dq4kBsA<>(SB), Z30")
	a.i("VMOVDQU64 dq4kBsB<>(SB), Z31")
	a.i("MOVL $0xcccc, AX")
	a.i("KMOVW AX, K1")
	a.i("VXORPS Y10, Y10, Y10")
	a.i("VXORPS Y11, Y11, Y11")
	a.p("%s:", strings.ToLower(name))
	off := func(o int) [8]string { return rowAddr8(o, "SI", "R10", "R8", "R9") }
	hd := off(0)
	a.i("VMOVDQU 260(DI), Y8") // bsums
	a.i("VPERMD Z8, Z30, Z12") // dwords (b0 b1) (b4 b5) (b8 b9) (b12 b13)
	a.i("VPERMD Z8, Z31, Z13") // (b2 b3) (b6 b7) (b10 b11) (b14 b15)
	for h, z := range []int{6, 7} {
		a.i("VMOVDQU %s, X%d", hd[4*h], z)
		for l := 1; l < 4; l++ {
			a.i("VINSERTI32X4 $%d, %s, Z%d, Z%d", l, hd[4*h+l], z, z)
		}
	}
	a.i("VMOVDQU64 dq4kD<>(SB), Z8")
	a.i("VPERMI2W Z7, Z6, Z8") // words d of rows 0..7, dmin of rows 0..7
	a.i("VCVTPH2PS Y8, Z8")
	a.i("VBROADCASTSS (DI), Z9")
	a.i("VMULPS Z9, Z8, Z9")                     // [d*dx | dmin*dx]
	a.i("VEXTRACTF64X4 $1, Z9, Y8")              // dmin*dx
	for _, r := range [][3]int{{6, 4}, {7, 6}} { // head in r[0], SCP to r[1]
		x, d := r[0], r[1]
		a.i("VPSRLDQ $4, Z%d, Z%d", x, x) // [u0 u1 u2 0]
		a.i("VPANDD dq4kM3f<>(SB), Z%d, Z%d", x, d)
		a.i("VPSRLD $6, Z%d, Z5", x)
		a.i("VPANDD dq4kM03<>(SB), Z5, Z5")
		a.i("VPSLLD $4, Z5, Z5")
		a.i("VPSHUFD $0xaa, Z%d, Z%d", x, x)
		a.i("VPSRLVD Z15, Z%d, Z%d", x, x) // [u2 u2 u2 u2>>4]
		a.i("VPANDD Z14, Z%d, Z%d", x, x)
		a.i("VPSHUFD $0x40, Z5, Z5")
		a.i("VPORD Z5, Z%d, Z%d", x, x)
		a.i("VMOVDQA32 Z%d, K1, Z%d", x, d) // [sc0-3 mn0-3 sc4-7 mn4-7]
	}
	for h, s := range []int{4, 6} {
		a.i("VPSHUFB Z28, Z%d, Z5", s)
		a.i("VPMADDWD Z12, Z5, Z%d", h)
		a.i("VPSHUFB Z29, Z%d, Z5", s)
		a.i("VPDPWSSD Z13, Z5, Z%d", h) // lane r: imin_0..3 of row r (+4h)
	}
	for p := 0; p < 4; p++ {
		a.i("VSHUFI64X2 $%d, Z6, Z4, Z%d", 0x55*p, 24+p)
	}
	for h := 0; h < 2; h++ {
		a.i("VMOVDQU64 dq4kTr%d<>(SB), Z%d", h, 2+h)
		a.i("VPERMI2D Z1, Z0, Z%d", 2+h) // [imin_2h | imin_2h+1] of rows 0..7
		if !gemv {
			a.i("VCVTDQ2PS Z%d, Z%d", 2+h, 2+h)
		}
	}
	if gemv {
		a.i("VPADDD Z3, Z2, Z2") // [imin_0+imin_2 | imin_1+imin_3]
		a.i("VEXTRACTI64X4 $1, Z2, Y3")
		a.i("VPADDD Y3, Y2, Y2") // imin of rows 0..7
		a.i("VCVTDQ2PS Y2, Y2")
		a.i("VFMADD231PS Y8, Y2, Y10") // accMin = fma(imin, dmin*dx, accMin)
	}
	for g := 0; g < 4 && !gemv; g++ {
		r := 2 + g/2
		if g%2 == 1 {
			a.i("VEXTRACTF64X4 $1, Z%d, Y%d", r, r)
		}
		a.i("VFMADD231PS Y8, Y%d, Y10", r) // accMin = fma(imin_g, dmin*dx, accMin)
	}
	for g := 0; g < 4; g++ {
		for o := 320 * g; o < min(320*(g+1), 8*144); o += 64 {
			a.i("PREFETCHT0 %d(R12)", o)
		}
		a.i("VBROADCASTI64X4 %d(DI), Z12", 4+64*g)
		a.i("VBROADCASTI64X4 %d(DI), Z13", 36+64*g)
		q := off(16 + 32*g)
		for p := 0; p < 4; p++ {
			a.i("VMOVDQU %s, Y4", q[p])
			a.i("VINSERTI64X4 $1, %s, Z4, Z4", q[p+4])
			a.i("VPSRLW $4, Z4, Z5")
			a.i("VPANDD Z14, Z4, Z4")
			a.i("VPANDD Z14, Z5, Z5")
			a.i("VPMADDUBSW Z12, Z4, Z4")
			a.i("VPMADDUBSW Z13, Z5, Z5")
			a.i("VPSHUFB Z%d, Z%d, Z6", 16+2*g, 24+p)
			a.i("VPMADDWD Z6, Z4, Z%d", p)
			a.i("VPSHUFB Z%d, Z%d, Z6", 17+2*g, 24+p)
			a.i("VPDPWSSD Z6, Z5, Z%d", p)
		}
		for q := 0; q < 2; q++ {
			r0, r1 := 2*q, 2*q+1
			a.i("VPUNPCKLDQ Z%d, Z%d, Z4", r1, r0)
			a.i("VPUNPCKHDQ Z%d, Z%d, Z5", r1, r0)
			a.i("VPADDD Z5, Z4, Z%d", r0)
		}
		a.i("VPUNPCKLQDQ Z2, Z0, Z4")
		a.i("VPUNPCKHQDQ Z2, Z0, Z5")
		a.i("VPADDD Z5, Z4, Z0")            // lanes: rows 0..3 (twice), rows 4..7 (twice)
		a.i("VSHUFI64X2 $0xd8, Z0, Z0, Z1") // [l0 l2 l1 l3]
		a.i("VEXTRACTI64X4 $1, Z1, Y2")
		switch {
		case !gemv:
			a.i("VPADDD Y2, Y1, Y0") // iacc_g, rows 0..7
			a.i("VCVTDQ2PS Y0, Y0")
			a.i("VFMADD231PS Y9, Y0, Y11") // acc = fma(iacc_g, d*dx, acc)
		case g == 0:
			a.i("VPADDD Y2, Y1, Y7") // iacc_0
		default:
			a.i("VPADDD Y2, Y1, Y0") // iacc_g
			a.i("VPADDD Y0, Y7, Y7")
		}
	}
	if gemv {
		a.i("VCVTDQ2PS Y7, Y7")
		a.i("VFMADD231PS Y9, Y7, Y11") // acc = fma(iacc, d*dx, acc)
	}
	gemvQ4_KEpilogue(a, name, adv)
}

// vnniDecKernels emits the avx512vnni decode kernels.
func vnniDecKernels(a *asm) {
	vnniDecConsts(a)
	gemvQ4_KV(a, "gemvQ4_KQ8_KV", 144, "LEAQ (SI)(R8*8), R12", false)
	gemvQ4_KV(a, "gemvQ4_KQ8_KIV", 8*144, fmt.Sprintf("LEAQ %d(SI), R12", q4kPrefetch), false)
	gemvQ4_KV(a, "gemvQ4_KGQ8_KV", 144, "LEAQ (SI)(R8*8), R12", true) // DotQ4_KQ8_KGemv's order
	dotQ6_KVConsts(a)
	dotQ6_KV(a)
	gemvQ6_KV(a)
	a.p("DATA dq8B80<>+0(SB)/4, $0x80808080")
	a.p("GLOBL dq8B80<>(SB), RODATA|NOPTR, $4")
	dotQ8_0V(a)
}

// dotQ6_KVConsts emits dotQ6_KV's tables.
func dotQ6_KVConsts(a *asm) {
	var dw [16]uint32
	for i := range dw {
		dw[i] = 0x00040004 // word shifts: 4 (chunk 0), 2 (chunk 1)
		if i >= 8 {
			dw[i] = 0x00020002
		}
	}
	data64(a, "dq6kShL", dw)
	for i := range dw {
		dw[i] = 0 // 0 (chunk 2), 2 (chunk 3)
		if i >= 8 {
			dw[i] = 0x00020002
		}
	}
	data64(a, "dq6kShR", dw)
	data64(a, "dq6kM30", lanes4(0x30303030, 0x30303030, 0x30303030, 0x30303030))
	// Scale words: lane l of chunk pair k of half h takes sc[8h+4k+l].
	for j := 0; j < 4; j++ {
		for i := range dw {
			v := uint32(4*j + i/4)
			dw[i] = v | v<<16
		}
		data64(a, fmt.Sprintf("dq6kSc%d", j), dw)
	}
	a.p("")
}

// dotQ6_KV: dotQ6_KQ8_KAVX2 (quant_amd64.s) on AVX-512, one Q6_K row
// against one Q8_K row, the same float operations in the same order (8
// float32 lanes, fma per super-block, hsum8); only the exact int32 lanes
// are summed differently. Per 128-element half h, two chunks per ZMM
// (256-bit halves):
//
//	Q01 = [chunk 0 | chunk 1] = (ql[64h..+63] & 15) | (VPSLLVW(qh, [4|2]) & 0x30)
//	Q23 = [chunk 2 | chunk 3] = (ql >> 4 & 15) | (VPSRLVW(qh, [0|2]) & 0x30)
//	T  += VPMADDWD(VPMADDUBSW(Q, q8 (64 bytes)), sc[e/16] words)
//
// where the scale words come from VPERMW of the sign-extended scales.
// lane[m] = T[m] + T[8+m] - 32*(sc[2m]*bsums[2m] + sc[2m+1]*bsums[2m+1]).
//
//	Y0 acc; Z1..Z6 temporaries; Z8..Z11 scale words; Y12 scales; Y13
//	offset; Z20 0x0f; Z21 0x30; Z22/Z23 shifts; Z24..Z27 VPERMW indexes.
func dotQ6_KV(a *asm) {
	a.p("// func dotQ6_KQ8_KV(nb int, w, x []byte) float32")
	a.p("TEXT ·dotQ6_KQ8_KV(SB), NOSPLIT, $0-60")
	a.i("MOVQ nb+0(FP), CX")
	a.i("MOVQ w_base+8(FP), SI")
	a.i("MOVQ x_base+32(FP), DI")
	dotQ6_KVConstRegs(a)
	a.i("VXORPS Y0, Y0, Y0")
	a.p("dotq6kq8kv:")
	dotQ6_KVBlock(a, -1)
	a.i("ADDQ $210, SI")
	a.i("ADDQ $292, DI")
	a.i("DECQ CX")
	a.i("JNZ dotq6kq8kv")
	dotQ6_KVHsum8(a)
	a.i("VMOVSS X0, ret+56(FP)")
	a.i("VZEROUPPER")
	a.i("RET")
	a.p("")
}

// q6kGemvPrefetch is how far ahead of its reads gemvQ6_KQ8_KV prefetches
// the weights, in bytes (the rows of a call are contiguous in a model's
// matrices, so this reaches into the rows that follow). Measured
// (BenchmarkMatMulDecodeDRAM/Q6_K, CPU time, 4 alternated rounds on a
// loaded host): 1024 B 1.1-1.2x the time of 4096, 2048 B ~1.05x, 8192 B
// the same as 4096.
const q6kGemvPrefetch = 4096

// gemvQ6_KV: dotQ6_KV over rows consecutive Q6_K rows (wStride bytes
// apart) against one Q8_K row, each row the very instruction sequence of
// dotQ6_KV (so out[i] has its bits), with the constants loaded once per
// call and the weights prefetched q6kGemvPrefetch bytes ahead of the
// loads, 4 cache lines per super-block (210 bytes): decode reads a matrix
// once, from DRAM, and a single-row call leaves the stream to the
// hardware prefetcher alone.
//
//	R8 rows left, R9 wStride, R10 this row, R11 out, R12 x.
func gemvQ6_KV(a *asm) {
	a.p("// func gemvQ6_KQ8_KV(nb, rows int, w *byte, wStride int, x *byte, out *float32)")
	a.p("TEXT ·gemvQ6_KQ8_KV(SB), NOSPLIT, $0-48")
	a.i("MOVQ rows+8(FP), R8")
	a.i("MOVQ w+16(FP), R10")
	a.i("MOVQ wStride+24(FP), R9")
	a.i("MOVQ x+32(FP), R12")
	a.i("MOVQ out+40(FP), R11")
	dotQ6_KVConstRegs(a)
	a.p("gemvq6kq8kvrow:")
	a.i("MOVQ nb+0(FP), CX")
	a.i("MOVQ R10, SI")
	a.i("MOVQ R12, DI")
	a.i("VXORPS Y0, Y0, Y0")
	a.p("gemvq6kq8kv:")
	dotQ6_KVBlock(a, q6kGemvPrefetch)
	a.i("ADDQ $210, SI")
	a.i("ADDQ $292, DI")
	a.i("DECQ CX")
	a.i("JNZ gemvq6kq8kv")
	dotQ6_KVHsum8(a)
	a.i("VMOVSS X0, (R11)")
	a.i("ADDQ $4, R11")
	a.i("ADDQ R9, R10")
	a.i("DECQ R8")
	a.i("JNZ gemvq6kq8kvrow")
	a.i("VZEROUPPER")
	a.i("RET")
	a.p("")
}

// dotQ6_KVConstRegs loads dotQ6_KV's constant registers (Z20..Z27).
func dotQ6_KVConstRegs(a *asm) {
	a.i("VMOVDQU64 dq4kNib<>(SB), Z20")
	a.i("VMOVDQU64 dq6kM30<>(SB), Z21")
	a.i("VMOVDQU64 dq6kShL<>(SB), Z22")
	a.i("VMOVDQU64 dq6kShR<>(SB), Z23")
	for j := 0; j < 4; j++ {
		a.i("VMOVDQU64 dq6kSc%d<>(SB), Z%d", j, 24+j)
	}
}

// dotQ6_KVBlock emits one super-block of dotQ6_KV: weights at SI,
// activations at DI, lanes folded into Y0. prefetch >= 0: prefetch the
// 4 cache lines from prefetch(SI) on first.
func dotQ6_KVBlock(a *asm, prefetch int) {
	if prefetch >= 0 {
		for l := 0; l < 4; l++ {
			a.i("PREFETCHT0 %d(SI)", prefetch+64*l)
		}
	}
	a.i("VPMOVSXBW 192(SI), Y12")
	a.i("VPMADDWD 260(DI), Y12, Y13")
	a.i("VPSLLD $5, Y13, Y13") // 32*(sc*bsums pairs)
	for j := 0; j < 4; j++ {
		a.i("VPERMW Z12, Z%d, Z%d", 24+j, 8+j)
	}
	for h := 0; h < 2; h++ {
		a.i("VMOVDQU64 %d(SI), Z1", 64*h)
		a.i("VBROADCASTI64X4 %d(SI), Z2", 128+32*h)
		a.i("VPSLLVW Z22, Z2, Z3")
		a.i("VPANDD Z21, Z3, Z3")
		a.i("VPTERNLOGD $0xf8, Z20, Z1, Z3") // Z3 |= Z1 & 0x0f: [chunk 0 | chunk 1]
		a.i("VPSRLVW Z23, Z2, Z2")
		a.i("VPANDD Z21, Z2, Z2")
		a.i("VPSRLW $4, Z1, Z1")
		a.i("VPTERNLOGD $0xf8, Z20, Z1, Z2") // [chunk 2 | chunk 3]
		a.i("VPMADDUBSW %d(DI), Z3, Z3", 4+128*h)
		a.i("VPMADDUBSW %d(DI), Z2, Z2", 68+128*h)
		if h == 0 {
			a.i("VPMADDWD Z8, Z3, Z5")
		} else {
			a.i("VPDPWSSD Z10, Z3, Z5")
		}
		a.i("VPDPWSSD Z%d, Z2, Z5", 9+2*h)
	}
	a.i("VEXTRACTI64X4 $1, Z5, Y6")
	a.i("VPADDD Y6, Y5, Y5")
	a.i("VPSUBD Y13, Y5, Y5")
	a.i("VCVTDQ2PS Y5, Y5")
	a.i("MOVWLZX 208(SI), AX")
	a.i("VMOVD AX, X6")
	a.i("VCVTPH2PS X6, X6")
	a.i("VMULSS (DI), X6, X6") // dw*dx
	a.i("VBROADCASTSS X6, Y6")
	a.i("VFMADD231PS Y5, Y6, Y0")
}

// dotQ6_KVHsum8 reduces Y0's lanes into X0 as Q6_HSUM8:
// ((l0+l4)+(l2+l6)) + ((l1+l5)+(l3+l7)).
func dotQ6_KVHsum8(a *asm) {
	a.i("VEXTRACTF128 $1, Y0, X1")
	a.i("VADDPS X1, X0, X0")
	a.i("VMOVHLPS X0, X0, X1")
	a.i("VADDPS X1, X0, X0")
	a.i("VMOVSHDUP X0, X1")
	a.i("VADDSS X1, X0, X0")
}

// dotQ8_0V: dotQ8_0Q8_0AVX2 (quant_amd64.s) on AVX-512, two blocks per
// ZMM (256-bit halves), the same float operations in the same order:
// per block s = dw*dx and lanes = fma(s, float(I_j), lanes), block by
// block, then hsum8. I_j (the exact sum of the 4 products of elements
// 4j..4j+3) is VPDPBUSD(w^0x80, x) - VPDPBUSD(0x80, x). An odd last block
// runs the same steps on YMM.
//
//	Y0 lanes; Z1 weights, Z2 activations, Z3/Z4 sums, Z5/Z6 scales,
//	Z30 0x80.
func dotQ8_0V(a *asm) {
	a.p("// func dotQ8_0Q8_0V(nb int, w, x []byte) float32")
	a.p("TEXT ·dotQ8_0Q8_0V(SB), NOSPLIT, $0-60")
	a.i("MOVQ nb+0(FP), CX")
	a.i("MOVQ w_base+8(FP), SI")
	a.i("MOVQ x_base+32(FP), DI")
	a.i("VXORPS Y0, Y0, Y0")
	a.i("VPBROADCASTD dq8B80<>(SB), Z30")
	a.i("MOVQ CX, DX")
	a.i("SHRQ $1, CX")
	a.i("JZ dotq80v1")
	blk := func(zmm bool) {
		r := "Z"
		if !zmm {
			r = "Y"
		}
		a.i("VMOVDQU 2(SI), Y1")
		a.i("VMOVDQU 2(DI), Y2")
		if zmm {
			a.i("VINSERTI64X4 $1, 36(SI), Z1, Z1")
			a.i("VINSERTI64X4 $1, 36(DI), Z2, Z2")
		}
		a.i("VPXORD %s30, %s1, %s1", r, r, r) // w+128, unsigned
		a.i("VPXORD %s3, %s3, %s3", r, r, r)
		a.i("VPDPBUSD %s2, %s1, %s3", r, r, r)
		a.i("VPXORD %s4, %s4, %s4", r, r, r)
		a.i("VPDPBUSD %s2, %s30, %s4", r, r, r)
		a.i("VPSUBD %s4, %s3, %s3", r, r, r) // I_j
		a.i("VCVTDQ2PS %s3, %s3", r, r)
		a.i("VPBROADCASTW (SI), X5")
		a.i("VPBROADCASTW (DI), X6")
		if zmm {
			a.i("VPBROADCASTW 34(SI), X7")
			a.i("VINSERTI128 $1, X7, Y5, Y5")
			a.i("VPBROADCASTW 34(DI), X7")
			a.i("VINSERTI128 $1, X7, Y6, Y6")
		}
		if zmm {
			a.i("VCVTPH2PS Y5, Z5") // dw
			a.i("VCVTPH2PS Y6, Z6") // dx
		} else {
			a.i("VCVTPH2PS X5, Y5")
			a.i("VCVTPH2PS X6, Y6")
		}
		a.i("VMULPS %s6, %s5, %s5", r, r, r) // dw*dx
		a.i("VFMADD231PS Y5, Y3, Y0")
		if zmm {
			a.i("VEXTRACTF64X4 $1, Z3, Y3")
			a.i("VEXTRACTF64X4 $1, Z5, Y5")
			a.i("VFMADD231PS Y5, Y3, Y0")
		}
	}
	a.p("dotq80v2:")
	blk(true)
	a.i("ADDQ $68, SI")
	a.i("ADDQ $68, DI")
	a.i("DECQ CX")
	a.i("JNZ dotq80v2")
	a.p("dotq80v1:")
	a.i("TESTQ $1, DX")
	a.i("JZ dotq80vdone")
	blk(false)
	a.p("dotq80vdone:")
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
