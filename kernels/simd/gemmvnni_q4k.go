package simd

// Q4_K on the avx512vnni set (GemmQ4_KPacked and GemmQ4_KQ8_K, m > 1;
// decode stays on gemvQ4_KQ8_K(I)).
//
// Shapes: every call still packs 8-row per-call panels (gemmPackQ4_K(I),
// 2624 bytes per super-block, layout in internal/asmgen/kquant.go), two of
// them one after the other in the scratch (GemmScratchBytes leaves 5376
// bytes per super-block for that area), and a kernel takes both: one ZMM
// holds a panel vector of the first panel (low 256 bits) and of the second
// (VINSERTI64X4), so every instruction works on 16 weight rows, against
// up to 7 activation rows per call (4 ZMM registers each: acc, accMin and
// the two sub-block sums of the current group). An odd last panel runs the
// same kernel on YMM registers (EVEX-encoded, 8 rows).
//
// The integer trick: per 32-element sub-block s and activation row,
//
//	T_s = sum_k VPDPBUSD(V[s][k], bcast q8 quad)     nibbles (u8) x q8 (s8)
//
// is sum(nib*q8) over the sub-block, exact in int32 (|T_s| <= 32*15*128);
// the group's I_g = T_2g*scale_2g + T_2g+1*scale_2g+1 follows with VPMULLD
// and VPADDD, and the mins' M_g with two VPDPWSSD of the int16 (min, min)
// pairs and the bsum pairs. The AVX2 kernel reaches the same integers
// through int16 pair sums (VPMADDUBSW, VPADDW) and VPMADDWD: I_g and M_g
// are exact sums of products whichever instructions add them.
//
// Same bits as the AVX2 kernels (gemmQ4_KQ8_Kx1..4): from those integers
// on, the float operations are kernelQ4_K's, one for one: d*dx and
// dmin*dx as one float32 product each, acc = fma(float(I_g), d*dx, acc)
// for g = 0..3 in order per super-block, accMin = fma(float(M_g),
// dmin*dx, accMin) likewise (its chain runs before acc's here; the two are
// independent), and out = acc - accMin. The tests run every GEMM shape
// under each kernel set against the generic single-row dot, bit for bit.

// q4kvKernel is the signature of the Q4_K VNNI kernels.
type q4kvKernel = func(nb int, panel *byte, panelStride int, x *byte, xStride int, out *float32, outStride int)

// q4kvMaxNX is the most activation rows one Q4_K VNNI call takes.
const q4kvMaxNX = 7

// q4kv16 and q4kv8: the Q4_K VNNI kernels for 16 rows (two panels) and 8
// rows (one), by activation rows per call (1..7).
var (
	q4kv16 = [q4kvMaxNX]q4kvKernel{gemmQ4_KV16Q8_Kx1, gemmQ4_KV16Q8_Kx2, gemmQ4_KV16Q8_Kx3,
		gemmQ4_KV16Q8_Kx4, gemmQ4_KV16Q8_Kx5, gemmQ4_KV16Q8_Kx6, gemmQ4_KV16Q8_Kx7}
	q4kv8 = [q4kvMaxNX]q4kvKernel{gemmQ4_KV8Q8_Kx1, gemmQ4_KV8Q8_Kx2, gemmQ4_KV8Q8_Kx3,
		gemmQ4_KV8Q8_Kx4, gemmQ4_KV8Q8_Kx5, gemmQ4_KV8Q8_Kx6, gemmQ4_KV8Q8_Kx7}
)

// Two per-call Q4_K panels fit in GemmScratchBytes's panel area (8 units
// of 32 elements per super-block); this fails to compile otherwise.
const _ = uint(8*gemmMaxPanelB - 2*panelQ4_KBlock)

// q4kvSet is one summation order's Q4_K VNNI kernels: 16 rows (two
// panels) and 8 rows (one), by activation rows per call.
type q4kvSet struct{ k16, k8 *[q4kvMaxNX]q4kvKernel }

// q4kvDot is DotQ4_KQ8_K's order, q4kvGemv DotQ4_KQ8_KGemv's (gemmq4kg.go).
var (
	q4kvDot  = q4kvSet{&q4kv16, &q4kv8}
	q4kvGemv = q4kvSet{&q4kgv16, &q4kgv8}
)

// q4kvRows runs the 16-row (two panels, the second at ps bytes after the
// first) or 8-row kernels of set ks over the packed panels at buf against
// all m activation rows.
func q4kvRows(ks q4kvSet, nb int, buf []byte, ps int, two bool, a []byte, aStride, m int, out []float32, outStride int) {
	k := ks.k8
	if two {
		k = ks.k16
	}
	for j := 0; j < m; j += q4kvMaxNX {
		nx := min(q4kvMaxNX, m-j)
		k[nx-1](nb, &buf[0], ps, &a[j*aStride], aStride, &out[j*outStride], outStride)
	}
}

// gemmQ4_KPackedVNNI is GemmQ4_KPacked's (ks: GemmQ4_KGemvPacked's)
// avx512vnni path for m > 1 (arguments checked by the caller, nb > 0, pb
// bytes per load-time panel, buf the scratch's panel area).
func gemmQ4_KPackedVNNI(ks q4kvSet, nb int, panels []byte, pb, rows int, a []byte, aStride, m int, out []float32, outStride int, buf []byte) {
	ps := nb * panelQ4_KBlock
	for r0 := 0; r0 < rows; r0 += 16 {
		gemmPackQ4_KI(nb, &panels[r0/8*pb], bytesQ4_K, &buf[0])
		two := rows-r0 >= 16
		if two {
			gemmPackQ4_KI(nb, &panels[(r0/8+1)*pb], bytesQ4_K, &buf[ps])
		}
		q4kvRows(ks, nb, buf, ps, two, a, aStride, m, out[r0:], outStride)
	}
}

// gemmQ4_KVNNI is gemmKind.run's avx512vnni path for GemmQ4_KQ8_K, m > 1
// (arguments checked, nb > 0): panel, pad and tile are run's scratch
// areas. Rows past the last whole panel go through a zero-padded panel and
// the tile, as in run.
func gemmQ4_KVNNI(nb int, w []byte, wStride, rows int, a []byte, aStride, m int, out []float32, outStride int, panel, pad []byte, tile []float32) {
	gemmQ4_KVNNISet(q4kvDot, nb, w, wStride, rows, a, aStride, m, out, outStride, panel, pad, tile)
}

// gemmQ4_KVNNISet is gemmQ4_KVNNI with the kernels of set ks.
func gemmQ4_KVNNISet(ks q4kvSet, nb int, w []byte, wStride, rows int, a []byte, aStride, m int, out []float32, outStride int, panel, pad []byte, tile []float32) {
	ps := nb * panelQ4_KBlock
	r0 := 0
	for ; r0+8 <= rows; r0 += 16 {
		gemmPackQ4_K(nb, &w[r0*wStride], wStride, &panel[0])
		two := r0+16 <= rows
		if two {
			gemmPackQ4_K(nb, &w[(r0+8)*wStride], wStride, &panel[ps])
		}
		q4kvRows(ks, nb, panel, ps, two, a, aStride, m, out[r0:], outStride)
		if !two {
			r0 += 8
			break
		}
	}
	if r0 >= rows {
		return
	}
	rb := nb * bytesQ4_K
	clear(pad[:8*rb])
	for i := r0; i < rows; i++ {
		copy(pad[(i-r0)*rb:(i-r0+1)*rb], w[i*wStride:i*wStride+rb])
	}
	gemmPackQ4_K(nb, &pad[0], rb, &panel[0])
	for j := 0; j < m; j += q4kvMaxNX {
		nx := min(q4kvMaxNX, m-j)
		ks.k8[nx-1](nb, &panel[0], ps, &a[j*aStride], aStride, &tile[0], 8)
		for jj := range nx {
			copy(out[(j+jj)*outStride+r0:(j+jj)*outStride+rows], tile[jj*8:])
		}
	}
}
