package simd

import (
	"fmt"
	"unsafe"
)

// Load-time Q8_0 panels.
//
// The per-call GEMM (GemmQ8_0Q8_0) repacks every 8-row panel on every call:
// in a 128-token prefill of a Q8_0 model that repacking is about a tenth
// of the time, and single-row decode cannot use panels at all. PackQ8_0
// instead rewrites a whole matrix once, when the model is loaded (as
// llama.cpp repacks Q4_0 into q4_0_8x8 at load), into panels the kernels
// read as they are, for every batch size, decode included:
//
//	panel p (rows 8p..8p+7), block b, at (p*nb + b)*272:
//	  W_j at 32j (j = 0..7):  lane r = q[8p+r][4j..4j+3]   (4 int8)   256 B
//	  dw at 256:              fp16 d of rows 8p..8p+7                  16 B
//
// 272 bytes per 8 row-blocks is exactly the raw rows' 8*34: no memory is
// added, and decode streams one contiguous run of bytes per worker instead
// of 8 interleaved rows. The kernels take |w| with VPABSB (the per-call
// panel stores it) and compute the chunk's scales s_p = dw*dx_p into the
// caller's scratch; the arithmetic, and so every bit of every output, is
// GemmQ8_0Q8_0's (llama.cpp's 8-lane order, see gemm.go).

// packedQ8_0Block is the load-time panel bytes per block (8 rows).
const packedQ8_0Block = 8 * bytesQ8_0

// PackedQ8_0Rows is the number of rows PackQ8_0 packs of a matrix of rows
// rows: the whole panels (a multiple of 8). The rest stay in raw form.
func PackedQ8_0Rows(rows int) int { return rows / 8 * 8 }

// PackedQ8_0Bytes is the size of the panels of PackedQ8_0Rows(rows) rows
// of n elements (the size of those rows in raw Q8_0).
func PackedQ8_0Bytes(n, rows int) int {
	if n < 0 || n%qk != 0 || rows < 0 {
		panic(fmt.Sprintf("simd: PackedQ8_0Bytes: n=%d rows=%d: n must be a non-negative multiple of %d", n, rows, qk))
	}
	return PackedQ8_0Rows(rows) / 8 * (n / qk) * packedQ8_0Block
}

// PackQ8_0 writes the panels of the raw Q8_0 rows w[i*wStride:] (i < rows,
// rows a multiple of 8, n elements each) into dst (PackedQ8_0Bytes(n,
// rows) bytes); see GemmQ8_0Packed. Panels are independent: packing rows
// [8a, 8b) writes dst[a*nb*272 : b*nb*272] only, so callers may split the
// work by panels.
func PackQ8_0(n int, w []byte, wStride, rows int, dst []byte) {
	if rows%8 != 0 {
		panic(fmt.Sprintf("simd: PackQ8_0: rows=%d is not a multiple of 8", rows))
	}
	nb := n / qk
	if need := PackedQ8_0Bytes(n, rows); len(dst) < need {
		panic(fmt.Sprintf("simd: PackQ8_0: dst holds %d bytes, %d rows of %d elements need %d", len(dst), rows, n, need))
	}
	if rows > 0 && nb > 0 && (wStride < nb*bytesQ8_0 || len(w) < (rows-1)*wStride+nb*bytesQ8_0) {
		panic(fmt.Sprintf("simd: PackQ8_0: weights hold %d bytes at stride %d, %d rows of %d blocks need %d", len(w), wStride, rows, nb, (rows-1)*wStride+nb*bytesQ8_0))
	}
	for p := 0; p < rows/8; p++ {
		for b := 0; b < nb; b++ {
			blk := dst[(p*nb+b)*packedQ8_0Block : (p*nb+b+1)*packedQ8_0Block]
			for r := 0; r < 8; r++ {
				src := w[(8*p+r)*wStride+b*bytesQ8_0 : (8*p+r)*wStride+(b+1)*bytesQ8_0]
				blk[256+2*r], blk[257+2*r] = src[0], src[1]
				for j := 0; j < 8; j++ {
					copy(blk[32*j+4*r:32*j+4*r+4], src[2+4*j:6+4*j])
				}
			}
		}
	}
}

// GemmQ8_0Packed is GemmQ8_0Q8_0 over load-time panels: out[j*outStride+i]
// = DotQ8_0Q8_0(n, row i, x_j) for the rows (a multiple of 8) that
// PackQ8_0 wrote into panels, activation rows in GemmActQ8_0Q8_0 form, for
// every m (m = 1 is decode). The bits are GemmQ8_0Q8_0's. scratch needs
// GemmScratchBytes(n) bytes.
func GemmQ8_0Packed(n int, panels []byte, rows int, a []byte, aStride, m int, out []float32, outStride int, scratch []byte) {
	if n < 0 || n%qk != 0 || rows < 0 || rows%8 != 0 || m < 0 {
		panic(fmt.Sprintf("simd: GemmQ8_0Packed: n=%d rows=%d m=%d: need n a multiple of %d, rows of 8", n, rows, m, qk))
	}
	nb := n / qk
	if rows == 0 || m == 0 {
		return
	}
	if len(panels) < PackedQ8_0Bytes(n, rows) {
		panic(fmt.Sprintf("simd: GemmQ8_0Packed: panels hold %d bytes, %d rows of %d elements need %d", len(panels), rows, n, PackedQ8_0Bytes(n, rows)))
	}
	if aStride < nb*gemmActQ8_0Q8_0Block || len(a) < (m-1)*aStride+nb*gemmActQ8_0Q8_0Block {
		panic(fmt.Sprintf("simd: GemmQ8_0Packed: activations hold %d bytes at stride %d, %d rows of %d blocks need %d", len(a), aStride, m, nb, (m-1)*aStride+nb*gemmActQ8_0Q8_0Block))
	}
	if outStride < rows || len(out) < (m-1)*outStride+rows {
		panic(fmt.Sprintf("simd: GemmQ8_0Packed: out holds %d floats at stride %d, %d rows of %d need %d", len(out), outStride, m, rows, (m-1)*outStride+rows))
	}
	if len(scratch) < GemmScratchBytes(n) {
		panic(fmt.Sprintf("simd: GemmQ8_0Packed: scratch holds %d bytes, need %d", len(scratch), GemmScratchBytes(n)))
	}
	if nb == 0 {
		for j := range m {
			clear(out[j*outStride : j*outStride+rows])
		}
		return
	}
	pb := nb * packedQ8_0Block
	if !fast.Load() {
		for j := range m {
			x := a[j*aStride:]
			for i := range rows {
				out[j*outStride+i] = gemmQ8_0PackedGeneric(nb, panels[i/8*pb:], i%8, x)
			}
		}
		return
	}
	// The kernels' scale area: q80Chunk blocks of 4 rows' 8 float32.
	sc := (*float32)(unsafe.Pointer(&scratch[0]))
	kernels := [4]func(int, *byte, *byte, int, *float32, int, *float32){
		gemmQ8_0PQ8_0x1, gemmQ8_0PQ8_0x2, gemmQ8_0PQ8_0x3, gemmQ8_0PQ8_0x4}
	for r0 := 0; r0 < rows; r0 += 8 {
		panel := &panels[r0/8*pb]
		for j := 0; j < m; j += 4 {
			nx := min(4, m-j)
			kernels[nx-1](nb, panel, &a[j*aStride], aStride, &out[j*outStride+r0], outStride, sc)
		}
	}
}

// gemmQ8_0PackedGeneric is gemmQ8_0Q8_0Generic for row r of a load-time
// panel: the same integer sums, lanes and hsum8.
func gemmQ8_0PackedGeneric(nb int, panel []byte, r int, a []byte) float32 {
	var l [8]float32
	for ib := 0; ib < nb; ib++ {
		blk := panel[ib*packedQ8_0Block : (ib+1)*packedQ8_0Block]
		ba := a[ib*gemmActQ8_0Q8_0Block : (ib+1)*gemmActQ8_0Q8_0Block]
		s := float32(f16At(blk, 256+2*r) * getF32(ba[32:]))
		for j := range 8 {
			var sumi int32
			for k := range 4 {
				sumi += int32(int8(blk[32*j+4*r+k])) * int32(int8(ba[4*j+k]))
			}
			l[j] = fma32(s, float32(sumi), l[j])
		}
	}
	return hsum8(&l)
}
