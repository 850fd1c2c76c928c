package simd

import (
	"fmt"
	"math"
	"unsafe"
)

//go:generate go run ./internal/asmgen -o gemm_amd64.s -attn attn_amd64.s -vnni gemmvnni_amd64.s

// GEMM: a block of weight rows against a batch of activation rows
// (prefill, batched decode), with register-tiled micro-kernels after
// llama.cpp's tinyBLAS (llamafile/sgemm.cpp) and repacked GEMMs
// (ggml-cpu/repack.cpp):
//
//	out[j*outStride + i] = Dot(n, w[i*wStride:], x_j)     i < rows, j < m
//
// where Dot is the single-row dot of the weight type and x_j the j-th
// activation row. Every output has exactly the bits of that single-row
// call: the per-block integer sums are exact and are folded into float32
// in the same order with the same roundings. So a matmul may use the GEMM
// for some rows and the single-row dots for others without any result
// changing (batch invariance).
//
// # Panels
//
// The weight rows are repacked, a panel of P rows at a time, so that one
// 256-bit register holds the same few quants of 8 different rows:
//
//	row r:  [ q0 q1 q2 q3 | q4 q5 q6 q7 | ... ]     (one quant block)
//	V_k:    [ row0 group k | row1 group k | ... | row7 group k ]   8 x 32 bits
//
// A broadcast of activation group k (the same 32 bits in every lane) times
// V_k gives partial sums of 8 output rows at once, lane by lane, so block
// sums need no horizontal reductions; the eight float32 folds also run as
// one vector operation. A panel of nb blocks is repacked once and stays in
// L2 while all m activation rows pass over it, 4 rows per kernel call
// (registers: 4 rows x 8 or 16 weight rows of running sums).
//
//	Q8_0 panel, 8 rows, 672 B per block:
//	  A_j at 64j:     lane r = |q[r][4j..4j+3]| (4 bytes, VPABSB)   j = 0..7
//	  W_j at 64j+32:  lane r = q[r][4j..4j+3] (4 int8, sign source) 16 x 32 B
//	  dw:             float32 d of rows 0..7                             32 B
//	  s_p at 544+32p: scratch of the kernel call: dw*dx_p of its activation
//	                  row p, written once per chunk, read by the FMAs of
//	                  every pass                                     4 x 32 B
//	  activation (GemmActQ8_0Q8_0, 36 B per block): int8 q[0..31] as they
//	    are, float32 d
//	  per block (llama.cpp's order, 8 accumulators acc_j per activation row,
//	  lane r = row r's float lane j):
//	             s_r   = dw_r*dx                                   (rounded)
//	             I_j,r = VPMADDWD(VPMADDUBSW(A_j, VPSIGNB(bcast(x quad j), W_j)), 1)
//	                     (|w|*x*sign(w) pairwise, |pair| <= 32512: exact
//	                     sum of elements 4j..4j+3 of row r, if x != -128)
//	             acc_j = fma(s, float(I_j), acc_j)           j = 0..7
//	  end:       out_r = ((acc0+acc4)+(acc2+acc6)) + ((acc1+acc5)+(acc3+acc7))
//	  8 accumulators per activation row leave no registers for more rows,
//	  so a kernel call takes its rows in groups of R = 4 (x4), 2 (x2, x3)
//	  or 1 (x1, x3's last); a group walks the blocks in chunks of 16 and
//	  makes R passes over each chunk (in L1) after computing its scales
//	  into the panel's scratch once, 8/R lanes each: 8
//	  accumulators in registers, the others parked in the frame, each A_j,
//	  W_j loaded once per pass for the group (asmgen kernelQ8_0).
//
//	Q4_0 panel, 16 rows, 576 B per block:
//	  V[k][g] (k = 0..7, g = 0..1) at (2k+g)*32: lane r = the 4 nibbles of
//	    elements 4k..4k+3 of row 8g+r, one per byte (0..15)          16 x 32 B
//	  dw:              float32 d of rows 0..15                            64 B
//	  activation (GemmActQ4_0Q8_0, 40 B per block): int8 q[0..31],
//	    float32 d, int32 8*sum(q)
//	  per block: s_r = sum_k VPMADDUBSW(V[k][g], bcast(x quad k)) (int16,
//	             |s| <= 8*2*15*128 = 30720), widened by VPMADDWD with ones;
//	             sum_r = s_r - 8*sum(q)  (the nibbles' -8 offset)
//	             acc_r = fma(float(sum_r), dw_r*dx, acc_r)  (q4_0_8x8 order)
//
//	Q4_K (8 rows, 2624 B per 256 elements): the same transposed quants
//	  per 32-element sub-block, plus per-row scales and mins as int16 pairs
//	  applied with VPMADDWD, and d, dmin as float32; activations are Q8_K
//	  rows as they are (layout in internal/asmgen/kquant.go). Q4_K folds
//	  every 64 elements (DotQ4_KQ8_K's order): per activation row,
//	  acc_r = fma(float(iacc_r), d_r*dx, acc_r) with acc in out, and
//	  accMin_r = fma(float(imin_r), dmin_r*dx, accMin_r) in the frame;
//	  out = acc - accMin after the last super-block.
//
//	Q6_K (8 rows, 2592 B per 256 elements), in llama.cpp's lane order
//	  (DotQ6_KQ8_K): every output keeps 8 float32 lane accumulators (in
//	  the kernel's frame). The quants of chunks 2p and 2p+1 that meet in
//	  the same lane are interleaved by element pair, and each activation
//	  row is interleaved alike per super-block, so that the two chunks'
//	  VPMADDUBSW results add in int16 and one VPMADDWD applies both
//	  chunks' scales (layout in internal/asmgen/kquant.go). The -32
//	  offset goes through the bsums with the scales stored as -32*sc.
//	  Below gemmQ6_KPanelMin activation rows the exact x4 dots are faster
//	  (no repacking) and GemmQ6_KQ8_K uses them instead.
//
//	Q5_K (8 rows, 2368 B per 256 elements; gemm_q5k.go): Q6_K's lane
//	  scheme for llama.cpp's ggml_vec_dot_q5_K_q8_K order, both chunks'
//	  scales per VPMADDWD, the mins as int16 pairs against the bsums' pair
//	  sums into one more accumulator per output; the avx512vnni set packs
//	  16-row panels (two 8-row ones interleaved by 32-byte vector).
//
// Panels are built in scratch memory by the caller's thread (see
// GemmScratchBytes); rows beyond the last full panel are copied into a
// zero-padded panel and their outputs go through a small tile buffer.
// Q8_0 also has a load-time panel (PackQ8_0, GemmQ8_0Packed in
// gemmpacked.go) that a model builds once and every call reads in place.
//
// # Decode (m = 1)
//
// Repacking does not pay for one activation row. Q8_0, Q4_0 and Q4_K have
// 8-row kernels reading the weights in place, each loop iteration one
// block of 8 rows, while prefetching the next 8 rows at the rate it reads
// (a matrix's rows are contiguous): without that, 8 interleaved streams
// leave the loop waiting on DRAM. Q8_0 keeps one 8-lane FMA accumulator
// per row (llama.cpp's vec_dot lanes: VPMADDUBSW(|w|, VPSIGNB(x, w)) then
// VPMADDWD with ones give I_j in lane j), reduced as hsum8 at the end. In the others rows r and
// r+4 share a register, one per 128-bit half, so that one VPMADDUBSW
// serves two rows (Q4_0, Q4_K). Q5_K uses its single-row dot. Q6_K uses its
// single-row dot, row after row (on the avx512vnni set all of a call's rows
// in one assembly loop, gemvQ6_KQ8_KV, prefetching 4 KiB ahead in the
// contiguous rows: 1.3-1.4x the separate calls' decode speed from DRAM). Q4_K's
// kernel reduces each 64-element group to iacc of the 8 rows and folds it
// at once (FMA chain in a register); its mins, per group, go into a second
// chain first. The VNNI sets run their own Q4_K gemv and Q6_K and Q8_0
// dots (gemvQ4_KQ8_KV, gemvQ4_KXQ8_KI and the like), which form the exact
// integer sums with VPDPBUSD/VPDPWSSD and keep these float steps; the
// avxvnni set keeps the AVX2 gemv for raw Q4_K rows (its own was no
// faster there, only over the load-time layout). The avx512vnni set also
// has its own Q5_K dot (dotQ5_KQ8_KV), which prefetches ahead in the row
// stream.
//
//	rows of a chunk:  [ r0..r7 ][ r8..r15 ] ...   contiguous in memory
//	                    ^ read     ^ prefetched

const (
	gemmActQ8_0Q8_0Block = 36 // int8 q[32], f32 d (per block of the row's first part)
	// gemmActQ8_0Q8_0Row is a GemmActQ8_0Q8_0 row's bytes per block: the
	// 36-byte blocks, then per block the 32 quants XOR 0x80 (q+128 as
	// unsigned bytes, for VPDPBUSD's unsigned operand).
	gemmActQ8_0Q8_0Row   = 68
	gemmActQ4_0Q8_0Block = 40 // int8 q[32], f32 d, int32 8*sum(q)

	panelQ8_0Rows  = 8
	panelQ8_0Block = 672 // 16*32 + 8*4 + 4*32 (per-call scale scratch)
	panelQ4_0Rows  = 16
	panelQ4_0Block = 576 // 16*32 + 16*4
	panelQ4_KRows  = 8
	panelQ4_KBlock = 2624 // per 256 elements: 64*32 + 2*8*32 + 2*8*4
	panelQ6_KRows  = 8
	panelQ6_KBlock = 2592 // per 256 elements: 64*32 + 8*32 + 8*32 + 8*4

	gemmMaxPanelRows = 16
	gemmMaxPanelB    = 672 // largest panel bytes per 32 elements (K-quants: 2624/8 = 328)
	gemmMaxRawB      = 34  // largest weight bytes per 32 elements
)

// GemmActQ8_0Q8_0Bytes is the size of one activation row of n elements in
// the form GemmQ8_0Q8_0 reads (36 bytes per 32 elements).
func GemmActQ8_0Q8_0Bytes(n int) int {
	return gemmActBytes("GemmActQ8_0Q8_0Bytes", n, gemmActQ8_0Q8_0Row)
}

// GemmActQ4_0Q8_0Bytes is the size of one activation row of n elements in
// the form GemmQ4_0Q8_0 reads (40 bytes per 32 elements).
func GemmActQ4_0Q8_0Bytes(n int) int {
	return gemmActBytes("GemmActQ4_0Q8_0Bytes", n, gemmActQ4_0Q8_0Block)
}

func gemmActBytes(fn string, n, block int) int {
	if n < 0 || n%qk != 0 {
		panic(fmt.Sprintf("simd: %s: n=%d is not a non-negative multiple of %d", fn, n, qk))
	}
	return n / qk * block
}

// GemmScratchBytes is the scratch every Gemm* call with rows of n elements
// needs: one panel, a zero-padded copy of the last partial panel's rows,
// and a tile of outputs.
func GemmScratchBytes(n int) int {
	if n < 0 || n%qk != 0 {
		panic(fmt.Sprintf("simd: GemmScratchBytes: n=%d is not a non-negative multiple of %d", n, qk))
	}
	nb := n / qk
	return nb*gemmMaxPanelB + gemmMaxPanelRows*nb*gemmMaxRawB + 4*gemmMaxPanelRows*4
}

// GemmActQ8_0Q8_0 writes the Q8_0 activation row x (n elements) into dst
// (GemmActQ8_0Q8_0Bytes(n) bytes) in the form the Q8_0 GEMMs read: per
// block the 32 int8 quants as they are, then d as float32 (36 bytes); then,
// after all nb of those, per block the 32 quants XOR 0x80 (the unsigned
// q+128 that the avx512vnni kernels multiply by the signed weights):
//
//	[ q_0 d_0 | q_1 d_1 | ... | q_nb-1 d_nb-1 ][ q_0^0x80 | ... | q_nb-1^0x80 ]
//	  36 B per block                             32 B per block
//
// GemmQ8_0Q8_0's AVX2 kernels need quants in [-127, 127] (see there).
func GemmActQ8_0Q8_0(n int, x, dst []byte) {
	nb := checkAct("GemmActQ8_0Q8_0", n, x, dst, gemmActQ8_0Q8_0Row)
	if fast.Load() && nb > 0 {
		gemmActQ8_0x36(nb, &x[0], &dst[0])
		return
	}
	for b := range nb {
		bx, bd := x[b*bytesQ8_0:], dst[b*gemmActQ8_0Q8_0Block:]
		copy(bd[:32], bx[2:34])
		putF32(bd[32:], f16At(bx, 0))
		bu := dst[nb*gemmActQ8_0Q8_0Block+32*b:]
		for i, q := range bx[2:34] {
			bu[i] = q ^ 0x80
		}
	}
}

// GemmActQ4_0Q8_0 writes the Q8_0 activation row x (n elements) into dst
// (GemmActQ4_0Q8_0Bytes(n) bytes) in the form GemmQ4_0Q8_0 reads: per block
// the 32 int8 quants, d as float32 and 8*sum(q) as int32.
func GemmActQ4_0Q8_0(n int, x, dst []byte) {
	nb := checkAct("GemmActQ4_0Q8_0", n, x, dst, gemmActQ4_0Q8_0Block)
	if fast.Load() && nb > 0 {
		gemmActQ8_0x8(nb, &x[0], &dst[0])
		return
	}
	for b := range nb {
		bx, bd := x[b*bytesQ8_0:], dst[b*gemmActQ4_0Q8_0Block:]
		copy(bd[:32], bx[2:34])
		var s int32
		for _, q := range bx[2:34] {
			s += int32(int8(q))
		}
		putF32(bd[32:], f16At(bx, 0))
		v := uint32(8 * s)
		bd[36], bd[37], bd[38], bd[39] = byte(v), byte(v>>8), byte(v>>16), byte(v>>24)
	}
}

// checkAct validates an activation conversion: n a multiple of 32, x at
// least n/32 Q8_0 blocks, dst at least n/32 blocks of block bytes.
func checkAct(fn string, n int, x, dst []byte, block int) int {
	nb := gemmActBytes(fn, n, 1)
	if len(x) < nb*bytesQ8_0 {
		panic(fmt.Sprintf("simd: %s: x holds %d bytes, %d Q8_0 blocks need %d", fn, len(x), nb, nb*bytesQ8_0))
	}
	if len(dst) < nb*block {
		panic(fmt.Sprintf("simd: %s: dst holds %d bytes, need %d", fn, len(dst), nb*block))
	}
	return nb
}

// GemmQ8_0Q8_0 computes out[j*outStride+i] = DotQ8_0Q8_0(n, w[i*wStride:],
// x_j) for i < rows and j < m, where a holds the m activation rows x_j in
// GemmActQ8_0Q8_0 form, aStride bytes apart. scratch must hold
// GemmScratchBytes(n) bytes; it is overwritten. See the package notes on
// GEMM for the layout; each output has the single-row dot's bits.
//
// Precondition: the activation quants are in [-127, 127] (the kernels
// flip x's sign by w's with VPSIGNB, and -128 negates to -128). Kiln's
// QuantizeActQ8_0 (d = amax/127) never writes -128 for finite input (a
// ±Inf or NaN element becomes -128, but its block's d is then not finite
// and the outputs Inf or NaN, not necessarily DotQ8_0Q8_0's); with a -128
// the result is unspecified (but no panic). Weight quants may be any byte.
func GemmQ8_0Q8_0(n int, w []byte, wStride, rows int, a []byte, aStride, m int, out []float32, outStride int, scratch []byte) {
	g := &gemmQ8_0
	nb := g.check("GemmQ8_0Q8_0", n, w, wStride, rows, a, aStride, m, out, outStride, scratch)
	g.run(nb, w, wStride, rows, a, aStride, m, out, outStride, scratch)
}

// GemmQ4_0Q8_0 is GemmQ8_0Q8_0 for Q4_0 weights: out[j*outStride+i] =
// DotQ4_0Q8_0(n, w[i*wStride:], x_j), with a in GemmActQ4_0Q8_0 form: the
// order of llama.cpp's repacked GEMM (for matrices with Rows%8 == 0; see
// DotQ4_0Q8_0Lanes for the others).
func GemmQ4_0Q8_0(n int, w []byte, wStride, rows int, a []byte, aStride, m int, out []float32, outStride int, scratch []byte) {
	g := &gemmQ4_0
	nb := g.check("GemmQ4_0Q8_0", n, w, wStride, rows, a, aStride, m, out, outStride, scratch)
	g.run(nb, w, wStride, rows, a, aStride, m, out, outStride, scratch)
}

// gemmKind describes one weight type's GEMM: its layouts, its assembly
// (pack and the kernels for 1..4 activation rows) and its generic dot over
// a prepared activation row.
type gemmKind struct {
	block    int // elements per block (32, or 256 for the K-quants)
	rows     int // panel rows
	panelB   int // panel bytes per block
	wB, actB int // weight and prepared-activation bytes per block (of a whole row)
	pack     func(nb int, w *byte, wStride int, panel *byte)
	kernels  [4]func(nb int, panel *byte, x *byte, xStride int, out *float32, outStride int)
	// vex: the avxvnni set's kernels, or nil (then kernels run there).
	vex   [4]func(nb int, panel *byte, x *byte, xStride int, out *float32, outStride int)
	gemv  func(nb int, w *byte, wStride int, x *byte, out *float32) // 8 rows, m = 1
	gemvV func(nb int, w *byte, wStride int, x *byte, out *float32) // gemv on the avx512vnni set, same bits
	// v512: the whole m > 1 product on the avx512vnni set, or nil (panel,
	// pad and tile are run's scratch areas).
	v512    func(nb int, w []byte, wStride, rows int, a []byte, aStride, m int, out []float32, outStride int, panel, pad []byte, tile []float32)
	generic func(nb int, w, a []byte) float32
	single  func(nb int, w, a []byte) float32 // m = 1 without gemv: the fast single-row dot
}

var gemmQ8_0 = gemmKind{
	block: qk, rows: panelQ8_0Rows, panelB: panelQ8_0Block, wB: bytesQ8_0, actB: gemmActQ8_0Q8_0Row,
	pack:    gemmPackQ8_0,
	kernels: [4]func(int, *byte, *byte, int, *float32, int){gemmQ8_0Q8_0x1, gemmQ8_0Q8_0x2, gemmQ8_0Q8_0x3, gemmQ8_0Q8_0x4},
	gemv:    gemvQ8_0Q8_0,
	generic: gemmQ8_0Q8_0Generic,
}

var gemmQ4_0 = gemmKind{
	block: qk, rows: panelQ4_0Rows, panelB: panelQ4_0Block, wB: bytesQ4_0, actB: gemmActQ4_0Q8_0Block,
	pack:    gemmPackQ4_0,
	kernels: [4]func(int, *byte, *byte, int, *float32, int){gemmQ4_0Q8_0x1, gemmQ4_0Q8_0x2, gemmQ4_0Q8_0x3, gemmQ4_0Q8_0x4},
	gemv:    gemvQ4_0Q8_0,
	generic: gemmQ4_0Q8_0Generic,
}

var gemmQ4_K = gemmKind{
	block: qkK, rows: panelQ4_KRows, panelB: panelQ4_KBlock, wB: bytesQ4_K, actB: bytesQ8_K,
	pack:    gemmPackQ4_K,
	kernels: [4]func(int, *byte, *byte, int, *float32, int){gemmQ4_KQ8_Kx1, gemmQ4_KQ8_Kx2, gemmQ4_KQ8_Kx3, gemmQ4_KQ8_Kx4},
	vex:     [4]func(int, *byte, *byte, int, *float32, int){gemmQ4_KXQ8_Kx1, gemmQ4_KXQ8_Kx2, gemmQ4_KXQ8_Kx3, gemmQ4_KXQ8_Kx4},
	gemv:    gemvQ4_KQ8_K,
	gemvV:   gemvQ4_KQ8_KV,
	v512:    gemmQ4_KVNNI,
	generic: dotQ4_KQ8_KGeneric,
}

// GemmQ4_KQ8_K is GemmQ8_0Q8_0 for Q4_K weights and Q8_K activation rows,
// which it reads as they are (no preparation): out[j*outStride+i] =
// DotQ4_KQ8_K(n, w[i*wStride:], a[j*aStride:]), the order llama.cpp uses
// for matrices of Rows%8 == 0 (others: DotQ4_KQ8_KVec row by row).
func GemmQ4_KQ8_K(n int, w []byte, wStride, rows int, a []byte, aStride, m int, out []float32, outStride int, scratch []byte) {
	g := &gemmQ4_K
	nb := g.check("GemmQ4_KQ8_K", n, w, wStride, rows, a, aStride, m, out, outStride, scratch)
	g.run(nb, w, wStride, rows, a, aStride, m, out, outStride, scratch)
}

var gemmQ6_K = gemmKind{
	block: qkK, rows: panelQ6_KRows, panelB: panelQ6_KBlock, wB: bytesQ6_K, actB: bytesQ8_K,
	pack:    gemmPackQ6_K,
	kernels: [4]func(int, *byte, *byte, int, *float32, int){gemmQ6_KQ8_Kx1, gemmQ6_KQ8_Kx2, gemmQ6_KQ8_Kx3, gemmQ6_KQ8_Kx4},
	vex:     [4]func(int, *byte, *byte, int, *float32, int){gemmQ6_KXQ8_Kx1, gemmQ6_KXQ8_Kx2, gemmQ6_KXQ8_Kx3, gemmQ6_KXQ8_Kx4},
	generic: dotQ6_KQ8_KGeneric,
	single:  dotQ6_KQ8_KFast,
}

// GemmQ6_KQ8_K is GemmQ4_KQ8_K for Q6_K weights: out[j*outStride+i] =
// DotQ6_KQ8_K(n, w[i*wStride:], a[j*aStride:]), in llama.cpp's order (8
// float32 lanes per output, see DotQ6_KQ8_K), for every m. From
// gemmQ6_KPanelMin activation rows on it runs the 8-row panel kernels;
// below, the exact x4 and single-row dots (gemmQ6_KDots), which need no
// repacking: measured (CPU time, 64 rows, n = 2048/5632) the panels take
// 1.6x the dots' time at m = 4, 1.1-1.3x at m = 16, and 0.8-0.95x from
// m = 32 to 128. Both give the same bits. The avx512vnni set repacks from
// gemmQ6_KVNNIMin rows on (a weight matrix of at least 16 rows), and runs
// a single activation row (decode) through gemvQ6_KQ8_KV, the single-row
// dot over all the rows in one call, prefetching ahead.
func GemmQ6_KQ8_K(n int, w []byte, wStride, rows int, a []byte, aStride, m int, out []float32, outStride int, scratch []byte) {
	g := &gemmQ6_K
	nb := g.check("GemmQ6_KQ8_K", n, w, wStride, rows, a, aStride, m, out, outStride, scratch)
	if vnni.Load() && nb > 0 && rows > 0 && m == 1 {
		gemvQ6_KQ8_KV(nb, rows, &w[0], wStride, &a[0], &out[0])
		return
	}
	if fast.Load() && nb > 0 && rows > 0 && m == 1 {
		gemvQ6_KQ8_KDots(nb, w, wStride, rows, a, out)
		return
	}
	if vnni.Load() && nb > 0 && rows >= 16 && m >= gemmQ6_KVNNIMin {
		gemmQ6_KVNNI(nb, w, wStride, rows, a, aStride, m, out, outStride, scratch)
		return
	}
	if fast.Load() && nb > 0 && rows > 0 && m > 0 && m < gemmQ6_KPanelMin {
		gemmQ6_KDots(nb, w, wStride, rows, a, aStride, m, out, outStride)
		return
	}
	g.run(nb, w, wStride, rows, a, aStride, m, out, outStride, scratch)
}

// gemmQ6_KPanelMin is the number of activation rows from which
// GemmQ6_KQ8_K repacks the weights into panels (see GemmQ6_KQ8_K).
const gemmQ6_KPanelMin = 32

// gemmQ6_KVNNIMin is gemmQ6_KPanelMin for the avx512vnni set, whose
// 16-row panel kernels (gemmQ6_KVNNI) pay off earlier: measured (256 rows,
// n = 2048, 2 shared Zen 5 cores) 1.0x the dots' time at m = 12, 0.8x at
// m = 16, 0.75x at m = 24, 1.1x at m = 8.
const gemmQ6_KVNNIMin = 16

// gemvQ6_KQ8_KDots is GemmQ6_KQ8_K's decode (m = 1) on the avx2 and
// avxvnni sets: the single-row dot row after row, each call first
// prefetching the row two ahead (a matrix's rows are contiguous, and a
// row of 2048 elements is 1680 bytes, one dot ~100 ns: about a DRAM
// latency). Arguments are checked; nb, rows > 0.
func gemvQ6_KQ8_KDots(nb int, w []byte, wStride, rows int, a []byte, out []float32) {
	rb := nb * bytesQ6_K
	for i := range rows {
		if i+2 < rows {
			prefetchAVX2(&w[(i+2)*wStride], rb)
		}
		out[i] = dotQ6_KQ8_KFast(nb, w[i*wStride:], a)
	}
}

// gemmQ6_KDots is GemmQ6_KQ8_K on the AVX2 dots; arguments are checked and
// nb, rows, m > 0. Rows go 16 at a time (at most 74 KB of weights at n =
// 5632, L2-resident while the activations pass over them), activation rows
// 4 at a time through the x4 dot. A tail of 2 or 3 activation rows (m >= 4)
// reruns the x4 dot on the last four rows, cheaper than 2 or 3 single-row
// dots, and gives the same bits (batch invariance); m < 4 uses single-row
// dots.
func gemmQ6_KDots(nb int, w []byte, wStride, rows int, a []byte, aStride, m int, out []float32, outStride int) {
	const rowBlock = 16
	var o [4]float32
	for r0 := 0; r0 < rows; r0 += rowBlock {
		r1 := min(rows, r0+rowBlock)
		j := 0
		for ; j+4 <= m; j += 4 {
			for i := r0; i < r1; i++ {
				dotQ6_KQ8_Kx4AVX2(nb, w[i*wStride:], a[j*aStride:], aStride, &o)
				for jj := range 4 {
					out[(j+jj)*outStride+i] = o[jj]
				}
			}
		}
		switch rem := m - j; {
		case rem == 0:
		case rem >= 2 && m >= 4:
			j0 := m - 4
			for i := r0; i < r1; i++ {
				dotQ6_KQ8_Kx4AVX2(nb, w[i*wStride:], a[j0*aStride:], aStride, &o)
				for jj := j; jj < m; jj++ {
					out[jj*outStride+i] = o[jj-j0]
				}
			}
		default:
			for ; j < m; j++ {
				for i := r0; i < r1; i++ {
					out[j*outStride+i] = dotQ6_KQ8_KFast(nb, w[i*wStride:], a[j*aStride:])
				}
			}
		}
	}
}

// check validates a Gemm call and returns the number of blocks per row.
func (g *gemmKind) check(fn string, n int, w []byte, wStride, rows int, a []byte, aStride, m int, out []float32, outStride int, scratch []byte) int {
	if n < 0 || n%g.block != 0 {
		panic(fmt.Sprintf("simd: %s: n=%d is not a non-negative multiple of %d", fn, n, g.block))
	}
	nb := n / g.block
	if rows < 0 || m < 0 {
		panic(fmt.Sprintf("simd: %s: negative shape rows=%d m=%d", fn, rows, m))
	}
	if rows == 0 || m == 0 {
		return nb
	}
	if wStride < nb*g.wB || len(w) < (rows-1)*wStride+nb*g.wB {
		panic(fmt.Sprintf("simd: %s: weights hold %d bytes at stride %d, %d rows of %d blocks need %d", fn, len(w), wStride, rows, nb, (rows-1)*wStride+nb*g.wB))
	}
	checkGemmRest(fn, n, nb, g.actB, a, aStride, m, rows, out, outStride, scratch)
	return nb
}

// checkGemmRest checks a GEMM call's activations (m rows of nb blocks of
// actB bytes at aStride), outputs (m rows of rows floats at outStride) and
// scratch, for a non-empty product.
func checkGemmRest(fn string, n, nb, actB int, a []byte, aStride, m, rows int, out []float32, outStride int, scratch []byte) {
	if aStride < nb*actB || len(a) < (m-1)*aStride+nb*actB {
		panic(fmt.Sprintf("simd: %s: activations hold %d bytes at stride %d, %d rows of %d blocks need %d", fn, len(a), aStride, m, nb, (m-1)*aStride+nb*actB))
	}
	if outStride < rows || len(out) < (m-1)*outStride+rows {
		panic(fmt.Sprintf("simd: %s: out holds %d floats at stride %d, %d rows of %d need %d", fn, len(out), outStride, m, rows, (m-1)*outStride+rows))
	}
	if len(scratch) < GemmScratchBytes(n) {
		panic(fmt.Sprintf("simd: %s: scratch holds %d bytes, need %d", fn, len(scratch), GemmScratchBytes(n)))
	}
}

// vexKernels is the kernels the active set runs: the avxvnni ones where
// that set is on and the kind has them.
func (g *gemmKind) vexKernels() *[4]func(nb int, panel *byte, x *byte, xStride int, out *float32, outStride int) {
	if vexVNNI.Load() && g.vex[0] != nil {
		return &g.vex
	}
	return &g.kernels
}

// run computes the product; arguments are checked.
func (g *gemmKind) run(nb int, w []byte, wStride, rows int, a []byte, aStride, m int, out []float32, outStride int, scratch []byte) {
	if rows == 0 || m == 0 {
		return
	}
	if nb == 0 {
		for j := range m {
			clear(out[j*outStride : j*outStride+rows])
		}
		return
	}
	if !fast.Load() {
		for j := range m {
			x := a[j*aStride:]
			o := out[j*outStride:]
			for i := range rows {
				o[i] = g.generic(nb, w[i*wStride:], x)
			}
		}
		return
	}
	// Scratch layout (GemmScratchBytes), in units of 32 elements (n32).
	n32 := nb * g.block / qk
	panel := scratch[:nb*g.panelB]
	pad := scratch[n32*gemmMaxPanelB : n32*gemmMaxPanelB+gemmMaxPanelRows*n32*gemmMaxRawB]
	tileB := scratch[n32*gemmMaxPanelB+gemmMaxPanelRows*n32*gemmMaxRawB:]
	tile := unsafe.Slice((*float32)(unsafe.Pointer(&tileB[0])), 4*gemmMaxPanelRows)
	if m == 1 && g.gemv == nil && g.single != nil {
		for i := range rows {
			out[i] = g.single(nb, w[i*wStride:], a)
		}
		return
	}
	if m == 1 && g.gemv != nil {
		// Decode: no repacking; 8 rows at a time straight from the weights.
		gemv := g.gemv
		if g.gemvV != nil && vnni.Load() {
			gemv = g.gemvV
		}
		r0 := 0
		for ; r0+8 <= rows; r0 += 8 {
			gemv(nb, &w[r0*wStride], wStride, &a[0], &out[r0])
		}
		if r0 < rows {
			rb := nb * g.wB
			clear(pad[:8*rb])
			for i := r0; i < rows; i++ {
				copy(pad[(i-r0)*rb:(i-r0+1)*rb], w[i*wStride:i*wStride+rb])
			}
			gemv(nb, &pad[0], rb, &a[0], &tile[0])
			copy(out[r0:rows], tile)
		}
		return
	}
	if g.v512 != nil && vnni.Load() {
		g.v512(nb, w, wStride, rows, a, aStride, m, out, outStride, scratch[:n32*gemmMaxPanelB], pad, tile)
		return
	}
	kernels := g.vexKernels()
	P := g.rows
	for r0 := 0; r0 < rows; r0 += P {
		full := r0+P <= rows
		if full {
			g.pack(nb, &w[r0*wStride], wStride, &panel[0])
		} else {
			rb := nb * g.wB
			clear(pad[:P*rb])
			for i := r0; i < rows; i++ {
				copy(pad[(i-r0)*rb:(i-r0+1)*rb], w[i*wStride:i*wStride+rb])
			}
			g.pack(nb, &pad[0], rb, &panel[0])
		}
		for j := 0; j < m; j += 4 {
			nx := min(4, m-j)
			k := kernels[nx-1]
			if full {
				k(nb, &panel[0], &a[j*aStride], aStride, &out[j*outStride+r0], outStride)
				continue
			}
			k(nb, &panel[0], &a[j*aStride], aStride, &tile[0], P)
			for jj := range nx {
				copy(out[(j+jj)*outStride+r0:(j+jj)*outStride+rows], tile[jj*P:])
			}
		}
	}
}

// gemmQ8_0Q8_0Generic is dotQ8_0Q8_0Generic with the activation row in
// GemmActQ8_0Q8_0 form: the same integer sums, the same eight FMA lanes
// and hsum8 (exact for every byte; the assembly's precondition is its own).
func gemmQ8_0Q8_0Generic(nb int, w, a []byte) float32 {
	var l [8]float32
	for ib := 0; ib < nb; ib++ {
		bw := w[ib*bytesQ8_0 : (ib+1)*bytesQ8_0]
		ba := a[ib*gemmActQ8_0Q8_0Block : (ib+1)*gemmActQ8_0Q8_0Block]
		s := float32(f16At(bw, 0) * getF32(ba[32:]))
		for j := range 8 {
			var sumi int32
			for k := 4 * j; k < 4*j+4; k++ {
				sumi += int32(int8(bw[2+k])) * int32(int8(ba[k]))
			}
			l[j] = fma32(s, float32(sumi), l[j])
		}
	}
	return hsum8(&l)
}

// gemmQ4_0Q8_0Generic is dotQ4_0Q8_0Generic with the activation row in
// GemmActQ4_0Q8_0 form: sumf = fma(float(sumi), dw*dx, sumf) per block.
func gemmQ4_0Q8_0Generic(nb int, w, a []byte) float32 {
	var sumf float32
	for ib := 0; ib < nb; ib++ {
		bw := w[ib*bytesQ4_0 : (ib+1)*bytesQ4_0]
		ba := a[ib*gemmActQ4_0Q8_0Block : (ib+1)*gemmActQ4_0Q8_0Block]
		sumi := isumQ4_0(bw[2:18], ba[:32])
		s := float32(f16At(bw, 0) * getF32(ba[32:]))
		sumf = fma32(float32(sumi), s, sumf)
	}
	return sumf
}

func putF32(b []byte, f float32) {
	v := math.Float32bits(f)
	b[0], b[1], b[2], b[3] = byte(v), byte(v>>8), byte(v>>16), byte(v>>24)
}

func getF32(b []byte) float32 {
	return math.Float32frombits(uint32(b[0]) | uint32(b[1])<<8 | uint32(b[2])<<16 | uint32(b[3])<<24)
}
