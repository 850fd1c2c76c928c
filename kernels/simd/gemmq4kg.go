package simd

import (
	"encoding/binary"
	"fmt"
	"math"
)

// Q4_K GEMMs in DotQ4_KQ8_KGemv's order: the products of a mixture-of-
// experts step. llama.cpp's mul_mat_id over a repacked Q4_K expert tensor
// (repack.cpp, forward_mul_mat_id) multiplies every routed activation row
// with ggml_gemv_q4_K_8x8_q8_K, one row at a time, whatever the group
// size; its super-block fold differs from the GEMM's (DotQ4_KQ8_K's) that
// mul_mat uses:
//
//	iacc   = sum over the 8 sub-blocks of scale*isum        (exact int32)
//	imin   = sum over the 8 sub-blocks of min*(bsum pair)   (exact int32)
//	acc    = fma(float(iacc), d*dx, acc)                     once per super-block
//	accMin = fma(float(imin), dmin*dx, accMin)               once per super-block
//	out    = acc - accMin
//
// The kernels here form those integers exactly as the DotQ4_KQ8_K-order
// GEMM does (the same per-call panels, 8 weight rows per 256-bit vector,
// or 16 per 512-bit one; VPMADDUBSW/VPMADDWD on AVX2, VPDPBUSD/VPDPWSSD on
// the VNNI sets) and differ only in that fold (asmgen's gemv flag), so
// every output has the bits of DotQ4_KQ8_KGemv(n, w_i, x_j): one weight
// panel unpacked once serves up to 4 (AVX2, AVX-VNNI) or 7 (AVX-512 VNNI,
// two panels per call) activation rows, where the single-row dot unpacks
// it again for each.
//
// Decode (m = 1) over raw rows runs 8-row kernels with the same fold
// straight from the weights (gemvQ4_KGQ8_K, gemvQ4_KGQ8_KV); over the
// load-time layout (PackQ4_KG, below) the GEMM kernels serve one row too.

// q4kgv16 and q4kgv8: the avx512vnni kernels (16 and 8 weight rows) by
// activation rows per call.
var (
	q4kgv16 = [q4kvMaxNX]q4kvKernel{gemmQ4_KGV16Q8_Kx1, gemmQ4_KGV16Q8_Kx2, gemmQ4_KGV16Q8_Kx3,
		gemmQ4_KGV16Q8_Kx4, gemmQ4_KGV16Q8_Kx5, gemmQ4_KGV16Q8_Kx6, gemmQ4_KGV16Q8_Kx7}
	q4kgv8 = [q4kvMaxNX]q4kvKernel{gemmQ4_KGV8Q8_Kx1, gemmQ4_KGV8Q8_Kx2, gemmQ4_KGV8Q8_Kx3,
		gemmQ4_KGV8Q8_Kx4, gemmQ4_KGV8Q8_Kx5, gemmQ4_KGV8Q8_Kx6, gemmQ4_KGV8Q8_Kx7}
)

var gemmQ4_KG = gemmKind{
	block: qkK, rows: panelQ4_KRows, panelB: panelQ4_KBlock, wB: bytesQ4_K, actB: bytesQ8_K,
	pack:    gemmPackQ4_K,
	kernels: [4]func(int, *byte, *byte, int, *float32, int){gemmQ4_KGQ8_Kx1, gemmQ4_KGQ8_Kx2, gemmQ4_KGQ8_Kx3, gemmQ4_KGQ8_Kx4},
	vex:     [4]func(int, *byte, *byte, int, *float32, int){gemmQ4_KGXQ8_Kx1, gemmQ4_KGXQ8_Kx2, gemmQ4_KGXQ8_Kx3, gemmQ4_KGXQ8_Kx4},
	gemv:    gemvQ4_KGQ8_K,
	gemvV:   gemvQ4_KGQ8_KV,
	v512:    gemmQ4_KGVNNI,
	generic: dotQ4_KQ8_KGemvGeneric,
}

// gemmQ4_KGVNNI is gemmKind.run's avx512vnni path for GemmQ4_KGemvQ8_K.
func gemmQ4_KGVNNI(nb int, w []byte, wStride, rows int, a []byte, aStride, m int, out []float32, outStride int, panel, pad []byte, tile []float32) {
	gemmQ4_KVNNISet(q4kvGemv, nb, w, wStride, rows, a, aStride, m, out, outStride, panel, pad, tile)
}

// GemmQ4_KGemvQ8_K is GemmQ4_KQ8_K in DotQ4_KQ8_KGemv's order:
// out[j*outStride+i] = DotQ4_KQ8_KGemv(n, w[i*wStride:], a[j*aStride:]),
// the bits of llama.cpp's mul_mat_id over a repacked Q4_K expert, for
// i < rows (any count: rows past the last 8 go through a zero-padded
// panel) and j < m. scratch must hold GemmScratchBytes(n) bytes.
func GemmQ4_KGemvQ8_K(n int, w []byte, wStride, rows int, a []byte, aStride, m int, out []float32, outStride int, scratch []byte) {
	g := &gemmQ4_KG
	nb := g.check("GemmQ4_KGemvQ8_K", n, w, wStride, rows, a, aStride, m, out, outStride, scratch)
	g.run(nb, w, wStride, rows, a, aStride, m, out, outStride, scratch)
}

// Load-time layout of Q4_K experts (PackQ4_KG): panels of 16 rows, per
// super-block 2368 bytes (the raw 2304 plus 4 bytes per row: the 6-bit
// scales and mins unpacked to bytes) laid out for the AVX-512 kernels to
// read in place (asmgen's vnni_q4kl.go):
//
//	panel p (rows 16p..16p+15), super-block b, at (p*nb + b)*2368:
//	  QS[g][k] at (8g+k)*64 (g < 4, k < 8): row r's raw quant bytes
//	           qs[32g+4k..32g+4k+3] at 4r (nibbles as stored: low ones of
//	           sub-block 2g, high ones of 2g+1)
//	  SCB[s]   at 2048+16s: byte r = scale[r][s];  MNB[s] at 2176+16s: min
//	  D        at 2304: f16 d of rows 0..15;        DMIN at 2336: f16 dmin
//
// The avx512vnni set multiplies it where it lies (gemmQ4_KGL16Q8_Kx*, m =
// 1 included: no repacking per call, no per-row unpacking); the other sets
// build the per-call 8-row panels of their kernels from it
// (gemmPackQ4_KL: a nibble split and widening, no transposes).
const (
	q4kgRows  = 16
	q4kgBlock = 148 * q4kgRows // bytes per super-block of a panel
	q4kgSCB   = 128 * q4kgRows
	q4kgMNB   = 136 * q4kgRows
	q4kgD     = 144 * q4kgRows
	q4kgDmin  = 146 * q4kgRows
)

// PackedQ4_KGBytes is the size of the load-time layout of the whole
// panels' rows (rows/16*16) of n-element Q4_K rows.
func PackedQ4_KGBytes(n, rows int) int {
	if n < 0 || n%qkK != 0 || rows < 0 {
		panic(fmt.Sprintf("simd: PackedQ4_KGBytes: n=%d rows=%d: n must be a non-negative multiple of %d", n, rows, qkK))
	}
	return rows / q4kgRows * (n / qkK) * q4kgBlock
}

// PackQ4_KG writes the load-time layout of the raw Q4_K rows w[i*wStride:]
// (i < rows, rows a multiple of 16) into dst (PackedQ4_KGBytes(n, rows)
// bytes); panels are independent.
func PackQ4_KG(n int, w []byte, wStride, rows int, dst []byte) {
	if rows%q4kgRows != 0 {
		panic(fmt.Sprintf("simd: PackQ4_KG: rows=%d is not a multiple of %d", rows, q4kgRows))
	}
	nb := n / qkK
	if need := PackedQ4_KGBytes(n, rows); len(dst) < need {
		panic(fmt.Sprintf("simd: PackQ4_KG: dst holds %d bytes, %d rows of %d elements need %d", len(dst), rows, n, need))
	}
	if rows > 0 && nb > 0 && (wStride < nb*bytesQ4_K || len(w) < (rows-1)*wStride+nb*bytesQ4_K) {
		panic(fmt.Sprintf("simd: PackQ4_KG: weights hold %d bytes at stride %d, %d rows of %d blocks need %d", len(w), wStride, rows, nb, (rows-1)*wStride+nb*bytesQ4_K))
	}
	for p := 0; p < rows/q4kgRows; p++ {
		for b := 0; b < nb; b++ {
			blk := dst[(p*nb+b)*q4kgBlock : (p*nb+b+1)*q4kgBlock]
			for r := 0; r < q4kgRows; r++ {
				src := w[(q4kgRows*p+r)*wStride+b*bytesQ4_K:][:bytesQ4_K]
				for c := 0; c < 32; c++ { // c = 8g+k
					copy(blk[c*4*q4kgRows+4*r:c*4*q4kgRows+4*r+4], src[16+4*c:16+4*c+4])
				}
				sc, mn := scaleMinK4(src[4:16])
				for s := range 8 {
					blk[q4kgSCB+q4kgRows*s+r] = sc[s]
					blk[q4kgMNB+q4kgRows*s+r] = mn[s]
				}
				copy(blk[q4kgD+2*r:q4kgD+2*r+2], src[0:2])
				copy(blk[q4kgDmin+2*r:q4kgDmin+2*r+2], src[2:4])
			}
		}
	}
}

// dotQ4_KGLGeneric is dotQ4_KQ8_KGemvGeneric for row r of the 16-row
// load-time panel at panel (PackQ4_KG): the same integers, the same folds.
func dotQ4_KGLGeneric(nb int, panel []byte, r int, x []byte) float32 {
	var acc, accMin float32
	for i := 0; i < nb; i++ {
		blk := panel[i*q4kgBlock : (i+1)*q4kgBlock]
		bx := x[i*bytesQ8_K : (i+1)*bytesQ8_K]
		d8 := math.Float32frombits(binary.LittleEndian.Uint32(bx[0:4]))
		dd := float32(f16At(blk, q4kgD+2*r) * d8)
		dmd := float32(f16At(blk, q4kgDmin+2*r) * d8)
		var iacc, imin int32
		for g := range 4 {
			var s0, s1 int32
			for k := range 8 {
				q := blk[(8*g+k)*4*q4kgRows+4*r:]
				for e := range 4 {
					s0 += int32(q[e]&0x0f) * int32(int8(bx[4+64*g+4*k+e]))
					s1 += int32(q[e]>>4) * int32(int8(bx[4+64*g+32+4*k+e]))
				}
			}
			sc0, sc1 := int32(blk[q4kgSCB+q4kgRows*2*g+r]), int32(blk[q4kgSCB+q4kgRows*(2*g+1)+r])
			mn0, mn1 := int32(blk[q4kgMNB+q4kgRows*2*g+r]), int32(blk[q4kgMNB+q4kgRows*(2*g+1)+r])
			iacc += sc0*s0 + sc1*s1
			imin += mn0*(bsumK(bx, 4*g)+bsumK(bx, 4*g+1)) + mn1*(bsumK(bx, 4*g+2)+bsumK(bx, 4*g+3))
		}
		acc = fma32(float32(iacc), dd, acc)
		accMin = fma32(float32(imin), dmd, accMin)
	}
	return acc - accMin
}

// q4kgl16: the avx512vnni kernels over a load-time panel, by activation
// rows per call.
var q4kgl16 = [q4kvMaxNX]q4kvKernel{gemmQ4_KGL16Q8_Kx1, gemmQ4_KGL16Q8_Kx2, gemmQ4_KGL16Q8_Kx3,
	gemmQ4_KGL16Q8_Kx4, gemmQ4_KGL16Q8_Kx5, gemmQ4_KGL16Q8_Kx6, gemmQ4_KGL16Q8_Kx7}

// GemmQ4_KGemvPacked is GemmQ4_KGemvQ8_K over the load-time layout
// (PackQ4_KG; rows a multiple of 16), every m: the same bits.
func GemmQ4_KGemvPacked(n int, panels []byte, rows int, a []byte, aStride, m int, out []float32, outStride int, scratch []byte) {
	const fn = "GemmQ4_KGemvPacked"
	if n < 0 || n%qkK != 0 || rows < 0 || rows%q4kgRows != 0 || m < 0 {
		panic(fmt.Sprintf("simd: %s: n=%d rows=%d m=%d: need n a multiple of %d, rows of %d", fn, n, rows, m, qkK, q4kgRows))
	}
	nb := n / qkK
	if rows == 0 || m == 0 {
		return
	}
	if need := PackedQ4_KGBytes(n, rows); len(panels) < need {
		panic(fmt.Sprintf("simd: %s: panels hold %d bytes, %d rows of %d elements need %d", fn, len(panels), rows, n, need))
	}
	checkGemmRest(fn, n, nb, bytesQ8_K, a, aStride, m, rows, out, outStride, scratch)
	if nb == 0 {
		for j := range m {
			clear(out[j*outStride : j*outStride+rows])
		}
		return
	}
	pb := nb * q4kgBlock // bytes per panel
	if !fast.Load() {
		for r0 := 0; r0 < rows; r0 += q4kgRows {
			for r := range q4kgRows {
				for j := range m {
					out[j*outStride+r0+r] = dotQ4_KGLGeneric(nb, panels[r0/q4kgRows*pb:], r, a[j*aStride:])
				}
			}
		}
		return
	}
	if vnni.Load() {
		for r0 := 0; r0 < rows; r0 += q4kgRows {
			for j := 0; j < m; j += q4kvMaxNX {
				nx := min(q4kvMaxNX, m-j)
				q4kgl16[nx-1](nb, &panels[r0/q4kgRows*pb], 0, &a[j*aStride], aStride, &out[j*outStride+r0], outStride)
			}
		}
		return
	}
	kernels := gemmQ4_KG.vexKernels()
	buf := scratch[:nb*panelQ4_KBlock]
	for r0 := 0; r0 < rows; r0 += q4kgRows {
		for h := range 2 {
			gemmPackQ4_KL(nb, &panels[r0/q4kgRows*pb], h, &buf[0])
			for j := 0; j < m; j += 4 {
				nx := min(4, m-j)
				kernels[nx-1](nb, &buf[0], &a[j*aStride], aStride, &out[j*outStride+r0+8*h], outStride)
			}
		}
	}
}
