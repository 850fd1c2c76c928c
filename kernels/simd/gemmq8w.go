package simd

import (
	"fmt"
	"unsafe"
)

// Q8_0 GEMM with int16 products on plain AVX2 (issue 26: 16 decode
// streams are a 16-row GEMM per weight matrix).
//
// The load-time Q8_0 kernels (gemmQ8_0PQ8_0x*) spend five multiply-port
// operations per 8 weight rows, 4 elements and activation row: VPSIGNB,
// VPMADDUBSW, VPMADDWD (the exact int32 sum of the 4 products), then
// llama.cpp's VCVTDQ2PS and FMA. gemmQ8_0PWQ8_0x8 forms the same exact
// sum as VPMADDWD(E_w, E_x) + VPMADDWD(O_w, O_x), where E and O are the
// even and odd quants of each 4-element quad widened to int16: the add
// can issue on port 5, so four multiply-port operations remain
// (BenchmarkGemmQ8_0PackedW, avx2, m = 16: 7-11% less CPU time than
// GemmQ8_0Packed on an Intel Xeon, family 6 model 207). The weights are
// split in the kernel (three shifts per 8 rows and quad, shared by its 8
// activation rows); the activations are split once per row, into a
// second section of the activation row (GemmActQ8_0Q8_0W). Every output
// keeps DotQ8_0Q8_0's bits: the integer sums are exact either way and
// the float steps are the same.
//
// The avxvnni and avx512vnni sets keep their own kernels (VPDPBUSD does
// the integer part in one operation there).

// gemmActQ8_0WBlock is the W section's bytes per block: E of quads 0..7
// (int16 pairs q[4j], q[4j+2]), O (q[4j+1], q[4j+3]), float32 d.
const gemmActQ8_0WBlock = 68

// gemmQ8_0WMinRows is the batch from which GemmQ8_0PackedW runs the
// 8-row int16 kernel (on the rows in groups of 8; the rest go through
// the usual kernels).
const gemmQ8_0WMinRows = 8

// GemmActQ8_0Q8_0WBytes is the size of one activation row of n elements
// in GemmActQ8_0Q8_0W form.
func GemmActQ8_0Q8_0WBytes(n int) int {
	return gemmActBytes("GemmActQ8_0Q8_0WBytes", n, gemmActQ8_0Q8_0Row+gemmActQ8_0WBlock)
}

// GemmActQ8_0Q8_0W writes the Q8_0 activation row x (n elements) into dst
// (GemmActQ8_0Q8_0WBytes(n) bytes): the GemmActQ8_0Q8_0 form (68 B per
// block), then the W section, 68 B per block:
//
//	[ GemmActQ8_0Q8_0 row ][ E_0 O_0 d_0 | E_1 O_1 d_1 | ... ]
//	                          E_b: int16 (q[4j], q[4j+2]) at 4j     32 B
//	                          O_b: int16 (q[4j+1], q[4j+3]) at 4j   32 B
//	                          d_b: float32                           4 B
//
// Such a row is a GemmActQ8_0Q8_0 row for every Q8_0 GEMM (the first part
// at the same offsets); GemmQ8_0PackedW also reads the W section.
func GemmActQ8_0Q8_0W(n int, x, dst []byte) {
	nb := checkAct("GemmActQ8_0Q8_0W", n, x, dst, gemmActQ8_0Q8_0Row+gemmActQ8_0WBlock)
	GemmActQ8_0Q8_0(n, x, dst)
	if nb == 0 {
		return
	}
	w := dst[nb*gemmActQ8_0Q8_0Row:]
	if fast.Load() {
		gemmActQ8_0W(nb, &x[0], &w[0])
		return
	}
	for b := range nb {
		q, bw := x[b*bytesQ8_0+2:(b+1)*bytesQ8_0], w[b*gemmActQ8_0WBlock:]
		for j := range 8 {
			for k := range 2 {
				putI16(bw[4*j+2*k:], int8(q[4*j+2*k]))
				putI16(bw[32+4*j+2*k:], int8(q[4*j+2*k+1]))
			}
		}
		putF32(bw[64:], f16At(x[b*bytesQ8_0:], 0))
	}
}

func putI16(b []byte, v int8) {
	u := uint16(int16(v))
	b[0], b[1] = byte(u), byte(u>>8)
}

// GemmQ8_0PackedW is GemmQ8_0Packed with activation rows in
// GemmActQ8_0Q8_0W form (aStride at least GemmActQ8_0Q8_0WBytes(n)):
// the same bits. On the avx2 set, from gemmQ8_0WMinRows rows on, groups
// of 8 activation rows go through the int16 kernel; everything else is
// GemmQ8_0Packed's.
func GemmQ8_0PackedW(n int, panels []byte, rows int, a []byte, aStride, m int, out []float32, outStride int, scratch []byte) {
	const fn = "GemmQ8_0PackedW"
	k := &packedQ8_0
	if n < 0 || n%qk != 0 || rows < 0 || rows%k.rows != 0 || m < 0 {
		panic(fmt.Sprintf("simd: %s: n=%d rows=%d m=%d: need n a multiple of %d, rows of %d", fn, n, rows, m, qk, k.rows))
	}
	nb := n / qk
	if m < gemmQ8_0WMinRows || rows == 0 || nb == 0 || !fast.Load() || vnni.Load() || vexVNNI.Load() {
		k.gemm(fn, n, panels, rows, a, aStride, m, out, outStride, scratch)
		return
	}
	if need := k.bytes(fn, n, rows); len(panels) < need {
		panic(fmt.Sprintf("simd: %s: panels hold %d bytes, %d rows of %d elements need %d", fn, len(panels), rows, n, need))
	}
	checkGemmRest(fn, n, nb, gemmActQ8_0Q8_0Row+gemmActQ8_0WBlock, a, aStride, m, rows, out, outStride, scratch)
	sc := (*float32)(unsafe.Pointer(&scratch[0])) // q80Chunk blocks of 8 rows' 8 float32
	wOff := nb * gemmActQ8_0Q8_0Row
	pb := nb * k.rows * k.wB
	m8 := m / 8 * 8
	for r0 := 0; r0 < rows; r0 += k.rows {
		panel := &panels[r0/k.rows*pb]
		for j := 0; j < m8; j += 8 {
			gemmQ8_0PWQ8_0x8(nb, panel, &a[j*aStride+wOff], aStride, &out[j*outStride+r0], outStride, sc)
		}
		for j := m8; j < m; j += 4 {
			nx := min(4, m-j)
			k.kernels[nx-1](nb, panel, &a[j*aStride], aStride, &out[j*outStride+r0], outStride, sc)
		}
	}
}
