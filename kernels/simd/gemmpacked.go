package simd

import (
	"encoding/binary"
	"fmt"
	"unsafe"
)

// Load-time panels (Q8_0, Q4_0; Q4_K's layout is at the end of the file).
//
// The per-call GEMMs (GemmQ8_0Q8_0, GemmQ4_0Q8_0) repack every panel on
// every call: in a 128-token prefill that repacking is a tenth (Q8_0) to a
// sixth (Q4_0) of the time, and single-row decode cannot use panels at
// all. PackQ8_0 and PackQ4_0 instead rewrite a whole matrix once, when the
// model is loaded (as llama.cpp repacks Q4_0 into q4_0_8x8 at load), into
// panels the kernels read as they are, for every batch size, decode
// included. Both layouts take exactly the bytes of the raw rows they
// replace, so no memory is added, and decode streams one contiguous run
// of bytes per worker instead of 8 interleaved rows:
//
//	Q8_0, panel p (rows 8p..8p+7), block b, at (p*nb + b)*272:
//	  W_j at 32j (j = 0..7):  lane r = q[8p+r][4j..4j+3]   (4 int8)   256 B
//	  dw at 256:              fp16 d of rows 8p..8p+7                  16 B
//	Q4_0, panel p (rows 16p..16p+15), block b, at (p*nb + b)*288:
//	  P_k at 32k (k = 0..7):  byte 4r+e = element 4k+e of row 16p+r (low
//	                          nibble) and of row 16p+8+r (high)         256 B
//	  dw at 256:              fp16 d of rows 16p..16p+15               32 B
//
// The Q8_0 kernels take |w| with VPABSB (the per-call panel stores it) and
// compute the chunk's scales s_p = dw*dx_p into the caller's scratch; the
// Q4_0 kernels split each P_k into the per-call panel's V[k][0] and V[k][1]
// with a mask and a shift. The arithmetic, and so every bit of every
// output, is the per-call GEMM's (llama.cpp's orders, see gemm.go).

// packedQ8_0Block is the Q8_0 load-time panel bytes per block (8 rows).
const packedQ8_0Block = 8 * bytesQ8_0

// packedKind is one weight type's load-time layout.
type packedKind struct {
	rows    int // panel rows
	wB      int // raw bytes per block and row
	kernels [4]func(nb int, panel *byte, x *byte, xStride int, out *float32, outStride int, sc *float32)
	// vex: the kernels of the avxvnni set; v512: the whole product on the
	// avx512vnni set (gemmvnni.go; pb bytes per panel).
	vex     [4]func(nb int, panel *byte, x *byte, xStride int, out *float32, outStride int, sc *float32)
	v512    func(nb int, panels []byte, pb, rows int, a []byte, aStride, m int, out []float32, outStride int)
	packBlk func(blk []byte, rows [][]byte, b int)          // one block of a panel from its raw rows
	packAsm func(nb int, w *byte, wStride int, panel *byte) // a whole panel, or nil
	generic func(nb int, panel []byte, r int, a []byte) float32
	actB    int // prepared activation bytes per block (of a whole row)
}

var (
	packedQ8_0 = packedKind{rows: 8, wB: bytesQ8_0, actB: gemmActQ8_0Q8_0Row,
		kernels: [4]func(int, *byte, *byte, int, *float32, int, *float32){
			gemmQ8_0PQ8_0x1, gemmQ8_0PQ8_0x2, gemmQ8_0PQ8_0x3, gemmQ8_0PQ8_0x4},
		vex: [4]func(int, *byte, *byte, int, *float32, int, *float32){
			gemmQ8_0PXQ8_0x1, gemmQ8_0PXQ8_0x2, gemmQ8_0PXQ8_0x3, gemmQ8_0PXQ8_0x4},
		v512:    gemmQ8_0PackedVNNI,
		packBlk: packBlockQ8_0, packAsm: gemmPackQ8_0P, generic: gemmQ8_0PackedGeneric}
	packedQ4_0 = packedKind{rows: 16, wB: bytesQ4_0, actB: gemmActQ4_0Q8_0Block,
		kernels: [4]func(int, *byte, *byte, int, *float32, int, *float32){
			q40p(gemmQ4_0PQ8_0x1), q40p(gemmQ4_0PQ8_0x2), q40p(gemmQ4_0PQ8_0x3), q40p(gemmQ4_0PQ8_0x4)},
		vex: [4]func(int, *byte, *byte, int, *float32, int, *float32){
			q40p(gemmQ4_0PXQ8_0x1), q40p(gemmQ4_0PXQ8_0x2), q40p(gemmQ4_0PXQ8_0x3), q40p(gemmQ4_0PXQ8_0x4)},
		v512:    gemmQ4_0PackedVNNI,
		packBlk: packBlockQ4_0, generic: gemmQ4_0PackedGeneric}
)

// q40p adapts a Q4_0 load-time kernel (no scale scratch) to packedKind's
// signature.
func q40p(k func(int, *byte, *byte, int, *float32, int)) func(int, *byte, *byte, int, *float32, int, *float32) {
	return func(nb int, panel *byte, x *byte, xStride int, out *float32, outStride int, _ *float32) {
		k(nb, panel, x, xStride, out, outStride)
	}
}

// PackedQ8_0Bytes is the size of the panels of the whole panels' rows
// (rows/8*8) of a matrix of rows rows of n elements (the size of those
// rows in raw Q8_0); the rest stay in raw form.
func PackedQ8_0Bytes(n, rows int) int { return packedQ8_0.bytes("PackedQ8_0Bytes", n, rows) }

// PackedQ4_0Bytes is PackedQ8_0Bytes for Q4_0 (panels of 16 rows).
func PackedQ4_0Bytes(n, rows int) int { return packedQ4_0.bytes("PackedQ4_0Bytes", n, rows) }

func (k *packedKind) bytes(fn string, n, rows int) int {
	if n < 0 || n%qk != 0 || rows < 0 {
		panic(fmt.Sprintf("simd: %s: n=%d rows=%d: n must be a non-negative multiple of %d", fn, n, rows, qk))
	}
	return rows / k.rows * k.rows * (n / qk) * k.wB
}

// PackQ8_0 writes the panels of the raw Q8_0 rows w[i*wStride:] (i < rows,
// rows a multiple of 8, n elements each) into dst (PackedQ8_0Bytes(n,
// rows) bytes); see GemmQ8_0Packed. Panels are independent: packing rows
// [8a, 8b) writes dst[a*nb*272 : b*nb*272] only, so callers may split the
// work by panels.
func PackQ8_0(n int, w []byte, wStride, rows int, dst []byte) {
	packedQ8_0.pack("PackQ8_0", n, w, wStride, rows, dst)
}

// PackQ4_0 is PackQ8_0 for Q4_0 rows (rows a multiple of 16; see
// GemmQ4_0Packed).
func PackQ4_0(n int, w []byte, wStride, rows int, dst []byte) {
	packedQ4_0.pack("PackQ4_0", n, w, wStride, rows, dst)
}

func (k *packedKind) pack(fn string, n int, w []byte, wStride, rows int, dst []byte) {
	if rows%k.rows != 0 {
		panic(fmt.Sprintf("simd: %s: rows=%d is not a multiple of %d", fn, rows, k.rows))
	}
	nb := n / qk
	if need := k.bytes(fn, n, rows); len(dst) < need {
		panic(fmt.Sprintf("simd: %s: dst holds %d bytes, %d rows of %d elements need %d", fn, len(dst), rows, n, need))
	}
	if rows > 0 && nb > 0 && (wStride < nb*k.wB || len(w) < (rows-1)*wStride+nb*k.wB) {
		panic(fmt.Sprintf("simd: %s: weights hold %d bytes at stride %d, %d rows of %d blocks need %d", fn, len(w), wStride, rows, nb, (rows-1)*wStride+nb*k.wB))
	}
	pb := k.rows * k.wB // panel bytes per block
	if k.packAsm != nil && fast.Load() && nb > 0 {
		for p := 0; p < rows/k.rows; p++ {
			k.packAsm(nb, &w[k.rows*p*wStride], wStride, &dst[p*nb*pb])
		}
		return
	}
	src := make([][]byte, k.rows)
	for p := 0; p < rows/k.rows; p++ {
		for r := range src {
			src[r] = w[(k.rows*p+r)*wStride:]
		}
		for b := 0; b < nb; b++ {
			k.packBlk(dst[(p*nb+b)*pb:(p*nb+b+1)*pb], src, b)
		}
	}
}

// packBlockQ8_0 writes block b of 8 raw Q8_0 rows in the load-time layout
// (4-byte groups moved as words: loading a 7B model repacks gigabytes).
func packBlockQ8_0(blk []byte, rows [][]byte, b int) {
	for r, row := range rows {
		src := row[b*bytesQ8_0 : (b+1)*bytesQ8_0]
		blk[256+2*r], blk[257+2*r] = src[0], src[1]
		for j := 0; j < 8; j++ {
			binary.LittleEndian.PutUint32(blk[32*j+4*r:], binary.LittleEndian.Uint32(src[2+4*j:]))
		}
	}
}

// packBlockQ4_0 writes block b of 16 raw Q4_0 rows in the load-time layout:
// word k of lane r holds elements 4k..4k+3 of row r (low nibbles) and of
// row 8+r (high). A raw block's elements 4k..4k+3 are the low (k < 4) or
// high (k >= 4) nibbles of quant bytes 4(k%4)..4(k%4)+3.
func packBlockQ4_0(blk []byte, rows [][]byte, b int) {
	const m4 = 0x0f0f0f0f
	for r := 0; r < 8; r++ {
		lo := rows[r][b*bytesQ4_0 : (b+1)*bytesQ4_0]
		hi := rows[8+r][b*bytesQ4_0 : (b+1)*bytesQ4_0]
		for k := 0; k < 8; k++ {
			sh := 4 * (k / 4)
			wl := binary.LittleEndian.Uint32(lo[2+4*(k%4):]) >> sh & m4
			wh := binary.LittleEndian.Uint32(hi[2+4*(k%4):]) >> sh & m4
			binary.LittleEndian.PutUint32(blk[32*k+4*r:], wl|wh<<4)
		}
		blk[256+2*r], blk[257+2*r] = lo[0], lo[1]
		blk[272+2*r], blk[273+2*r] = hi[0], hi[1]
	}
}

// GemmQ8_0Packed is GemmQ8_0Q8_0 over load-time panels: out[j*outStride+i]
// = DotQ8_0Q8_0(n, row i, x_j) for the rows (a multiple of 8) that
// PackQ8_0 wrote into panels, activation rows in GemmActQ8_0Q8_0 form, for
// every m (m = 1 is decode). The bits are GemmQ8_0Q8_0's. scratch needs
// GemmScratchBytes(n) bytes.
func GemmQ8_0Packed(n int, panels []byte, rows int, a []byte, aStride, m int, out []float32, outStride int, scratch []byte) {
	packedQ8_0.gemm("GemmQ8_0Packed", n, panels, rows, a, aStride, m, out, outStride, scratch)
}

// GemmQ4_0Packed is GemmQ8_0Packed for Q4_0 panels (PackQ4_0; rows a
// multiple of 16) and activations in GemmActQ4_0Q8_0 form: the bits of
// GemmQ4_0Q8_0 (llama.cpp's q4_0_8x8 order).
func GemmQ4_0Packed(n int, panels []byte, rows int, a []byte, aStride, m int, out []float32, outStride int, scratch []byte) {
	packedQ4_0.gemm("GemmQ4_0Packed", n, panels, rows, a, aStride, m, out, outStride, scratch)
}

func (k *packedKind) gemm(fn string, n int, panels []byte, rows int, a []byte, aStride, m int, out []float32, outStride int, scratch []byte) {
	if n < 0 || n%qk != 0 || rows < 0 || rows%k.rows != 0 || m < 0 {
		panic(fmt.Sprintf("simd: %s: n=%d rows=%d m=%d: need n a multiple of %d, rows of %d", fn, n, rows, m, qk, k.rows))
	}
	nb := n / qk
	if rows == 0 || m == 0 {
		return
	}
	if need := k.bytes(fn, n, rows); len(panels) < need {
		panic(fmt.Sprintf("simd: %s: panels hold %d bytes, %d rows of %d elements need %d", fn, len(panels), rows, n, need))
	}
	checkGemmRest(fn, n, nb, k.actB, a, aStride, m, rows, out, outStride, scratch)
	if nb == 0 {
		for j := range m {
			clear(out[j*outStride : j*outStride+rows])
		}
		return
	}
	pb := nb * k.rows * k.wB // bytes per panel
	if !fast.Load() {
		for j := range m {
			x := a[j*aStride:]
			for i := range rows {
				out[j*outStride+i] = k.generic(nb, panels[i/k.rows*pb:], i%k.rows, x)
			}
		}
		return
	}
	if k.v512 != nil && vnni.Load() {
		k.v512(nb, panels, pb, rows, a, aStride, m, out, outStride)
		return
	}
	// The Q8_0 kernels' scale area: q80Chunk blocks of 4 rows' 8 float32
	// (at most 128*min(16, nb) bytes, within GemmScratchBytes).
	sc := (*float32)(unsafe.Pointer(&scratch[0]))
	kernels := &k.kernels
	if vexVNNI.Load() {
		kernels = &k.vex
	}
	for r0 := 0; r0 < rows; r0 += k.rows {
		panel := &panels[r0/k.rows*pb]
		for j := 0; j < m; j += 4 {
			nx := min(4, m-j)
			kernels[nx-1](nb, panel, &a[j*aStride], aStride, &out[j*outStride+r0], outStride, sc)
		}
	}
}

// gemmQ4_0PackedGeneric is gemmQ4_0Q8_0Generic for row r of a load-time
// Q4_0 panel: the raw row's quant bytes rebuilt from the nibbles, the same
// integer sum and fold.
func gemmQ4_0PackedGeneric(nb int, panel []byte, r int, a []byte) float32 {
	var sumf float32
	var qs [16]byte
	g, rr := r/8, r%8
	for ib := 0; ib < nb; ib++ {
		blk := panel[ib*16*bytesQ4_0 : (ib+1)*16*bytesQ4_0]
		ba := a[ib*gemmActQ4_0Q8_0Block : (ib+1)*gemmActQ4_0Q8_0Block]
		for e := 0; e < 32; e++ {
			v := blk[32*(e/4)+4*rr+e%4] >> (4 * g) & 15
			if e < 16 {
				qs[e] = qs[e]&0xf0 | v
			} else {
				qs[e-16] = qs[e-16]&0x0f | v<<4
			}
		}
		sumi := isumQ4_0(qs[:], ba[:32])
		s := float32(f16At(blk, 256+2*r) * getF32(ba[32:]))
		sumf = fma32(float32(sumi), s, sumf)
	}
	return sumf
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

// Load-time Q4_K layout: the raw super-blocks, reordered so that a panel's
// 8 rows' super-block b lie together (raw size, one stream per worker):
//
//	panel p (rows 8p..8p+7), super-block b, at (p*nb + b)*1152:
//	  row 8p+r's 144-byte super-block b at 144r
//
// Decode runs gemvQ4_KQ8_K's arithmetic over it (gemvQ4_KQ8_KI), batches
// the per-call panel packer reading it (gemmPackQ4_KI) and the usual
// kernels: the bits of GemmQ4_KQ8_K.

// PackedQ4_KBytes is the size of the load-time layout of the whole
// panels' rows (rows/8*8) of n-element Q4_K rows (their raw size).
func PackedQ4_KBytes(n, rows int) int {
	if n < 0 || n%qkK != 0 || rows < 0 {
		panic(fmt.Sprintf("simd: PackedQ4_KBytes: n=%d rows=%d: n must be a non-negative multiple of %d", n, rows, qkK))
	}
	return rows / 8 * 8 * (n / qkK) * bytesQ4_K
}

// PackQ4_K writes the load-time layout of the raw Q4_K rows w[i*wStride:]
// (i < rows, rows a multiple of 8) into dst (PackedQ4_KBytes(n, rows)
// bytes); panels are independent, as for PackQ8_0.
func PackQ4_K(n int, w []byte, wStride, rows int, dst []byte) {
	if rows%8 != 0 {
		panic(fmt.Sprintf("simd: PackQ4_K: rows=%d is not a multiple of 8", rows))
	}
	nb := n / qkK
	if need := PackedQ4_KBytes(n, rows); len(dst) < need {
		panic(fmt.Sprintf("simd: PackQ4_K: dst holds %d bytes, %d rows of %d elements need %d", len(dst), rows, n, need))
	}
	if rows > 0 && nb > 0 && (wStride < nb*bytesQ4_K || len(w) < (rows-1)*wStride+nb*bytesQ4_K) {
		panic(fmt.Sprintf("simd: PackQ4_K: weights hold %d bytes at stride %d, %d rows of %d blocks need %d", len(w), wStride, rows, nb, (rows-1)*wStride+nb*bytesQ4_K))
	}
	for p := 0; p < rows/8; p++ {
		for b := 0; b < nb; b++ {
			for r := 0; r < 8; r++ {
				src := w[(8*p+r)*wStride+b*bytesQ4_K:]
				copy(dst[((p*nb+b)*8+r)*bytesQ4_K:((p*nb+b)*8+r+1)*bytesQ4_K], src[:bytesQ4_K])
			}
		}
	}
}

// GemmQ4_KPacked is GemmQ4_KQ8_K over the load-time layout (PackQ4_K;
// rows a multiple of 8), activations Q8_K rows as they are, every m: the
// same bits.
func GemmQ4_KPacked(n int, panels []byte, rows int, a []byte, aStride, m int, out []float32, outStride int, scratch []byte) {
	const fn = "GemmQ4_KPacked"
	if n < 0 || n%qkK != 0 || rows < 0 || rows%8 != 0 || m < 0 {
		panic(fmt.Sprintf("simd: %s: n=%d rows=%d m=%d: need n a multiple of %d, rows of 8", fn, n, rows, m, qkK))
	}
	nb := n / qkK
	if rows == 0 || m == 0 {
		return
	}
	if need := PackedQ4_KBytes(n, rows); len(panels) < need {
		panic(fmt.Sprintf("simd: %s: panels hold %d bytes, %d rows of %d elements need %d", fn, len(panels), rows, n, need))
	}
	checkGemmRest(fn, n, nb, bytesQ8_K, a, aStride, m, rows, out, outStride, scratch)
	if nb == 0 {
		for j := range m {
			clear(out[j*outStride : j*outStride+rows])
		}
		return
	}
	pb := nb * 8 * bytesQ4_K // bytes per panel
	if !fast.Load() {
		row := scratch[:nb*bytesQ4_K] // a panel row gathered back into raw form
		for r0 := 0; r0 < rows; r0 += 8 {
			panel := panels[r0/8*pb:]
			for r := range 8 {
				for b := range nb {
					copy(row[b*bytesQ4_K:(b+1)*bytesQ4_K], panel[(b*8+r)*bytesQ4_K:])
				}
				for j := range m {
					out[j*outStride+r0+r] = dotQ4_KQ8_KGeneric(nb, row, a[j*aStride:])
				}
			}
		}
		return
	}
	if m > 1 && vnni.Load() {
		gemmQ4_KPackedVNNI(q4kvDot, nb, panels, pb, rows, a, aStride, m, out, outStride, scratch[:2*nb*panelQ4_KBlock])
		return
	}
	g := &gemmQ4_K
	kernels := g.vexKernels()
	buf := scratch[:nb*g.panelB]
	for r0 := 0; r0 < rows; r0 += 8 {
		panel := &panels[r0/8*pb]
		if m == 1 {
			switch {
			case vnni.Load():
				gemvQ4_KQ8_KIV(nb, panel, bytesQ4_K, &a[0], &out[r0])
			case vexVNNI.Load():
				gemvQ4_KXQ8_KI(nb, panel, bytesQ4_K, &a[0], &out[r0])
			default:
				gemvQ4_KQ8_KI(nb, panel, bytesQ4_K, &a[0], &out[r0])
			}
			continue
		}
		gemmPackQ4_KI(nb, panel, bytesQ4_K, &buf[0])
		for j := 0; j < m; j += 4 {
			nx := min(4, m-j)
			kernels[nx-1](nb, &buf[0], &a[j*aStride], aStride, &out[j*outStride+r0], outStride)
		}
	}
}
