package simd

import (
	"fmt"
	"math"
)

// Strided-row primitives for attention over a quantized KV cache (Q8_0 or
// Q4_0 blocks of 32 elements), in the arithmetic of llama.cpp's CPU flash
// attention for such caches (ggml_compute_forward_flash_attn_ext_f16_one_chunk):
// keys are dotted with the query quantized to Q8_0 by the type's vec_dot
// (ggml_vec_dot_q8_0_q8_0 / ggml_vec_dot_q4_0_q8_0 on AVX2), values are
// dequantized exactly (dequantize_row_q8_0 / _q4_0: q*d, exact in float32)
// and added with one fused multiply-add per element (ggml_vec_mad_f32).
// The AVX2 assembly (attn_amd64.s, generated) performs exactly the Go
// code's operations, so every kernel set gives the same bits.
// Rows are stride bytes apart; each holds len(q)/34*32 (Q8_0 query)
// elements of the key or len(acc) of the value.

// DotQ8_0Rows sets out[j], j < len(out), to DotQ8_0Q8_0(n, k[j*stride:], qq),
// n = 32*len(qq)/34: the scores of len(out) Q8_0 key rows against the
// Q8_0-quantized query qq. It panics on a qq that is not whole blocks, a
// stride shorter than a row, or a short k.
func DotQ8_0Rows(qq, k []byte, stride int, out []float32) {
	nb := checkQRows("DotQ8_0Rows", qq, bytesQ8_0, k, stride, len(out))
	if nb == 0 {
		clear(out)
		return
	}
	rb := nb * bytesQ8_0
	if fast.Load() { // the AVX2 kernel's bits, as DotQ8_0Q8_0's every set
		for j := range out {
			out[j] = dotQ8_0Q8_0AVX2(nb, k[j*stride:j*stride+rb], qq)
		}
		return
	}
	for j := range out {
		out[j] = dotQ8_0Q8_0Generic(nb, k[j*stride:j*stride+rb], qq)
	}
}

// DotQ4_0Rows is DotQ8_0Rows for Q4_0 key rows: out[j] =
// DotQ4_0Q8_0Lanes(n, k[j*stride:], qq), ggml_vec_dot_q4_0_q8_0's AVX2 order
// (8 lanes over elements 4j..4j+3 of every block, hsum8 at the end).
func DotQ4_0Rows(qq, k []byte, stride int, out []float32) {
	nb := checkQRows("DotQ4_0Rows", qq, bytesQ4_0, k, stride, len(out))
	if nb == 0 {
		clear(out)
		return
	}
	rb := nb * bytesQ4_0
	if fast.Load() {
		for j := range out {
			out[j] = dotQ4_0Q8_0LanesAVX2(nb, k[j*stride:j*stride+rb], qq)
		}
		return
	}
	for j := range out {
		out[j] = dotQ4_0Q8_0LanesGeneric(nb, k[j*stride:j*stride+rb], qq)
	}
}

// DotQ8_0Rows4 sets out[4*j+h], for key rows j < len(out)/4 and queries h
// < 4, to DotQ8_0Q8_0(n, k[j*stride:], qq[h*qStride:]): four Q8_0 queries
// (the query heads of one KV head) against each Q8_0 key row, the key read
// once (DotQ8_0Q8_0x4's kernel, the single-row call's bits). It panics on
// an n that is not whole blocks, a len(out) not a multiple of 4, or short
// inputs.
func DotQ8_0Rows4(n int, qq []byte, qStride int, k []byte, stride int, out []float32) {
	nb := checkQRows4("DotQ8_0Rows4", n, qq, qStride, bytesQ8_0, k, stride, out)
	rb := nb * bytesQ8_0
	for j := 0; j < len(out)/4; j++ {
		o := (*[4]float32)(out[4*j : 4*j+4])
		if fast.Load() {
			dotQ8_0Q8_0x4AVX2(nb, k[j*stride:j*stride+rb], qq, qStride, o)
		} else {
			dotX4Generic(dotQ8_0Q8_0Generic, nb, k[j*stride:j*stride+rb], qq, qStride, o)
		}
	}
}

// DotQ4_0Rows4 is DotQ8_0Rows4 for Q4_0 key rows, in DotQ4_0Q8_0Lanes's
// order (ggml_vec_dot_q4_0_q8_0 on AVX2).
func DotQ4_0Rows4(n int, qq []byte, qStride int, k []byte, stride int, out []float32) {
	nb := checkQRows4("DotQ4_0Rows4", n, qq, qStride, bytesQ4_0, k, stride, out)
	rb := nb * bytesQ4_0
	for j := 0; j < len(out)/4; j++ {
		o := (*[4]float32)(out[4*j : 4*j+4])
		if fast.Load() {
			dotQ4_0Q8_0Lanesx4AVX2(nb, k[j*stride:j*stride+rb], qq, qStride, o)
		} else {
			dotX4Generic(dotQ4_0Q8_0LanesGeneric, nb, k[j*stride:j*stride+rb], qq, qStride, o)
		}
	}
}

func checkQRows4(fn string, n int, qq []byte, qStride, keyBlockBytes int, k []byte, stride int, out []float32) int {
	if n%qk != 0 || len(out)%4 != 0 {
		panic(fmt.Sprintf("simd: %s: %d elements, %d outputs: want whole blocks and a multiple of 4", fn, n, len(out)))
	}
	nb := n / qk
	if qStride < nb*bytesQ8_0 || len(qq) < 3*qStride+nb*bytesQ8_0 {
		panic(fmt.Sprintf("simd: %s: queries hold %d bytes, 4 rows of %d blocks at stride %d need %d", fn, len(qq), nb, qStride, 3*qStride+nb*bytesQ8_0))
	}
	checkRows(fn, nb*keyBlockBytes, len(k), stride, len(out)/4)
	return nb
}

// checkQRows validates a strided quantized-key call and returns the blocks
// per row.
func checkQRows(fn string, qq []byte, rowBlockBytes int, k []byte, stride, rows int) int {
	if len(qq)%bytesQ8_0 != 0 {
		panic(fmt.Sprintf("simd: %s: query of %d bytes is not whole Q8_0 blocks", fn, len(qq)))
	}
	nb := len(qq) / bytesQ8_0
	checkRows(fn, nb*rowBlockBytes, len(k), stride, rows)
	return nb
}

// AxpyQ8_0Rows adds p[j] times the dequantized Q8_0 value row
// v[j*stride:] to acc, for j = 0, 1, ... in order, element by element:
//
//	acc[i] = fma(q_ji*d_jb, p[j], acc[i])     (b = i/32; q*d exact)
//
// what ggml_vec_mad_f32(acc, dequantize_row_q8_0(v_j), p[j]) computes key
// after key. len(acc) must be a multiple of 32. It panics if stride is
// shorter than a row or v is short.
func AxpyQ8_0Rows(p []float32, v []byte, stride int, acc []float32) {
	nb := checkAxpyQ("AxpyQ8_0Rows", len(acc), bytesQ8_0, len(v), stride, len(p))
	if len(p) == 0 || nb == 0 {
		return
	}
	if fast.Load() {
		axpyQ8_0RowsAVX2(&p[0], len(p), &v[0], stride, &acc[0], len(acc))
		return
	}
	for j, pj := range p {
		row := v[j*stride:]
		for b := range nb {
			blk := row[b*bytesQ8_0 : (b+1)*bytesQ8_0]
			d := f16At(blk, 0)
			a := acc[b*qk : (b+1)*qk]
			for i := range a {
				a[i] = fma32(float32(int8(blk[2+i]))*d, pj, a[i])
			}
		}
	}
}

// AxpyQ4_0Rows is AxpyQ8_0Rows for Q4_0 value rows: element i < 16 of a
// block is (qs[i]&15)-8, element 16+i is (qs[i]>>4)-8, times the block's d
// (dequantize_row_q4_0).
func AxpyQ4_0Rows(p []float32, v []byte, stride int, acc []float32) {
	nb := checkAxpyQ("AxpyQ4_0Rows", len(acc), bytesQ4_0, len(v), stride, len(p))
	if len(p) == 0 || nb == 0 {
		return
	}
	if fast.Load() {
		axpyQ4_0RowsAVX2(&p[0], len(p), &v[0], stride, &acc[0], len(acc))
		return
	}
	for j, pj := range p {
		row := v[j*stride:]
		for b := range nb {
			blk := row[b*bytesQ4_0 : (b+1)*bytesQ4_0]
			d := f16At(blk, 0)
			a := acc[b*qk : (b+1)*qk]
			for i := range 16 {
				a[i] = fma32(float32(int32(blk[2+i]&15)-8)*d, pj, a[i])
				a[16+i] = fma32(float32(int32(blk[2+i]>>4)-8)*d, pj, a[16+i])
			}
		}
	}
}

// AxpyQ8_0Rows2 is AxpyQ8_0Rows for two accumulators at once (two query
// heads reading the same value rows) with their own weights: acc0 as
// AxpyQ8_0Rows(p0, v, stride, acc0), acc1 as AxpyQ8_0Rows(p1, v, stride,
// acc1), bit for bit, each row dequantized once. len(p1) must equal
// len(p0) and len(acc1) len(acc0).
func AxpyQ8_0Rows2(p0, p1 []float32, v []byte, stride int, acc0, acc1 []float32) {
	axpyQRows2("AxpyQ8_0Rows2", false, p0, p1, v, stride, acc0, acc1)
}

// AxpyQ4_0Rows2 is AxpyQ8_0Rows2 for Q4_0 value rows.
func AxpyQ4_0Rows2(p0, p1 []float32, v []byte, stride int, acc0, acc1 []float32) {
	axpyQRows2("AxpyQ4_0Rows2", true, p0, p1, v, stride, acc0, acc1)
}

func axpyQRows2(fn string, q4 bool, p0, p1 []float32, v []byte, stride int, acc0, acc1 []float32) {
	if len(p1) != len(p0) || len(acc1) != len(acc0) {
		panic(fmt.Sprintf("simd: %s: weights of %d and %d, accumulators of %d and %d", fn, len(p0), len(p1), len(acc0), len(acc1)))
	}
	bb := bytesQ8_0
	if q4 {
		bb = bytesQ4_0
	}
	nb := checkAxpyQ(fn, len(acc0), bb, len(v), stride, len(p0))
	if len(p0) == 0 || nb == 0 {
		return
	}
	if fast.Load() {
		if q4 {
			axpyQ4_0Rows2AVX2(&p0[0], &p1[0], len(p0), &v[0], stride, &acc0[0], &acc1[0], len(acc0))
		} else {
			axpyQ8_0Rows2AVX2(&p0[0], &p1[0], len(p0), &v[0], stride, &acc0[0], &acc1[0], len(acc0))
		}
		return
	}
	if q4 {
		AxpyQ4_0Rows(p0, v, stride, acc0)
		AxpyQ4_0Rows(p1, v, stride, acc1)
	} else {
		AxpyQ8_0Rows(p0, v, stride, acc0)
		AxpyQ8_0Rows(p1, v, stride, acc1)
	}
}

// checkAxpyQ validates a strided quantized-value call and returns the
// blocks per row.
func checkAxpyQ(fn string, d, blockBytes, have, stride, rows int) int {
	if d%qk != 0 {
		panic(fmt.Sprintf("simd: %s: accumulator of %d is not whole blocks of %d", fn, d, qk))
	}
	nb := d / qk
	checkRows(fn, nb*blockBytes, have, stride, rows)
	return nb
}

// ExpfRow sets y[i] = Expf(x[i]) (glibc's expf, bit for bit) for i <
// len(x); y and x may be the same slice. The AVX2 assembly computes four
// lanes at a time with Expf's float64 FMAs and table, the AVX-512 one eight
// (table lookups by permutes); inputs of magnitude 88 or more, Inf and NaN
// take Expf itself. It panics if y is shorter than x.
func ExpfRow(y, x []float32) {
	if len(y) < len(x) {
		panic(fmt.Sprintf("simd: ExpfRow: y holds %d of %d values", len(y), len(x)))
	}
	i := 0
	if vnni.Load() {
		for i+8 <= len(x) {
			i += expfRowAVX512(&y[i], &x[i], (len(x)-i)&^7)
			if i+8 <= len(x) { // eight holding a special input
				for j := i; j < i+8; j++ {
					y[j] = Expf(x[j])
				}
				i += 8
			}
		}
	}
	if fast.Load() {
		var at [64]int32 // special inputs of a chunk, saved before y may overwrite x
		var sv [64]float32
		for i+4 <= len(x) {
			n := min(64, len(x)-i) &^ 3
			k := 0
			for j, v := range x[i : i+n] {
				if math.Float32bits(v)>>20&0x7ff >= 0x42b {
					at[k], sv[k] = int32(j), v
					k++
				}
			}
			expfRowAVX2(&y[i], &x[i], n)
			for m, j := range at[:k] {
				y[i+int(j)] = Expf(sv[m])
			}
			i += n
		}
	}
	for ; i < len(x); i++ {
		y[i] = Expf(x[i])
	}
}
